//! A sandbox process as the server holds it: started, sent one request at a time over its
//! stdin, answered on its stdout within a [`Watchdog`]'s limits, and killed.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use futures_util::FutureExt;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use super::pool::PoolError;
use super::protocol::{Request, Response};
use super::quickjs::Limits;
use super::watchdog::{CpuClock, Watchdog};

/// The largest response read from a worker; a patch is at most about 1 MiB.
const MAX_RESPONSE_BYTES: usize = 8 << 20;

/// The most one read of a worker's answer takes.
const READ_CHUNK: usize = 64 << 10;

pub(super) struct Worker {
    child: Child,
    clock: CpuClock,
    stdin: ChildStdin,
    stdout: ChildStdout,
    buffer: Vec<u8>,
    /// What each read of `stdout` fills, made once: a zeroed 64 KiB buffer made (and freed)
    /// for every exchange was a tenth of the server's work for a hook call.
    chunk: Box<[u8]>,
}

impl Worker {
    pub(super) fn spawn(program: &PathBuf, limits: &Limits) -> std::io::Result<Self> {
        let mut child = Command::new(program)
            .arg("sandbox-worker")
            .arg(format!("--hook-time-limit-ms={}", limits.time.as_millis()))
            .arg(format!(
                "--hook-memory-limit-mib={}",
                limits.memory_bytes >> 20
            ))
            .arg(format!(
                "--hook-stack-limit-kib={}",
                limits.stack_bytes >> 10
            ))
            // Nothing of the server's environment (database URL, secrets) reaches the sandbox.
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        set_nonblocking(stdin.as_raw_fd())?;
        set_nonblocking(stdout.as_raw_fd())?;
        Ok(Self {
            clock: CpuClock::of(child.id()),
            child,
            stdin,
            stdout,
            buffer: Vec::new(),
            chunk: vec![0; READ_CHUNK].into_boxed_slice(),
        })
    }

    /// Sends `request` and reads the response before `watchdog` gives up, waiting for the
    /// pipes as `wait` does.
    pub(super) async fn exchange(
        &mut self,
        request: &Request,
        watchdog: Watchdog,
        wait: &mut impl Wait,
    ) -> Result<Response, PoolError> {
        let cpu_before = self.clock.read();
        let mut line = serde_json::to_vec(request).expect("requests always serialise");
        line.push(b'\n');
        let mut written = 0;
        while written < line.len() {
            let stdin = &self.stdin;
            let pipe = Pipe::In(stdin.as_raw_fd());
            let write = || (&*stdin).write(&line[written..]);
            match step(wait, pipe, watchdog, self.clock, cpu_before, write).await {
                Ok(Some(n)) => written += n,
                Ok(None) => {}
                Err(stop) => return Err(self.stopped(wait, stop).await),
            }
        }
        let mut scanned = 0;
        loop {
            if let Some(end) = self.buffer[scanned..].iter().position(|b| *b == b'\n') {
                let mut line: Vec<u8> = self.buffer.drain(..=scanned + end).collect();
                line.pop();
                return serde_json::from_slice(&line).map_err(|err| {
                    PoolError::Died(format!("it sent an unreadable response: {err}"))
                });
            }
            scanned = self.buffer.len();
            if scanned > MAX_RESPONSE_BYTES {
                return Err(PoolError::Died("its response was too large".into()));
            }
            let (stdout, chunk) = (&mut self.stdout, &mut self.chunk);
            let pipe = Pipe::Out(stdout.as_raw_fd());
            let read = || stdout.read(chunk);
            match step(wait, pipe, watchdog, self.clock, cpu_before, read).await {
                Ok(Some(0)) => return Err(self.died(wait, "it closed its output").await),
                Ok(Some(n)) => self.buffer.extend_from_slice(&self.chunk[..n]),
                Ok(None) => {}
                Err(stop) => return Err(self.stopped(wait, stop).await),
            }
        }
    }

    /// The error an exchange ends with when `stop` ended a step of it.
    async fn stopped(&mut self, wait: &mut impl Wait, stop: Stop) -> PoolError {
        match stop {
            Stop::Timeout => PoolError::Timeout,
            Stop::Failed(err) => self.died(wait, err).await,
        }
    }

    /// The error for a worker that stopped answering, with how it ended if it has.
    async fn died(&mut self, wait: &mut impl Wait, cause: impl std::fmt::Display) -> PoolError {
        // The pipe closes a moment before the process is gone: give it that moment.
        for _ in 0..20 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return PoolError::Died(status.to_string());
            }
            wait.pause(Duration::from_millis(5)).await;
        }
        PoolError::Died(cause.to_string())
    }

    pub(super) fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    pub(super) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Why a step of an exchange ended it.
enum Stop {
    /// The worker had its time: its CPU time since the exchange began, or the backstop.
    Timeout,
    /// The pipe failed (the worker is gone, most likely).
    Failed(std::io::Error),
}

/// Runs `io` on `pipe` once it is ready: what it did, or `None` when it is to be tried again
/// (the wait ran out with time left, or a signal interrupted it). The worker's `clock` had read
/// `cpu_before` when the exchange began.
async fn step(
    wait: &mut impl Wait,
    pipe: Pipe,
    watchdog: Watchdog,
    clock: CpuClock,
    cpu_before: Option<Duration>,
    io: impl FnMut() -> std::io::Result<usize>,
) -> Result<Option<usize>, Stop> {
    let within = watchdog.next_wait();
    if within.is_zero() {
        return Err(Stop::Timeout);
    }
    match wait.io(pipe, within, io).await {
        Ok(Some(n)) => Ok(Some(n)),
        Ok(None) if watchdog.spent(clock, cpu_before) => Err(Stop::Timeout),
        Ok(None) => Ok(None),
        Err(err) if err.kind() == ErrorKind::Interrupted => Ok(None),
        Err(err) => Err(Stop::Failed(err)),
    }
}

/// One of the server's ends of a worker's pipes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Pipe {
    /// The worker's stdin: the server writes.
    In(RawFd),
    /// The worker's stdout: the server reads.
    Out(RawFd),
}

/// How an exchange waits for a worker's pipes: blocking its thread, or on an async runtime's
/// reactor. The pipes are non-blocking either way (set when the worker starts).
pub(super) trait Wait {
    /// Runs `io` (a read or write on `pipe` that does not block) until it does not answer
    /// `WouldBlock`, waiting for the pipe in between: what it did, or `None` if `within`
    /// passed first.
    async fn io(
        &mut self,
        pipe: Pipe,
        within: Duration,
        io: impl FnMut() -> std::io::Result<usize>,
    ) -> std::io::Result<Option<usize>>;

    async fn pause(&mut self, time: Duration);
}

/// What `work` (its waits [`Blocking`]) comes to: it never pends, so it is run in place.
pub(super) fn blocking<T>(work: impl std::future::Future<Output = T>) -> T {
    work.now_or_never()
        .expect("a blocking wait never leaves its work pending")
}

/// Waits by blocking the thread in `poll`; its futures are ready when first polled.
pub(super) struct Blocking;

impl Wait for Blocking {
    async fn io(
        &mut self,
        pipe: Pipe,
        within: Duration,
        mut io: impl FnMut() -> std::io::Result<usize>,
    ) -> std::io::Result<Option<usize>> {
        loop {
            match io() {
                Err(err) if err.kind() == ErrorKind::WouldBlock => {}
                done => return done.map(Some),
            }
            if !poll(pipe, within)? {
                return Ok(None);
            }
        }
    }

    async fn pause(&mut self, time: Duration) {
        std::thread::sleep(time);
    }
}

/// Whether `pipe` is ready within `within`.
fn poll(pipe: Pipe, within: Duration) -> std::io::Result<bool> {
    let (fd, events) = match pipe {
        Pipe::In(fd) => (fd, libc::POLLOUT),
        Pipe::Out(fd) => (fd, libc::POLLIN),
    };
    let mut poll = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let millis = within.as_millis().clamp(1, i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd, owned by this frame, for the length given.
    match unsafe { libc::poll(&mut poll, 1, millis) } {
        0 => Ok(false),
        n if n > 0 => Ok(true),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// Waits on the reactor of the runtime the caller runs on. The pipes are registered with it
/// while one caller holds the worker: the server's HTTP workers each run a runtime of their
/// own, and a worker process serves them all in turn.
#[derive(Default)]
pub(super) struct Reactor {
    stdin: Option<AsyncFd<RawFd>>,
    stdout: Option<AsyncFd<RawFd>>,
}

impl Wait for Reactor {
    async fn io(
        &mut self,
        pipe: Pipe,
        within: Duration,
        mut io: impl FnMut() -> std::io::Result<usize>,
    ) -> std::io::Result<Option<usize>> {
        let (slot, fd, interest) = match pipe {
            Pipe::In(fd) => (&mut self.stdin, fd, Interest::WRITABLE),
            Pipe::Out(fd) => (&mut self.stdout, fd, Interest::READABLE),
        };
        let registered = match slot {
            Some(registered) => registered,
            // SAFETY: the descriptor stays open while this is registered: a reactor lives
            // within one caller's lease of the worker, which holds its pipes all along.
            None => slot.insert(unsafe { AsyncFd::register_with_interest(fd, interest) }?),
        };
        match tokio::time::timeout(within, registered.async_io(interest, |_| io())).await {
            Ok(done) => done.map(Some),
            Err(_) => Ok(None),
        }
    }

    async fn pause(&mut self, time: Duration) {
        tokio::time::sleep(time).await;
    }
}

/// Makes the server's end of a worker's pipe non-blocking.
fn set_nonblocking(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: `fcntl` on a descriptor this process owns, reading then setting its flags.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
