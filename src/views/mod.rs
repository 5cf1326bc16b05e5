//! What leaves the server about a room: the one place a stored room or history entry becomes
//! the JSON a client receives. HTTP bodies, history pages and stream events are all built from
//! these views, and the records they come from (`records::Room`, `records::RoomEvent`) are not
//! serialisable themselves, so nothing about a room can leave by another way.
//!
//! A view is given the state its viewer may see (and, for history, the move), which the
//! engine decides (see `Engine::viewed`): the stored state, or what the game's view hook makes
//! of it for that viewer.
//!
//! Every frame that leaves the server on a stream is built beside these views, in [`frames`],
//! and from them.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::domain::ids::{PlayerId, RoomId};
use crate::domain::records::{RatingChange, Rematch, Room, RoomEvent, Score};
use crate::domain::time::Timestamp;
use crate::game::{Clock, PlayerRef};

/// A room as one viewer receives it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoomView<'a> {
    id: &'a str,
    game: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    game_version: Option<i64>,
    players: &'a [PlayerRef],
    inactive_players: &'a [PlayerRef],
    version: i64,
    joinable: bool,
    finished: bool,
    private: bool,
    /// Whether finishing its games changes the players' ratings.
    rated: bool,
    state: Cow<'a, Value>,
    trigger_timeout_at: Option<Timestamp>,
    /// The players whose move it is (none when the room waits on nobody); null when the game
    /// could not say.
    to_move: Option<&'a [PlayerId]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    clock: Option<Clock>,
    /// Seats "Play again" holds for the last game's other players, until `until`.
    #[serde(skip_serializing_if = "Option::is_none")]
    rematch: Option<&'a Rematch>,
    /// The room's games so far; absent until one has finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<&'a Score>,
    /// When a room waiting for players is closed if nobody joins before.
    #[serde(skip_serializing_if = "Option::is_none")]
    closes_at: Option<Timestamp>,
    /// When a game in play can be claimed from the player it waits on, if nothing happens
    /// before.
    #[serde(skip_serializing_if = "Option::is_none")]
    claimable_at: Option<Timestamp>,
    created_at: &'a Timestamp,
    updated_at: &'a Timestamp,
    /// Its players with a stream of it open now, on any server.
    online: Vec<String>,
    /// In a listing, the code of the fault that kept this viewer's view of the state from
    /// being made (the state is then `null`).
    #[serde(skip_serializing_if = "Option::is_none")]
    view_fault: Option<&'static str>,
}

impl<'a> RoomView<'a> {
    /// `room`, showing `state` as its state.
    pub fn new(room: &'a Room, state: Cow<'a, Value>) -> Self {
        Self {
            id: &room.id,
            game: &room.game,
            game_version: room.game_version,
            players: &room.players,
            inactive_players: &room.inactive_players,
            version: room.version,
            joinable: room.joinable,
            finished: room.finished,
            private: room.private,
            rated: room.rated,
            state,
            trigger_timeout_at: room.trigger_timeout_at,
            to_move: room.to_move.as_deref(),
            clock: room.clock,
            rematch: room.rematch.as_ref(),
            score: (room.score.games > 0).then_some(&room.score),
            closes_at: None,
            claimable_at: None,
            created_at: &room.created_at,
            updated_at: &room.updated_at,
            online: Vec::new(),
            view_fault: None,
        }
    }

    /// Without its state, which the game's view hook failed to make (`code` says how).
    pub fn with_view_fault(mut self, code: &'static str) -> Self {
        self.view_fault = Some(code);
        self
    }

    /// With which of its players have a stream of it open.
    pub fn with_online(mut self, online: Vec<String>) -> Self {
        self.online = online;
        self
    }

    /// With when the room closes if nobody joins, and when it can be claimed if nobody
    /// moves (the engine's rules decide both).
    pub fn with_idle_times(
        mut self,
        closes_at: Option<Timestamp>,
        claimable_at: Option<Timestamp>,
    ) -> Self {
        self.closes_at = closes_at;
        self.claimable_at = claimable_at;
        self
    }
}

/// One version of a room's history as one viewer receives it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventView<'a> {
    version: i64,
    kind: &'static str,
    player: Option<&'a PlayerRef>,
    #[serde(rename = "move")]
    mv: Option<Cow<'a, Value>>,
    state: Cow<'a, Value>,
    joinable: bool,
    finished: bool,
    players: &'a [PlayerRef],
    trigger_timeout_at: Option<Timestamp>,
    /// Whose move it was at this version (see [`RoomView`]'s).
    to_move: Option<&'a [PlayerId]>,
    created_at: &'a Timestamp,
    /// How a finished rated game changed each player's rating.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    rating_changes: &'a [RatingChange],
}

impl<'a> EventView<'a> {
    /// `event`, showing `state` and `mv` as its state and move.
    pub fn new(event: &'a RoomEvent, state: Cow<'a, Value>, mv: Option<Cow<'a, Value>>) -> Self {
        Self {
            version: event.version,
            kind: event.kind.as_str(),
            player: event.player.as_ref(),
            mv,
            state,
            joinable: event.joinable,
            finished: event.finished,
            players: &event.players,
            trigger_timeout_at: event.trigger_timeout_at,
            to_move: event.to_move.as_deref(),
            created_at: &event.created_at,
            rating_changes: &event.rating_changes,
        }
    }

    /// `event` as it was stored: for games without a view hook, what everyone sees.
    pub fn whole(event: &'a RoomEvent) -> Self {
        Self::new(
            event,
            Cow::Borrowed(&event.state),
            event.mv.as_deref().map(Cow::Borrowed),
        )
    }
}

/// Which room a stream's version frames belong to.
#[derive(Debug, Clone)]
pub struct RoomHeader {
    pub id: RoomId,
    pub game: String,
    pub game_version: Option<i64>,
}

impl From<&Room> for RoomHeader {
    fn from(room: &Room) -> Self {
        Self {
            id: room.id.clone(),
            game: room.game.to_string(),
            game_version: room.game_version,
        }
    }
}

mod frames;
pub use frames::{
    comment_frame, lobby_frame, log_frame, online_count_frame, presence_frame, resync_frame,
    retry_frame, version_frame,
};

mod chat;
pub use chat::{chat_frame, MessageView};
