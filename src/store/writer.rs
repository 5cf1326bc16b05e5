//! Group commit: one task owns the write connection and applies every write waiting for it in
//! one transaction, acknowledging none of them before it is durable ([`super::durable`]).
//!
//! The room changes of a batch are applied together, a few statements for the whole batch
//! ([`super::batch`]); the rarer writes (sign-ups, uploads) one by one. Every write decides
//! whether it is refused (a lost compare-and-set, a taken username) before it writes anything,
//! so a refused write leaves nothing behind and the others in the batch still commit, with no
//! savepoint round trips. Any other failure undoes the whole transaction: the batch is applied
//! again with each room change in a statement of its own, which names the write that failed;
//! that write is answered with its error and the rest applied again without it. Writes in one
//! batch see each other: two commits to the same room apply in order, the second checking its
//! expected version against the first. Nothing is acknowledged before the transaction holding
//! it is durable; if the commit fails, every write in the batch is answered with that failure
//! and none of them happened.
//!
//! On PostgreSQL several servers' writers run at once: a batch that loses a deadlock or a
//! serialisation check to another server's is applied again whole, since none of it happened.
//! (Transactions are plain statements rather than sqlx's guards: a COMMIT that fails, on a full
//! disk, leaves SQLite's transaction open, and only an explicit ROLLBACK closes it.)
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;
use sqlx::Pool;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

use super::batch;
use super::dialect::Dialect;
use super::durable::Durability;
use super::gather::OnTheirWay;
use super::health::WriteHealth;
use super::outbox::OutboxBoard;
use super::queue::Reply;
use super::queue::Write;
use super::sql::{Exec, Statement};
use super::sqlite::SyncedLog;
use super::types::{RoomCommit, RoomWritten, StoreError};
use super::writer_stats::WriterStats;

/// Writes applied in one transaction at most. Enough to amortise an fsync many times over,
/// few enough that one batch never holds the database for long.
const MAX_BATCH: usize = 256;
/// Ends the writer's transaction (it begins with [`Dialect::BEGIN`]).
pub(super) const COMMIT: &str = "COMMIT";
pub(super) const ROLLBACK: &str = "ROLLBACK";
/// Writes waiting beyond this make callers wait to enqueue (back-pressure, not memory growth).
const QUEUE: usize = 4096;
/// How many times a batch is applied again after losing to another server's transaction.
const MAX_REPLAYS: u32 = 10;

#[derive(Clone)]
pub(super) struct Writer {
    jobs: mpsc::Sender<Write>,
    /// Actions that will write soon, for the writer to wait for when few writes wait.
    pub(super) on_their_way: OnTheirWay,
    pub(super) stats: Arc<WriterStats>,
    pub(super) health: Arc<WriteHealth>,
}

impl Writer {
    /// Starts the task that writes through `pool` (of one connection), on a thread of its own
    /// where the dialect says so ([`Dialect::WRITER_THREAD`]), its commits durable
    /// as they are (`wal` none) or once the SQLite log at `wal` is synced (see
    /// [`super::durable`]).
    pub(super) fn start<D: Dialect>(
        pool: Pool<D>,
        wal: Option<SyncedLog>,
        outbox: Arc<OutboxBoard>,
    ) -> Result<Self, StoreError> {
        let (jobs, queue) = mpsc::channel(QUEUE);
        let on_their_way = OnTheirWay::default();
        let stats = Arc::new(WriterStats::new());
        let health = Arc::new(WriteHealth::default());
        let durability = match wal {
            Some(wal) => Durability::sync_log(wal, stats.clone(), health.clone())?,
            None => Durability::AtCommit,
        };
        let writing = Writing {
            outbox,
            stats: stats.clone(),
            health: health.clone(),
            durability,
        };
        if D::WRITER_THREAD {
            // On the server's runtime, tokio woke a second worker for nothing at nearly every
            // step of the writer (`notify_parked_local`, with the time driver's parking about
            // 6% of the server's samples at 64 games in flight); a runtime of one thread has
            // no other worker to wake.
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            // Only a writer on a thread of its own waits for writes on their way (see
            // `gather`): it sleeps its thread, which a task on the server's runtime must not.
            let coming = Some(on_their_way.clone());
            std::thread::Builder::new()
                .name("turnhouse-writer".into())
                .spawn(move || runtime.block_on(run(pool, queue, writing, coming)))?;
        } else {
            tokio::spawn(run(pool, queue, writing, None));
        }
        Ok(Self {
            jobs,
            on_their_way,
            stats,
            health,
        })
    }

    /// Queues `write` and waits until it is durable (or failed): the write handed back, and
    /// what it produced.
    pub(super) async fn write<T, R>(
        &self,
        write: Write,
        reply: Reply<T, R>,
    ) -> Result<(T, R), StoreError> {
        match self.jobs.try_send(write) {
            Ok(()) => {}
            // Boxed: waiting for room is rare, and the channel's `send` future (888 bytes)
            // would otherwise be carried by every future that writes, up to the handler's.
            Err(TrySendError::Full(write)) => Box::pin(self.jobs.send(write))
                .await
                .map_err(|_| StoreError::WriterStopped)?,
            Err(TrySendError::Closed(_)) => return Err(StoreError::WriterStopped),
        }
        reply.await.map_err(|_| StoreError::WriterStopped)?
    }
}

/// A write of nothing: answered once every write queued before it is durable (the queue is
/// first in, first out), which is how a stopping server commits its queue.
pub(super) struct Flush;

impl super::queue::WriteStep for Flush {
    type Output = ();

    async fn apply<D: Dialect>(&self, _conn: &mut D::Connection) -> Result<(), StoreError> {
        Ok(())
    }
}

/// What the writer's task keeps besides its connection.
struct Writing {
    /// The endpoints that take events, for the rows a batch of room changes adds.
    outbox: Arc<OutboxBoard>,
    stats: Arc<WriterStats>,
    health: Arc<WriteHealth>,
    durability: Durability,
}

async fn run<D: Dialect>(
    pool: Pool<D>,
    mut queue: mpsc::Receiver<Write>,
    writing: Writing,
    coming: Option<OnTheirWay>,
) {
    // Dropped before `pool`, which holds the connection it belongs to.
    let mut kept = D::PreparedStatements::default();
    let mut batch = Vec::with_capacity(MAX_BATCH);
    // Whatever arrived while the last batch was being written forms the next one.
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        if let Some(coming) = &coming {
            coming.gather(&mut batch, &mut queue, MAX_BATCH);
        }
        let mut writes: Vec<Write> = std::mem::take(&mut batch);
        // Stable: two writes to one room keep their order. Ordering by room makes every
        // transaction meet its rooms in one order, so two servers' batches are unlikely to
        // deadlock over the same rooms (and are applied again if they do).
        writes.sort_by(|a, b| room_of(a).cmp(&room_of(b)));
        tracing::trace!(writes = writes.len(), "group commit");
        apply_batch(&pool, &mut kept, writes, &writing).await;
    }
}

fn room_of(write: &Write) -> Option<&str> {
    match write {
        Write::Room(job) => Some(&job.input.room.id),
        _ => None,
    }
}

/// Why a batch could not be applied: the error, and the write it names when it names one.
struct Failure {
    culprit: Option<usize>,
    err: StoreError,
}

async fn apply_batch<D: Dialect>(
    pool: &Pool<D>,
    kept: &mut D::PreparedStatements,
    mut writes: Vec<Write>,
    writing: &Writing,
) {
    let Writing {
        outbox,
        stats,
        health,
        durability,
    } = writing;
    // Fails every write of the batch with one error; none of them happened.
    let fail_all = |writes: Vec<Write>, err: StoreError| {
        stats.failed_batches.fetch_add(1, Ordering::Relaxed);
        health.failed(&err);
        let err = Arc::new(err);
        for write in writes {
            write.fail(StoreError::Batch(err.clone()));
        }
    };
    let mut replays = 0;
    // Set after a statement over several room changes failed: each then gets its own.
    let mut one_by_one = false;
    loop {
        let mut conn = match pool.acquire().await {
            Ok(conn) => conn,
            Err(err) => return fail_all(writes, err.into()),
        };
        let failure = match transact::<D>(&mut conn, kept, &mut writes, one_by_one, outbox).await {
            Ok(committing) => {
                stats
                    .commit_seconds
                    .observe(committing.elapsed().as_secs_f64());
                stats.batches.fetch_add(1, Ordering::Relaxed);
                stats
                    .writes
                    .fetch_add(writes.len() as u64, Ordering::Relaxed);
                stats.batch_size.observe(writes.len() as f64);
                durability.committed(writes, health);
                return;
            }
            Err(Stop::NotBegun(err)) => return fail_all(writes, err),
            Err(Stop::Failed(failure)) => failure,
        };
        let _ = D::execute(&mut conn, Statement::new(ROLLBACK)).await;
        let Failure { culprit, err } = failure;
        if err.is_lost_race() && replays < MAX_REPLAYS {
            replays += 1;
            pause_before_replay(replays).await;
            continue;
        }
        // A full disk or a lock held elsewhere fails every write alike: retrying the rest
        // one by one would only take longer to fail.
        if err.fault().is_some() || err.is_lost_race() {
            return fail_all(writes, err);
        }
        match culprit {
            Some(at) => {
                writes.remove(at).fail(err);
                if writes.is_empty() {
                    return;
                }
            }
            None if !one_by_one && writes.len() > 1 => one_by_one = true,
            None => return fail_all(writes, err),
        }
    }
}

/// Why a transaction stopped short of its commit.
enum Stop {
    /// It could not begin: nothing to undo.
    NotBegun(StoreError),
    /// It failed once begun, or in its COMMIT: to be rolled back.
    Failed(Failure),
}

/// Begins the transaction, applies every write of the batch in it, settling each one's outcome,
/// and commits; on success, when the COMMIT began.
///
/// The writes other than room changes run through `conn` one at a time, first; the room
/// changes and the COMMIT through the dialect's [`Dialect::batch`], taken once.
async fn transact<D: Dialect>(
    conn: &mut D::Connection,
    kept: &mut D::PreparedStatements,
    writes: &mut [Write],
    one_by_one: bool,
    outbox: &OutboxBoard,
) -> Result<Instant, Stop> {
    let failed = |culprit| move |err| Stop::Failed(Failure { culprit, err });
    let others = writes.iter().any(|write| !matches!(write, Write::Room(_)));
    if others {
        D::execute(conn, Statement::new(D::BEGIN))
            .await
            .map_err(Stop::NotBegun)?;
        for (at, write) in writes.iter_mut().enumerate() {
            write
                .apply_alone::<D>(conn)
                .await
                .map_err(failed(Some(at)))?;
        }
    }
    let mut batch = match D::batch(conn, kept).await {
        Ok(batch) => batch,
        Err(err) if others => return Err(failed(None)(err)),
        Err(err) => return Err(Stop::NotBegun(err)),
    };
    if !others {
        batch
            .execute(Statement::new(D::BEGIN))
            .await
            .map_err(Stop::NotBegun)?;
    }
    apply_rooms::<D>(&mut batch, writes, one_by_one, outbox).await?;
    let committing = Instant::now();
    batch
        .execute(Statement::new(COMMIT))
        .await
        // Nothing of the batch happened; no one write is to blame.
        .map_err(failed(None))?;
    Ok(committing)
}

/// Applies the batch's room changes inside the open transaction, settling each one's outcome.
async fn apply_rooms<D: Dialect>(
    conn: &mut impl Exec,
    writes: &mut [Write],
    one_by_one: bool,
    outbox: &OutboxBoard,
) -> Result<(), Stop> {
    let rooms: Vec<(usize, &RoomCommit)> = writes
        .iter()
        .enumerate()
        .filter_map(|(at, write)| match write {
            Write::Room(job) => Some((at, &*job.input)),
            _ => None,
        })
        .collect();
    let commits: Vec<&RoomCommit> = rooms.iter().map(|(_, commit)| *commit).collect();
    let rounds = match one_by_one {
        true => (0..commits.len()).map(|at| vec![at]).collect(),
        false => batch::rounds(&commits),
    };
    let mut written: Vec<Option<RoomWritten>> = vec![None; commits.len()];
    for round in rounds {
        let members: Vec<&RoomCommit> = round.iter().map(|&at| commits[at]).collect();
        let outcomes = batch::apply_round::<D>(conn, &members, outbox)
            .await
            .map_err(|err| {
                Stop::Failed(Failure {
                    // A statement over one room change names it.
                    culprit: (round.len() == 1).then(|| rooms[round[0]].0),
                    err,
                })
            })?;
        for (at, outcome) in round.into_iter().zip(outcomes) {
            written[at] = outcome;
        }
    }
    // Room changes settle in the order they were listed in `rooms`.
    let mut written = written.into_iter();
    for write in writes.iter_mut() {
        if let Write::Room(job) = write {
            let outcome = written.next().flatten().ok_or(StoreError::Conflict);
            // A refusal or nothing, so settling cannot fail.
            let _ = job.settle(outcome);
        }
    }
    Ok(())
}

/// A little random wait, growing with each replay, so two servers' batches that deadlocked do
/// not meet again at once.
async fn pause_before_replay(replays: u32) {
    let millis = rand::rng().random_range(0..=u64::from(replays) * 5);
    tokio::time::sleep(Duration::from_millis(millis)).await;
}

#[cfg(test)]
pub(super) mod tests {
    use futures_util::future::join_all;

    use super::super::Store;
    use super::*;
    use crate::domain::records::Account;

    /// A session for `account`'s creation, its id the account's.
    pub(in crate::store) fn first_session(account: &Account) -> crate::domain::records::Session {
        crate::domain::records::Session {
            id: account.id.as_str().into(),
            player: account.player_ref(),
            label: "test".into(),
            token_hash: String::new(),
            created_at: crate::domain::time::Timestamp::now(),
            last_used_at: crate::domain::time::Timestamp::now(),
        }
    }

    /// Writes queued together share a transaction, but one that fails is undone alone.
    #[tokio::test]
    async fn a_failing_write_in_a_batch_fails_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("batch.db").to_str().unwrap())
            .await
            .unwrap();
        let account = |n: usize, name: &str| Account {
            id: format!("{n:032x}").into(),
            username: name.to_owned(),
            created_at: crate::domain::time::Timestamp::now(),
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
        let sessions: Vec<_> = accounts.iter().map(first_session).collect();
        let results = join_all(
            accounts
                .iter()
                .zip(&sessions)
                .map(|(a, s)| store.create_account(a, s)),
        )
        .await;
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

    fn new_room(id: &str, player: &str) -> RoomCommit {
        let seated = crate::game::PlayerRef {
            id: player.into(),
            username: "someone".to_owned(),
        };
        let room = crate::domain::records::Room {
            state: serde_json::json!({}).into(),
            players: vec![seated.clone()].into(),
            ..crate::domain::records::Room::for_tests(id, "tictactoe")
        };
        let event = crate::domain::records::RoomEvent {
            trigger_timeout_at: None,
            version: 1,
            kind: crate::domain::records::EventKind::Join,
            player: Some(seated.clone()),
            mv: None,
            state: room.state.clone(),
            joinable: true,
            finished: false,
            players: vec![seated].into(),
            created_at: crate::domain::time::Timestamp::now(),
            rating_changes: Vec::new(),
            to_move: None,
        };
        RoomCommit {
            room,
            expected_version: None,
            events: vec![event],
            members_changed: true,
            listing_changed: true,
            finished_changed: false,
            quick_play: None,
            lobby_change: None,
            audit: None,
            rated_result: None,
            joinable_before: true,
            finished_before: false,
            winners: None,
            turns_begun: Vec::new(),
        }
    }

    /// Room changes written together in one statement: one that breaks a constraint (a seat
    /// for a player who does not exist) fails alone, named by writing the batch again one
    /// change per statement, and every other room of the batch is written whole.
    #[tokio::test]
    async fn a_failing_room_change_in_a_set_statement_fails_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("rooms.db").to_str().unwrap())
            .await
            .unwrap();
        let player = Account {
            id: "p".repeat(32).into(),
            username: "pat".into(),
            created_at: crate::domain::time::Timestamp::now(),
        };
        store
            .create_account(&player, &first_session(&player))
            .await
            .unwrap();
        let commits: Vec<RoomCommit> = (0..40)
            .map(|n| {
                let seated = if n == 17 {
                    "nobody"
                } else {
                    player.id.as_str()
                };
                new_room(&format!("room-{n:02}"), seated)
            })
            .collect();
        let results = join_all(commits.into_iter().map(|c| store.commit(Box::new(c)))).await;
        for (n, result) in results.iter().enumerate() {
            assert_eq!(result.is_ok(), n != 17, "{n}: {result:?}");
            let stored = store.room(&format!("room-{n:02}")).await.unwrap();
            let history = store.events(&format!("room-{n:02}"), 0, 10).await.unwrap();
            assert_eq!(stored.is_some(), n != 17, "{n}");
            assert_eq!(history.len(), usize::from(n != 17), "{n}");
        }
        let batches = store.writer.stats.batches.load(Ordering::Relaxed);
        assert!(
            batches < 40,
            "the changes were written in batches: {batches} commits"
        );
    }
}
