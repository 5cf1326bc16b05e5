//! `turnhouse dev`'s routes: the dev page of the game being written, and what it asks of the
//! server. Registered only by a server that `turnhouse dev` started (on a loopback address,
//! on the author's machine); nowhere else do they exist. They hand out the local players'
//! tokens and the room's stored state, secrets included. (They are not in `openapi.yaml`:
//! `docs/hosting.md` describes them.)

use std::sync::Arc;
use std::time::Duration;

use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use super::extract::{parse_query, Json};
use super::page::{serve, Asset};
use super::{route, ApiError, AppContext, RouteDef};
use crate::engine::{Action, Engine, EngineError, Precondition, RoomOptions};
use crate::game::{BotLevel, PlayerRef};
use crate::views::{EventView, RoomView};

/// Seats on the dev page, at most.
pub const MAX_SEATS: usize = 4;

/// How long `GET /dev/{game}/session?after=` waits for a change before answering anyway.
const LONG_POLL: Duration = Duration::from_secs(20);

pub fn routes() -> Vec<RouteDef> {
    vec![
        route(Method::GET, "/dev.js", script),
        route(Method::GET, "/dev/{game}", page),
        route(Method::GET, "/dev/{game}/session", session),
        route(Method::POST, "/dev/{game}/rooms", new_room),
        route(Method::GET, "/dev/{game}/truth", truth),
        route(Method::POST, "/dev/{game}/deadline", fire_deadline),
    ]
}

static PAGE: Asset = Asset::new(include_str!("../web/dev.html"), "text/html; charset=utf-8");
static SCRIPT: Asset = Asset::new(
    include_str!("../web/dev.js"),
    "text/javascript; charset=utf-8",
);

/// A local player of the dev session: signed in on every seat's page without a password.
#[derive(Debug, Clone, Serialize)]
pub struct LocalPlayer {
    pub id: String,
    pub username: String,
    pub token: String,
}

impl LocalPlayer {
    pub fn player_ref(&self) -> PlayerRef {
        PlayerRef {
            id: self.id.as_str().into(),
            username: self.username.clone(),
        }
    }
}

/// Why the last upload failed: the file, the line when the error names one, and the message.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct UploadFailure {
    pub file: String,
    pub line: Option<u32>,
    pub message: String,
}

/// Who sits where in a dev room: `seats` seats, one of them (0-based) a bot if asked.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Layout {
    pub seats: usize,
    pub bot: Option<BotSeatChoice>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BotSeatChoice {
    /// The seat, from 1.
    pub seat: usize,
    pub level: BotLevel,
}

/// What the dev page shows besides the rooms: every change moves `generation` on.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DevState {
    pub generation: u64,
    pub game: String,
    /// The last version published from the files (the server keeps serving it whatever the
    /// files hold now).
    pub game_version: Option<i64>,
    pub author: LocalPlayer,
    /// The local players, one per seat the page may show.
    pub players: Vec<LocalPlayer>,
    /// The room the seats show, and who sits where in it.
    pub room: Option<String>,
    pub layout: Layout,
    /// The last upload's failure, until an upload succeeds.
    pub error: Option<UploadFailure>,
    /// The files published on every save.
    pub watching: Vec<String>,
}

/// The state of one `turnhouse dev` session, shared by its file watcher and its routes.
pub struct DevSession {
    state: watch::Sender<DevState>,
}

impl DevSession {
    pub fn new(state: DevState) -> Arc<Self> {
        Arc::new(Self {
            state: watch::Sender::new(state),
        })
    }

    pub fn state(&self) -> DevState {
        self.state.borrow().clone()
    }

    /// Changes the state; the page hears of it.
    pub fn update(&self, change: impl FnOnce(&mut DevState)) {
        self.state.send_modify(|state| {
            change(state);
            state.generation += 1;
        });
    }

    /// The state once its generation is past `after`, or as it is after [`LONG_POLL`].
    async fn after(&self, after: u64) -> DevState {
        let mut changes = self.state.subscribe();
        let newer = changes.wait_for(|state| state.generation > after);
        let _ = tokio::time::timeout(LONG_POLL, newer).await;
        self.state()
    }

    /// Opens a room of the game laid out as `layout`: the local players take their seats in
    /// order, and a bot the seat it was given. It becomes the room the seats show.
    pub async fn open_room(&self, engine: &Engine, layout: Layout) -> Result<String, EngineError> {
        let state = self.state();
        let mut seated: Vec<PlayerRef> = state.players[..layout.seats]
            .iter()
            .map(LocalPlayer::player_ref)
            .collect();
        if let Some(bot) = layout.bot {
            seated[bot.seat - 1] = engine.bot_player(bot.level);
        }
        // The first human opens the room; a bot in the first seat is seated by the opening.
        let bot_first = layout.bot.filter(|bot| bot.seat == 1);
        let creator = usize::from(bot_first.is_some());
        let options = RoomOptions {
            bot: bot_first.map(|bot| crate::engine::BotSeat {
                level: bot.level,
                plays_first: true,
            }),
            ..RoomOptions::default()
        };
        let room = engine
            .create_room(&seated[creator], &state.game, options)
            .await?;
        for player in &seated[creator + 1..] {
            engine
                .act(&room.id, Action::Join(player.clone()), Precondition::Any)
                .await?;
        }
        self.update(|state| {
            state.room = Some(room.id.to_string());
            state.layout = layout;
        });
        Ok(room.id.to_string())
    }
}

/// The dev session, for the game it serves; for any other game the route does not exist.
fn session_of<'a>(
    req: &HttpRequest,
    context: &'a AppContext,
    game: &str,
) -> Result<&'a Arc<DevSession>, ApiError> {
    loopback_host(req)?;
    match &context.dev {
        Some(session) if session.state.borrow().game == game => Ok(session),
        _ => Err(ApiError::RouteNotFound {
            method: req.method().to_string(),
            path: req.path().to_owned(),
        }),
    }
}

/// Refuses a request whose `Host` is not this machine by a loopback name. The dev routes hand
/// out every seat's token: a website whose own name was made to resolve to 127.0.0.1 (DNS
/// rebinding) would otherwise reach them as a same-origin page, since its requests carry
/// its own name as the `Host`.
fn loopback_host(req: &HttpRequest) -> Result<(), ApiError> {
    let host = (req.headers().get(actix_web::http::header::HOST))
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    match is_loopback_host(host) {
        true => Ok(()),
        false => Err(ApiError::HostNotLoopback(host.to_owned())),
    }
}

/// Whether `host` (a `Host` header: a name or address, with a port or not) names this machine
/// by loopback: `localhost`, an address in 127.0.0.0/8, or `[::1]`.
pub(super) fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split_once(']').map_or("", |(address, _)| address),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

async fn script(req: HttpRequest) -> HttpResponse {
    serve(&req, &SCRIPT, false)
}

/// `GET /dev/{game}`: the dev page.
async fn page(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    session_of(&req, &context, &path)?;
    Ok(serve(&req, &PAGE, false))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionParams {
    after: Option<u64>,
}

/// `GET /dev/{game}/session`: the session's state; with `?after=G`, once it is newer than
/// generation G (or after a while).
async fn session(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let session = session_of(&req, &context, &path)?;
    let params: SessionParams = parse_query(&req)?;
    let state = match params.after {
        Some(after) => session.after(after).await,
        None => session.state(),
    };
    Ok(HttpResponse::Ok().json(state))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewRoomBody {
    seats: Option<usize>,
    /// A bot's seat; `null` for none; left out, the current room's.
    #[serde(default, deserialize_with = "present")]
    bot: Option<Option<BotSeatChoice>>,
}

/// A field that is there, `null` included, as `Some`.
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// `POST /dev/{game}/rooms`: a new room on the latest version, with the seats of the current
/// one unless the body says otherwise; the seats show it.
async fn new_room(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
    Json(body): Json<NewRoomBody>,
) -> Result<HttpResponse, ApiError> {
    let session = session_of(&req, &context, &path)?;
    let current = session.state().layout;
    let layout = Layout {
        seats: body.seats.unwrap_or(current.seats),
        bot: body.bot.unwrap_or(current.bot),
    };
    if !(1..=MAX_SEATS).contains(&layout.seats) {
        return Err(ApiError::InvalidBody(format!(
            "seats is from 1 to {MAX_SEATS}; got {}",
            layout.seats
        )));
    }
    if layout
        .bot
        .is_some_and(|bot| !(1..=layout.seats).contains(&bot.seat))
    {
        return Err(ApiError::InvalidBody(format!(
            "bot.seat is one of the {} seats, from 1",
            layout.seats
        )));
    }
    let room = session.open_room(&context.rooms, layout).await?;
    Ok(HttpResponse::Created().json(serde_json::json!({ "room": room })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RoomParams {
    room: String,
}

#[derive(Serialize)]
struct Truth<'a> {
    room: RoomView<'a>,
    events: Vec<EventView<'a>>,
}

/// `GET /dev/{game}/truth?room=`: the room and every version of it as stored, secrets and
/// all: the author's view, which no other route shows.
async fn truth(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    session_of(&req, &context, &path)?;
    let params: RoomParams = parse_query(&req)?;
    let (room, events) = context.rooms.stored_history(&params.room).await?;
    if room.game != *path {
        return Err(EngineError::RoomNotFound.into());
    }
    let truth = Truth {
        room: RoomView::new(&room, std::borrow::Cow::Borrowed(&room.state)),
        events: events.iter().map(EventView::whole).collect(),
    };
    Ok(HttpResponse::Ok().json(truth))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeadlineBody {
    room: String,
}

/// `POST /dev/{game}/deadline`: runs `onTimeout` now, as if the room's deadline had passed.
async fn fire_deadline(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
    Json(body): Json<DeadlineBody>,
) -> Result<HttpResponse, ApiError> {
    session_of(&req, &context, &path)?;
    if context.rooms.room(&body.room).await?.game != *path {
        return Err(EngineError::RoomNotFound.into());
    }
    let room = context.rooms.fire_deadline_now(&body.room).await?;
    let view = RoomView::new(&room, std::borrow::Cow::Borrowed(&room.state));
    Ok(HttpResponse::Ok().json(view))
}

#[cfg(test)]
mod tests {
    use super::is_loopback_host;

    #[test]
    fn only_loopback_names_are_this_machine() {
        for host in [
            "localhost",
            "LOCALHOST:8080",
            "127.0.0.1",
            "127.0.0.1:8080",
            "127.1.2.3:80",
            "[::1]",
            "[::1]:8080",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "",
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "127.0.0.1.nip.io",
            "10.0.0.1:8080",
            "[::2]:8080",
            "0.0.0.0",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }
}
