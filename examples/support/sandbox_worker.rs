//! For benchmarks that start a server in their own process: the server starts sandbox
//! processes as this same program (`<program> sandbox-worker …`), which must then be one.

use std::process::ExitCode;

use clap::Parser;
use turnhouse::config::{Command, Config};

/// Runs as a sandbox process and returns its exit code when started as one; `None` otherwise.
pub fn run_if_asked() -> Option<ExitCode> {
    if std::env::args().nth(1).as_deref() != Some("sandbox-worker") {
        return None;
    }
    match Config::parse().command {
        Some(Command::SandboxWorker(limits)) => {
            Some(turnhouse::sandbox::worker::run(limits.limits()))
        }
        _ => None,
    }
}
