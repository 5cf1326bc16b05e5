//! The events a room's commit sends out, and their bodies: `{type, timestamp, data}`, as
//! Standard Webhooks has them. What each type carries is listed in `docs/webhooks.md` and in
//! `openapi.yaml`'s `webhooks`.
//!
//! An endpoint gets its game's truth, as the game's hooks do: the whole state, every player,
//! the move. Nothing carries a token or a password hash: players are `{id, username}`.

use std::sync::Arc;

use serde_json::{json, Value};

use super::ids::PlayerId;
use super::records::{EventKind, RatingChange, Room, RoomEvent};
use super::time::Timestamp;
use super::webhooks::{EventType, EventTypes};

/// One event, its body made once for every endpoint that takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    pub kind: EventType,
    pub room_id: Option<String>,
    pub created_at: Timestamp,
    pub body: Arc<str>,
}

impl Outgoing {
    /// An event of `kind` at `at`, carrying `data`.
    pub fn new(kind: EventType, room_id: Option<String>, at: Timestamp, data: Value) -> Self {
        let body = json!({"type": kind.as_str(), "timestamp": at, "data": data});
        Self {
            kind,
            room_id,
            created_at: at,
            body: Arc::from(body.to_string()),
        }
    }
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
    pub fn events(&self, wanted: EventTypes) -> Vec<Outgoing> {
        let mut out = Vec::new();
        let (mut joinable, mut finished) = (self.joinable_before, self.finished_before);
        let mut push = |kind: EventType, at: Timestamp, data: Value| {
            if wanted.contains(kind) {
                let room_id = Some(self.room.id.to_string());
                out.push(Outgoing::new(kind, room_id, at, data));
            }
        };
        for (at, version) in self.versions.iter().enumerate() {
            let room = || self.room_at(version);
            let when = version.created_at;
            if at == 0 && self.created {
                push(EventType::RoomCreated, when, json!({"room": room()}));
            }
            match (version.kind, &version.player) {
                (EventKind::Join, Some(player)) => push(
                    EventType::PlayerJoined,
                    when,
                    json!({"room": room(), "player": player}),
                ),
                (EventKind::Quit | EventKind::Abandoned, Some(player)) => push(
                    EventType::PlayerLeft,
                    when,
                    json!({"room": room(), "player": player, "reason": version.kind.as_str()}),
                ),
                _ => {}
            }
            if wanted.contains(EventType::VersionCreated) {
                let data = json!({
                    "room": room(),
                    "kind": version.kind.as_str(),
                    "player": version.player,
                    "move": version.mv.as_deref(),
                });
                push(EventType::VersionCreated, when, data);
            }
            if joinable && !version.joinable && !version.finished {
                push(EventType::RoomStarted, when, json!({"room": room()}));
            }
            if !finished && version.finished {
                match version.kind {
                    EventKind::Closed => push(EventType::RoomClosed, when, json!({"room": room()})),
                    _ => push(
                        EventType::RoomFinished,
                        when,
                        json!({
                            "room": room(),
                            "winners": self.winners,
                            "ratingChanges": self.rating_changes,
                        }),
                    ),
                }
            }
            // A room played again (a rematch) opens anew, and may start and finish again.
            (joinable, finished) = (version.joinable, version.finished);
        }
        out
    }

    /// The room as it was at `version`.
    fn room_at(&self, version: &RoomEvent) -> Value {
        json!({
            "id": self.room.id,
            "game": self.room.game,
            "version": version.version,
            "joinable": version.joinable,
            "finished": version.finished,
            "players": version.players,
            "state": version.state,
        })
    }
}

#[cfg(test)]
mod tests {
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
        }
    }

    fn kinds(events: &[Outgoing]) -> Vec<&'static str> {
        events.iter().map(|e| e.kind.as_str()).collect()
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
        let all = EventTypes::of(EventType::SUBSCRIBABLE);
        let events = story.events(all);
        assert_eq!(
            kinds(&events),
            [
                "room.created",
                "version.created",
                "player.joined",
                "version.created",
                "room.started",
                "version.created",
                "room.finished"
            ]
        );
        let finished: Value = serde_json::from_str(&events[6].body).unwrap();
        assert_eq!(finished["data"]["winners"], json!(["p1"]));
        assert_eq!(finished["data"]["room"]["version"], 3);
        assert_eq!(finished["type"], "room.finished");
        let only = story.events(EventTypes::of([EventType::RoomFinished]));
        assert_eq!(kinds(&only), ["room.finished"]);
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
        let events = story.events(EventTypes::of(EventType::SUBSCRIBABLE));
        assert_eq!(kinds(&events), ["version.created", "room.closed"]);
    }
}
