//! Logging: `tracing` to stdout, filtered by `RUST_LOG` (default `info`). Each request is one
//! line when it completes (its span closing), with method, route, status and time taken.

use std::io::IsTerminal;

use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::EnvFilter;

pub fn init(default_filter: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    // A second call (several tests in one process) keeps the first subscriber.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::stdout().is_terminal())
        .with_span_events(FmtSpan::CLOSE)
        .try_init();
}
