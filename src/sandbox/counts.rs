//! What the sandbox did that an operator watches on `/metrics`: processes started and
//! stopped (and why), and hooks the sandbox stopped or that failed. A game that loops, grows
//! without bound or crashes shows here before anyone reads its log; a count of restarts that
//! keeps rising is a game (or a host) that needs looking at.

use std::sync::atomic::{AtomicU64, Ordering};

use super::pool::PoolError;
use super::protocol::Outcome;
use crate::metrics::Exposition;

/// Why a sandbox process was stopped and replaced.
#[derive(Debug, Clone, Copy)]
pub enum Stop {
    /// It missed its deadline: a native loop, or a hook past its time, killed outright.
    Timeout,
    /// It exited, closed its pipe or sent what could not be read.
    Died,
    /// It answered something that made no sense at that point.
    OutOfTurn,
}

impl Stop {
    const ALL: [Stop; 3] = [Stop::Timeout, Stop::Died, Stop::OutOfTurn];

    fn label(self) -> &'static str {
        match self {
            Stop::Timeout => "timeout",
            Stop::Died => "died",
            Stop::OutOfTurn => "out_of_turn",
        }
    }

    pub fn of(error: &PoolError) -> Option<Self> {
        match error {
            PoolError::Timeout => Some(Stop::Timeout),
            PoolError::Died(_) => Some(Stop::Died),
            PoolError::Unavailable(_) => None,
        }
    }
}

/// How a call of a game's code (a hook, or a bot's search) failed.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// Past its time limit, whether the engine interrupted it or its process was killed.
    Timeout,
    /// Past its memory limit.
    Memory,
    /// An error in the game's code, or a result that is not JSON.
    Error,
    /// Its stack overflowed, its source did not compile or its process died.
    Crash,
}

impl Fault {
    const ALL: [Fault; 4] = [Fault::Timeout, Fault::Memory, Fault::Error, Fault::Crash];

    fn label(self) -> &'static str {
        match self {
            Fault::Timeout => "timeout",
            Fault::Memory => "memory",
            Fault::Error => "error",
            Fault::Crash => "crash",
        }
    }

    /// The fault of a call's result, if it is one (a refusal is the game's answer, not a fault).
    fn of(result: Result<&Outcome, &PoolError>) -> Option<Self> {
        match result {
            Ok(Outcome::Patch { .. } | Outcome::Refused { .. }) => None,
            Ok(Outcome::Timeout) | Err(PoolError::Timeout) => Some(Fault::Timeout),
            Ok(Outcome::OutOfMemory { .. }) => Some(Fault::Memory),
            Ok(Outcome::Failed { .. } | Outcome::InvalidResult { .. }) => Some(Fault::Error),
            Ok(Outcome::Crashed { .. }) | Err(PoolError::Died(_)) => Some(Fault::Crash),
            Err(PoolError::Unavailable(_)) => None,
        }
    }
}

#[derive(Default)]
pub struct SandboxCounts {
    started: AtomicU64,
    stopped: [AtomicU64; Stop::ALL.len()],
    faults: [AtomicU64; Fault::ALL.len()],
}

impl SandboxCounts {
    pub fn started(&self) {
        self.started.fetch_add(1, Ordering::Relaxed);
    }

    pub fn stopped(&self, why: Stop) {
        self.stopped[why as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Counts the result of one call of a game's code, if it is a fault.
    pub fn called(&self, result: Result<&Outcome, &PoolError>) {
        if let Some(fault) = Fault::of(result) {
            self.faults[fault as usize].fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn render(&self, out: &mut Exposition) {
        out.single(
            "turnhouse_sandbox_processes_started_total",
            "counter",
            "Sandbox processes started (the first ones, and each that replaced one stopped).",
            self.started.load(Ordering::Relaxed),
        );
        const STOPPED: &str = "turnhouse_sandbox_processes_stopped_total";
        out.family(
            STOPPED,
            "counter",
            "Sandbox processes stopped and replaced, by why: past their deadline (killed), \
             died, or answering out of turn.",
        );
        for why in Stop::ALL {
            let count = self.stopped[why as usize].load(Ordering::Relaxed);
            out.sample(STOPPED, &format!("reason=\"{}\"", why.label()), count);
        }
        const FAULTS: &str = "turnhouse_hook_faults_total";
        out.family(
            FAULTS,
            "counter",
            "Calls of uploaded games' code (hooks and bots' searches) that failed, by fault: \
             past the time limit, past the memory limit, an error in the code, or a crash.",
        );
        for fault in Fault::ALL {
            let count = self.faults[fault as usize].load(Ordering::Relaxed);
            out.sample(FAULTS, &format!("fault=\"{}\"", fault.label()), count);
        }
    }
}
