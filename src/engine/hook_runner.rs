//! The boundary between the async engine and the synchronous hooks of a game. Native hooks are
//! pure computation and run in place; hooks that wait (an uploaded game's, on its sandbox
//! process) run on the sandbox pool's hook threads, so a slow or runaway game never holds a
//! thread that serves other requests.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::sync::Arc;

use super::EngineError;
use crate::game::Game;
use crate::sandbox::SandboxPool;

/// Runs `work`, which calls `game`'s hooks, where the game's hooks belong.
pub async fn run_hooks<T, F>(
    sandbox: &SandboxPool,
    game: Arc<dyn Game>,
    work: F,
) -> Result<T, EngineError>
where
    T: Send + 'static,
    F: FnOnce(Arc<dyn Game>) -> Result<T, EngineError> + Send + 'static,
{
    if !game.hooks_wait() {
        return work(game);
    }
    // Hooks catch their own panics, so this only fails on a bug outside them.
    sandbox
        .run_hooks(move || work(game))
        .await
        .map_err(|err| EngineError::SandboxUnavailable(err.to_string()))?
}
