//! What leaves the server about a room: the one place a stored room or history entry becomes
//! the JSON a client receives. HTTP bodies, history pages and stream events are all built from
//! these views, and the records they come from (`model::Room`, `model::RoomEvent`) are not
//! serialisable themselves, so nothing about a room can leave by another way.
//!
//! A view is given the state its viewer may see (and, for history, the move), which the
//! engine decides (see `Engine::viewed`): the stored state, or what the game's view hook makes
//! of it for that viewer.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::borrow::Cow;

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

use crate::game::{Clock, PlayerRef};
use crate::model::{LobbyChange, Room, RoomEvent};

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
    state: Cow<'a, Value>,
    trigger_timeout_at: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    clock: Option<Clock>,
    created_at: &'a str,
    updated_at: &'a str,
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
            state,
            trigger_timeout_at: room.trigger_timeout_at.as_deref(),
            clock: room.clock,
            created_at: &room.created_at,
            updated_at: &room.updated_at,
        }
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
    trigger_timeout_at: Option<&'a str>,
    created_at: &'a str,
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
            trigger_timeout_at: event.trigger_timeout_at.as_deref(),
            created_at: &event.created_at,
        }
    }

    /// `event` as it was stored: for games without a view hook, what everyone sees.
    pub fn whole(event: &'a RoomEvent) -> Self {
        Self::new(
            event,
            Cow::Borrowed(&event.state),
            event.mv.as_ref().map(Cow::Borrowed),
        )
    }
}

/// Which room a stream's version frames belong to.
#[derive(Debug, Clone)]
pub struct RoomHeader {
    pub id: String,
    pub game: String,
    pub game_version: Option<i64>,
}

impl From<&Room> for RoomHeader {
    fn from(room: &Room) -> Self {
        Self {
            id: room.id.clone(),
            game: room.game.clone(),
            game_version: room.game_version,
        }
    }
}

/// One version as a stream event: the history entry plus what a client needs to draw it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VersionData<'a> {
    room: &'a str,
    game: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    game_version: Option<i64>,
    #[serde(flatten)]
    event: &'a EventView<'a>,
}

/// `id: <version>`, `event: version`, the version as JSON. JSON from serde never contains a
/// raw newline, so `data:` is one line.
pub fn version_frame(room: &RoomHeader, event: &EventView) -> Bytes {
    let data = VersionData {
        room: &room.id,
        game: &room.game,
        game_version: room.game_version,
        event,
    };
    let json = serde_json::to_string(&data).expect("events always serialise");
    format!("id: {}\nevent: version\ndata: {json}\n\n", event.version).into()
}

#[derive(Serialize)]
struct LobbyData<'a> {
    change: LobbyChange,
    room: &'a RoomView<'a>,
}

/// `event: room`, `{"change": …, "room": …}`. Lobby events carry no id: a client that
/// reconnects lists the rooms again.
pub fn lobby_frame(change: LobbyChange, room: &RoomView) -> Bytes {
    let json = serde_json::to_string(&LobbyData { change, room }).expect("rooms always serialise");
    format!("event: room\ndata: {json}\n\n").into()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::EventKind;

    #[test]
    fn a_version_frame_is_one_event_with_everything_to_draw_it() {
        let alice = PlayerRef {
            id: "a1".into(),
            username: "alice".into(),
        };
        let event = RoomEvent {
            trigger_timeout_at: None,
            version: 7,
            kind: EventKind::Move,
            player: Some(alice.clone()),
            mv: Some(json!({"text": "two\nlines"})),
            state: json!({"board": [null, "X"]}),
            joinable: false,
            finished: false,
            players: vec![alice],
            created_at: "2026-01-01T00:00:00.000Z".into(),
        };
        let header = RoomHeader {
            id: "r1".into(),
            game: "hosted".into(),
            game_version: Some(3),
        };
        let frame = version_frame(&header, &EventView::whole(&event));
        let frame = String::from_utf8(frame.to_vec()).unwrap();
        let lines: Vec<&str> = frame.split('\n').collect();
        assert_eq!(lines[0], "id: 7");
        assert_eq!(lines[1], "event: version");
        assert_eq!(lines[3..], ["", ""], "one data line, then the blank line");
        let data: Value = serde_json::from_str(lines[2].strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(data["room"], "r1");
        assert_eq!(data["gameVersion"], 3);
        assert_eq!(data["version"], 7);
        assert_eq!(data["kind"], "move");
        assert_eq!(data["move"]["text"], "two\nlines");
        assert_eq!(data["players"][0]["username"], "alice");
        assert_eq!(data["state"]["board"][1], "X");
        assert_eq!(data["triggerTimeoutAt"], Value::Null);
    }
}
