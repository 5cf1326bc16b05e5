//! Logging: `tracing` to stdout, filtered by `RUST_LOG` (default `info`). Each request is one
//! line when it is answered, with its id, method, path, status and time taken (see
//! `api::request_log`).

use std::io::IsTerminal;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter};

use crate::metrics::unreadable::UnreadableRequests;

pub fn init(default_filter: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    // A second call (several tests in one process) keeps the first subscriber.
    let _ = tracing_subscriber::registry()
        .with(filter)
        // Requests a client made unreadable are counted and logged at INFO, not as errors.
        .with(UnreadableRequests)
        .with(
            fmt::layer()
                .with_target(false)
                .with_ansi(std::io::stdout().is_terminal()),
        )
        .try_init();
}
