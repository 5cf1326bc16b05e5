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

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use sqlx::{Connection, SqliteConnection};
use tokio::sync::{mpsc, oneshot};

use super::fault::WriteHealth;
use super::{accounts, games, rooms, RoomCommit, StoreError};
use crate::game::{BotLevel, PlayerRef};
use crate::metrics::{histogram, Exposition, Histogram};
use crate::model::{Account, NewGameVersion};

/// Writes applied in one transaction at most. Enough to amortise an fsync many times over,
/// few enough that one batch never holds the database for long.
const MAX_BATCH: usize = 256;
/// Writes waiting beyond this make callers wait to enqueue (back-pressure, not memory growth).
const QUEUE: usize = 4096;

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

/// One write, as a value: what the writer task applies.
pub(super) enum Write {
    Room(Box<RoomCommit>),
    Account(Account),
    TokenHash {
        player_id: String,
        token_hash: String,
    },
    Bot {
        level: BotLevel,
        id: String,
        username: String,
        created_at: String,
    },
    GameVersion(NewGameVersion),
    /// Copies of a room, to fill a database for measuring.
    CopyRoom {
        template: String,
        copies: i64,
    },
}

/// What a write produced, handed back once it is durable.
pub(super) enum Written {
    Room(Box<RoomCommit>),
    /// A write with nothing to hand back: an account, copies of a room.
    Applied,
    Bot(PlayerRef),
    GameVersion(i64),
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
    /// Starts the task that owns `conn`.
    pub(super) fn start(conn: SqliteConnection) -> Self {
        let (jobs, queue) = mpsc::channel(QUEUE);
        let stats = Arc::new(WriterStats::new());
        let health = Arc::new(WriteHealth::default());
        tokio::spawn(run(conn, queue, stats.clone(), health.clone()));
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

async fn run(
    mut conn: SqliteConnection,
    mut queue: mpsc::Receiver<Job>,
    stats: Arc<WriterStats>,
    health: Arc<WriteHealth>,
) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    // Whatever arrived while the last batch was being written forms the next one.
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let jobs: Vec<Job> = std::mem::take(&mut batch);
        tracing::trace!(writes = jobs.len(), "group commit");
        apply_batch(&mut conn, jobs, &stats, &health).await;
    }
    let _ = conn.close().await;
}

async fn apply_batch(
    conn: &mut SqliteConnection,
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
    loop {
        // IMMEDIATE: take the write lock before reading anything, so another process's commit
        // can never invalidate what this transaction read.
        if let Err(err) = sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await {
            return fail_all(jobs, err.into());
        }
        let mut outcomes = Vec::with_capacity(jobs.len());
        let mut failed = None;
        for (at, job) in jobs.iter().enumerate() {
            match apply(conn, &job.write).await {
                Err(err) if !err.is_refusal() => {
                    failed = Some((at, err));
                    break;
                }
                outcome => outcomes.push(outcome),
            }
        }
        if let Some((at, err)) = failed {
            let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
            // A full disk or a lock held elsewhere fails every write alike: retrying the rest
            // one by one would only take longer to fail.
            if err.fault().is_some() {
                return fail_all(jobs, err);
            }
            let _ = jobs.remove(at).reply.send(Err(err));
            if jobs.is_empty() {
                return;
            }
            continue;
        }
        let committing = Instant::now();
        let committed = sqlx::query("COMMIT").execute(&mut *conn).await;
        if let Err(err) = committed {
            let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
            return fail_all(jobs, err.into());
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

/// What a write produced, before it is handed back with the write itself.
enum Done {
    Nothing,
    Bot(PlayerRef),
    GameVersion(i64),
}

impl Done {
    fn with(self, write: Write) -> Written {
        match (self, write) {
            (Done::Nothing, Write::Room(commit)) => Written::Room(commit),
            (Done::Bot(bot), _) => Written::Bot(bot),
            (Done::GameVersion(version), _) => Written::GameVersion(version),
            (Done::Nothing, _) => Written::Applied,
        }
    }
}

/// Applies one write inside the batch's transaction. A refusal ([`StoreError::is_refusal`])
/// is always decided before anything is written.
async fn apply(conn: &mut SqliteConnection, write: &Write) -> Result<Done, StoreError> {
    match write {
        Write::Room(commit) => {
            rooms::apply_commit(conn, commit).await?;
            Ok(Done::Nothing)
        }
        Write::Account(account) => {
            accounts::insert(conn, account).await?;
            Ok(Done::Nothing)
        }
        Write::TokenHash {
            player_id,
            token_hash,
        } => {
            accounts::set_token_hash(conn, player_id, token_hash).await?;
            Ok(Done::Nothing)
        }
        Write::Bot {
            level,
            id,
            username,
            created_at,
        } => Ok(Done::Bot(
            accounts::ensure_bot(conn, *level, id, username, created_at).await?,
        )),
        Write::GameVersion(upload) => Ok(Done::GameVersion(games::publish(conn, upload).await?)),
        Write::CopyRoom { template, copies } => {
            rooms::copy(conn, template, *copies).await?;
            Ok(Done::Nothing)
        }
    }
}

#[cfg(test)]
mod tests {
    use futures_util::future::join_all;

    use super::super::Store;
    use super::*;

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
