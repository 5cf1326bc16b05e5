//! The calls an uploaded game's hooks made while the engine ran one action on its runtime, and
//! their answers: what makes a [`HostedGame`] an [`Answered`] game.
//!
//! A hook call blocks on a sandbox process, so the engine used to run every hosted action on
//! one of the sandbox's hook threads, which then slept while the process worked: two threads
//! woken and put to sleep for each call, on top of the process's own. Instead the action runs
//! on the runtime; a hook it has no answer for fails with [`HookError::Awaiting`] and notes
//! the call; the engine awaits that call on the runtime (`SandboxPool::call_async`) and runs
//! the action again, which this time finds the answer. Hooks are pure functions of their
//! arguments (the room's record among them), so the second run is the first with one more
//! answer, and a call is answered by matching its hook and its arguments' JSON.

use std::sync::{Arc, Mutex, MutexGuard};

use futures_util::future::BoxFuture;
use serde_json::value::RawValue;

use super::batches::Answer;
use super::hosted::HostedGame;
use super::pool::SandboxPool;
use crate::game::{Answered, Answers, Game, Hook, HookError};

/// The calls of one action's runs.
pub struct HookAnswers {
    pool: SandboxPool,
    /// The game's name in the sandbox's caches, and its source.
    key: String,
    source: Arc<str>,
    calls: Mutex<Calls>,
}

#[derive(Default)]
struct Calls {
    answered: Vec<(Hook, Box<RawValue>, Answer)>,
    /// The call the last run asked for and had no answer to.
    wanted: Option<(Hook, Box<RawValue>)>,
}

impl HookAnswers {
    pub(super) fn new(pool: SandboxPool, key: String, source: Arc<str>) -> Self {
        Self {
            pool,
            key,
            source,
            calls: Mutex::default(),
        }
    }

    fn calls(&self) -> MutexGuard<'_, Calls> {
        // Nothing panics while holding it.
        self.calls
            .lock()
            .expect("the answers' lock is never poisoned")
    }

    /// The answer to `hook` called with `args`; or, when there is none yet, the call noted
    /// and [`HookError::Awaiting`]. An answer's log lines come out once, to the first run that
    /// reads it, so a line a hook logged is not kept again for each run after.
    pub(super) fn answer(&self, hook: Hook, args: Box<RawValue>) -> Result<Answer, HookError> {
        let mut calls = self.calls();
        let found = calls
            .answered
            .iter_mut()
            .find(|(h, a, _)| *h == hook && a.get() == args.get());
        match found {
            Some((_, _, Ok((outcome, logs)))) => Ok(Ok((outcome.clone(), std::mem::take(logs)))),
            Some((_, _, Err(err))) => Ok(Err(err.clone())),
            None => {
                calls.wanted = Some((hook, args));
                Err(HookError::Awaiting)
            }
        }
    }
}

impl Answers for HookAnswers {
    fn fetch_wanted(&self) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            let Some((hook, args)) = self.calls().wanted.take() else {
                return false;
            };
            let answer = self
                .pool
                .call_async(&self.key, &self.source, hook, args.clone())
                .await;
            self.calls().answered.push((hook, args, answer));
            true
        })
    }
}

/// `game` answering its hooks from a fresh set of calls, if it can: a game that exports
/// `winners` or `toMove` cannot, since the engine reads those where a failure is the game's
/// fault rather than a call to wait for.
pub(super) fn answered(game: &HostedGame) -> Option<Answered> {
    let hooks = game.capabilities();
    if hooks.winners || hooks.to_move {
        return None;
    }
    let answers = Arc::new(game.new_answers());
    Some(Answered {
        game: Arc::new(game.answering_from(answers.clone())),
        answers,
    })
}
