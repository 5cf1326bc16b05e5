//! A player's turns: the inbox of rooms waiting on their move.

use actix_web::http::Method;
use actix_web::{web, HttpResponse};
use serde::Serialize;

use serde::Deserialize;

use super::extract::{Caller, Json};
use super::sessions::within;
use super::{route, ApiError, AppContext, RouteDef};
use crate::domain::time::Timestamp;
use crate::game::{Clock, PlayerRef};
use crate::store::Turn;

pub fn routes() -> Vec<RouteDef> {
    vec![
        route(Method::GET, "/players/me/turns", turns),
        route(Method::GET, "/push/key", push_key),
        route(Method::GET, "/players/me/push-subscriptions", subscriptions),
        route(Method::POST, "/players/me/push-subscriptions", subscribe),
        route(
            Method::DELETE,
            "/players/me/push-subscriptions/{id}",
            unsubscribe,
        ),
    ]
}

/// One room of the inbox.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TurnView<'a> {
    id: &'a str,
    game: &'a str,
    version: i64,
    players: &'a [PlayerRef],
    /// When the room's deadline passes (its clock, or the game's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    deadline: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    clock: Option<Clock>,
    /// Since when it has been the player's move.
    since: Timestamp,
}

impl<'a> From<&'a Turn> for TurnView<'a> {
    fn from(turn: &'a Turn) -> Self {
        Self {
            id: &turn.room,
            game: &turn.game,
            version: turn.version,
            players: &turn.players,
            deadline: turn.deadline,
            clock: turn.clock,
            since: turn.since,
        }
    }
}

/// Every unfinished room where it is the caller's move, the soonest deadline first, then the
/// longest waiting.
async fn turns(
    context: web::Data<AppContext>,
    Caller(me): Caller,
) -> Result<HttpResponse, ApiError> {
    let turns = context.notifications.turns(&me.id).await?;
    let rooms: Vec<TurnView> = turns.iter().map(TurnView::from).collect();
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(serde_json::json!({ "rooms": rooms })))
}

/// The key browsers subscribe with: the server's VAPID public key (base64url).
async fn push_key(context: web::Data<AppContext>) -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "key": context.notifications.push_key() }))
}

/// A browser's `PushSubscription`, as its `toJSON()` gives it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct BrowserSubscription {
    endpoint: String,
    /// When the browser will drop it, if it says (not kept: the push service says when).
    #[allow(dead_code)]
    expiration_time: Option<serde_json::Value>,
    keys: SubscriptionKeys,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SubscriptionKeys {
    p256dh: String,
    auth: String,
}

/// Turns notifications on in a browser: its turns are pushed there.
async fn subscribe(
    context: web::Data<AppContext>,
    Caller(me): Caller,
    Json(body): Json<BrowserSubscription>,
) -> Result<HttpResponse, ApiError> {
    within("endpoint", &body.endpoint, 2048)?;
    within("p256dh", &body.keys.p256dh, 128)?;
    within("auth", &body.keys.auth, 64)?;
    context.limits.actions.admit(&me.id)?;
    let id = context
        .notifications
        .subscribe(&me.id, &body.endpoint, &body.keys.p256dh, &body.keys.auth)
        .await?;
    Ok(HttpResponse::Created().json(serde_json::json!({ "id": id })))
}

/// The caller's browsers with notifications on.
async fn subscriptions(
    context: web::Data<AppContext>,
    Caller(me): Caller,
) -> Result<HttpResponse, ApiError> {
    let kept = context.notifications.subscriptions(&me.id).await?;
    let shown: Vec<serde_json::Value> = kept
        .iter()
        .map(|s| serde_json::json!({ "id": s.id, "endpoint": s.endpoint, "createdAt": s.created_at }))
        .collect();
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(serde_json::json!({ "subscriptions": shown })))
}

/// Turns notifications off in one of the caller's browsers.
async fn unsubscribe(
    context: web::Data<AppContext>,
    Caller(me): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    (context.notifications)
        .unsubscribe_browser(&me.id, &id.into_inner())
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
