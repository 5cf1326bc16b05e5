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
