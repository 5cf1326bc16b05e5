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

    /// Whether the process whose clock is `clock`, which had used `before` when the exchange
    /// began, has used up its CPU time (never, where the system does not say).
    pub(super) fn spent(&self, clock: CpuClock, before: Option<Duration>) -> bool {
        match (before, clock.read()) {
            (Some(before), Some(now)) => now.saturating_sub(before) > self.cpu,
            _ => false,
        }
    }
}

/// The CPU-time clock (user and system) of one process. Read before every exchange, so it is
/// one `clock_gettime` call rather than opening and parsing `/proc/<pid>/stat`, which cost the
/// server about 4% of its time in hosted games.
#[derive(Debug, Clone, Copy)]
pub(super) struct CpuClock(Option<libc::clockid_t>);

impl CpuClock {
    /// The clock of process `pid`; one that never reads where the system has none.
    pub(super) fn of(pid: u32) -> Self {
        let mut clock: libc::clockid_t = 0;
        // SAFETY: `clock` is a valid place to write the clock's id to.
        let found = unsafe { libc::clock_getcpuclockid(pid as libc::pid_t, &mut clock) } == 0;
        Self(found.then_some(clock))
    }

    /// The CPU time the process has used; `None` once it is gone.
    pub(super) fn read(self) -> Option<Duration> {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `now` is a valid timespec to write to; an unknown clock is an error return.
        let read = unsafe { libc::clock_gettime(self.0?, &mut now) } == 0;
        read.then(|| Duration::new(now.tv_sec as u64, now.tv_nsec as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_time_of_a_busy_process_grows() {
        let clock = CpuClock::of(std::process::id());
        let before = clock.read().expect("this process's CPU time");
        let start = Instant::now();
        let mut spin = 0u64;
        while start.elapsed() < Duration::from_millis(200) {
            spin = std::hint::black_box(spin.wrapping_add(1));
        }
        let after = clock.read().expect("this process's CPU time");
        assert!(after > before, "{before:?} then {after:?}");
    }

    #[test]
    fn another_process_is_clocked_until_it_is_gone() {
        let mut child = std::process::Command::new("yes")
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("a busy child");
        let clock = CpuClock::of(child.id());
        let start = clock.read().expect("the child's CPU time");
        let mut now = start;
        let waited = Instant::now();
        while now == start && waited.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
            now = clock.read().expect("the child's CPU time");
        }
        assert!(
            now > start,
            "the child ran yet its clock stayed at {start:?}"
        );
        child.kill().expect("the child stops");
        child.wait().expect("the child is reaped");
        assert_eq!(clock.read(), None);
    }

    #[test]
    fn work_gets_half_its_time_again_in_cpu_and_a_later_backstop() {
        let watchdog = Watchdog::for_work(Duration::from_millis(300));
        assert_eq!(watchdog.cpu, Duration::from_millis(450));
        assert!(watchdog.backstop > Instant::now() + Duration::from_secs(3));
        assert_eq!(watchdog.next_wait(), Duration::from_millis(30));
        let clock = CpuClock::of(std::process::id());
        assert!(!watchdog.spent(clock, clock.read()));
    }
}
