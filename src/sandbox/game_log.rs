//! Where an uploaded game's log lines go besides the server's log: to its owner's log, kept
//! per game in the database (`GET /games/{id}/logs`). Recording never waits on the database:
//! lines queue for a writer task, and when it falls behind the queue's bound, lines are
//! dropped and counted rather than slowing a hook's room.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::domain::records::GameLogLine;

/// Lines waiting to be stored, at most.
const QUEUED_LINES: usize = 4096;

/// A line's text is kept up to this many bytes (so 1,000 lines of a game's log hold at most
/// about 1 MiB of text).
pub const MAX_LOGGED_TEXT: usize = 1024;

/// The sending side of the owners' logs; cheap to clone.
#[derive(Clone)]
pub struct GameLogSink {
    queue: mpsc::Sender<GameLogLine>,
    dropped: Arc<AtomicU64>,
}

impl GameLogSink {
    /// A sink and the queue its writer drains.
    pub fn new() -> (Self, mpsc::Receiver<GameLogLine>) {
        let (queue, lines) = mpsc::channel(QUEUED_LINES);
        let sink = Self {
            queue,
            dropped: Arc::default(),
        };
        (sink, lines)
    }

    /// Queues `line` for its game's log, its text cut to [`MAX_LOGGED_TEXT`] bytes.
    pub fn record(&self, mut line: GameLogLine) {
        if line.text.len() > MAX_LOGGED_TEXT {
            let mut end = MAX_LOGGED_TEXT - '…'.len_utf8();
            while !line.text.is_char_boundary(end) {
                end -= 1;
            }
            line.text.truncate(end);
            line.text.push('…');
        }
        if self.queue.try_send(line).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Lines dropped because the queue was full (or its writer gone).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Hook, LogLevel};

    fn line(text: &str) -> GameLogLine {
        GameLogLine {
            id: 0,
            game: "g".into(),
            game_version: 1,
            at: crate::domain::time::Timestamp::now(),
            room: "r".into(),
            version: 2,
            hook: Hook::PlayerMove,
            level: LogLevel::Info,
            text: text.into(),
        }
    }

    #[test]
    fn a_long_line_is_cut_on_a_character_boundary_and_a_full_queue_drops_and_counts() {
        let (sink, mut lines) = GameLogSink::new();
        sink.record(line(&"é".repeat(MAX_LOGGED_TEXT)));
        let kept = lines.try_recv().unwrap();
        assert!(kept.text.len() <= MAX_LOGGED_TEXT && kept.text.ends_with('…'));
        for _ in 0..QUEUED_LINES + 3 {
            sink.record(line("x"));
        }
        assert_eq!(sink.dropped(), 3);
    }
}
