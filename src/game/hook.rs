//! The hooks of a game by name: what the engine runs, the sandbox calls and faults name.

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
            Hook::BotSearch => "bot search",
        }
    }
}

impl std::fmt::Display for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
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
