//! What the writer has done, counted as it goes (by the writer and by the thread that syncs
//! SQLite's log), for `GET /metrics`.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::metrics::{histogram, Exposition, Histogram};

/// What the writer has done, for `GET /metrics`.
pub(super) struct WriterStats {
    pub(super) batches: AtomicU64,
    pub(super) writes: AtomicU64,
    pub(super) failed_batches: AtomicU64,
    pub(super) batch_size: Histogram,
    pub(super) commit_seconds: Histogram,
    /// Syncs of SQLite's log after the commits (see [`super::durable`]).
    pub(super) syncs: AtomicU64,
    pub(super) sync_seconds: Histogram,
}

impl WriterStats {
    pub(super) fn new() -> Self {
        Self {
            batches: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            failed_batches: AtomicU64::new(0),
            batch_size: Histogram::new(histogram::COUNTS),
            commit_seconds: Histogram::new(histogram::SECONDS),
            syncs: AtomicU64::new(0),
            sync_seconds: Histogram::new(histogram::SECONDS),
        }
    }

    pub(super) fn render(&self, out: &mut Exposition) {
        let count = |n: &AtomicU64| n.load(Ordering::Relaxed);
        out.single(
            "turnhouse_store_commits_total",
            "counter",
            "Transactions committed by the writer (each one fsync).",
            count(&self.batches),
        );
        out.single(
            "turnhouse_store_writes_total",
            "counter",
            "Writes (room changes, sign-ups, uploads) committed.",
            count(&self.writes),
        );
        out.single(
            "turnhouse_store_failed_commits_total",
            "counter",
            "Transactions that could not begin or commit; none of their writes happened.",
            count(&self.failed_batches),
        );
        out.family(
            "turnhouse_store_batch_writes",
            "histogram",
            "Writes per committed transaction.",
        );
        self.batch_size
            .render(out, "turnhouse_store_batch_writes", "");
        out.family(
            "turnhouse_store_commit_seconds",
            "histogram",
            "Time to COMMIT a transaction (with its fsync, except on a SQLite file).",
        );
        self.commit_seconds
            .render(out, "turnhouse_store_commit_seconds", "");
        out.single(
            "turnhouse_store_syncs_total",
            "counter",
            "Syncs of a SQLite file's log, each making the batches committed before it durable.",
            count(&self.syncs),
        );
        out.family(
            "turnhouse_store_sync_seconds",
            "histogram",
            "Time to sync a SQLite file's log (its fsync).",
        );
        self.sync_seconds
            .render(out, "turnhouse_store_sync_seconds", "");
    }
}
