//! Checkpoints off the commit path.
//!
//! In WAL mode every commit appends its pages to the log, and a checkpoint copies them back
//! into the database file (and syncs it) so the log can start again. SQLite's default runs
//! that checkpoint inside the COMMIT that crosses 1,000 pages of log, on the writer's own
//! connection: under load that was dozens of times a second, each one holding up the batch
//! being committed and every write waiting behind it. The writer's connection turns it off
//! (`wal_autocheckpoint = 0`), and this task checkpoints from a connection of its own a few
//! times a second instead, beside the writer rather than in its way: a PASSIVE checkpoint
//! takes no lock the writer or a reader needs, and copies a page written many times since the
//! last one once. Durability does not change: a commit is durable in the log before it is
//! acknowledged, and a checkpoint interrupted by a crash is finished when the file is next
//! opened.

use std::sync::Weak;
use std::time::Duration;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Row};

/// How often the log is copied back. Short enough that the log stays a few megabytes under
/// the heaviest load measured; long enough that the same hot pages (a room being played, the
/// end of the history) are copied once for many commits.
const EVERY: Duration = Duration::from_millis(100);

/// The pragma the writer's connection is opened with.
pub(super) const NO_AUTOCHECKPOINT: (&str, &str) = ("wal_autocheckpoint", "0");

/// Copies what the log holds into the database file, without waiting for anyone; returns
/// `busy` (1 when another checkpoint was running), the log's frames and those now copied.
const CHECKPOINT: &str = "PRAGMA wal_checkpoint(PASSIVE)";

/// Checkpoints the database `options` opens until `alive` is gone (the store is dropped).
pub(super) fn start(options: SqliteConnectOptions, alive: Weak<()>) {
    tokio::spawn(async move {
        let mut conn = match options.connect().await {
            Ok(conn) => conn,
            Err(err) => {
                tracing::error!(%err, "cannot open the checkpointing connection");
                return;
            }
        };
        let mut tick = tokio::time::interval(EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if alive.strong_count() == 0 {
                break;
            }
            match sqlx::query(CHECKPOINT).fetch_one(&mut conn).await {
                Ok(row) => tracing::trace!(
                    frames = row.try_get::<i64, _>(1).unwrap_or(-1),
                    copied = row.try_get::<i64, _>(2).unwrap_or(-1),
                    "checkpoint"
                ),
                // A full disk or a lock held elsewhere: the log keeps the commits meanwhile,
                // and the next tick tries again.
                Err(err) => tracing::warn!(%err, "checkpoint failed"),
            }
        }
    });
}
