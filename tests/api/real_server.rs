//! The server binary itself, started on a database (a SQLite file or a PostgreSQL URL) as an
//! operator would start it, for tests that kill, stop or starve it, or run several at once.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use crate::client::Api;

/// The server binary on a free port; its address is read from its own log line. It derefs
/// to its [`Api`], the same vocabulary as a server in the test's process.
pub struct Server {
    pub child: Child,
    pub api: Api,
    log: Arc<Mutex<Vec<String>>>,
    /// The thread reading the log: it ends when the server (and whatever kept its output
    /// open) has gone.
    reader: std::thread::JoinHandle<()>,
}

impl std::ops::Deref for Server {
    type Target = Api;

    fn deref(&self) -> &Api {
        &self.api
    }
}

impl Server {
    pub fn start(database: impl AsRef<OsStr>) -> Self {
        Self::start_with(database, &[])
    }

    /// Started with more flags.
    pub fn start_with(database: impl AsRef<OsStr>, flags: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_turnhouse"))
            .args(["--bind", "127.0.0.1:0", "--database"])
            .arg(database)
            .args(flags)
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server binary starts");
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let mut early = Vec::new();
        let address = loop {
            let line = lines
                .next()
                .expect("the server logs where it listens")
                .unwrap();
            if let Some(rest) = line.split("listening on ").nth(1) {
                break rest.split_whitespace().next().unwrap().to_owned();
            }
            early.push(line);
        };
        // Keep draining the log (and keep it) so the server never blocks on a full pipe.
        let log = Arc::new(Mutex::new(early));
        let kept = log.clone();
        let reader = std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                kept.lock().unwrap().push(line);
            }
        });
        Self {
            child,
            api: Api::new(address),
            log,
            reader,
        }
    }

    /// The log lines so far that contain every one of `parts`.
    pub fn log_lines_with(&self, parts: &[&str]) -> Vec<String> {
        let log = self.log.lock().unwrap();
        log.iter()
            .filter(|line| parts.iter().all(|part| line.contains(part)))
            .cloned()
            .collect()
    }

    /// Like [`Server::log_lines_with`], for a server that has exited: first waits (up to
    /// 5 s) until its log is read to the end, as the lines it wrote while stopping may still
    /// be in the pipe when its exit is seen.
    pub fn final_log_lines_with(&self, parts: &[&str]) -> Vec<String> {
        let waiting = std::time::Instant::now();
        while !self.reader.is_finished() && waiting.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        self.log_lines_with(parts)
    }

    pub fn kill(mut self) {
        self.child.kill().unwrap(); // SIGKILL: no shutdown, no flush.
        self.child.wait().unwrap();
    }
}

/// A server a test did not stop (or that a failing test left behind) is killed with it, not
/// left running on its port after the tests are done.
impl Drop for Server {
    fn drop(&mut self) {
        // Once the child has been waited for, std sends nothing: no other process is hit.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
