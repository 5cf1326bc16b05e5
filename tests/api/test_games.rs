//! Games written for the tests the way any game author would write one, to drive the engine
//! into the corners the built-in games never reach: hooks that refuse, crash, or return a
//! patch outside the contract, and a room that accepts every move (for version races).

use serde_json::{json, Value};
use turnhouse::game::{
    BoardGame, Game, GameError, GameInfo, GameRegistry, HookResult, Patch, PlayerRef,
};

/// State `{"count": n}`; every move adds one, unless the move asks for something else.
pub struct Counter;

impl Game for Counter {
    fn info(&self) -> GameInfo {
        GameInfo {
            id: "counter".into(),
            name: "Counter".into(),
            min_players: 1,
            max_players: 1000,
            description: "Every move adds one.".into(),
        }
    }

    fn on_room_start(&self, _: &BoardGame) -> HookResult {
        Ok(Patch::empty().state(json!({"count": 0})))
    }

    fn on_player_join(&self, _: &PlayerRef, _: &BoardGame) -> HookResult {
        Ok(Patch::empty())
    }

    fn on_player_quit(&self, _: &PlayerRef, _: &BoardGame) -> HookResult {
        Ok(Patch::empty())
    }

    fn on_player_move(&self, _: &PlayerRef, mv: &Value, game: &BoardGame) -> HookResult {
        match mv.get("do").and_then(Value::as_str) {
            Some("panic") => panic!("the counter was asked to crash"),
            Some("refuse") => Err(GameError::new("not_today", "the counter refuses").into()),
            Some("extra") => Patch::from_json(json!({"state": {"count": -1}, "score": 1}))
                .map_err(|e| GameError::new("bad", e.to_string()).into()),
            Some("noop") => Ok(Patch::empty()),
            // Counts, and carries the move's `pad` in the state: big versions on demand.
            Some("pad") => {
                let count = game.state["count"].as_i64().unwrap_or(0);
                Ok(Patch::empty().state(json!({"count": count + 1, "pad": mv["pad"]})))
            }
            Some("finish") => Ok(Patch::empty().finished(true).joinable(true)),
            _ => {
                let count = game.state["count"].as_i64().unwrap_or(0);
                Ok(Patch::empty().state(json!({"count": count + 1})))
            }
        }
    }
}

/// A game whose `onRoomStart` always crashes.
pub struct BrokenStart;

impl Game for BrokenStart {
    fn info(&self) -> GameInfo {
        GameInfo {
            id: "broken_start".into(),
            name: "Broken start".into(),
            min_players: 1,
            max_players: 2,
            description: "Crashes when a room starts.".into(),
        }
    }

    fn on_room_start(&self, _: &BoardGame) -> HookResult {
        panic!("onRoomStart is broken")
    }

    fn on_player_join(&self, _: &PlayerRef, _: &BoardGame) -> HookResult {
        Ok(Patch::empty())
    }

    fn on_player_quit(&self, _: &PlayerRef, _: &BoardGame) -> HookResult {
        Ok(Patch::empty())
    }

    fn on_player_move(&self, _: &PlayerRef, _: &Value, _: &BoardGame) -> HookResult {
        Ok(Patch::empty())
    }
}

/// The built-in games plus the test games.
pub fn registry() -> GameRegistry {
    turnhouse::games::builtin()
        .register(std::sync::Arc::new(Counter))
        .register(std::sync::Arc::new(BrokenStart))
}
