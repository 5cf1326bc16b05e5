//! The events a room's commit sends out, and their bodies: `{type, timestamp, data}`, as
//! Standard Webhooks has them. What each type carries is listed in `docs/webhooks.md` and in
//! `openapi.yaml`'s `webhooks`.
//!
//! A commit only notes which events it makes ([`Notice`]: a type and a version, and for a
//! finished game its winners and rating changes). The body is made when the event is
//! delivered, from that version of the room's history, which never changes: the same body on
//! every attempt, and nothing on the move's path but a small row per endpoint.
//!
//! An endpoint gets its game's truth, as the game's hooks do: the whole state, every player,
//! the move. Nothing carries a token or a password hash: players are `{id, username}`.

use serde_json::{json, Value};

use super::ids::PlayerId;
use super::records::{EventKind, RatingChange, Room, RoomEvent};
use super::time::Timestamp;
use super::webhooks::{EventType, EventTypes};

/// An event of a room, as its commit notes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub kind: EventType,
    /// The version of the room's history the event's body is made from.
    pub version: i64,
    pub created_at: Timestamp,
    /// What the history does not hold: a finished game's winners and rating changes.
    pub extra: Option<Value>,
}

/// What a room's commit did, as far as its events go.
pub struct CommitStory<'a> {
    pub room: &'a Room,
    /// Whether the commit opened the room.
    pub created: bool,
    /// Whether the room was joinable, and finished, before the commit.
    pub joinable_before: bool,
    pub finished_before: bool,
    /// One per version the commit adds, oldest first.
    pub versions: &'a [RoomEvent],
    /// The winners of the game the commit finished, when it finished one and they are known.
    pub winners: Option<&'a [PlayerId]>,
    /// What the rated game the commit finished did to its players' ratings.
    pub rating_changes: &'a [RatingChange],
}

impl CommitStory<'_> {
    /// The events of types in `wanted` the commit makes, in the order they happened.
    pub fn notices(&self, wanted: EventTypes) -> Vec<Notice> {
        let mut out = Vec::new();
        let (mut joinable, mut finished) = (self.joinable_before, self.finished_before);
        for (at, version) in self.versions.iter().enumerate() {
            let mut push = |kind: EventType, extra: Option<Value>| {
                if wanted.contains(kind) {
                    out.push(Notice {
                        kind,
                        version: version.version,
                        created_at: version.created_at,
                        extra,
                    });
                }
            };
            if at == 0 && self.created {
                push(EventType::RoomCreated, None);
            }
            match (version.kind, &version.player) {
                (EventKind::Join, Some(_)) => push(EventType::PlayerJoined, None),
                (EventKind::Quit | EventKind::Abandoned, Some(_)) => {
                    push(EventType::PlayerLeft, None)
                }
                _ => {}
            }
            push(EventType::VersionCreated, None);
            if joinable && !version.joinable && !version.finished {
                push(EventType::RoomStarted, None);
            }
            if !finished && version.finished {
                match version.kind {
                    EventKind::Closed => push(EventType::RoomClosed, None),
                    _ => push(
                        EventType::RoomFinished,
                        Some(json!({
                            "winners": self.winners,
                            "ratingChanges": self.rating_changes,
                        })),
                    ),
                }
            }
            // A room played again (a rematch) opens anew, and may start and finish again.
            (joinable, finished) = (version.joinable, version.finished);
        }
        out
    }
}

/// An event that is not a room's (a publication, a ping), its body made at once.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    pub kind: EventType,
    pub created_at: Timestamp,
    pub body: String,
}

impl Outgoing {
    pub fn new(kind: EventType, at: Timestamp, data: Value) -> Self {
        Self {
            kind,
            created_at: at,
            body: body(kind, at, data),
        }
    }
}

fn body(kind: EventType, at: Timestamp, data: Value) -> String {
    json!({"type": kind.as_str(), "timestamp": at, "data": data}).to_string()
}

/// The body of a room's event of `kind`, made from `version` of room `room_id` (of `game`) as
/// its history holds it, with what its notice added.
pub fn room_body(
    kind: EventType,
    game: &str,
    room_id: &str,
    version: &RoomEvent,
    extra: Option<&Value>,
) -> String {
    let room = json!({
        "id": room_id,
        "game": game,
        "version": version.version,
        "joinable": version.joinable,
        "finished": version.finished,
        "players": version.players,
        "state": version.state,
    });
    let mut data = json!({ "room": room });
    let add = |data: &mut Value, key: &str, value: Value| {
        data.as_object_mut()
            .expect("an object")
            .insert(key.to_owned(), value);
    };
    match kind {
        EventType::PlayerJoined => add(&mut data, "player", json!(version.player)),
        EventType::PlayerLeft => {
            add(&mut data, "player", json!(version.player));
            add(&mut data, "reason", json!(version.kind.as_str()));
        }
        EventType::VersionCreated => {
            add(&mut data, "kind", json!(version.kind.as_str()));
            add(&mut data, "player", json!(version.player));
            add(&mut data, "move", json!(version.mv.as_deref()));
        }
        _ => {}
    }
    if let Some(Value::Object(extra)) = extra {
        for (key, value) in extra {
            add(&mut data, key, value.clone());
        }
    }
    body(kind, version.created_at, data)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::game::PlayerRef;

    fn version(n: i64, kind: EventKind, joinable: bool, finished: bool) -> RoomEvent {
        RoomEvent {
            version: n,
            kind,
            player: Some(PlayerRef {
                id: "p1".into(),
                username: "ada".into(),
            }),
            mv: None,
            state: Arc::new(json!({"n": n})),
            joinable,
            finished,
            players: Arc::new(Vec::new()),
            trigger_timeout_at: None,
            created_at: Timestamp::now(),
            rating_changes: Vec::new(),
            to_move: None,
        }
    }

    fn kinds(notices: &[Notice]) -> Vec<(&'static str, i64)> {
        notices
            .iter()
            .map(|n| (n.kind.as_str(), n.version))
            .collect()
    }

    #[test]
    fn a_game_from_opening_to_its_end_makes_each_event_once() {
        let room = Room::for_tests("r1", "tictactoe");
        let versions = [
            version(1, EventKind::RoomStart, true, false),
            version(2, EventKind::Join, false, false),
            version(3, EventKind::Move, false, true),
        ];
        let winners = [PlayerId::from("p1")];
        let story = CommitStory {
            room: &room,
            created: true,
            joinable_before: true,
            finished_before: false,
            versions: &versions,
            winners: Some(&winners),
            rating_changes: &[],
        };
        let notices = story.notices(EventTypes::of(EventType::SUBSCRIBABLE));
        assert_eq!(
            kinds(&notices),
            [
                ("room.created", 1),
                ("version.created", 1),
                ("player.joined", 2),
                ("version.created", 2),
                ("room.started", 2),
                ("version.created", 3),
                ("room.finished", 3)
            ]
        );
        let finished = &notices[6];
        let body = room_body(
            finished.kind,
            "tictactoe",
            "r1",
            &versions[2],
            finished.extra.as_ref(),
        );
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["type"], "room.finished");
        assert_eq!(body["data"]["winners"], json!(["p1"]));
        assert_eq!(body["data"]["room"]["version"], 3);
        assert_eq!(body["data"]["room"]["id"], "r1");
        let only = story.notices(EventTypes::of([EventType::RoomFinished]));
        assert_eq!(kinds(&only), [("room.finished", 3)]);
    }

    #[test]
    fn a_room_closed_unplayed_is_closed_not_finished() {
        let room = Room::for_tests("r1", "tictactoe");
        let versions = [version(4, EventKind::Closed, false, true)];
        let story = CommitStory {
            room: &room,
            created: false,
            joinable_before: true,
            finished_before: false,
            versions: &versions,
            winners: None,
            rating_changes: &[],
        };
        let notices = story.notices(EventTypes::of(EventType::SUBSCRIBABLE));
        assert_eq!(
            kinds(&notices),
            [("version.created", 4), ("room.closed", 4)]
        );
    }

    #[test]
    fn a_player_who_left_is_named_with_why() {
        let left = version(5, EventKind::Quit, false, false);
        let body = room_body(EventType::PlayerLeft, "g", "r", &left, None);
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["data"]["player"]["username"], "ada");
        assert_eq!(body["data"]["reason"], "quit");
    }
}
