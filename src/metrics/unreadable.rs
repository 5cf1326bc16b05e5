//! Requests the HTTP layer could not read: a malformed head, one that never arrived in time,
//! a connection broken mid-request. actix-http answers these itself (a 400, or a closed
//! connection) before any middleware sees them, then logs each at `ERROR` as a "stream
//! error". A client can cause every one of them, so they are no server error: this counts
//! them for `GET /metrics` and logs each at `INFO`, and the `ERROR` line is dropped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::OnceLock;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

use super::Exposition;

/// Why a request could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreadable {
    /// The head did not parse (a malformed header, a bad request line, too large).
    Malformed,
    /// The head did not arrive within the request timeout (a slow or idle client).
    Timeout,
    /// The connection failed while the request was read (reset by the client).
    Io,
}

impl Unreadable {
    const ALL: [Unreadable; 3] = [Unreadable::Malformed, Unreadable::Timeout, Unreadable::Io];

    fn label(self) -> &'static str {
        match self {
            Unreadable::Malformed => "malformed",
            Unreadable::Timeout => "timeout",
            Unreadable::Io => "io",
        }
    }

    /// The kind of a message actix-http logs, if a client caused it.
    pub fn of(message: &str) -> Option<Self> {
        let cause = message.strip_prefix("stream error: ")?;
        if cause.starts_with("request parse error") {
            Some(Unreadable::Malformed)
        } else if cause.starts_with("request did not complete within") {
            Some(Unreadable::Timeout)
        } else if cause.starts_with("I/O error") {
            Some(Unreadable::Io)
        } else {
            None
        }
    }
}

static COUNTS: [AtomicU64; 3] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];

/// Counts one unreadable request.
pub fn count(kind: Unreadable) {
    COUNTS[kind as usize].fetch_add(1, Ordering::Relaxed);
}

/// How many requests of each kind could not be read since the process started.
pub fn counted(kind: Unreadable) -> u64 {
    COUNTS[kind as usize].load(Ordering::Relaxed)
}

pub fn render(out: &mut Exposition) {
    const NAME: &str = "turnhouse_http_unreadable_requests_total";
    out.family(
        NAME,
        "counter",
        "Requests the server could not read, by why: a malformed head, a head not sent in time, a connection broken mid-request.",
    );
    for kind in Unreadable::ALL {
        out.sample(NAME, &format!("reason=\"{}\"", kind.label()), counted(kind));
    }
}

/// The tracing layer that catches actix-http's lines about unreadable requests.
pub struct UnreadableRequests;

impl<S: Subscriber> Layer<S> for UnreadableRequests {
    fn event_enabled(&self, event: &Event<'_>, _: Context<'_, S>) -> bool {
        let meta = event.metadata();
        if *meta.level() != Level::ERROR || !meta.target().starts_with("actix_http::") {
            return true;
        }
        let mut message = Message(String::new());
        event.record(&mut message);
        let Some(kind) = Unreadable::of(&message.0) else {
            return true;
        };
        count(kind);
        relog(message.0);
        false
    }
}

/// Logs a line at `INFO` from a thread of its own: an event cannot be logged while another is
/// being dispatched on the same thread (tracing drops it). At most 256 wait; a flood of bad
/// requests is counted in full but not logged in full.
fn relog(message: String) {
    static LOGGER: OnceLock<Option<SyncSender<String>>> = OnceLock::new();
    let sender = LOGGER.get_or_init(|| {
        let (sender, receiver) = sync_channel::<String>(256);
        std::thread::Builder::new()
            .name("unreadable-requests-log".into())
            .spawn(move || {
                for message in receiver {
                    let cause = message.strip_prefix("stream error: ").unwrap_or(&message);
                    tracing::info!(cause, "a client's request could not be read");
                }
            })
            .ok()
            .map(|_| sender)
    });
    if let Some(sender) = sender {
        let _ = sender.try_send(message);
    }
}

struct Message(String);

impl Visit for Message {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0 = value.to_owned();
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_a_client_causes_is_taken_out_of_the_error_log() {
        let of = Unreadable::of;
        assert_eq!(
            of("stream error: request parse error: invalid Header provided"),
            Some(Unreadable::Malformed)
        );
        assert_eq!(
            of("stream error: request did not complete within the specified timeout"),
            Some(Unreadable::Timeout)
        );
        assert_eq!(
            of("stream error: I/O error: Connection reset by peer (os error 104)"),
            Some(Unreadable::Io)
        );
        assert_eq!(of("stream error: internal error"), None);
        assert_eq!(of("Response payload stream error: oops"), None);
    }
}
