//! The hooks of a game by name: what the engine runs, the sandbox calls and faults name; and
//! the levels a hook logs at.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Hook {
    #[serde(rename = "onRoomStart")]
    RoomStart,
    #[serde(rename = "onPlayerJoin")]
    PlayerJoin,
    #[serde(rename = "onPlayerQuit")]
    PlayerQuit,
    #[serde(rename = "onPlayerMove")]
    PlayerMove,
    /// Optional: the room's deadline passed.
    #[serde(rename = "onTimeout")]
    Timeout,
    /// Optional: what one viewer may see of the state.
    #[serde(rename = "onPlayerView")]
    PlayerView,
    /// Optional: the legal moves of a player, for bots.
    #[serde(rename = "enumerateMoves")]
    EnumerateMoves,
    /// Optional: who won a finished room, for its ratings and score.
    #[serde(rename = "winners")]
    Winners,
    /// Optional: whose move it is in a room in play, for the turns inbox and its notices.
    #[serde(rename = "toMove")]
    ToMove,
    /// Not an export: the search that ships with the server, run over the game's own hooks
    /// to choose a bot's move.
    #[serde(rename = "bot search")]
    BotSearch,
}

impl Hook {
    /// The hooks every game exports.
    pub const REQUIRED: [Hook; 4] = [
        Hook::RoomStart,
        Hook::PlayerJoin,
        Hook::PlayerQuit,
        Hook::PlayerMove,
    ];

    /// The hook named `name` (as [`Hook::name`] writes it).
    pub fn from_name(name: &str) -> Option<Self> {
        serde_json::from_value(serde_json::Value::String(name.to_owned())).ok()
    }

    /// Whether a call makes the room's next version (the view and the bot's search only
    /// read it).
    pub fn makes_a_version(self) -> bool {
        !matches!(
            self,
            Hook::PlayerView
                | Hook::EnumerateMoves
                | Hook::Winners
                | Hook::ToMove
                | Hook::BotSearch
        )
    }

    /// The name a game exports it under.
    pub fn name(self) -> &'static str {
        match self {
            Hook::RoomStart => "onRoomStart",
            Hook::PlayerJoin => "onPlayerJoin",
            Hook::PlayerQuit => "onPlayerQuit",
            Hook::PlayerMove => "onPlayerMove",
            Hook::Timeout => "onTimeout",
            Hook::PlayerView => "onPlayerView",
            Hook::EnumerateMoves => "enumerateMoves",
            Hook::Winners => "winners",
            Hook::ToMove => "toMove",
            Hook::BotSearch => "bot search",
        }
    }
}

impl std::fmt::Display for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a hook logged a line (`console.*` or `roomState.logger.*`): `console.log`, `info` and `debug` are `Info`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Info,
    Warn,
    Error,
}

impl LogLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error => "error",
        }
    }

    /// The level the sandbox's prelude names (`info`, `warn`, `error`); anything else is
    /// `Info`.
    pub fn from_name(name: &str) -> Self {
        match name {
            "warn" => LogLevel::Warn,
            "error" => LogLevel::Error,
            _ => LogLevel::Info,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_is_written_as_its_name() {
        for hook in [Hook::PlayerMove, Hook::PlayerView, Hook::BotSearch] {
            let json = serde_json::to_value(hook).unwrap();
            assert_eq!(json, hook.name());
            assert_eq!(serde_json::from_value::<Hook>(json).unwrap(), hook);
        }
    }
}
