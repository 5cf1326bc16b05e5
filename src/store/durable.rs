//! When a committed batch is durable, and who tells its writers so.
//!
//! On PostgreSQL, and on a SQLite database kept in memory, a batch is as durable as it will be
//! once COMMIT returns, and its writes are answered there. On a SQLite file the writer's
//! connection commits without waiting for the disk (`synchronous = NORMAL`: the batch's pages
//! are written to the log, not yet synced) and hands the batch to a thread of its own, which
//! syncs the log and only then answers the writes. Meanwhile the writer applies the next
//! batch: a sync, mostly waiting on the device, no longer holds up every write queued behind
//! it. One sync covers every batch committed before it began, so under load each sync answers
//! several batches.
//!
//! Nothing is acknowledged before the log holding it is on disk, so a power cut loses nothing
//! acknowledged. The log is written in order and read back in order after a crash (each
//! frame's checksum chains to the one before it), so no later batch can outlive an earlier
//! one. What changes: another reader may see a version a few milliseconds before it is on
//! disk; a power cut in that window loses it (and anything built on it, which came after it
//! in the log), as it loses a write whose answer was still on its way. A process killed in
//! that window loses nothing: the log's pages are already the kernel's. (A room's history
//! as the server serves it ends at the room's version, which takes a version only once it is
//! durable: see `Engine::events`.)
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::fs::File;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;

use super::health::WriteHealth;
use super::queue::Write;
use super::sqlite::{Checkpoints, SyncedLog};
use super::types::StoreError;
use super::writer_stats::WriterStats;

/// Where a committed batch goes to be answered.
pub(super) enum Durability {
    /// Durable once committed: answered at once.
    AtCommit,
    /// Answered by the syncing thread, once the log is synced.
    Synced(mpsc::Sender<Vec<Write>>),
}

impl Durability {
    /// Starts the thread that syncs `log` (which must exist) and answers the batches handed
    /// to it; it stops once the writer does.
    pub(super) fn sync_log(
        log: SyncedLog,
        stats: Arc<WriterStats>,
        health: Arc<WriteHealth>,
    ) -> Result<Self, StoreError> {
        let file = File::options().read(true).write(true).open(&log.path)?;
        let (batches, committed) = mpsc::channel();
        let checkpoints = log.checkpoints;
        std::thread::Builder::new()
            .name("turnhouse-sync".into())
            .spawn(move || sync_batches(file, committed, &stats, &health, &checkpoints))?;
        Ok(Durability::Synced(batches))
    }

    /// Answers `writes`, committed, once they are durable.
    pub(super) fn committed(&self, writes: Vec<Write>, health: &WriteHealth) {
        match self {
            Durability::AtCommit => {
                health.succeeded();
                writes.into_iter().for_each(Write::answer);
            }
            Durability::Synced(batches) => {
                if let Err(mpsc::SendError(writes)) = batches.send(writes) {
                    // The syncing thread is gone: no one can say these are durable.
                    for write in writes {
                        write.fail(StoreError::WriterStopped);
                    }
                }
            }
        }
    }
}

fn sync_batches(
    log: File,
    committed: mpsc::Receiver<Vec<Write>>,
    stats: &WriterStats,
    health: &WriteHealth,
    checkpoints: &Checkpoints,
) {
    while let Ok(first) = committed.recv() {
        // Every batch here was committed, its pages written to the log, before this sync
        // begins, so the sync covers them all. Later ones wait for the next.
        let mut waiting = vec![first];
        waiting.extend(committed.try_iter());
        let syncing = Instant::now();
        match log.sync_data() {
            Ok(()) => {
                health.succeeded();
                stats.sync_seconds.observe(syncing.elapsed().as_secs_f64());
                stats.syncs.fetch_add(1, Ordering::Relaxed);
                waiting.into_iter().flatten().for_each(Write::answer);
                checkpoints.wake();
            }
            Err(err) => {
                // Committed, so readers may see them, but perhaps not on disk: their writers
                // hear that it failed, and may find them there or not.
                let err = Arc::new(err);
                health.failed(&StoreError::Unsynced(err.clone()));
                stats.failed_batches.fetch_add(1, Ordering::Relaxed);
                for write in waiting.into_iter().flatten() {
                    write.fail(StoreError::Unsynced(err.clone()));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::writer::tests::first_session;
    use super::super::Store;
    use super::*;
    use crate::domain::records::Account;

    fn account(n: usize) -> Account {
        Account {
            id: format!("{n:032x}").into(),
            username: format!("user-{n}"),
            created_at: crate::domain::time::Timestamp::now(),
        }
    }

    /// On a SQLite file a write is answered only after a sync of the log that follows its
    /// commit; in memory there is no log to sync.
    #[tokio::test]
    async fn a_write_to_a_file_is_answered_after_its_log_is_synced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("synced.db");
        let store = Store::open(path.to_str().unwrap()).await.unwrap();
        for n in 0..3 {
            let account = account(n);
            store
                .create_account(&account, &first_session(&account))
                .await
                .unwrap();
            let syncs = store.writer.stats.syncs.load(Ordering::Relaxed);
            assert!(syncs > n as u64, "write {n} answered after {syncs} syncs");
        }
        let memory = Store::open("sqlite::memory:").await.unwrap();
        let account = account(9);
        memory
            .create_account(&account, &first_session(&account))
            .await
            .unwrap();
        assert_eq!(memory.writer.stats.syncs.load(Ordering::Relaxed), 0);
    }

    /// After a sync, what the log holds goes on into the database file, long before the log
    /// reaches the 4,000 pages at which the writer's commit would copy it there itself: a copy
    /// of the database file alone, without its log, soon has the account.
    #[tokio::test]
    async fn what_is_synced_reaches_the_database_file_before_the_writer_checkpoints() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpointed.db");
        let store = Store::open(path.to_str().unwrap()).await.unwrap();
        let account = account(7);
        store
            .create_account(&account, &first_session(&account))
            .await
            .unwrap();
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        loop {
            // Each attempt in a directory of its own, gone with whatever opening the copy made.
            let attempt = tempfile::tempdir().unwrap();
            let copy = attempt.path().join("file-alone.db");
            std::fs::copy(&path, &copy).unwrap();
            let found = match Store::open(copy.to_str().unwrap()).await {
                Ok(alone) => alone.account(&account.id).await.ok().flatten().is_some(),
                // Copied while a checkpoint was writing it: try again.
                Err(_) => false,
            };
            if found {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the account never reached the database file"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
}
