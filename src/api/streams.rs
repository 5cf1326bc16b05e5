//! Server-sent event streams: one room's versions, resumable, and the lobby's changes (and
//! what every stream shares: who opened it, where it resumes, its keep-alives and its end).
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::time::Duration;

use actix_web::http::header::{self, ContentEncoding};
use actix_web::{web, HttpRequest, HttpResponse};
use bytes::Bytes;
use futures_util::future::LocalBoxFuture;
use futures_util::stream::{self, Stream};
use rand::Rng;
use serde::Deserialize;
use tokio::sync::watch;
use tokio::time::{interval_at, Instant, Interval};

use super::extract::{parse_query, MaybeSigned};
use super::rooms::room_id;
use super::{ApiError, AppContext};
use crate::accounts::{Accounts, SignedIn};

use crate::live::{Feed, PresentWhileOpen, LOBBY};
use crate::metrics::Held;
use crate::store::StoreError;
use crate::views::{comment_frame, retry_frame};

/// Browsers reconnect after `retry` milliseconds: this much, plus up to `RETRY_SPREAD_MS` so a
/// restarted server is not hit by every client in the same instant.
const RETRY_BASE_MS: u64 = 1_000;
const RETRY_SPREAD_MS: u64 = 2_000;

/// The longest a stream whose viewer shows as online goes without writing: a closed
/// connection is noticed at the second write after it closed, so a player who leaves shows as
/// gone within about two of these.
const PRESENCE_PULSE: Duration = Duration::from_secs(1);

/// What ends every open stream when the server stops.
pub type StreamsShutdown = watch::Receiver<bool>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RoomStreamParams {
    after: Option<i64>,
    /// The last chat message the client has accounted for, for clients that reopen a stream
    /// themselves (`Last-Event-ID`, when sent, wins).
    chat_after: Option<i64>,
    /// The viewer's token, for clients that cannot set headers (a browser's `EventSource`):
    /// RFC 6750 §2.3. Only the stream routes take it; the request log never records queries.
    access_token: Option<String>,
}

/// `GET /rooms/{id}/stream`: the current version (or every version after `Last-Event-ID`, or
/// after `?after=`), then each new one as it is committed.
pub async fn room(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
    MaybeSigned(caller): MaybeSigned,
) -> Result<HttpResponse, ApiError> {
    let params: RoomStreamParams = parse_query(&req)?;
    let viewer = stream_viewer(&context, caller, params.access_token).await?;
    let after = resume_after(&req, params.after, "a version the client has seen")?;
    let chat_after = resumed_chat(&req, params.chat_after)?;
    let player = viewer.as_ref().map(|v| v.player.clone());
    let room = room_id(path)?;
    let chat = (context.chat)
        .follow_room(&room, player.as_ref().map(|p| &p.id), chat_after)
        .await?;
    // Present before the feed reads who is: the stream's first word on it counts its viewer.
    let here = viewer
        .as_ref()
        .map(|v| context.rooms.arrive(&room, &v.player.id));
    let feed = context.rooms.room_feed(&room, after, player, chat).await?;
    Ok(event_stream_response(feed, &context, viewer, here))
}

/// Who opened a stream: the caller of the `Authorization` header, or else of `?access_token=`
/// (for a browser's `EventSource`, which cannot set headers).
pub(super) async fn stream_viewer(
    context: &AppContext,
    caller: Option<SignedIn>,
    access_token: Option<String>,
) -> Result<Option<SignedIn>, ApiError> {
    Ok(match (caller, access_token) {
        (Some(caller), _) => Some(caller),
        (None, Some(token)) => Some(
            context
                .accounts
                .authenticate(&token)
                .await?
                .ok_or(ApiError::InvalidToken)?,
        ),
        (None, None) => None,
    })
}

/// Where a stream resumes: after the `Last-Event-ID` header's event, else after `?after=`
/// (`what` it names, 0 or more), else from now. A reconnecting browser sends Last-Event-ID on
/// the URL it first opened, so the header says more recently where the client has read up to.
pub(super) fn resume_after(
    req: &HttpRequest,
    after: Option<i64>,
    what: &str,
) -> Result<Option<i64>, ApiError> {
    if after.is_some_and(|after| after < 0) {
        return Err(ApiError::InvalidQuery(format!(
            "after must be {what} (0 or more)"
        )));
    }
    match req.headers().get("last-event-id") {
        Some(value) => Ok(Some(last_event_id(value)?.0)),
        None => Ok(after),
    }
}

/// Where a room stream's chat resumes: after the message the `Last-Event-ID` header names
/// (`<version>:<message>`), else after `?chat_after=`, else from now.
fn resumed_chat(req: &HttpRequest, chat_after: Option<i64>) -> Result<Option<i64>, ApiError> {
    if chat_after.is_some_and(|after| after < 0) {
        return Err(ApiError::InvalidQuery(
            "chat_after must be a message the client has seen (0 or more)".into(),
        ));
    }
    match req.headers().get("last-event-id") {
        Some(value) => Ok(last_event_id(value)?.1),
        None => Ok(chat_after),
    }
}

/// An event's id: a number, or (a room's stream with chat) `<version>:<message>`.
fn last_event_id(value: &header::HeaderValue) -> Result<(i64, Option<i64>), ApiError> {
    // Digits only, as openapi.yaml's pattern says: no sign, no spaces inside.
    let number = |text: &str| {
        Some(text)
            .filter(|t| (1..=18).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|t| t.parse::<i64>().ok())
    };
    let text = value.to_str().ok().map(str::trim).unwrap_or_default();
    let id = match text.split_once(':') {
        Some((first, second)) => number(first).zip(number(second).map(Some)),
        None => number(text).map(|first| (first, None)),
    };
    id.ok_or_else(|| {
        ApiError::InvalidHeader(
            "Last-Event-ID must be the id of an event the stream sent (0 or more)".into(),
        )
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LobbyStreamParams {
    game: Option<String>,
    /// The last chat message the client has seen (`Last-Event-ID`, when sent, wins).
    after: Option<i64>,
    access_token: Option<String>,
}

/// `GET /rooms/stream`: how many players are online, then every public room (of `?game=`)
/// created, opened, filled, emptied or finished from now on, each change of how many are
/// online, and the lobby's chat (after the `Last-Event-ID` message, or from now). A signed-in
/// viewer counts as online while it is open.
pub async fn lobby(
    req: HttpRequest,
    context: web::Data<AppContext>,
    MaybeSigned(caller): MaybeSigned,
) -> Result<HttpResponse, ApiError> {
    let params: LobbyStreamParams = parse_query(&req)?;
    let viewer = stream_viewer(&context, caller, params.access_token).await?;
    // Present before the feed reads the count: the stream's first word on it counts its viewer.
    let chat_after = resume_after(&req, params.after, "a message the client has seen")?;
    let reader = viewer.as_ref().map(|v| &v.player.id);
    let chat = context.chat.follow_lobby(reader, chat_after).await?;
    let here = (viewer.as_ref()).map(|v| context.rooms.arrive(LOBBY, &v.player.id));
    let feed = context.rooms.lobby_feed(params.game, chat).await?;
    Ok(event_stream_response(feed, &context, viewer, here))
}

/// `feed` as a stream; `viewer`, who opened it, is seen for as long as it is open, and the
/// stream ends as soon as their session does. With `here`, the viewer shows as online while
/// the stream is open: it then sends a keep-alive every [`PRESENCE_PULSE`] at least, since a
/// closed connection is only noticed when a write fails.
pub(super) fn event_stream_response(
    feed: impl Feed + 'static,
    context: &AppContext,
    viewer: Option<SignedIn>,
    here: Option<PresentWhileOpen>,
) -> HttpResponse {
    let keepalive = match here {
        Some(_) => context.stream_keepalive.min(PRESENCE_PULSE),
        None => context.stream_keepalive,
    };
    let every = context.rooms.idle_rules().seen_every();
    let presence = viewer.map(|viewer| Presence {
        every: interval_at(Instant::now() + every, every),
        accounts: context.accounts.clone(),
        ended: context.accounts.ended_sessions(),
        viewer,
    });
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        // Proxies such as nginx would otherwise hold events back to fill a buffer.
        .insert_header(("X-Accel-Buffering", "no"))
        // Keeps the compression middleware out: it would hold events back the same way.
        .insert_header(ContentEncoding::Identity)
        .streaming(frames(
            feed,
            context.streams_shutdown.clone(),
            keepalive,
            (context.open_streams.hold(), here),
            presence,
        ))
}

/// Marks a stream's viewer seen while it is open (see `accounts::last_seen`), and watches for the
/// end of their session.
struct Presence {
    accounts: Accounts,
    viewer: SignedIn,
    every: Interval,
    ended: watch::Receiver<std::sync::Arc<Vec<String>>>,
}

/// A feed's `next`, owning the feed until it answers.
type NextFrame<F> = LocalBoxFuture<'static, (F, Result<Option<Bytes>, StoreError>)>;

/// Asks `feed` for its next frame. The stream keeps this one future until it answers, across
/// keep-alives and presence ticks, so a feed is never dropped halfway through a frame (a
/// version taken from the channel while its view is computed would be lost with it).
fn next_frame<F: Feed + 'static>(mut feed: F) -> NextFrame<F> {
    Box::pin(async move {
        let next = feed.next().await;
        (feed, next)
    })
}

struct Streaming<F> {
    next: NextFrame<F>,
    keepalive: Interval,
    shutdown: StreamsShutdown,
    opening: Option<Bytes>,
    presence: Option<Presence>,
    /// The server is stopping and the stream's last frame (a short `retry:`) is sent.
    closed: bool,
    /// Counts the stream as open, and its viewer as here, until it is dropped.
    _open: (Held, Option<PresentWhileOpen>),
}

/// When the server stops, a stream's last frame asks the browser to reconnect within this
/// (spread, so the others' servers are not hit in one instant): at once, to another server
/// behind the same address.
const STOPPING_RETRY_SPREAD_MS: u64 = 500;

/// The stream's next presence event: `true` when the viewer's session ended (the stream goes
/// with it), `false` for a tick that marked the viewer seen. Never, for a stream without one.
async fn session_ended(presence: &mut Option<Presence>) -> bool {
    let Some(presence) = presence else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = presence.every.tick() => {
            presence.accounts.seen(&presence.viewer.player, Some(&presence.viewer.session));
            false
        }
        changed = presence.ended.changed() => {
            // Its session ended, or its token was replaced: the stream goes unless the token it
            // was opened with still works.
            let mentioned = changed.is_ok()
                && presence.ended.borrow_and_update().iter().any(|id| presence.viewer.session == *id);
            mentioned && !presence.accounts.still_signed_in(&presence.viewer).await
        }
    }
}

/// The feed's frames, a comment whenever it has been quiet for `keepalive`, and the end as
/// soon as the server begins to stop.
fn frames<F: Feed + 'static>(
    feed: F,
    shutdown: StreamsShutdown,
    keepalive: Duration,
    open: (Held, Option<PresentWhileOpen>),
    presence: Option<Presence>,
) -> impl Stream<Item = Result<Bytes, std::convert::Infallible>> {
    let retry = RETRY_BASE_MS + rand::rng().random_range(0..RETRY_SPREAD_MS);
    let start = Streaming {
        next: next_frame(feed),
        keepalive: interval_at(Instant::now() + keepalive, keepalive),
        shutdown,
        opening: Some(retry_frame(retry)),
        presence,
        closed: false,
        _open: open,
    };
    stream::unfold(start, |mut state| async move {
        if state.closed {
            return None;
        }
        if let Some(opening) = state.opening.take() {
            return Some((Ok(opening), state));
        }
        let mut stopping = false;
        let frame = loop {
            let Streaming {
                next,
                keepalive,
                shutdown,
                presence,
                ..
            } = &mut state;
            let seen = session_ended(presence);
            break tokio::select! {
                biased;
                _ = shutdown.wait_for(|stopping| *stopping) => {
                    stopping = true;
                    retry_frame(rand::rng().random_range(0..STOPPING_RETRY_SPREAD_MS))
                }
                (feed, answer) = &mut *next => match answer {
                    Ok(Some(frame)) => {
                        *next = next_frame(feed);
                        keepalive.reset();
                        frame
                    }
                    Ok(None) => return None,
                    Err(err) => {
                        // The client reconnects with Last-Event-ID and resumes where it was.
                        tracing::warn!(error = %err, "a stream could not read the history; closing it");
                        return None;
                    }
                },
                _ = keepalive.tick() => comment_frame(),
                // The viewer signed out, or was signed out: the stream ends with the session.
                ended = seen => match ended {
                    true => return None,
                    // The viewer is still here; nothing is sent.
                    false => continue,
                },
            };
        };
        state.closed = stopping;
        Some((Ok(frame), state))
    })
}
