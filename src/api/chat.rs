//! Chat over HTTP: a room's table and gallery, the lobby, reports, blocks, and the admins'
//! deletions and mutes (`docs/api.md`, "Chat").

use actix_web::http::Method;
use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};

use super::admin::{reason, Admin, AdminSays};
use super::extract::{parse_query, Caller, Json, MaybeSigned, OptionalJson};
use super::rooms::room_id;
use super::{route, ApiError, AppContext, RouteDef};
use crate::chat::ChatError;
use crate::domain::chat::{Channel, ChatMessage, ChatReport};
use crate::domain::ids::{is_well_formed, PlayerId};
use crate::domain::time::Timestamp;
use crate::game::PlayerRef;
use crate::views::MessageView;

pub fn routes() -> Vec<RouteDef> {
    vec![
        route(Method::POST, "/rooms/{id}/chat", send_to_room),
        route(Method::GET, "/rooms/{id}/chat", room_history),
        route(
            Method::POST,
            "/rooms/{id}/chat/gallery/close",
            close_gallery,
        ),
        route(Method::POST, "/lobby/chat", send_to_lobby),
        route(Method::GET, "/lobby/chat", lobby_history),
        route(Method::POST, "/chat/{message}/report", report),
        route(Method::GET, "/admin/chat/reports", reports),
        route(Method::DELETE, "/admin/chat/{message}", delete),
        route(Method::POST, "/admin/players/{id}/mute", mute),
        route(Method::GET, "/players/me/blocks", blocks),
        route(Method::POST, "/players/me/blocks", block),
        route(Method::DELETE, "/players/me/blocks/{player}", unblock),
    ]
}

/// The longest mute: thirty days.
const MAX_MUTE_MINUTES: f64 = 30.0 * 24.0 * 60.0;
const DEFAULT_PAGE: i64 = 50;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Page<'a> {
    messages: Vec<MessageView<'a>>,
    /// Where the next page starts (`?after=`): the last message's id, or the one asked.
    next_after: i64,
}

fn page(messages: &[ChatMessage], after: i64) -> Page<'_> {
    let next_after = messages.last().map_or(after, |m| m.id);
    Page {
        messages: messages.iter().map(MessageView::from).collect(),
        next_after,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoomMessage {
    text: String,
    channel: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LobbyMessage {
    text: String,
}

fn channel(name: &str) -> Result<Channel, ApiError> {
    match Channel::parse(name) {
        Some(channel @ (Channel::Table | Channel::Gallery)) => Ok(channel),
        _ => Err(ApiError::InvalidBody(format!(
            "channel must be \"table\" or \"gallery\", not {name:?}"
        ))),
    }
}

/// A message id from the path; anything else is a message nobody wrote.
fn message_id(path: web::Path<String>) -> Result<i64, ApiError> {
    let text = path.into_inner();
    text.parse::<i64>()
        .ok()
        .filter(|id| *id > 0 && text.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| ChatError::MessageNotFound.into())
}

/// A player id from the path or a body; one this server could not have issued is nobody.
fn some_player(id: String) -> Result<PlayerId, ApiError> {
    match is_well_formed(&id) {
        true => Ok(PlayerId::from(id)),
        false => Err(ChatError::PlayerNotFound.into()),
    }
}

/// A message at a room's table or in its gallery.
async fn send_to_room(
    context: web::Data<AppContext>,
    path: web::Path<String>,
    Caller(player): Caller,
    Json(body): Json<RoomMessage>,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(path)?;
    let channel = channel(&body.channel)?;
    context.limits.chat.admit(&player.id)?;
    let sent = context
        .chat
        .send_to_room(&player, &room, channel, &body.text)
        .await?;
    Ok(HttpResponse::Created().json(MessageView::from(&sent)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoomPageQuery {
    channel: String,
    after: Option<i64>,
    limit: Option<i64>,
}

async fn room_history(
    req: actix_web::HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
    MaybeSigned(viewer): MaybeSigned,
) -> Result<HttpResponse, ApiError> {
    let query: RoomPageQuery = parse_query(&req)?;
    let channel = channel(&query.channel).map_err(|_| {
        ApiError::InvalidQuery(format!(
            "channel must be table or gallery, not {:?}",
            query.channel
        ))
    })?;
    let after = query.after.unwrap_or(0).max(0);
    let room = room_id(path)?;
    let viewer = viewer.map(|v| v.player);
    let messages = context
        .chat
        .room_history(
            viewer.as_ref(),
            &room,
            channel,
            after,
            query.limit.unwrap_or(DEFAULT_PAGE),
        )
        .await?;
    Ok(HttpResponse::Ok().json(page(&messages, after)))
}

/// The room's opener closes its gallery.
async fn close_gallery(
    context: web::Data<AppContext>,
    path: web::Path<String>,
    Caller(player): Caller,
) -> Result<HttpResponse, ApiError> {
    let room = room_id(path)?;
    context.chat.close_gallery(&player, &room).await?;
    Ok(HttpResponse::NoContent().finish())
}

async fn send_to_lobby(
    context: web::Data<AppContext>,
    Caller(player): Caller,
    Json(body): Json<LobbyMessage>,
) -> Result<HttpResponse, ApiError> {
    context.limits.chat.admit(&player.id)?;
    let sent = context.chat.send_to_lobby(&player, &body.text).await?;
    Ok(HttpResponse::Created().json(MessageView::from(&sent)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LobbyPageQuery {
    after: Option<i64>,
    before: Option<i64>,
    limit: Option<i64>,
}

/// The lobby's messages after `after`, or the page before `before` (with both, of those after
/// `after`), or the newest page without either.
async fn lobby_history(
    req: actix_web::HttpRequest,
    context: web::Data<AppContext>,
    MaybeSigned(viewer): MaybeSigned,
) -> Result<HttpResponse, ApiError> {
    let query: LobbyPageQuery = parse_query(&req)?;
    let before = match (query.after, query.before) {
        (None, None) => Some(i64::MAX),
        (_, before) => before,
    };
    let viewer = viewer.map(|v| v.player);
    let messages = context
        .chat
        .lobby_history(
            viewer.as_ref(),
            query.after,
            before,
            query.limit.unwrap_or(DEFAULT_PAGE),
        )
        .await?;
    Ok(HttpResponse::Ok().json(page(&messages, query.after.unwrap_or(0))))
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Why {
    reason: Option<String>,
}

/// Any player reports a message to the admins.
async fn report(
    context: web::Data<AppContext>,
    path: web::Path<String>,
    Caller(player): Caller,
    OptionalJson(body): OptionalJson<Why>,
) -> Result<HttpResponse, ApiError> {
    let message = message_id(path)?;
    let why = reason(body.reason, false)?;
    context.chat.report(&player, message, &why).await?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportView<'a> {
    message: MessageView<'a>,
    reporter: &'a PlayerRef,
    reason: &'a str,
    reported_at: Timestamp,
}

impl<'a> From<&'a ChatReport> for ReportView<'a> {
    fn from(r: &'a ChatReport) -> Self {
        Self {
            message: (&r.message).into(),
            reporter: &r.reporter,
            reason: &r.reason,
            reported_at: r.created_at,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReportsQuery {
    limit: Option<i64>,
}

/// The reports of messages not deleted yet, newest first.
async fn reports(
    req: actix_web::HttpRequest,
    context: web::Data<AppContext>,
    _admin: Admin,
) -> Result<HttpResponse, ApiError> {
    let query: ReportsQuery = parse_query(&req)?;
    let found = context
        .chat
        .reports(query.limit.unwrap_or(DEFAULT_PAGE))
        .await?;
    let reports: Vec<ReportView> = found.iter().map(ReportView::from).collect();
    Ok(HttpResponse::Ok().json(serde_json::json!({ "reports": reports })))
}

/// An admin deletes a message for everyone.
async fn delete(
    context: web::Data<AppContext>,
    path: web::Path<String>,
    AdminSays(admin, body): AdminSays<Why>,
) -> Result<HttpResponse, ApiError> {
    let message = message_id(path)?;
    let why = reason(body.reason, true)?;
    let deleted = context.chat.delete(&admin, message, &why).await?;
    Ok(HttpResponse::Ok().json(MessageView::from(&deleted)))
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Mute {
    minutes: Option<f64>,
    reason: Option<String>,
}

/// An admin mutes a player from every chat for a time (`minutes: 0` lifts it).
async fn mute(
    context: web::Data<AppContext>,
    path: web::Path<String>,
    AdminSays(admin, body): AdminSays<Mute>,
) -> Result<HttpResponse, ApiError> {
    let player = some_player(path.into_inner())?;
    let minutes = body.minutes.ok_or_else(|| {
        ApiError::InvalidBody("give minutes: how long the player may not chat (0 lifts it)".into())
    })?;
    if !(0.0..=MAX_MUTE_MINUTES).contains(&minutes) {
        return Err(ApiError::InvalidBody(format!(
            "a mute lasts from 0 (none) to {MAX_MUTE_MINUTES} minutes (30 days)"
        )));
    }
    let why = reason(body.reason, true)?;
    let (player, until) = context.chat.mute(&admin, &player, minutes, &why).await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({ "player": player, "mutedUntil": until })))
}

async fn blocks(
    context: web::Data<AppContext>,
    Caller(player): Caller,
) -> Result<HttpResponse, ApiError> {
    let blocked = context.chat.blocks(&player).await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({ "blocks": blocked })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Block {
    player: String,
}

/// The caller no longer sees that player's messages, in any chat.
async fn block(
    context: web::Data<AppContext>,
    Caller(player): Caller,
    Json(body): Json<Block>,
) -> Result<HttpResponse, ApiError> {
    let blocked = some_player(body.player)?;
    context.chat.block(&player, &blocked).await?;
    Ok(HttpResponse::NoContent().finish())
}

async fn unblock(
    context: web::Data<AppContext>,
    path: web::Path<String>,
    Caller(player): Caller,
) -> Result<HttpResponse, ApiError> {
    let blocked = some_player(path.into_inner())?;
    match context.chat.unblock(&player, &blocked).await? {
        true => Ok(HttpResponse::NoContent().finish()),
        false => Err(ChatError::PlayerNotFound.into()),
    }
}
