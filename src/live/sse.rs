//! The wire format of the streams (server-sent events) beyond the frames of rooms, which
//! [`crate::views`] builds: each frame is built once and shared by every subscriber.
//!
//! One stop in the life of a move: `docs/internals.md`.

use bytes::Bytes;

/// Tells a lobby client that it missed events and should list the rooms again.
pub fn resync_frame() -> Bytes {
    Bytes::from_static(b"event: resync\ndata: {}\n\n")
}

/// A comment line, which clients ignore: it keeps proxies from closing an idle stream.
pub fn comment_frame() -> Bytes {
    Bytes::from_static(b": keep-alive\n\n")
}

/// How long a client waits before reconnecting.
pub fn retry_frame(millis: u64) -> Bytes {
    format!("retry: {millis}\n\n").into()
}
