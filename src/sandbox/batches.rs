//! Hook calls awaited on the runtime ([`SandboxPool::call_async`]), sent to the sandbox
//! processes in batches: the calls waiting when a worker comes free go to it in one write, and
//! come back in one.
//!
//! Each exchange with a process costs two wake-ups, the process's and the server's, and under
//! load those cost the sandbox as much as running a small game's hook (`docs/benchmarks.md`).
//! A batch pays them once for all its calls.
//!
//! What a batch must not do is let one room's call hold up another's:
//! - Only calls expected to be quick go together: the process's CPU time per call is kept for
//!   each game, and a batch holds at most [`BATCH_CPU`] of it. A game not measured yet, or
//!   slower than that, has its calls sent alone.
//! - A batch that has used [`STRAGGLING`] of CPU time since its last answer (one of its calls
//!   loops until the time limit, say) has its calls not yet answered sent again, each alone, to
//!   whichever worker comes free; the first answer to a call is the one its caller gets. Hooks
//!   are pure functions of their arguments, so running one twice changes nothing but the time.
//! - A worker that dies or is killed mid-batch costs its calls nothing more: those not sent
//!   again yet are, alone. A call sent alone gets whatever becomes of it, as every call did
//!   before batches.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::value::RawValue;
use tokio::sync::oneshot;

use super::pool::{Lease, PoolError, SandboxPool};
use super::protocol::{LogLine, Outcome, Request, Response};
use super::watchdog::Watchdog;
use crate::game::Hook;

/// One call's answer: its outcome, or how the pool failed it.
pub(super) type Answer = Result<(Outcome, Vec<LogLine>), PoolError>;

/// The most calls in one batch.
const MOST_CALLS: usize = 16;

/// The most bytes of requests in one batch (a call alone may be larger): a batch is written
/// whole before its answers are read, so it must fit in the pipe (64 KiB on Linux), or the
/// process, blocked writing answers nobody reads yet, would never read the rest.
const MOST_BYTES: usize = 32 << 10;

/// The most CPU time the calls of one batch are expected to take together.
const BATCH_CPU: Duration = Duration::from_millis(2);

/// CPU time a batch may use after its last answer before its other calls are sent again.
const STRAGGLING: Duration = Duration::from_millis(10);

/// Batches one runner sends before it lets other hook work have its thread.
const BATCHES_PER_TURN: usize = 8;

/// How far into the queue a runner looks for calls that fit in its batch.
const LOOK_AHEAD: usize = 64;

/// The calls waiting for a worker, and what is known of each game's calls.
pub(super) struct CallQueue {
    state: Mutex<QueueState>,
    /// Runners at most: as many as workers, each holding one while it sends a batch.
    most_runners: usize,
}

#[derive(Default)]
struct QueueState {
    waiting: VecDeque<Queued>,
    /// Runners queued on the hook threads or running there.
    runners: usize,
    /// The CPU time one call of each game (by its key) has taken lately.
    cost: HashMap<Arc<str>, Duration>,
}

/// A call waiting to be sent.
#[derive(Clone)]
struct Queued {
    key: Arc<str>,
    source: Arc<str>,
    /// The request, encoded once, with its newline.
    line: Arc<[u8]>,
    reply: Reply,
    /// Sent once already, in a batch that was slow to answer or whose worker died: it goes
    /// alone now, and whatever becomes of it is its answer.
    alone: bool,
}

/// Where a call's answer goes: to its caller, once, from whichever run answers first.
#[derive(Clone)]
struct Reply(Arc<Mutex<Option<oneshot::Sender<Answer>>>>);

impl Reply {
    fn lock(&self) -> MutexGuard<'_, Option<oneshot::Sender<Answer>>> {
        self.0.lock().expect("nothing panics holding a reply")
    }

    /// The caller, unless another run answered it already.
    fn take(&self) -> Option<oneshot::Sender<Answer>> {
        self.lock().take()
    }
}

impl CallQueue {
    pub(super) fn new(workers: usize) -> Self {
        Self {
            state: Mutex::default(),
            most_runners: workers.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state
            .lock()
            .expect("nothing panics holding the call queue")
    }

    /// Queues `call` behind those waiting; whether a runner must be started for it (counted
    /// as running already).
    fn push(&self, call: Queued) -> bool {
        let mut state = self.lock();
        state.waiting.push_back(call);
        self.one_more_runner(&mut state)
    }

    /// Queues `calls`, in their order, ahead of those waiting; whether a runner must be
    /// started for them.
    fn push_front(&self, calls: impl DoubleEndedIterator<Item = Queued>) -> bool {
        let mut state = self.lock();
        for call in calls.rev() {
            state.waiting.push_front(call);
        }
        self.one_more_runner(&mut state)
    }

    fn one_more_runner(&self, state: &mut QueueState) -> bool {
        let more = state.runners < self.most_runners;
        state.runners += more as usize;
        more
    }

    /// For a runner that has had its turn: whether it must queue itself again (calls wait),
    /// or ends.
    fn turn_over(&self) -> bool {
        let mut state = self.lock();
        if state.waiting.is_empty() {
            state.runners -= 1;
            return false;
        }
        true
    }

    /// The next batch; `None` (and one runner fewer) when nothing waits.
    fn take(&self) -> Option<Vec<Queued>> {
        let mut state = self.lock();
        let Some(first) = state.waiting.pop_front() else {
            state.runners -= 1;
            return None;
        };
        let mut batch = vec![first];
        let Some(mut cpu) = state.fits_with(&batch[0], Duration::ZERO) else {
            return Some(batch);
        };
        let mut bytes = batch[0].line.len();
        let mut index = 0;
        while index < state.waiting.len().min(LOOK_AHEAD) && batch.len() < MOST_CALLS {
            let call = &state.waiting[index];
            match state.fits_with(call, cpu) {
                Some(more) if bytes + call.line.len() <= MOST_BYTES => {
                    cpu = more;
                    bytes += call.line.len();
                    let call = state.waiting.remove(index).expect("looked at");
                    batch.push(call);
                }
                _ => index += 1,
            }
        }
        Some(batch)
    }

    /// Takes every waiting call (no thread can run them).
    fn drain(&self) -> VecDeque<Queued> {
        std::mem::take(&mut self.lock().waiting)
    }

    /// Notes that the calls of a batch, of the games `keys` (one per call), took `cpu`
    /// together: each is counted as an equal share.
    fn measured(&self, keys: &[Arc<str>], cpu: Duration) {
        let per_call = cpu / keys.len().max(1) as u32;
        let mut state = self.lock();
        for key in keys {
            match state.cost.get_mut(key) {
                // Down at once (a game's first call in a process also makes its realm), up
                // weighted to the recent (its calls grow slower as its rooms fill up).
                Some(cost) if per_call < *cost => *cost = per_call,
                Some(cost) => *cost = (*cost * 3 + per_call) / 4,
                None => {
                    state.cost.insert(key.clone(), per_call);
                }
            }
        }
    }
}

impl QueueState {
    /// The batch's expected CPU time with `call` added to `cpu`, if the call may go in a batch.
    fn fits_with(&self, call: &Queued, cpu: Duration) -> Option<Duration> {
        if call.alone {
            return None;
        }
        let total = cpu + *self.cost.get(&*call.key)?;
        (total <= BATCH_CPU).then_some(total)
    }
}

impl SandboxPool {
    /// [`SandboxPool::call`] for a caller on an async runtime: the call waits in the pool's
    /// queue and goes to a worker in a batch with the others waiting there (see the module's
    /// comment), from one of the pool's hook threads. A caller that stops waiting leaves its
    /// call to finish, as a caller on a hook thread would.
    pub async fn call_async(
        &self,
        key: &str,
        source: &Arc<str>,
        hook: Hook,
        args: Box<RawValue>,
    ) -> Answer {
        let request = Request::Call {
            key: key.to_owned(),
            hook,
            args,
        };
        let mut line = serde_json::to_vec(&request).expect("requests always serialise");
        line.push(b'\n');
        let (reply, answer) = oneshot::channel();
        self.queue(Queued {
            key: key.into(),
            source: source.clone(),
            line: line.into(),
            reply: Reply(Arc::new(Mutex::new(Some(reply)))),
            alone: false,
        });
        answer
            .await
            .unwrap_or_else(|_| Err(PoolError::Died("the call was dropped unanswered".into())))
    }

    /// Queues `call`, and a runner to send it if fewer run than may.
    fn queue(&self, call: Queued) {
        if self.calls().push(call) {
            self.start_runner();
        }
    }

    /// Starts a runner, counted as running already.
    fn start_runner(&self) {
        let pool = self.clone();
        if let Err(error) = self.spawn_hook_work(move || pool.run_batches()) {
            self.calls().lock().runners -= 1;
            for call in self.calls().drain() {
                self.answer(&call, Err(error.clone()));
            }
        }
    }

    /// A runner: sends batches until nothing waits, or until it has had its turn.
    fn run_batches(&self) {
        for _ in 0..BATCHES_PER_TURN {
            let Some(batch) = self.calls().take() else {
                return;
            };
            match self.lease() {
                Ok(mut lease) => self.send_batch(&mut lease, batch),
                Err(error) => {
                    for call in batch {
                        self.answer(&call, Err(error.clone()));
                    }
                }
            }
        }
        // Back of the hook threads' queue, behind the work that waited meanwhile.
        if self.calls().turn_over() {
            self.start_runner();
        }
    }

    /// Sends `batch` to the leased worker and hands out its answers; loads a game the worker
    /// does not hold and sends its calls again.
    fn send_batch(&self, lease: &mut Lease, mut batch: Vec<Queued>) {
        let mut loaded = false;
        while !batch.is_empty() {
            let missing = self.send_once(lease, batch);
            if missing.is_empty() {
                return;
            }
            if loaded || !self.load(lease, &missing) {
                return;
            }
            loaded = true;
            batch = missing;
        }
    }

    /// Loads the games of `calls` in the leased worker; whether it could (the calls are
    /// answered otherwise).
    fn load(&self, lease: &mut Lease, calls: &[Queued]) -> bool {
        let mut keys: Vec<(&Arc<str>, &Arc<str>)> = Vec::new();
        for call in calls {
            if !keys.iter().any(|(key, _)| **key == call.key) {
                keys.push((&call.key, &call.source));
            }
        }
        for (key, source) in keys {
            let load = Request::Load {
                key: key.to_string(),
                source: source.to_string(),
            };
            let failed = match lease.exchange(&load, self.compile_deadline()) {
                Ok(Response::Loaded) => continue,
                Ok(Response::Invalid { message, .. }) => Ok(Outcome::Crashed {
                    message: format!("the game's source did not compile: {message}"),
                }),
                Ok(other) => Err(lease.broken(&other)),
                Err(error) => Err(error),
            };
            for call in calls {
                match &failed {
                    Ok(outcome) if call.key == *key => {
                        self.answer(call, Ok((outcome.clone(), vec![])))
                    }
                    Ok(_) => {}
                    Err(error) => self.answer(call, Err(error.clone())),
                }
            }
            if failed.is_err() {
                return false;
            }
        }
        true
    }

    /// One write of `batch` and the reading of its answers; the calls the worker said it
    /// does not hold the game of.
    fn send_once(&self, lease: &mut Lease, batch: Vec<Queued>) -> Vec<Queued> {
        let lines: Vec<u8> = batch.iter().flat_map(|c| c.line.iter().copied()).collect();
        let keys: Vec<Arc<str>> = batch.iter().map(|call| call.key.clone()).collect();
        let alone = batch.len() == 1;
        if !alone {
            self.counts().batched(batch.len());
        }
        let started = lease.cpu_time();
        let mut calls = batch.into_iter();
        if let Err(error) = lease.send(&lines) {
            self.fail(calls, &error, alone);
            return Vec::new();
        }
        let mut missing = Vec::new();
        let mut answered_at = started;
        let time = self.limits().time;
        let mut sent_again = false;
        while let Some(call) = calls.next() {
            let watchdog = Watchdog::for_work(time).checking_every(STRAGGLING / 2);
            let received = lease.receive(watchdog, answered_at, &mut |spent| {
                // The worker writes what it answered before a call that runs long (within a
                // millisecond of its CPU time), so this call is the one running long, and those
                // behind it are sent again.
                if !sent_again && spent > STRAGGLING && !calls.as_slice().is_empty() {
                    sent_again = true;
                    self.queue_again(calls.as_slice());
                }
            });
            answered_at = lease.cpu_time();
            match received {
                Ok(Response::Done { outcome, logs }) => self.answer(&call, Ok((outcome, logs))),
                Ok(Response::Missing) => missing.push(call),
                Ok(other) => {
                    let error = lease.broken(&other);
                    self.answer(&call, Err(error.clone()));
                    if !sent_again {
                        self.fail(calls, &error, alone);
                    }
                    return Vec::new();
                }
                Err(error) => {
                    // Alone, the call gets the error, as it always did. In a batch it may not
                    // be the call that failed (a loop in native code runs past the point where
                    // the worker writes the answers it holds): each is sent again alone.
                    self.fail(
                        std::iter::once(call).chain(
                            if sent_again { None } else { Some(calls) }
                                .into_iter()
                                .flatten(),
                        ),
                        &error,
                        alone,
                    );
                    return Vec::new();
                }
            }
        }
        // A worker that did not hold the game answered at once: no measure of the game.
        if let (Some(started), Some(ended), true) = (started, answered_at, missing.is_empty()) {
            self.calls().measured(&keys, ended.saturating_sub(started));
        }
        missing
    }

    /// Sends `calls` again, each alone, ahead of the calls waiting.
    fn queue_again(&self, calls: &[Queued]) {
        self.counts().sent_again(calls.len());
        let again = calls.iter().map(|call| Queued {
            alone: true,
            ..call.clone()
        });
        if self.calls().push_front(again) {
            self.start_runner();
        }
    }

    /// The calls of a batch whose worker failed with `error`: a call sent alone gets the
    /// error; the calls of a batch are sent again, each alone.
    fn fail(&self, calls: impl Iterator<Item = Queued>, error: &PoolError, alone: bool) {
        if alone {
            for call in calls {
                self.answer(&call, Err(error.clone()));
            }
        } else {
            self.queue_again(&calls.collect::<Vec<_>>());
        }
    }

    /// Hands a call its answer, unless another run of it was answered first (counted once,
    /// however many times it ran).
    fn answer(&self, call: &Queued, answer: Answer) {
        if let Some(caller) = call.reply.take() {
            self.counts()
                .called(answer.as_ref().map(|(outcome, _)| outcome));
            // A caller that went away (its client did) needs nothing.
            let _ = caller.send(answer);
        }
    }
}
