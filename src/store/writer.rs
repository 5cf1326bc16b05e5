//! Group commit: one task owns the write connection and applies every write waiting for it in
//! one transaction, with one fsync, before acknowledging any of them.
//!
//! Every write decides whether it is refused (a lost compare-and-set, a taken username) before
//! it writes anything, so a refused write leaves nothing behind and the others in the batch
//! still commit, with no savepoint round trips. Any other failure undoes the whole transaction;
//! the failed write is answered with its error and the rest of the batch is applied again
//! without it. Writes in one batch see each other: two commits to the same room apply in
//! order, the second checking its expected version against the first. Nothing is acknowledged
//! before the transaction holding it is durable; if the commit fails, every write in the batch
//! is answered with that failure and none of them happened.
//!
//! The same task serves both databases ([`Backend`] says how to begin a transaction on each).
//! On PostgreSQL several servers' writers run at once: a batch that loses a deadlock or a
//! serialisation check to another server's is applied again whole, since none of it happened.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;
use sqlx::pool::PoolConnection;
use sqlx::Database;
use tokio::sync::{mpsc, oneshot};

use super::fault::WriteHealth;
use super::writes::{apply, Write, WriteSql, Written};
use super::StoreError;
use crate::metrics::{histogram, Exposition, Histogram};

/// Writes applied in one transaction at most. Enough to amortise an fsync many times over,
/// few enough that one batch never holds the database for long.
const MAX_BATCH: usize = 256;
/// Writes waiting beyond this make callers wait to enqueue (back-pressure, not memory growth).
const QUEUE: usize = 4096;
/// How many times a batch is applied again after losing to another server's transaction.
const MAX_REPLAYS: u32 = 10;

/// Where one database's writer gets its connection, and how it begins a transaction there.
/// (Transactions are plain statements rather than sqlx's guards: a COMMIT that fails, on a full
/// disk, leaves SQLite's transaction open, and only an explicit ROLLBACK closes it.)
pub(super) trait Backend: Send + Sync + 'static {
    type Db: Database<Connection: WriteSql>;
    const BEGIN: &'static str;

    fn acquire(&self)
        -> impl Future<Output = Result<PoolConnection<Self::Db>, sqlx::Error>> + Send;
}

/// What the writer has done, for `GET /metrics`.
pub(super) struct WriterStats {
    batches: AtomicU64,
    writes: AtomicU64,
    failed_batches: AtomicU64,
    batch_size: Histogram,
    commit_seconds: Histogram,
}

impl WriterStats {
    fn new() -> Self {
        Self {
            batches: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            failed_batches: AtomicU64::new(0),
            batch_size: Histogram::new(histogram::COUNTS),
            commit_seconds: Histogram::new(histogram::SECONDS),
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
            "Time to COMMIT a transaction, which is mostly its fsync.",
        );
        self.commit_seconds
            .render(out, "turnhouse_store_commit_seconds", "");
    }
}

struct Job {
    write: Write,
    reply: oneshot::Sender<Result<Written, StoreError>>,
}

#[derive(Clone)]
pub(super) struct Writer {
    jobs: mpsc::Sender<Job>,
    pub(super) stats: Arc<WriterStats>,
    pub(super) health: Arc<WriteHealth>,
}

impl Writer {
    /// Starts the task that writes through `backend`.
    pub(super) fn start<B: Backend>(backend: B) -> Self {
        let (jobs, queue) = mpsc::channel(QUEUE);
        let stats = Arc::new(WriterStats::new());
        let health = Arc::new(WriteHealth::default());
        tokio::spawn(run(backend, queue, stats.clone(), health.clone()));
        Self {
            jobs,
            stats,
            health,
        }
    }

    /// Queues `write` and waits until it is durable (or failed).
    pub(super) async fn write(&self, write: Write) -> Result<Written, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job { write, reply })
            .await
            .map_err(|_| StoreError::WriterStopped)?;
        answer.await.map_err(|_| StoreError::WriterStopped)?
    }
}

async fn run<B: Backend>(
    backend: B,
    mut queue: mpsc::Receiver<Job>,
    stats: Arc<WriterStats>,
    health: Arc<WriteHealth>,
) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    // Whatever arrived while the last batch was being written forms the next one.
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let mut jobs: Vec<Job> = std::mem::take(&mut batch);
        // Stable: two writes to one room keep their order.
        jobs.sort_by(|a, b| a.write.room().cmp(&b.write.room()));
        tracing::trace!(writes = jobs.len(), "group commit");
        apply_batch(&backend, jobs, &stats, &health).await;
    }
}

async fn apply_batch<B: Backend>(
    backend: &B,
    mut jobs: Vec<Job>,
    stats: &WriterStats,
    health: &WriteHealth,
) {
    // Fails every write of the batch with one error; none of them happened.
    let fail_all = |jobs: Vec<Job>, err: StoreError| {
        stats.failed_batches.fetch_add(1, Ordering::Relaxed);
        health.failed(&err);
        let err = Arc::new(err);
        for job in jobs {
            let _ = job.reply.send(Err(StoreError::Batch(err.clone())));
        }
    };
    let mut replays = 0;
    loop {
        let mut conn = match backend.acquire().await {
            Ok(conn) => conn,
            Err(err) => return fail_all(jobs, err.into()),
        };
        if let Err(err) = conn.run(B::BEGIN).await {
            return fail_all(jobs, err);
        }
        let mut outcomes = Vec::with_capacity(jobs.len());
        let mut failed = None;
        for (at, job) in jobs.iter().enumerate() {
            match apply(&mut *conn, &job.write).await {
                Err(err) if !err.is_refusal() => {
                    failed = Some((at, err));
                    break;
                }
                outcome => outcomes.push(outcome),
            }
        }
        if let Some((at, err)) = failed {
            let _ = conn.run("ROLLBACK").await;
            if err.is_lost_race() && replays < MAX_REPLAYS {
                replays += 1;
                pause_before_replay(replays).await;
                continue;
            }
            // A full disk or a lock held elsewhere fails every write alike: retrying the rest
            // one by one would only take longer to fail.
            if err.fault().is_some() || err.is_lost_race() {
                return fail_all(jobs, err);
            }
            let _ = jobs.remove(at).reply.send(Err(err));
            if jobs.is_empty() {
                return;
            }
            continue;
        }
        let committing = Instant::now();
        if let Err(err) = conn.run("COMMIT").await {
            let _ = conn.run("ROLLBACK").await;
            if err.is_lost_race() && replays < MAX_REPLAYS {
                replays += 1;
                pause_before_replay(replays).await;
                continue;
            }
            return fail_all(jobs, err);
        }
        health.succeeded();
        stats
            .commit_seconds
            .observe(committing.elapsed().as_secs_f64());
        stats.batches.fetch_add(1, Ordering::Relaxed);
        stats.writes.fetch_add(jobs.len() as u64, Ordering::Relaxed);
        stats.batch_size.observe(jobs.len() as f64);
        for (job, outcome) in jobs.into_iter().zip(outcomes) {
            let _ = job.reply.send(outcome.map(|done| done.with(job.write)));
        }
        return;
    }
}

/// A little random wait, growing with each replay, so two servers' batches that deadlocked do
/// not meet again at once.
async fn pause_before_replay(replays: u32) {
    let millis = rand::rng().random_range(0..=u64::from(replays) * 5);
    tokio::time::sleep(Duration::from_millis(millis)).await;
}

#[cfg(test)]
mod tests {
    use futures_util::future::join_all;

    use super::super::Store;
    use super::*;
    use crate::model::Account;

    /// Writes queued together share a transaction, but one that fails is undone alone.
    #[tokio::test]
    async fn a_failing_write_in_a_batch_fails_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("batch.db").to_str().unwrap())
            .await
            .unwrap();
        let account = |n: usize, name: &str| Account {
            id: format!("{n:032x}"),
            username: name.to_owned(),
            token_hash: String::new(),
            created_at: String::new(),
        };
        let accounts: Vec<Account> = (0..50)
            .map(|n| {
                account(
                    n,
                    &if n == 25 {
                        "user-3".into()
                    } else {
                        format!("user-{n}")
                    },
                )
            })
            .collect();
        let results = join_all(accounts.iter().map(|a| store.create_account(a))).await;
        for (n, result) in results.iter().enumerate() {
            match n {
                25 => assert!(
                    matches!(result, Err(StoreError::UsernameTaken)),
                    "{result:?}"
                ),
                _ => assert!(result.is_ok(), "{n}: {result:?}"),
            }
        }
        for (n, account) in accounts.iter().enumerate() {
            let stored = store.account(&account.id).await.unwrap();
            assert_eq!(stored.is_some(), n != 25, "{n}");
        }
    }
}
