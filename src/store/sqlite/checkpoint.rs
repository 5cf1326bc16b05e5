//! Copying a SQLite file's log into the database beside the writer, so that its commits
//! seldom have to.
//!
//! In WAL mode SQLite copies the log's pages into the database file, a checkpoint, in the
//! commit that takes the log past a bound (the writer's [`super::LOG_BOUND_PAGES`]). That
//! commit then writes every page the log holds and syncs the log and the database file, while
//! every write queued behind it waits: under load those commits were the slow tail of action
//! latency. Here a connection of its own checkpoints after the log is synced (at most every
//! [`GAP`]), in `PASSIVE` mode, which never waits for and never blocks the writer or a reader.
//! When the writer's commit does cross the bound, nearly all of the log is already in the
//! database, and its checkpoint copies only the pages since; that completed checkpoint is
//! also what lets the next commit start the log again from its beginning, so the log stays the
//! size it was. (Left to this connection alone the log would grow without end under load: it
//! is started again only when a checkpoint has caught up between two commits, which beside a
//! busy writer never happens.)
//!
//! A failed checkpoint changes nothing: the writer's own goes on bounding the log.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, SqliteConnection};
use tokio::sync::watch;

use crate::store::types::StoreError;

/// The least time between two checkpoints. Each copies the pages changed since the last, so
/// the more often, the more a page that every batch changes (a room's row, the last page of an
/// index) is copied and the more the database file is synced. `scripts/ab` at 64 games in
/// flight, four pairs each against the writer checkpointing alone: every 5 ms, action p99 0.90×
/// and server CPU per game 1.11×; every 15 ms, p99 0.82× (lower in every pair) and CPU 1.01×,
/// for 1.09× the bytes written. With the log's bound at 4,000 pages, every 45 ms rather than
/// 15: CPU per game 0.97× (`scripts/ab --together`, `docs/benchmarks.md`). At about 30 pages a
/// commit and several hundred commits a second, 45 ms of log is about a quarter of the bound.
const GAP: Duration = Duration::from_millis(45);

/// Wakes the checkpointing connection; it closes once every clone of this is dropped.
#[derive(Clone)]
pub(in crate::store) struct Checkpoints(Arc<watch::Sender<()>>);

impl Checkpoints {
    /// Opens a connection to the database `options` names and starts the task that
    /// checkpoints through it whenever woken.
    pub(super) async fn start(options: &SqliteConnectOptions) -> Result<Self, StoreError> {
        let connection = SqliteConnection::connect_with(options).await?;
        let (wake, woken) = watch::channel(());
        tokio::spawn(checkpoint_when_woken(connection, woken));
        Ok(Self(Arc::new(wake)))
    }

    /// Asks for a checkpoint: the log has pages the database lacks. Never waits; wakes
    /// coming faster than checkpoints are taken as one.
    pub(in crate::store) fn wake(&self) {
        self.0.send_replace(());
    }
}

async fn checkpoint_when_woken(mut connection: SqliteConnection, mut woken: watch::Receiver<()>) {
    let mut failing = false;
    while woken.changed().await.is_ok() {
        // `PASSIVE` answers at once, copying what it can; busy is a row, not an error.
        match sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
            .execute(&mut connection)
            .await
        {
            Ok(_) if failing => {
                failing = false;
                tracing::info!("checkpoints beside the writer work again");
            }
            Ok(_) => {}
            Err(err) if !failing => {
                failing = true;
                tracing::warn!(error = %err, "a checkpoint beside the writer failed; the writer's own go on");
            }
            Err(_) => {}
        }
        tokio::time::sleep(GAP).await;
    }
    let _ = connection.close().await;
}
