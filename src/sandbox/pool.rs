//! The server's side of the sandbox: a small pool of worker processes (this same binary, run
//! as `turnhouse sandbox-worker`), each serving one call at a time over pipes. Every exchange
//! has a deadline; a worker that misses it is killed (SIGKILL, whatever it is doing) and a
//! fresh one is started when next needed. A worker that dies on its own is replaced the same
//! way. Callers block, so the engine calls hooks through [`SandboxPool::run_hooks`], on threads
//! of the pool's own ([`super::hook_threads`]).
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::value::RawValue;

use super::counts::{SandboxCounts, Stop};
use super::hook_threads::HookThreads;
use super::process::Worker;
use super::protocol::{Format, LogLine, Outcome, Request, Response, SearchOptions};
use super::quickjs::Limits;
use super::watchdog::Watchdog;
use crate::game::{Capabilities, Hook};

/// Time allowed for compiling a source (at most 1 MiB) on top of the hook time limit.
const COMPILE_ALLOWANCE: Duration = Duration::from_secs(3);

/// How a call or check could not be answered by a worker.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    #[error("the sandbox did not answer in time and was stopped")]
    Timeout,
    #[error("the sandbox process died ({0})")]
    Died(String),
    #[error("no sandbox process could be started: {0}")]
    Unavailable(String),
}

/// How hard the computer opponents of uploaded games search: one call per decision, over the
/// game's own hooks. The server's settings build it (`config::BotSearch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchBudget {
    /// How long one decision searches; the sandbox stops it outright at twice this.
    pub time: Duration,
    pub medium_playouts: u32,
    pub hard_playouts: u32,
    /// Searches that run at once; 0 is one fewer than the cores (see [`search_slots`]).
    pub concurrent: usize,
}

impl Default for SearchBudget {
    fn default() -> Self {
        Self {
            time: Duration::from_secs(1),
            medium_playouts: 200,
            hard_playouts: 2000,
            concurrent: 0,
        }
    }
}

/// A source that passed the upload check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub format: Format,
    /// Which optional hooks the game exports.
    pub hooks: Capabilities,
    /// Its `settings` export, as JSON text, if it has one.
    pub settings: Option<String>,
}

/// Why a source did not pass the upload check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    #[error("{message}")]
    Invalid { message: String, line: Option<u32> },
    #[error(transparent)]
    Pool(PoolError),
}

#[derive(Clone)]
pub struct SandboxPool {
    shared: Arc<Shared>,
}

struct Shared {
    program: PathBuf,
    limits: Limits,
    size: usize,
    bot_search: SearchBudget,
    state: Mutex<PoolState>,
    freed: Condvar,
    /// How many bot searches may run at once (see [`search_slots`]).
    search_slots: usize,
    /// Bot searches running, at most `search_slots`: a search keeps a worker and a
    /// core busy for up to its whole budget, so hooks must always find a worker no search
    /// holds, and the server a core no search keeps busy, for rooms to keep their pace while
    /// bots think.
    searches: Mutex<usize>,
    search_ended: Condvar,
    /// Where games' hooks are called from: one thread per worker.
    hooks: HookThreads,
    counts: SandboxCounts,
}

#[derive(Default)]
struct PoolState {
    idle: Vec<Worker>,
    /// Workers alive, idle or lent out.
    live: usize,
}

impl SandboxPool {
    /// A pool of at most `size` workers running `program sandbox-worker`; none start yet.
    pub fn new(program: PathBuf, limits: Limits, size: usize) -> Self {
        Self {
            shared: Arc::new(Shared {
                program,
                limits,
                size: size.max(1),
                bot_search: SearchBudget::default(),
                state: Mutex::new(PoolState::default()),
                freed: Condvar::new(),
                search_slots: search_slots(&SearchBudget::default(), size.max(1)),
                searches: Mutex::new(0),
                search_ended: Condvar::new(),
                hooks: HookThreads::new(size.max(1)),
                counts: SandboxCounts::default(),
            }),
        }
    }

    pub fn limits(&self) -> Limits {
        self.shared.limits
    }

    /// The same pool (before it is shared), its bots searching within `budget`.
    pub fn with_bot_search(mut self, budget: SearchBudget) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.bot_search = budget;
            shared.search_slots = search_slots(&budget, shared.size);
        }
        self
    }

    pub fn bot_search(&self) -> SearchBudget {
        self.shared.bot_search
    }

    /// How many bot searches this pool runs at once.
    pub fn search_slots(&self) -> usize {
        self.shared.search_slots
    }

    pub fn render_metrics(&self, out: &mut crate::metrics::Exposition) {
        self.shared.counts.render(out);
    }

    /// Runs `work`, which calls games' hooks (each call blocking on a worker), on the pool's
    /// hook threads, after the work queued before it.
    pub async fn run_hooks<T, F>(&self, work: F) -> Result<T, PoolError>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        self.shared.hooks.run(work).await
    }

    /// Compiles and evaluates `source` under the hook limits and checks its exports.
    pub fn check(&self, source: &str) -> Result<Checked, CheckError> {
        let request = Request::Check {
            source: source.to_owned(),
        };
        let limit_ms = self.shared.limits.time.as_millis();
        let (mut lease, checked) = self
            .on_a_worker(|lease| lease.exchange(&request, self.compile_deadline()))
            .map_err(CheckError::Pool)?;
        match checked {
            Ok(Response::Checked {
                format,
                hooks,
                settings,
            }) => Ok(Checked {
                format,
                hooks,
                settings,
            }),
            Ok(Response::Invalid { message, line }) => Err(CheckError::Invalid { message, line }),
            Ok(other) => Err(CheckError::Pool(lease.broken(&other))),
            Err(PoolError::Timeout) => Err(CheckError::Invalid {
                message: format!(
                    "loading the module did not finish within the time limit of {limit_ms} ms"
                ),
                line: None,
            }),
            Err(PoolError::Died(status)) => Err(CheckError::Invalid {
                message: format!("the engine stopped while loading the module ({status})"),
                line: None,
            }),
            Err(other) => Err(CheckError::Pool(other)),
        }
    }

    /// Runs `hook` of the game `key` (whose source is `source`) with `args`, a JSON array.
    pub fn call(
        &self,
        key: &str,
        source: &str,
        hook: Hook,
        args: Box<RawValue>,
    ) -> Result<(Outcome, Vec<LogLine>), PoolError> {
        let call = Request::Call {
            key: key.to_owned(),
            hook,
            args,
        };
        self.run(key, source, &call, self.shared.limits.time)
    }

    /// Chooses the move of the bot `bot` in `room` (the room's record as JSON) with the search
    /// that ships with the server, inside the game's realm, stopped after `time` (the
    /// watchdog waits as for a hook: see [`Watchdog`]).
    pub fn search(
        &self,
        key: &str,
        source: &str,
        room: Box<RawValue>,
        bot: &str,
        options: SearchOptions,
        time: Duration,
    ) -> Result<(Outcome, Vec<LogLine>), PoolError> {
        let search = Request::Search {
            key: key.to_owned(),
            room,
            bot: bot.to_owned(),
            options,
            time_ms: time.as_millis() as u64,
        };
        let _permit = SearchPermit::wait(&self.shared);
        self.run(key, source, &search, time)
    }

    /// Sends `request` about the game `key`, loading its `source` first if the worker does not
    /// hold it; the worker stops the work after `time`.
    fn run(
        &self,
        key: &str,
        source: &str,
        request: &Request,
        time: Duration,
    ) -> Result<(Outcome, Vec<LogLine>), PoolError> {
        let result = self.run_on_a_worker(key, source, request, time);
        self.shared
            .counts
            .called(result.as_ref().map(|(outcome, _)| outcome));
        result
    }

    fn run_on_a_worker(
        &self,
        key: &str,
        source: &str,
        request: &Request,
        time: Duration,
    ) -> Result<(Outcome, Vec<LogLine>), PoolError> {
        let (_, answered) =
            self.on_a_worker(|lease| self.converse(lease, key, source, request, time))?;
        answered
    }

    /// Runs `work` on a leased worker: the lease, and what `work` gave. A worker killed from
    /// outside (the kernel's OOM killer, an operator), whether it was about to take the work
    /// or doing it, says nothing of the work: hooks are pure functions of their arguments,
    /// and a check is not the module's fault, so the work goes once to a fresh worker.
    fn on_a_worker<T>(
        &self,
        mut work: impl FnMut(&mut Lease) -> Result<T, PoolError>,
    ) -> Result<(Lease, Result<T, PoolError>), PoolError> {
        let mut lease = self.lease()?;
        let mut done = work(&mut lease);
        if matches!(done, Err(PoolError::Died(_))) && lease.killed_from_outside {
            lease = self.lease()?;
            done = work(&mut lease);
        }
        Ok((lease, done))
    }

    /// Sends `request` to the leased worker, and the game's source first if it asks for it.
    fn converse(
        &self,
        lease: &mut Lease,
        key: &str,
        source: &str,
        request: &Request,
        time: Duration,
    ) -> Result<(Outcome, Vec<LogLine>), PoolError> {
        let mut loaded = false;
        loop {
            match lease.exchange(request, Watchdog::for_work(time))? {
                Response::Done { outcome, logs } => return Ok((outcome, logs)),
                Response::Missing if !loaded => {
                    let load = Request::Load {
                        key: key.to_owned(),
                        source: source.to_owned(),
                    };
                    match lease.exchange(&load, self.compile_deadline())? {
                        Response::Loaded => loaded = true,
                        Response::Invalid { message, .. } => {
                            return Ok((
                                Outcome::Crashed {
                                    message: format!(
                                        "the game's source did not compile: {message}"
                                    ),
                                },
                                Vec::new(),
                            ))
                        }
                        other => return Err(lease.broken(&other)),
                    }
                }
                other => return Err(lease.broken(&other)),
            }
        }
    }

    fn compile_deadline(&self) -> Watchdog {
        Watchdog::for_work(self.shared.limits.time).allowing(COMPILE_ALLOWANCE)
    }

    /// Waits for an idle worker, starting one if the pool is not full.
    fn lease(&self) -> Result<Lease, PoolError> {
        let shared = &self.shared;
        let mut state = shared
            .state
            .lock()
            .expect("the pool lock is never poisoned");
        loop {
            if let Some(mut worker) = state.idle.pop() {
                // One that died while idle (killed from outside) is replaced, not handed out.
                if worker.has_exited() {
                    shared.counts.stopped(Stop::Died);
                    state.live -= 1;
                    continue;
                }
                return Ok(Lease::new(shared.clone(), worker));
            }
            if state.live < shared.size {
                state.live += 1;
                drop(state);
                return match Worker::spawn(&shared.program, &shared.limits) {
                    Ok(worker) => {
                        shared.counts.started();
                        Ok(Lease::new(shared.clone(), worker))
                    }
                    Err(err) => {
                        shared.release_slot();
                        Err(PoolError::Unavailable(err.to_string()))
                    }
                };
            }
            state = shared
                .freed
                .wait(state)
                .expect("the pool lock is never poisoned");
        }
    }
}

impl Shared {
    fn release_slot(&self) {
        let mut state = self.state.lock().expect("the pool lock is never poisoned");
        state.live -= 1;
        self.freed.notify_one();
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Ok(state) = self.state.get_mut() {
            for mut worker in state.idle.drain(..) {
                worker.kill();
            }
        }
    }
}

/// How many bot searches may run at once in a pool of `workers`: `--bot-searches`, or one
/// fewer than the cores; at least one, and at most one fewer than the workers (one, in a pool
/// of one).
fn search_slots(budget: &SearchBudget, workers: usize) -> usize {
    let wanted = match budget.concurrent {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1)),
        n => n,
    };
    wanted.min(workers.saturating_sub(1)).max(1)
}

/// One of the bot searches the pool lets run at once, given back when dropped.
struct SearchPermit<'a>(&'a Shared);

impl<'a> SearchPermit<'a> {
    fn wait(shared: &'a Shared) -> Self {
        let most = shared.search_slots;
        let mut running = shared.searches.lock().expect("never poisoned");
        while *running >= most {
            running = shared.search_ended.wait(running).expect("never poisoned");
        }
        *running += 1;
        Self(shared)
    }
}

impl Drop for SearchPermit<'_> {
    fn drop(&mut self) {
        *self.0.searches.lock().expect("never poisoned") -= 1;
        self.0.search_ended.notify_one();
    }
}

/// A worker lent to one caller; it goes back to the pool when dropped, unless it failed.
struct Lease {
    shared: Arc<Shared>,
    worker: Option<Worker>,
    /// Whether its worker failed by being killed from outside.
    killed_from_outside: bool,
}

impl Lease {
    fn new(shared: Arc<Shared>, worker: Worker) -> Self {
        Self {
            shared,
            worker: Some(worker),
            killed_from_outside: false,
        }
    }

    /// Sends `request` and reads the response before `watchdog` gives up. On any failure the
    /// worker is killed and its place freed.
    fn exchange(&mut self, request: &Request, watchdog: Watchdog) -> Result<Response, PoolError> {
        let worker = self.worker.as_mut().expect("a lease holds a worker");
        let result = worker.exchange(request, watchdog);
        self.killed_from_outside = worker.killed_from_outside();
        if let Err(error) = &result {
            self.retire(Stop::of(error).unwrap_or(Stop::Died));
        }
        result
    }

    /// A response that makes no sense here: the worker is not trusted further.
    fn broken(&mut self, response: &Response) -> PoolError {
        self.retire(Stop::OutOfTurn);
        PoolError::Died(format!("it answered out of turn: {response:?}"))
    }

    fn retire(&mut self, why: Stop) {
        if let Some(mut worker) = self.worker.take() {
            self.shared.counts.stopped(why);
            worker.kill();
            self.shared.release_slot();
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(worker) = self.worker.take() {
            let mut state = self
                .shared
                .state
                .lock()
                .expect("the pool lock is never poisoned");
            state.idle.push(worker);
            self.shared.freed.notify_one();
        }
    }
}
