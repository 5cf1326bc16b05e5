//! Moderation, for admins only (`403 not_admin` for anyone else): suspending and renaming
//! players, unpublishing games, closing rooms, and the audit log every such action is kept in.

use actix_web::http::{Method, StatusCode};
use actix_web::{web, FromRequest, HttpRequest, HttpResponse};
use futures_util::future::LocalBoxFuture;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::extract::{client_address, parse_cursor, parse_query, Caller, OptionalJson};
use super::pages::{page_of, page_size, rows_for};
use super::rooms::{room_id, room_response};
use super::sessions::within;
use super::{route, ApiError, AppContext, RouteDef};
use crate::domain::ids::is_well_formed;
use crate::domain::records::{AuditEntry, Moderator};
use crate::domain::username::Username;
use crate::game::PlayerRef;
use crate::moderation::{ModerationError, RoomsReached, UnpublishedRooms};

pub fn routes() -> Vec<RouteDef> {
    vec![
        route(Method::GET, "/admin/audit", audit),
        route(Method::GET, "/admin/players", find_player),
        route(Method::PATCH, "/admin/players/{id}", rename),
        route(Method::POST, "/admin/players/{id}/suspend", suspend),
        route(Method::POST, "/admin/players/{id}/unsuspend", unsuspend),
        route(Method::POST, "/admin/games/{id}/unpublish", unpublish),
        route(Method::POST, "/admin/rooms/{id}/close", close_room),
    ]
}

/// The longest reason, in characters.
const REASON_LENGTH: usize = 500;
const DEFAULT_PAGE: i64 = 50;
const MAX_PAGE: i64 = 200;

/// The caller, if they hold the admin role.
pub struct Admin(pub PlayerRef);

impl FromRequest for Admin {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut actix_web::dev::Payload) -> Self::Future {
        let context = req.app_data::<web::Data<AppContext>>().cloned();
        let caller = Caller::from_request(req, payload);
        Box::pin(async move {
            let Caller(player) = caller.await?;
            let context = context.expect("the app context is registered");
            context.moderation.require_admin(&player).await?;
            Ok(Admin(player))
        })
    }
}

/// An admin's request, with where it came from, and its JSON body (left out, it is
/// `T::default()`). The body is read only once the caller is known to be an admin, so anyone
/// else is answered `401` or `403` whatever they sent.
pub struct AdminSays<T>(pub Moderator, pub T);

impl<T: DeserializeOwned + Default + 'static> FromRequest for AdminSays<T> {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut actix_web::dev::Payload) -> Self::Future {
        let admin = Admin::from_request(req, payload);
        let body = OptionalJson::<T>::from_request(req, payload);
        let client = client_address(req);
        Box::pin(async move {
            let Admin(player) = admin.await?;
            let OptionalJson(body) = body.await?;
            Ok(AdminSays(Moderator { player, client }, body))
        })
    }
}

/// Why: required where an action is taken against someone, at most 500 characters.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Reason {
    reason: Option<String>,
}

/// The reason given: `400 invalid_body` when `required` and missing or blank, or too long.
pub(super) fn reason(given: Option<String>, required: bool) -> Result<String, ApiError> {
    let reason = given.unwrap_or_default().trim().to_owned();
    if required && reason.is_empty() {
        return Err(ApiError::InvalidBody(
            "give a reason: {\"reason\": \"…\"}; it is kept in the audit log".into(),
        ));
    }
    within("reason", &reason, REASON_LENGTH)?;
    Ok(reason)
}

/// A player id from the path; one this server could not have issued is not found.
fn player_id(path: web::Path<String>) -> Result<String, ApiError> {
    let id = path.into_inner();
    match is_well_formed(&id) {
        true => Ok(id),
        false => Err(ModerationError::PlayerNotFound.into()),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rooms {
    changed: usize,
    closed: usize,
    left: usize,
}

impl From<RoomsReached> for Rooms {
    fn from(r: RoomsReached) -> Self {
        Self {
            changed: r.changed,
            closed: r.closed,
            left: r.left,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Suspended {
    player: PlayerRef,
    suspended: bool,
    sessions_ended: usize,
    /// The rooms they held a seat in: quit (`changed`), closed, or left as they were.
    rooms: Rooms,
}

/// Suspends a player: their sessions end, they cannot sign in, and they quit every room they
/// hold a seat in.
async fn suspend(
    context: web::Data<AppContext>,
    path: web::Path<String>,
    AdminSays(admin, body): AdminSays<Reason>,
) -> Result<HttpResponse, ApiError> {
    let id = player_id(path)?;
    let why = reason(body.reason, true)?;
    let done = context.moderation.suspend(&admin, &id, &why).await?;
    Ok(HttpResponse::Ok().json(Suspended {
        player: done.player,
        suspended: true,
        sessions_ended: done.sessions_ended,
        rooms: done.rooms.into(),
    }))
}

/// Lifts a suspension.
async fn unsuspend(
    context: web::Data<AppContext>,
    path: web::Path<String>,
    AdminSays(admin, body): AdminSays<Reason>,
) -> Result<HttpResponse, ApiError> {
    let id = player_id(path)?;
    let why = reason(body.reason, false)?;
    let player = context.moderation.unsuspend(&admin, &id, &why).await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({"player": player, "suspended": false})))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewName {
    username: String,
    reason: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Renamed {
    player: PlayerRef,
    previous_username: String,
    /// The rooms they hold a seat in, each given a `renamed` version.
    rooms: Rooms,
}

/// Renames a player.
async fn rename(
    context: web::Data<AppContext>,
    path: web::Path<String>,
    AdminSays(admin, body): AdminSays<NewName>,
) -> Result<HttpResponse, ApiError> {
    let id = player_id(path)?;
    let username =
        Username::parse(&body.username).map_err(|e| ApiError::InvalidUsername(e.to_string()))?;
    let why = reason(body.reason, false)?;
    let (before, rooms) = context
        .moderation
        .rename(&admin, &id, &username, &why)
        .await?;
    Ok(HttpResponse::Ok().json(Renamed {
        player: PlayerRef {
            id: before.id,
            username: username.as_str().to_owned(),
        },
        previous_username: before.username,
        rooms: rooms.into(),
    }))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Unpublish {
    reason: Option<String>,
    rooms: Option<String>,
}

/// Unpublishes an uploaded game.
async fn unpublish(
    context: web::Data<AppContext>,
    path: web::Path<String>,
    AdminSays(admin, body): AdminSays<Unpublish>,
) -> Result<HttpResponse, ApiError> {
    let game = path.into_inner();
    let why = reason(body.reason, true)?;
    let rooms =
        match body.rooms.as_deref() {
            Some("finish") => UnpublishedRooms::Finish,
            Some("close") => UnpublishedRooms::Close,
            _ => return Err(ApiError::InvalidBody(
                "say what becomes of the game's rooms in play: \"rooms\": \"finish\" (played to \
                 their end) or \"close\" (closed as they are)"
                    .into(),
            )),
        };
    let reached = context
        .moderation
        .unpublish(&admin, &game, &why, rooms)
        .await?;
    let rooms: Rooms = reached.into();
    Ok(HttpResponse::Ok()
        .json(serde_json::json!({"game": game, "unpublished": true, "rooms": rooms})))
}

/// Closes a room as it is: a version of kind `closed`, its move the reason.
async fn close_room(
    context: web::Data<AppContext>,
    path: web::Path<String>,
    AdminSays(admin, body): AdminSays<Reason>,
) -> Result<HttpResponse, ApiError> {
    let id = room_id(path)?;
    let why = reason(body.reason, true)?;
    let room = context.moderation.close_room(&admin, &id, &why).await?;
    room_response(&context, StatusCode::OK, &room, Some(&admin.player)).await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FindPlayer {
    username: String,
}

/// A player by name (the routes take ids; a name is what an admin is told): `{players}`,
/// empty when nobody has the name.
async fn find_player(
    req: HttpRequest,
    context: web::Data<AppContext>,
    Admin(_): Admin,
) -> Result<HttpResponse, ApiError> {
    let params: FindPlayer = parse_query(&req)?;
    within("username", &params.username, 64)?;
    let found = context.moderation.find_player(&params.username).await?;
    let players: Vec<_> = found.into_iter().collect();
    Ok(HttpResponse::Ok().json(serde_json::json!({ "players": players })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AuditParams {
    limit: Option<i64>,
    cursor: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AuditPage {
    entries: Vec<AuditEntry>,
    next_cursor: Option<String>,
}

/// The audit log, newest first, a page at a time.
async fn audit(
    req: HttpRequest,
    context: web::Data<AppContext>,
    Admin(_): Admin,
) -> Result<HttpResponse, ApiError> {
    let params: AuditParams = parse_query(&req)?;
    let limit = page_size(params.limit, DEFAULT_PAGE, MAX_PAGE)?;
    let before = parse_cursor(params.cursor)?;
    let rows = context
        .moderation
        .audit_log(before, rows_for(limit))
        .await?;
    let (entries, next_cursor) = page_of(rows, limit, |e| e.id.to_string());
    Ok(HttpResponse::Ok().json(AuditPage {
        entries,
        next_cursor,
    }))
}
