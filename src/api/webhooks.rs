//! Webhook endpoints, for a game's owner (`/games/{id}/webhooks`, that game's rooms) and for
//! admins (`/admin/webhooks`, every event of the server): the same routes under each, through
//! [`HookScope`], which says whose endpoints a request reaches.

use actix_web::http::{Method, StatusCode};
use actix_web::{web, FromRequest, HttpRequest, HttpResponse};
use futures_util::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};

use super::admin::Admin;
use super::extract::{parse_cursor, parse_query, Actor, Caller, Json};
use super::pages::{page_of, page_size, rows_for};
use super::{route, ApiError, AppContext, RouteDef};
use crate::domain::game_id::GameId;
use crate::domain::time::Timestamp;
use crate::domain::webhooks::{Delivery, Endpoint, EventTypes};
use crate::store::WEBHOOK_ACTIVATION;
use crate::webhooks::Scope;

pub fn routes() -> Vec<RouteDef> {
    let mut all = scoped!("/games/{id}/webhooks");
    all.extend(scoped!("/admin/webhooks"));
    all
}

/// Every route of one scope, under `$base`.
macro_rules! scoped {
    ($base:literal) => {
        vec![
            route(Method::GET, $base, list),
            route(Method::POST, $base, create),
            route(Method::GET, concat!($base, "/{hook}"), show),
            route(Method::PATCH, concat!($base, "/{hook}"), update),
            route(Method::DELETE, concat!($base, "/{hook}"), delete),
            route(Method::POST, concat!($base, "/{hook}/pause"), pause),
            route(Method::POST, concat!($base, "/{hook}/resume"), resume),
            route(Method::POST, concat!($base, "/{hook}/rotate"), rotate),
            route(Method::POST, concat!($base, "/{hook}/ping"), ping),
            route(
                Method::GET,
                concat!($base, "/{hook}/deliveries"),
                deliveries,
            ),
            route(
                Method::GET,
                concat!($base, "/{hook}/deliveries/{delivery}"),
                delivery,
            ),
            route(
                Method::POST,
                concat!($base, "/{hook}/deliveries/{delivery}/redeliver"),
                redeliver,
            ),
        ]
    };
}
use scoped;

const DEFAULT_PAGE: i64 = 50;
const MAX_PAGE: i64 = 200;

/// Whose endpoints a request reaches: an admin's request under `/admin/webhooks`, the server's;
/// a game's owner's under `/games/{id}/webhooks`, that game's (`403 not_your_game` for anyone
/// else).
pub struct HookScope(Scope);

impl FromRequest for HookScope {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut actix_web::dev::Payload) -> Self::Future {
        let context = req.app_data::<web::Data<AppContext>>().cloned();
        if req.path().starts_with("/admin/") {
            let admin = Admin::from_request(req, payload);
            return Box::pin(async move {
                admin.await?;
                Ok(HookScope(Scope::Server))
            });
        }
        let game = req.match_info().get("id").unwrap_or_default().to_owned();
        let caller = Caller::from_request(req, payload);
        Box::pin(async move {
            let Caller(player) = caller.await?;
            let context = context.expect("the app context is registered");
            let scope = context
                .webhooks
                .game_scope(&player.id, &GameId::from(game))
                .await?;
            Ok(HookScope(scope))
        })
    }
}

/// An endpoint as its owner sees it; the secret only where it is new.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EndpointView {
    id: String,
    /// `null` for the operator's, which take every game's events.
    game: Option<String>,
    url: String,
    events: EventTypes,
    /// `active`, `paused` or `disabled` (failing for the disabling period; see
    /// `disabledReason`). Resuming makes a paused or disabled endpoint active.
    status: &'static str,
    paused_at: Option<Timestamp>,
    disabled_at: Option<Timestamp>,
    disabled_reason: Option<String>,
    /// Since when every delivery has failed, while that lasts.
    failing_since: Option<Timestamp>,
    /// Until when the secret before the last rotation signs too.
    previous_secret_until: Option<Timestamp>,
    created_at: Timestamp,
    /// From when every event is sure to reach it, on every server: a moment after it is
    /// made, once every server knows of it (events before may reach it too).
    active_from: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<String>,
}

impl EndpointView {
    fn of(endpoint: Endpoint, with_secret: bool) -> Self {
        let status = match (&endpoint.disabled_at, &endpoint.paused_at) {
            (Some(_), _) => "disabled",
            (None, Some(_)) => "paused",
            (None, None) => "active",
        };
        let now = Timestamp::now();
        Self {
            id: endpoint.id,
            game: endpoint.game.map(|g| g.to_string()),
            url: endpoint.url,
            events: endpoint.types,
            status,
            paused_at: endpoint.paused_at,
            disabled_at: endpoint.disabled_at,
            disabled_reason: endpoint.disabled_reason,
            failing_since: endpoint.failing_since,
            previous_secret_until: endpoint.previous_secret_until.filter(|until| *until > now),
            created_at: endpoint.created_at,
            active_from: endpoint.created_at.after(WEBHOOK_ACTIVATION),
            secret: with_secret.then_some(endpoint.secret),
        }
    }
}

#[derive(Serialize)]
struct EndpointList {
    endpoints: Vec<EndpointView>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewEndpoint {
    url: String,
    events: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EndpointChange {
    url: Option<String>,
    events: Option<Vec<String>>,
}

fn hook(req: &HttpRequest) -> &str {
    req.match_info().get("hook").unwrap_or_default()
}

fn delivery_id(req: &HttpRequest) -> &str {
    req.match_info().get("delivery").unwrap_or_default()
}

/// `GET …/webhooks`
async fn list(
    context: web::Data<AppContext>,
    HookScope(scope): HookScope,
) -> Result<HttpResponse, ApiError> {
    let endpoints = context.webhooks.list(&scope).await?;
    let endpoints = endpoints
        .into_iter()
        .map(|e| EndpointView::of(e, false))
        .collect();
    Ok(HttpResponse::Ok().json(EndpointList { endpoints }))
}

/// `POST …/webhooks {url, events}`: `201` with the secret, shown this once.
async fn create(
    context: web::Data<AppContext>,
    caller: Caller,
    HookScope(scope): HookScope,
    Json(body): Json<NewEndpoint>,
) -> Result<HttpResponse, ApiError> {
    let endpoint = context
        .webhooks
        .create(&scope, Some(&caller.0.id), &body.url, &body.events)
        .await?;
    Ok(HttpResponse::build(StatusCode::CREATED).json(EndpointView::of(endpoint, true)))
}

/// `GET …/webhooks/{hook}`
async fn show(
    req: HttpRequest,
    context: web::Data<AppContext>,
    HookScope(scope): HookScope,
) -> Result<HttpResponse, ApiError> {
    let endpoint = context.webhooks.get(&scope, hook(&req)).await?;
    Ok(HttpResponse::Ok().json(EndpointView::of(endpoint, false)))
}

/// `PATCH …/webhooks/{hook} {url?, events?}`
async fn update(
    req: HttpRequest,
    context: web::Data<AppContext>,
    HookScope(scope): HookScope,
    Json(body): Json<EndpointChange>,
) -> Result<HttpResponse, ApiError> {
    let endpoint = context
        .webhooks
        .update(
            &scope,
            hook(&req),
            body.url.as_deref(),
            body.events.as_deref(),
        )
        .await?;
    Ok(HttpResponse::Ok().json(EndpointView::of(endpoint, false)))
}

/// `DELETE …/webhooks/{hook}`: the endpoint and its delivery log.
async fn delete(
    req: HttpRequest,
    context: web::Data<AppContext>,
    HookScope(scope): HookScope,
) -> Result<HttpResponse, ApiError> {
    context.webhooks.delete(&scope, hook(&req)).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// `POST …/webhooks/{hook}/pause`: events wait until it is resumed.
async fn pause(
    req: HttpRequest,
    context: web::Data<AppContext>,
    HookScope(scope): HookScope,
) -> Result<HttpResponse, ApiError> {
    let endpoint = context.webhooks.pause(&scope, hook(&req)).await?;
    Ok(HttpResponse::Ok().json(EndpointView::of(endpoint, false)))
}

/// `POST …/webhooks/{hook}/resume`: after a pause, or after it was disabled for failing.
async fn resume(
    req: HttpRequest,
    context: web::Data<AppContext>,
    HookScope(scope): HookScope,
) -> Result<HttpResponse, ApiError> {
    let endpoint = context.webhooks.resume(&scope, hook(&req)).await?;
    Ok(HttpResponse::Ok().json(EndpointView::of(endpoint, false)))
}

/// `POST …/webhooks/{hook}/rotate`: a new secret, shown this once; the previous one signs too
/// for a day.
async fn rotate(
    req: HttpRequest,
    context: web::Data<AppContext>,
    HookScope(scope): HookScope,
) -> Result<HttpResponse, ApiError> {
    let endpoint = context.webhooks.rotate(&scope, hook(&req)).await?;
    Ok(HttpResponse::Ok().json(EndpointView::of(endpoint, true)))
}

/// `POST …/webhooks/{hook}/ping`: `202` with the delivery of a `ping` event. Counted against
/// the caller's action limit, as a redelivery is: each sends a request to a URL a user gave.
async fn ping(
    req: HttpRequest,
    context: web::Data<AppContext>,
    _counted: Actor,
    HookScope(scope): HookScope,
) -> Result<HttpResponse, ApiError> {
    let delivery = context.webhooks.ping(&scope, hook(&req)).await?;
    Ok(HttpResponse::Accepted().json(delivery))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PageParams {
    limit: Option<i64>,
    cursor: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DeliveryPage {
    deliveries: Vec<Delivery>,
    next_cursor: Option<String>,
}

/// `GET …/webhooks/{hook}/deliveries`: the delivery log, newest first, each with its attempts.
async fn deliveries(
    req: HttpRequest,
    context: web::Data<AppContext>,
    HookScope(scope): HookScope,
) -> Result<HttpResponse, ApiError> {
    let params: PageParams = parse_query(&req)?;
    let limit = page_size(params.limit, DEFAULT_PAGE, MAX_PAGE)?;
    let before = parse_cursor(params.cursor)?;
    let rows = context
        .webhooks
        .deliveries(&scope, hook(&req), before, rows_for(limit))
        .await?;
    let (deliveries, next) = page_of(rows, limit, |d| d.seq.to_string());
    Ok(HttpResponse::Ok().json(DeliveryPage {
        deliveries,
        next_cursor: next,
    }))
}

/// `GET …/webhooks/{hook}/deliveries/{delivery}`
async fn delivery(
    req: HttpRequest,
    context: web::Data<AppContext>,
    HookScope(scope): HookScope,
) -> Result<HttpResponse, ApiError> {
    let found = context
        .webhooks
        .delivery(&scope, hook(&req), delivery_id(&req))
        .await?;
    Ok(HttpResponse::Ok().json(found))
}

/// `POST …/webhooks/{hook}/deliveries/{delivery}/redeliver`: tried again now, with the same
/// `webhook-id`, for a whole retry period.
async fn redeliver(
    req: HttpRequest,
    context: web::Data<AppContext>,
    _counted: Actor,
    HookScope(scope): HookScope,
) -> Result<HttpResponse, ApiError> {
    let again = context
        .webhooks
        .redeliver(&scope, hook(&req), delivery_id(&req))
        .await?;
    Ok(HttpResponse::Accepted().json(again))
}
