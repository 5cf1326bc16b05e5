//! A sandbox process as the server holds it: started, sent one request at a time over its
//! stdin, answered on its stdout within a [`Watchdog`]'s limits, and killed.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

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
    /// See [`Worker::killed_from_outside`].
    killed_from_outside: bool,
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
        Ok(Self {
            clock: CpuClock::of(child.id()),
            child,
            stdin,
            stdout,
            buffer: Vec::new(),
            chunk: vec![0; READ_CHUNK].into_boxed_slice(),
            killed_from_outside: false,
        })
    }

    pub(super) fn exchange(
        &mut self,
        request: &Request,
        watchdog: Watchdog,
    ) -> Result<Response, PoolError> {
        let cpu_before = self.clock.read();
        let mut line = serde_json::to_vec(request).expect("requests always serialise");
        line.push(b'\n');
        if let Err(err) = self
            .stdin
            .write_all(&line)
            .and_then(|()| self.stdin.flush())
        {
            return Err(self.died(err));
        }
        let line = self.read_line(watchdog, cpu_before)?;
        serde_json::from_slice(&line)
            .map_err(|err| PoolError::Died(format!("it sent an unreadable response: {err}")))
    }

    /// Reads up to the next newline, until `watchdog` says the worker has had its time (it had
    /// used `cpu_before` when the exchange began).
    fn read_line(
        &mut self,
        watchdog: Watchdog,
        cpu_before: Option<Duration>,
    ) -> Result<Vec<u8>, PoolError> {
        let mut scanned = 0;
        loop {
            if let Some(end) = self.buffer[scanned..].iter().position(|b| *b == b'\n') {
                let mut line: Vec<u8> = self.buffer.drain(..=scanned + end).collect();
                line.pop();
                return Ok(line);
            }
            scanned = self.buffer.len();
            if scanned > MAX_RESPONSE_BYTES {
                return Err(PoolError::Died("its response was too large".into()));
            }
            let wait = watchdog.next_wait();
            if wait.is_zero() {
                return Err(PoolError::Timeout);
            }
            if !self.wait_readable(wait)? {
                if watchdog.spent(self.clock, cpu_before) {
                    return Err(PoolError::Timeout);
                }
                continue;
            }
            match self.stdout.read(&mut self.chunk) {
                Ok(0) => return Err(self.died("it closed its output")),
                Ok(n) => self.buffer.extend_from_slice(&self.chunk[..n]),
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(err) => return Err(self.died(err)),
            }
        }
    }

    /// Whether the worker's stdout has something to read within `timeout`.
    fn wait_readable(&mut self, timeout: Duration) -> Result<bool, PoolError> {
        let mut poll = libc::pollfd {
            fd: self.stdout.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = timeout.as_millis().clamp(1, i32::MAX as u128) as i32;
        loop {
            // SAFETY: one valid pollfd, owned by this frame, for the length given.
            let ready = unsafe { libc::poll(&mut poll, 1, millis) };
            match ready {
                0 => return Ok(false),
                n if n > 0 => return Ok(true),
                _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
                _ => return Err(self.died(std::io::Error::last_os_error())),
            }
        }
    }

    /// The error for a worker that stopped answering, with how it ended if it has.
    fn died(&mut self, cause: impl std::fmt::Display) -> PoolError {
        use std::os::unix::process::ExitStatusExt;
        // The pipe closes a moment before the process is gone: give it that moment.
        for _ in 0..20 {
            if let Ok(Some(status)) = self.child.try_wait() {
                // The server kills a worker only once it has given up on it; nothing inside
                // one can send it a SIGKILL.
                self.killed_from_outside = status.signal() == Some(libc::SIGKILL);
                return PoolError::Died(status.to_string());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        PoolError::Died(cause.to_string())
    }

    /// Whether the worker, found dead, had been killed from outside (by the kernel's OOM
    /// killer, by an operator) rather than dying of what it ran.
    pub(super) fn killed_from_outside(&self) -> bool {
        self.killed_from_outside
    }

    pub(super) fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    pub(super) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
