//! Games' logs, for their owners: a task stores the lines games' hooks log (and their
//! failures) off the path of any move, in batches through the store's writer; owners read
//! them back, or follow them live.

use tokio::sync::{mpsc, watch};

use super::{Catalog, CatalogError};
use crate::domain::records::GameLogLine;
use crate::game::PlayerRef;
use crate::live::GameLogFeed;
use crate::store::Store;

/// Lines stored in one write, at most.
const BATCH: usize = 512;

/// Stores lines as they come, in batches of whatever is waiting; each stored batch moves
/// `stored` on, which wakes the streams that follow a log.
pub(super) async fn keep(
    store: Store,
    mut lines: mpsc::Receiver<GameLogLine>,
    stored: watch::Sender<u64>,
) {
    let mut batch = Vec::with_capacity(BATCH);
    while lines.recv_many(&mut batch, BATCH).await > 0 {
        let count = batch.len();
        match store.append_game_logs(std::mem::take(&mut batch)).await {
            Ok(()) => {
                stored.send_modify(|n| *n += 1);
            }
            Err(err) => {
                tracing::warn!(error = %err, lines = count, "lines of games' logs could not be stored")
            }
        }
    }
}

impl Catalog {
    /// Game `game`'s log lines, oldest first: those after id `after`, or the newest; at most
    /// `limit`. Only its owner may read them.
    pub async fn game_log(
        &self,
        caller: &PlayerRef,
        game: &str,
        after: Option<i64>,
        limit: i64,
    ) -> Result<Vec<GameLogLine>, CatalogError> {
        self.require_log_owner(caller, game).await?;
        Ok(self.store.game_log(game, after, limit).await?)
    }

    /// Game `game`'s log lines after id `after` (from the next line stored, with `None`),
    /// then each new one as it is stored. Only its owner may follow them.
    pub async fn game_log_feed(
        &self,
        caller: &PlayerRef,
        game: &str,
        after: Option<i64>,
    ) -> Result<GameLogFeed, CatalogError> {
        self.require_log_owner(caller, game).await?;
        let stored = self.log_stored.subscribe();
        let after = match after {
            Some(after) => after,
            None => self
                .store
                .game_log(game, None, 1)
                .await?
                .last()
                .map_or(0, |line| line.id),
        };
        Ok(GameLogFeed::new(
            self.store.clone(),
            game.to_owned(),
            after,
            stored,
        ))
    }

    async fn require_log_owner(&self, caller: &PlayerRef, game: &str) -> Result<(), CatalogError> {
        match self.owner_of(game).await {
            Ok(owner) if owner == caller.id => Ok(()),
            Ok(_) | Err(CatalogError::GameIsBuiltin(_)) => {
                Err(CatalogError::LogsNotYours(game.to_owned()))
            }
            Err(err) => Err(err),
        }
    }
}
