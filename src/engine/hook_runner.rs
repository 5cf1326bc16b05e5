//! The boundary between the async engine and the synchronous hooks of a game. Native hooks are
//! pure computation and run in place; hooks that wait (an uploaded game's, on its sandbox
//! process) run on the sandbox pool's hook threads, so a slow or runaway game never holds a
//! thread that serves other requests. An action may instead run in place with its hooks
//! answered from calls awaited on the runtime ([`run_answered`]), which spares each call the
//! hand-off to a hook thread and back.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::sync::Arc;

use super::EngineError;
use crate::game::{Answered, Game};
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

/// The most hook calls one action makes in place before it is left to a hook thread: a
/// join, a move or a new room's start and seats take one to a handful.
const MOST_ANSWERED: usize = 16;

/// Runs `work` as [`run_hooks`] does, but for a game that can be [`Answered`], in place on
/// the runtime: each run that asks for a hook call not answered yet is followed by that call,
/// awaited, and `work` runs again. `work` that asks for something else to wait for (a bot's
/// search) goes to a hook thread.
pub async fn run_answered<T, F>(
    sandbox: &SandboxPool,
    game: Arc<dyn Game>,
    work: F,
) -> Result<T, EngineError>
where
    T: Send + 'static,
    F: Fn(Arc<dyn Game>) -> Result<T, EngineError> + Send + 'static,
{
    if let Some(Answered {
        game: answering,
        answers,
    }) = game.answered()
    {
        for _ in 0..MOST_ANSWERED {
            match work(answering.clone()) {
                Err(EngineError::HookAwaited) if answers.fetch_wanted().await => {}
                Err(EngineError::HookAwaited) => break,
                done => return done,
            }
        }
    }
    run_hooks(sandbox, game, work).await
}
