//! Rooms: creating, listing, watching, joining, quitting, moving, and their history.
//!
//! One stop in the life of a move: `docs/internals.md`.

use actix_web::http::{header, Method, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};

use super::extract::{
    etag, not_modified, parse_cursor, parse_query, Actor, AnyJson, IfMatch, Json, MaybeCaller,
};
use super::json_body::json_body;
use super::pages::{page_of, page_size, rows_for};
use super::{route, streams, ApiError, AppContext, RouteDef};
use crate::domain::ids::is_well_formed;
use crate::domain::records::Room;
use crate::engine::{Action, BotSeat, EngineError, Placement, RoomOptions};
use crate::game::PlayerRef;
use crate::game::{BotLevel, Clock};
use crate::store::RoomQuery;
use crate::views::{EventView, RoomView};

pub fn routes() -> Vec<RouteDef> {
    vec![
        route(Method::POST, "/rooms", create),
        route(Method::GET, "/rooms", list),
        // Before `/rooms/{id}`, which would otherwise take "quickplay" for an id.
        route(Method::POST, "/rooms/quickplay", quickplay),
        route(Method::GET, "/rooms/stream", streams::lobby),
        route(Method::GET, "/rooms/{id}", show),
        action_route("/rooms/{id}/join", Action::Join),
        action_route("/rooms/{id}/quit", Action::Quit),
        action_route("/rooms/{id}/reset", Action::Reset),
        action_route("/rooms/{id}/decline", Action::Decline),
        route(Method::POST, "/rooms/{id}/claim", claim),
        route(Method::POST, "/rooms/{id}/moves", play),
        route(Method::GET, "/rooms/{id}/events", events),
        route(Method::GET, "/rooms/{id}/stream", streams::room),
    ]
}

/// A room id from the path; one this server could not have issued is simply not found.
pub(super) fn room_id(path: web::Path<String>) -> Result<String, ApiError> {
    let id = path.into_inner();
    if is_well_formed(&id) {
        Ok(id)
    } else {
        Err(EngineError::RoomNotFound.into())
    }
}

/// A room as JSON, tagged with its version.
/// The room as `viewer` sees it. What a room looks like depends on who asks, so caches are
/// told so (`Vary: Authorization`).
pub(super) async fn room_response(
    context: &AppContext,
    status: StatusCode,
    room: &Room,
    viewer: Option<&PlayerRef>,
) -> Result<HttpResponse, ApiError> {
    let view = context.rooms.view_room(room, viewer).await?;
    Ok(json_body(
        HttpResponse::build(status)
            .insert_header((header::ETAG, etag(room.version)))
            .insert_header((header::VARY, "Authorization")),
        &view,
    ))
}

/// A room as JSON, with `Location` (for a room just created).
async fn created_response(
    context: &AppContext,
    room: &Room,
    viewer: &PlayerRef,
) -> Result<HttpResponse, ApiError> {
    let mut response = room_response(context, StatusCode::CREATED, room, Some(viewer)).await?;
    response.headers_mut().insert(
        header::LOCATION,
        header::HeaderValue::from_str(&format!("/rooms/{}", room.id)).expect("ids are header-safe"),
    );
    Ok(response)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NewRoom {
    game: String,
    #[serde(default)]
    private: bool,
    bot: Option<BotLevel>,
    bot_plays_first: Option<bool>,
    clock: Option<ClockBody>,
    /// `false` opts a public room out of ratings.
    rated: Option<bool>,
}

/// `{"moveSeconds": N}` as a client writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ClockBody {
    #[serde(default, deserialize_with = "super::extract::whole_number")]
    move_seconds: Option<usize>,
}

/// `clock`, if given (and not null), within its bounds.
fn checked_clock(clock: Option<ClockBody>) -> Result<Option<Clock>, ApiError> {
    let Some(clock) = clock else {
        return Ok(None);
    };
    let max = Clock::MAX_MOVE_SECONDS as usize;
    match clock.move_seconds {
        Some(seconds) if (1..=max).contains(&seconds) => Ok(Some(Clock {
            move_seconds: seconds as u32,
        })),
        Some(seconds) => Err(ApiError::InvalidBody(format!(
            "clock.moveSeconds must be between 1 and {max}; got {seconds}"
        ))),
        None => Err(ApiError::InvalidBody(format!(
            "a clock is {{\"moveSeconds\": N}}, N from 1 to {max}"
        ))),
    }
}

/// Creates a room of a game with the caller as its first player, and a bot if asked for.
async fn create(
    context: web::Data<AppContext>,
    Actor(player): Actor,
    Json(body): Json<NewRoom>,
) -> Result<HttpResponse, ApiError> {
    let bot = match (body.bot, body.bot_plays_first) {
        (None, Some(true)) => {
            return Err(ApiError::InvalidBody(
                "botPlaysFirst needs a bot: add \"bot\": \"easy\", \"medium\" or \"hard\"".into(),
            ))
        }
        (None, _) => None,
        (Some(level), first) => Some(BotSeat {
            level,
            plays_first: first.unwrap_or(false),
        }),
    };
    let options = RoomOptions {
        private: body.private,
        bot,
        clock: checked_clock(body.clock)?,
        rated: body.rated,
    };
    let room = context
        .rooms
        .create_room(&player, &body.game, options)
        .await?;
    created_response(&context, &room, &player).await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct QuickPlay {
    game: String,
    clock: Option<ClockBody>,
}

/// Joins the oldest open public room of the game (200), or opens one (201).
async fn quickplay(
    context: web::Data<AppContext>,
    Actor(player): Actor,
    Json(body): Json<QuickPlay>,
) -> Result<HttpResponse, ApiError> {
    let clock = checked_clock(body.clock)?;
    let (room, placement) = context.rooms.quickplay(&player, &body.game, clock).await?;
    match placement {
        Placement::Joined => room_response(&context, StatusCode::OK, &room, Some(&player)).await,
        Placement::Created => created_response(&context, &room, &player).await,
    }
}

const DEFAULT_PAGE: i64 = 20;
const MAX_PAGE: i64 = 100;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListParams {
    game: Option<String>,
    joinable: Option<bool>,
    finished: Option<bool>,
    player: Option<String>,
    limit: Option<i64>,
    cursor: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RoomPage<'a> {
    rooms: Vec<RoomView<'a>>,
    next_cursor: Option<String>,
}

/// A page of rooms, newest first. Private rooms are listed only to their own players, and only
/// when they ask for their rooms (`player=<their id>`).
async fn list(
    req: HttpRequest,
    context: web::Data<AppContext>,
    MaybeCaller(caller): MaybeCaller,
) -> Result<HttpResponse, ApiError> {
    let params: ListParams = parse_query(&req)?;
    let limit = page_size(params.limit, DEFAULT_PAGE, MAX_PAGE)?;
    let before_seq = parse_cursor(params.cursor)?;
    if let Some(game) = &params.game {
        context.catalog.require_game(game).await?;
    }
    let include_private = matches!((&caller, &params.player), (Some(me), Some(p)) if &me.id == p);
    let query = RoomQuery {
        game: params.game.map(Into::into),
        joinable: params.joinable,
        finished: params.finished,
        player: params.player.map(Into::into),
        include_private,
        before_seq,
        limit: rows_for(limit),
    };
    let rows = context.rooms.rooms(&query).await?;
    let (rows, next_cursor) = page_of(rows, limit, |(seq, _)| seq.to_string());
    let mut rooms = Vec::with_capacity(rows.len());
    for (_, room) in &rows {
        rooms.push(
            context
                .rooms
                .view_listed_room(room, caller.as_ref())
                .await?,
        );
    }
    Ok(HttpResponse::Ok()
        .insert_header((header::VARY, "Authorization"))
        .json(RoomPage { rooms, next_cursor }))
}

/// The room, with `ETag: "<version>"`; `If-None-Match` with that tag answers 304.
async fn show(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
    MaybeCaller(caller): MaybeCaller,
) -> Result<HttpResponse, ApiError> {
    let room = context.rooms.room(&room_id(path)?).await?;
    // One viewer's copy of a version never changes, and another viewer's request carries
    // another token: the version is the tag, and `Vary: Authorization` keeps them apart.
    if not_modified(&req, room.version) {
        return Ok(HttpResponse::NotModified()
            .insert_header((header::ETAG, etag(room.version)))
            .insert_header((header::VARY, "Authorization"))
            .finish());
    }
    room_response(&context, StatusCode::OK, &room, caller.as_ref()).await
}

/// A route for an action that is a bodiless POST on a room: join, quit, play again.
fn action_route(path: &'static str, action: fn(PlayerRef) -> Action) -> RouteDef {
    let handler = move |context: web::Data<AppContext>,
                        path: web::Path<String>,
                        Actor(player): Actor,
                        IfMatch(pinned): IfMatch| async move {
        let (rooms, id) = (&context.rooms, room_id(path)?);
        let room = rooms.act(&id, action(player.clone()), pinned).await?;
        room_response(&context, StatusCode::OK, &room, Some(&player)).await
    };
    route(Method::POST, path, handler)
}

/// Claims a game in play that has stood still for the claim period from the player it waits
/// on, whose `onPlayerQuit` runs.
async fn claim(
    context: web::Data<AppContext>,
    path: web::Path<String>,
    Actor(player): Actor,
) -> Result<HttpResponse, ApiError> {
    let room = context.rooms.claim(&room_id(path)?, &player).await?;
    room_response(&context, StatusCode::OK, &room, Some(&player)).await
}

/// The body is the move, any JSON the game understands.
async fn play(
    context: web::Data<AppContext>,
    path: web::Path<String>,
    Actor(player): Actor,
    IfMatch(pinned): IfMatch,
    AnyJson(mv): AnyJson,
) -> Result<HttpResponse, ApiError> {
    let action = Action::Move(player.clone(), mv.into());
    let room = context.rooms.act(&room_id(path)?, action, pinned).await?;
    room_response(&context, StatusCode::OK, &room, Some(&player)).await
}

const DEFAULT_EVENTS: i64 = 100;
const MAX_EVENTS: i64 = 1000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EventParams {
    after: Option<i64>,
    limit: Option<i64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EventPage<'a> {
    events: Vec<EventView<'a>>,
    /// Pass as `after` for the next page; `null` when this page reaches the latest version.
    next_after: Option<i64>,
}

/// The room's history, one entry per version, oldest first.
async fn events(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
    MaybeCaller(caller): MaybeCaller,
) -> Result<HttpResponse, ApiError> {
    let params: EventParams = parse_query(&req)?;
    let after = params.after.unwrap_or(0);
    let limit = params.limit.unwrap_or(DEFAULT_EVENTS);
    if after < 0 || !(1..=MAX_EVENTS).contains(&limit) {
        return Err(ApiError::InvalidQuery(format!(
            "after must be a version (0 or more) and limit from 1 to {MAX_EVENTS}"
        )));
    }
    let (room, events) = context
        .rooms
        .events(&room_id(path)?, after, rows_for(limit))
        .await?;
    let (events, next_after) = page_of(events, limit, |e| e.version);
    let events = context
        .rooms
        .view_events(&room, &events, caller.as_ref())
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::VARY, "Authorization"))
        .json(EventPage { events, next_after }))
}
