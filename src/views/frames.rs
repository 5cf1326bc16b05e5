//! Every frame the streams send (server-sent events), in one place: a room's versions and the
//! lobby's changes, built from the views, and the few frames of the wire format itself. Each
//! frame is built once and shared by every subscriber it is for.
//!
//! One stop in the life of a move: `docs/internals.md`.

use bytes::Bytes;
use serde::Serialize;

use super::{EventView, RoomHeader, RoomView};
use crate::domain::records::{GameLogLine, LobbyChange};

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

/// `id: <line id>`, `event: log`, the line as JSON (a game's log, for its owner).
pub fn log_frame(line: &GameLogLine) -> Bytes {
    let json = serde_json::to_string(line).expect("log lines always serialise");
    format!("id: {}\nevent: log\ndata: {json}\n\n", line.id).into()
}

/// `event: presence`, `{"online": [player ids]}`: who of a room's players has it open now.
/// Not a version, so no `id`: a client resuming goes on from the last version it saw.
pub fn presence_frame(online: &[&str]) -> Bytes {
    let json = serde_json::to_string(&serde_json::json!({ "online": online }))
        .expect("ids always serialise");
    format!("event: presence\ndata: {json}\n\n").into()
}

/// `event: online`, `{"players": N}`: how many players have a stream open, on any server.
pub fn online_count_frame(players: usize) -> Bytes {
    format!("event: online\ndata: {{\"players\":{players}}}\n\n").into()
}

/// Tells a lobby client that it missed events and should list the rooms again.
pub fn resync_frame() -> Bytes {
    Bytes::from_static(b"event: resync\ndata: {}\n\n")
}

/// A comment line, which clients ignore: it keeps proxies from closing an idle stream.
pub fn comment_frame() -> Bytes {
    Bytes::from_static(b": keep-alive\n\n")
}

/// How long a client waits before reconnecting.
pub fn retry_frame(millis: u64) -> Bytes {
    format!("retry: {millis}\n\n").into()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use serde_json::Value;

    use super::*;
    use crate::domain::records::{EventKind, RoomEvent};
    use crate::game::PlayerRef;

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
            mv: Some(json!({"text": "two\nlines"}).into()),
            state: json!({"board": [null, "X"]}).into(),
            joinable: false,
            finished: false,
            players: vec![alice].into(),
            created_at: crate::domain::time::Timestamp::parse("2026-01-01T00:00:00.000Z").unwrap(),
            rating_changes: Vec::new(),
            to_move: None,
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
