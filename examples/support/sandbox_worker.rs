//! For benchmarks that start a server in their own process: the server starts sandbox
//! processes as this same program (`<program> sandbox-worker …`), which must then be one.

#![allow(dead_code)]

use std::path::Path;
use std::process::ExitCode;

use clap::Parser;
use turnhouse::config::{Command, Config};
use turnhouse::startup::Application;

/// Starts a server in this process, on a fresh SQLite file in `dir`, with the default
/// settings but for rate limits (off) and its sandbox processes (this program); returns its
/// address and settings. It serves until the process ends.
pub async fn serve_here(dir: &Path) -> (String, Config) {
    let mut config = Config::for_database(dir.join("bench.db").to_str().expect("a UTF-8 path"));
    config.sandbox_program = Some(std::env::current_exe().expect("this program"));
    config.abuse_limits.rate_limits = "off".into();
    let app = Application::build(&config, turnhouse::games::builtin())
        .await
        .expect("the server starts");
    let base = format!("http://127.0.0.1:{}", app.port());
    tokio::spawn(app.run_until_stopped());
    (base, config)
}

/// Runs as a sandbox process and returns its exit code when started as one; `None` otherwise.
pub fn run_if_asked() -> Option<ExitCode> {
    if std::env::args().nth(1).as_deref() != Some("sandbox-worker") {
        return None;
    }
    let config = Config::parse();
    match config.command {
        Some(Command::SandboxWorker) => {
            Some(turnhouse::sandbox::worker::run(config.hook_limits.limits()))
        }
        _ => None,
    }
}
