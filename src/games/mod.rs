//! The games that ship with the server.

pub mod battleship;
pub mod line_bots;
pub mod line_game;
pub mod tictactoe;
pub mod tictactoe3d;

use std::sync::Arc;

use crate::game::GameRegistry;

/// Player `n`, for the games' unit tests.
#[cfg(test)]
pub(crate) fn test_player(n: usize) -> crate::game::PlayerRef {
    crate::game::PlayerRef {
        id: format!("p{n}").into(),
        username: format!("player{n}"),
    }
}

/// The registry of built-in games.
pub fn builtin() -> GameRegistry {
    GameRegistry::new()
        .register(Arc::new(tictactoe::TicTacToe::default()))
        .register(Arc::new(tictactoe3d::TicTacToe3d::default()))
        .register(Arc::new(battleship::Battleship))
}
