//! Deadlines: each server fires the rooms' `triggerTimeoutAt`s as they pass.
//!
//! A deadline lives only in the database, on its room. A server keeps no list of them: it
//! asks the store for the earliest few ([`WINDOW`], one range of an index however many rooms
//! have one), fires those that have passed, and sleeps until the next one, or until this
//! server commits an earlier one, or for at most [`RESCAN`] (which is how it learns of
//! deadlines other servers set). Memory is the window and the rooms being fired, whatever the
//! number of pending deadlines, and nothing polls per room.
//!
//! Firing is an action like any other, pinned to the version the deadline was read at: the
//! room's compare-and-set lets exactly one attempt through, whichever server makes it, and a
//! move that arrives first makes the deadline's version stale, so it does not fire (the
//! room's new deadline, if it has one, is the one found next). After a restart the first
//! look finds every deadline that passed meanwhile, earliest first.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;

use super::action::Action;
use super::{Engine, EngineError, Precondition};
use crate::domain::ids::RoomId;
use crate::domain::time::Timestamp;
use crate::store::Deadline;

/// How many of the earliest deadlines one look reads.
const WINDOW: i64 = 256;
/// The longest a server goes without looking (deadlines set by other servers).
const RESCAN: Duration = Duration::from_secs(1);
/// The least time between two looks, so that a burst of commits is one look.
const MIN_GAP: Duration = Duration::from_millis(5);
/// Rooms fired at once by one server.
const FIRING: usize = 32;
/// After a firing fails for a reason that passes (storage, sandbox), the room waits this long,
/// doubled on each further failure up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// What the scheduler shares with the engine: when it will next look, and a way to wake it.
#[derive(Default)]
pub(super) struct Alarm {
    wake: Notify,
    /// When the scheduler will next look (`None`: it is looking now).
    next_look: Mutex<Option<Timestamp>>,
}

impl Alarm {
    /// A commit set `at`: wake the scheduler if that is before its next look, or if it is
    /// looking now (what it read may be from before this commit; the wake-up is kept for
    /// when it next waits).
    pub(super) fn armed(&self, at: Timestamp) {
        let next = self.next_look.lock().expect("never poisoned");
        if next.is_none_or(|next| at < next) {
            self.wake.notify_one();
        }
    }
}

/// Rooms being fired, and rooms whose last firing failed for a passing reason.
#[derive(Default)]
struct Firing {
    busy: HashSet<RoomId>,
    backoff: HashMap<RoomId, (Instant, Duration)>,
}

/// Runs for as long as the engine does.
pub(super) async fn run(engine: Engine) {
    let firing = Arc::new(Mutex::new(Firing::default()));
    let slots = Arc::new(Semaphore::new(FIRING));
    let done = Arc::new(Notify::new());
    loop {
        let looked = Instant::now();
        *engine.alarm.next_look.lock().expect("never poisoned") = None;
        let window = match engine.store.earliest_deadlines(WINDOW).await {
            Ok(window) => window,
            Err(err) => {
                tracing::warn!(error = %err, "could not read the rooms' deadlines; looking again shortly");
                tokio::time::sleep(RESCAN).await;
                continue;
            }
        };
        let now = Timestamp::now();
        let mut wake = now.after(RESCAN);
        for deadline in window {
            if deadline.at > now {
                wake = wake.min(deadline.at);
                break;
            }
            {
                let mut state = firing.lock().expect("never poisoned");
                let waiting = state
                    .backoff
                    .get(&deadline.room_id)
                    .is_some_and(|(until, _)| *until > Instant::now());
                if waiting || !state.busy.insert(deadline.room_id.clone()) {
                    continue;
                }
            }
            let (engine, firing, slots, done) =
                (engine.clone(), firing.clone(), slots.clone(), done.clone());
            tokio::spawn(async move {
                let _slot = slots.acquire().await.expect("never closed");
                let outcome = engine.fire(&deadline).await;
                let mut state = firing.lock().expect("never poisoned");
                state.busy.remove(&deadline.room_id);
                match outcome {
                    Ok(()) => {
                        state.backoff.remove(&deadline.room_id);
                    }
                    Err(err) => {
                        let pause = state
                            .backoff
                            .get(&deadline.room_id)
                            .map_or(FIRST_BACKOFF, |(_, last)| (*last * 2).min(MAX_BACKOFF));
                        tracing::warn!(room = %deadline.room_id, error = %err, retry_in_s = pause.as_secs(), "a deadline could not be fired");
                        state
                            .backoff
                            .insert(deadline.room_id.clone(), (Instant::now() + pause, pause));
                    }
                }
                drop(state);
                done.notify_one();
            });
        }
        *engine.alarm.next_look.lock().expect("never poisoned") = Some(wake);
        let sleep = wake.since(Timestamp::now());
        tokio::select! {
            _ = tokio::time::sleep(sleep) => {}
            _ = engine.alarm.wake.notified() => {}
            _ = done.notified() => {}
        }
        tokio::time::sleep_until(looked + MIN_GAP).await;
        forget_old_backoffs(&firing);
    }
}

/// Back-offs that have run out are dropped, so the map holds only rooms still failing.
fn forget_old_backoffs(firing: &Mutex<Firing>) {
    let mut state = firing.lock().expect("never poisoned");
    let now = Instant::now();
    state
        .backoff
        .retain(|_, (until, pause)| *until + *pause > now);
}

impl Engine {
    /// Fires `deadline` if its room is still at the version that holds it. `Ok` when it fired,
    /// when something else changed the room first, or when `onTimeout` failed and the deadline
    /// was cleared instead; `Err` only for what passes (storage, sandbox), to try again later.
    async fn fire(&self, deadline: &Deadline) -> Result<(), EngineError> {
        let room = match self.room(&deadline.room_id).await {
            Ok(room) => room,
            Err(EngineError::RoomNotFound) => return Ok(()),
            Err(err) => return Err(err),
        };
        if room.version != deadline.version {
            return Ok(());
        }
        // Bots are never timed out: one whose turn it is moves now, and its move (a new
        // version) leaves this deadline stale.
        let room = self.let_bots_play(room).await?;
        if room.version != deadline.version {
            return Ok(());
        }
        let pinned = Precondition::exactly(deadline.version);
        let fault = match self
            .update(&deadline.room_id, pinned.clone(), Action::Timeout)
            .await
        {
            Ok(room) => {
                self.let_bots_play(room).await?;
                return Ok(());
            }
            Err(err) if stale(&err) => return Ok(()),
            Err(err) if err.is_game_fault() => err,
            Err(err) => return Err(err),
        };
        tracing::error!(room = %deadline.room_id, error = %fault, "onTimeout failed; the room's deadline is cleared");
        match self
            .update(&deadline.room_id, pinned, Action::ClearFailedTimeout)
            .await
        {
            Ok(_) => Ok(()),
            Err(err) if stale(&err) => Ok(()),
            Err(err) => Err(err),
        }
    }
}

/// The room changed since the deadline was read: someone else fired it, or a move came first.
fn stale(err: &EngineError) -> bool {
    matches!(
        err,
        EngineError::VersionMismatch { .. } | EngineError::RoomNotFound
    )
}
