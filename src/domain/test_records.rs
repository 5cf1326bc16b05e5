//! Records made for tests: a room to start from.

use serde_json::Value;

use super::records::{Room, Score};
use super::time::Timestamp;

impl Room {
    /// A new room of `game`, open, at version 1, for tests.
    pub(crate) fn for_tests(id: &str, game: &str) -> Self {
        let now = Timestamp::now();
        Room {
            trigger_timeout_at: None,
            to_move: None,
            turns: Default::default(),
            clock: None,
            rematch: None,
            score: Score::default(),
            id: id.into(),
            game: game.into(),
            game_version: None,
            private: false,
            rated: false,
            version: 1,
            joinable: true,
            finished: false,
            state: Value::Null.into(),
            players: Vec::new().into(),
            inactive_players: Vec::new(),
            created_at: now,
            updated_at: now,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::PlayerId;

    fn at(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    #[test]
    fn a_turn_that_stays_a_players_keeps_its_start_and_one_that_begins_starts_now() {
        let mut room = Room::for_tests("r", "g");
        let first = at("2026-11-28T10:00:00.000Z");
        room.to_move = Some(vec!["a".into()]);
        room.turns = room.turns_after(first);
        assert_eq!(room.turns.get(&PlayerId::from("a")), Some(&first));

        // A simultaneous turn: b's begins, a's goes on from when it began.
        let second = at("2026-11-28T10:05:00.000Z");
        room.to_move = Some(vec!["a".into(), "b".into()]);
        room.turns = room.turns_after(second);
        assert_eq!(room.turns.get(&PlayerId::from("a")), Some(&first));
        assert_eq!(room.turns.get(&PlayerId::from("b")), Some(&second));

        // a moved: theirs ends; b's goes on; a game that cannot say waits on nobody.
        room.to_move = Some(vec!["b".into()]);
        room.turns = room.turns_after(at("2026-11-28T10:06:00.000Z"));
        assert_eq!(room.turns.len(), 1);
        assert_eq!(room.turns.get(&PlayerId::from("b")), Some(&second));
        room.to_move = None;
        assert!(room.turns_after(second).is_empty());
    }
}
