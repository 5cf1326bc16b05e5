//! What a stream of a game's log reads: every line after a cursor, then each new one as it is
//! stored. Lines are read from the database, woken when this server stores some and once a
//! second besides (another server on the same database may have).

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::watch;

use super::Feed;
use crate::store::{Store, StoreError};
use crate::views::log_frame;

/// Lines read at a time.
const PAGE: i64 = 256;

/// How often the log is read when nothing woke the stream.
const POLL: Duration = Duration::from_secs(1);

pub struct GameLogFeed {
    store: Store,
    game: String,
    /// The id of the last line read.
    after: i64,
    pending: VecDeque<Bytes>,
    /// Changes whenever this server has stored log lines.
    stored: watch::Receiver<u64>,
}

impl GameLogFeed {
    pub fn new(store: Store, game: String, after: i64, stored: watch::Receiver<u64>) -> Self {
        Self {
            store,
            game,
            after,
            pending: VecDeque::new(),
            stored,
        }
    }
}

impl Feed for GameLogFeed {
    async fn next(&mut self) -> Result<Option<Bytes>, StoreError> {
        loop {
            if let Some(frame) = self.pending.pop_front() {
                return Ok(Some(frame));
            }
            self.stored.borrow_and_update();
            // Nothing changes before the read completes, so a cancelled call loses nothing.
            let lines = self
                .store
                .game_log(&self.game, Some(self.after), PAGE)
                .await?;
            if let Some(last) = lines.last() {
                self.after = last.id;
                self.pending.extend(lines.iter().map(log_frame));
                continue;
            }
            tokio::select! {
                changed = self.stored.changed() => {
                    if changed.is_err() {
                        return Ok(None);
                    }
                }
                _ = tokio::time::sleep(POLL) => {}
            }
        }
    }
}
