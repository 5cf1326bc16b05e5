//! The boundary between the async engine and the synchronous hooks of a game. Native hooks are
//! pure computation and run in place; hooks that wait (an uploaded game's, on its sandbox
//! process) run on the blocking pool, so a slow or runaway game never holds a thread that
//! serves other requests.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::sync::Arc;

use super::EngineError;
use crate::game::Game;

/// Runs `work`, which calls `game`'s hooks, where the game's hooks belong.
pub async fn run_hooks<T, F>(game: Arc<dyn Game>, work: F) -> Result<T, EngineError>
where
    T: Send + 'static,
    F: FnOnce(Arc<dyn Game>) -> Result<T, EngineError> + Send + 'static,
{
    if !game.hooks_wait() {
        return work(game);
    }
    // Hooks catch their own panics, so the task only fails when the runtime is shutting down.
    tokio::task::spawn_blocking(move || work(game))
        .await
        .map_err(|err| EngineError::SandboxUnavailable(err.to_string()))?
}
