//! When a sandbox worker that has not answered is killed.
//!
//! QuickJS stops a hook at its limit of CPU time by itself, checking now and then while it runs;
//! the watchdog catches what that cannot: a native loop that never reaches a check (say,
//! `Array.prototype.reverse.call({length: 2 ** 53 - 1})`), or a process that stopped. It counts
//! the worker's CPU time as the hook limit does, so a busy machine, where the worker waits for a
//! core, does not get a hook killed early, and a native loop is stopped at half as much again
//! as the limit. A stopped process uses no CPU: a much later deadline by the clock ends that.

use std::time::{Duration, Instant};

/// Added to the clock's deadline, for a process the machine kept waiting for a core.
const SCHEDULING_ALLOWANCE: Duration = Duration::from_secs(2);

/// The longest the CPU time goes unchecked while a worker is waited for.
const MOST_BETWEEN_CHECKS: Duration = Duration::from_millis(50);

#[derive(Debug, Clone, Copy)]
pub(super) struct Watchdog {
    /// CPU time the worker may spend on one exchange.
    cpu: Duration,
    /// The backstop by the clock.
    backstop: Instant,
    /// How often the CPU time is looked at.
    every: Duration,
}

impl Watchdog {
    /// For work the worker's engine stops after `time` of CPU time.
    pub(super) fn for_work(time: Duration) -> Self {
        Self {
            cpu: time * 3 / 2,
            backstop: Instant::now() + time * 4 + SCHEDULING_ALLOWANCE,
            every: (time / 10).clamp(Duration::from_millis(5), MOST_BETWEEN_CHECKS),
        }
    }

    /// The same, allowing `extra` more of both (compiling a source).
    pub(super) fn allowing(self, extra: Duration) -> Self {
        Self {
            cpu: self.cpu + extra,
            backstop: self.backstop + extra,
            ..self
        }
    }

    /// How long to wait for an answer before looking again; zero once the backstop passed.
    pub(super) fn next_wait(&self) -> Duration {
        self.backstop
            .saturating_duration_since(Instant::now())
            .min(self.every)
    }

    /// Whether the process `pid`, which had used `before` when the exchange began, has used up
    /// its CPU time (never, where the system does not say).
    pub(super) fn spent(&self, pid: u32, before: Option<Duration>) -> bool {
        match (before, cpu_time(pid)) {
            (Some(before), Some(now)) => now.saturating_sub(before) > self.cpu,
            _ => false,
        }
    }
}

/// The CPU time (user and system) process `pid` has used, from `/proc/<pid>/stat`.
pub(super) fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces: fields are counted after it.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime are the 14th and 15th fields; the first after the name is the 3rd.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf only reads a system setting.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let per_second = u64::try_from(per_second).ok().filter(|n| *n > 0)?;
    Some(Duration::from_nanos(ticks * 1_000_000_000 / per_second))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_time_of_a_busy_process_grows() {
        let pid = std::process::id();
        let before = cpu_time(pid).expect("this process's CPU time");
        let start = Instant::now();
        let mut spin = 0u64;
        while start.elapsed() < Duration::from_millis(200) {
            spin = std::hint::black_box(spin.wrapping_add(1));
        }
        let after = cpu_time(pid).expect("this process's CPU time");
        assert!(after > before, "{before:?} then {after:?}");
    }

    #[test]
    fn work_gets_half_its_time_again_in_cpu_and_a_later_backstop() {
        let watchdog = Watchdog::for_work(Duration::from_millis(300));
        assert_eq!(watchdog.cpu, Duration::from_millis(450));
        assert!(watchdog.backstop > Instant::now() + Duration::from_secs(3));
        assert_eq!(watchdog.next_wait(), Duration::from_millis(30));
        let pid = std::process::id();
        assert!(!watchdog.spent(pid, cpu_time(pid)));
    }
}
