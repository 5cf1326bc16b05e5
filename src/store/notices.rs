//! The outbox's notices to players (mail and web pushes): written in the transaction that
//! causes them (a turn begun, in the batch that commits it; a link asked for, with its token;
//! a push, by the dispatcher's round that takes the turn, see `turn_pushes.rs`),
//! taken by one server at a time (`FOR UPDATE SKIP LOCKED` on PostgreSQL, the single writer on
//! SQLite), settled and pruned like the webhooks' rows.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::sync::RwLock;
use std::time::Duration;

use tokio::sync::Notify;

use super::dialect::{Dialect, SetSql};
use super::queue::{Job, WriteStep};
use super::sets::execute_set;
use super::sql::{Exec, Statement};
use super::types::{RoomCommit, StoreError};
use super::Store;
use crate::domain::notices::{Channel, ClaimedNotice, Letter, NoticeKind, NoticeOutcome};
use crate::domain::time::Timestamp;

/// What the writer knows of the notices it may write, and how it wakes their dispatcher.
#[derive(Default)]
pub(super) struct NoticeBoard {
    rules: RwLock<NoticeRules>,
    written: Notify,
}

/// Which notices a turn begun causes.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoticeRules {
    /// Mail is on: a player away this long after a turn began is mailed the digest of their
    /// turns, and warned of a clock of at least this long per move.
    pub mail_after: Option<Duration>,
    /// A turn is pushed once it has lasted this long (see `turn_pushes.rs`).
    pub push_after: Duration,
}

/// A digest of the player's turns for each player a turn began for, due once they have been
/// away for the while; one pending per player (a player with one waiting already is left so).
pub(super) const INSERT_DIGESTS: SetSql = SetSql {
    columns: "player_id, at, due_at",
    statement: "INSERT INTO notices (channel, kind, player_id, destination, created_at, state, \
         due_at) SELECT 'mail', 'turns', v.player_id, e.address, v.at, 'pending', v.due_at \
         FROM v JOIN player_emails e ON e.player_id = v.player_id WHERE e.turn_mail = true \
         ON CONFLICT DO NOTHING",
};

/// A warning of a room's deadline, for each player a turn on a clock began for, unless they
/// muted the room.
pub(super) const INSERT_CLOCK_WARNINGS: SetSql = SetSql {
    columns: "player_id, room_id, version, at, due_at",
    statement: "INSERT INTO notices (channel, kind, player_id, destination, room_id, version, \
         created_at, state, due_at) SELECT 'mail', 'clock', v.player_id, e.address, v.room_id, \
         v.version, v.at, 'pending', v.due_at FROM v \
         JOIN player_emails e ON e.player_id = v.player_id WHERE e.clock_mail = true \
         AND NOT EXISTS (SELECT 1 FROM muted_rooms m \
         WHERE m.player_id = v.player_id AND m.room_id = v.room_id)",
};

/// One notice: `$1` channel, `$2` kind, `$3` player, `$4` destination, `$5` body, `$6` now.
pub(super) const INSERT_NOTICE: &str = "INSERT INTO notices (channel, kind, player_id, \
     destination, body, created_at, state, due_at) VALUES ($1, $2, $3, $4, $5, $6, 'pending', $6)";

/// Mail `$2` with body `$3` to player `$1`'s verified address, if they have one, at `$4`.
pub(super) const INSERT_MAIL_TO_VERIFIED: &str = "INSERT INTO notices (channel, kind, \
     player_id, destination, body, created_at, state, due_at) \
     SELECT 'mail', $2, player_id, address, $3, $4, 'pending', $4 \
     FROM player_emails WHERE player_id = $1";

/// What came of each notice settled: its `state`, due again at `due_at` (none: done),
/// `attempted` to add to its attempts, the `error`, and `done_at` when it was done (its words
/// are then dropped). One statement for all the outcomes of a round.
pub(super) const SETTLE_NOTICES: SetSql = SetSql {
    columns: "seq, state, due_at, attempted, error, done_at",
    statement: "UPDATE notices SET state = v.state, due_at = v.due_at, claimed_until = NULL, \
         attempts = notices.attempts + v.attempted, last_error = v.error, done_at = v.done_at, \
         body = CASE WHEN v.done_at IS NULL THEN notices.body ELSE NULL END \
         FROM v WHERE notices.seq = v.seq",
};

/// The digest went to player `$1` at `$2`: the next waits its period.
pub(super) const DIGEST_MAILED: &str =
    "UPDATE player_emails SET turns_mailed_at = $2 WHERE player_id = $1";

/// A push subscription the push service no longer knows.
pub(super) const DROP_SUBSCRIPTION: &str = "DELETE FROM push_subscriptions WHERE id = $1";

/// Pushes due at `$1` whose turn is over (the player moved, or left): removed in bulk rather
/// than taken one by one to find out, and rather than kept as held back, since they say
/// nothing and a player who moves at once makes one per turn; at most `$2`. Their count (the
/// metrics count them as held back).
pub(super) const DROP_PAST_TURNS: &str = "DELETE FROM notices WHERE seq IN (SELECT n.seq \
     FROM notices n WHERE n.channel = 'push' AND n.due_at <= $1 \
     AND (n.claimed_until IS NULL OR n.claimed_until <= $1) AND NOT EXISTS \
     (SELECT 1 FROM rooms r WHERE r.id = n.room_id AND (r.turns ->> n.player_id) IS NOT NULL) \
     LIMIT $2) RETURNING seq";

/// Notices done before `$1`, at most `$2` of them.
pub(super) const PRUNE_NOTICES: &str = "DELETE FROM notices WHERE seq IN \
     (SELECT seq FROM notices WHERE done_at < $1 ORDER BY done_at LIMIT $2) RETURNING seq";

/// Every notice taken by a server, let go (see `RELEASE_CLAIMS` of the webhooks' rows).
pub(super) const RELEASE_NOTICES: &str = "UPDATE notices SET claimed_until = NULL \
     WHERE due_at IS NOT NULL AND claimed_until IS NOT NULL";

/// The notices `seq` a server holds, let go (see `RELEASE_ROWS` of the webhooks' rows).
pub(super) const RELEASE_SOME_NOTICES: SetSql = SetSql {
    columns: "seq",
    statement: "UPDATE notices SET claimed_until = NULL FROM v \
         WHERE notices.seq = v.seq AND notices.due_at IS NOT NULL",
};

/// The notices the turns begun in a round's `accepted` commits cause: a push to each of the
/// player's browsers, and with mail on, the digest and the clock's warning. Nothing at all when
/// no turn began.
pub(super) async fn insert_turn_notices<D: Dialect>(
    conn: &mut impl Exec,
    board: &NoticeBoard,
    accepted: &[&RoomCommit],
) -> Result<(), StoreError> {
    let begun: Vec<(&RoomCommit, &str)> = accepted
        .iter()
        .flat_map(|c| c.turns_begun.iter().map(move |p| (*c, p.as_str())))
        .collect();
    if begun.is_empty() {
        return Ok(());
    }
    super::turn_pushes::insert_turn_pushes::<D>(conn, &begun).await?;
    let Some(after) = board.rules().mail_after else {
        board.written.notify_one();
        return Ok(());
    };
    execute_set::<D, _>(conn, INSERT_DIGESTS, &begun, |row, (commit, player)| {
        row.put("player_id", *player);
        row.put("at", commit.room.updated_at);
        row.put("due_at", commit.room.updated_at.after(after));
    })
    .await?;
    let warned: Vec<(&RoomCommit, &str, Timestamp)> = begun
        .iter()
        .filter_map(|(commit, player)| Some((*commit, *player, warn_at(commit, after)?)))
        .collect();
    execute_set::<D, _>(
        conn,
        INSERT_CLOCK_WARNINGS,
        &warned,
        |row, (c, player, due)| {
            row.put("player_id", *player);
            row.put("room_id", c.room.id.as_str());
            row.put("version", c.room.version);
            row.put("at", c.room.updated_at);
            row.put("due_at", *due);
        },
    )
    .await?;
    board.written.notify_one();
    Ok(())
}

/// When to warn of the room's deadline: an hour before, or a tenth of its time per move
/// before if that is less; never for a clock shorter than mail's wait (`after`), which no mail
/// could beat, nor for a room without one.
fn warn_at(commit: &RoomCommit, after: Duration) -> Option<Timestamp> {
    let room = &commit.room;
    let (clock, deadline) = (room.clock?, room.trigger_timeout_at?);
    let per_move = Duration::from_secs(u64::from(clock.move_seconds));
    (per_move >= after).then(|| deadline.before((per_move / 10).min(Duration::from_secs(3600))))
}

impl NoticeBoard {
    fn rules(&self) -> NoticeRules {
        *self.rules.read().expect("never poisoned")
    }
}

/// What a round of the dispatcher's came to.
#[derive(Debug, Default)]
pub struct NoticeRound {
    /// The notices it took, to send.
    pub claimed: Vec<ClaimedNotice>,
    /// Pushes held back because their turn was over.
    pub held: usize,
    /// When the earliest turn still waiting is to be pushed.
    pub next_push: Option<Timestamp>,
}

/// What the notices' dispatcher asks of the writer.
pub(super) enum NoticeWrite {
    /// One round: keeps what came of the notices `settled`, then, if `claim` says so, takes
    /// notices due.
    Round {
        settled: Vec<(ClaimedNotice, NoticeOutcome, Timestamp)>,
        claim: Option<Claim>,
    },
    /// Removes notices done before `before`, at most `limit`; how many.
    Prune { before: Timestamp, limit: i64 },
    /// Lets go of every notice taken, or of those listed.
    Release(Option<Vec<i64>>),
}

/// Takes up to `limit` notices due at `now`, until `lease_until`, after making pushes of the
/// turns begun by `turns_before` that still stand.
#[derive(Debug, Clone, Copy)]
pub(super) struct Claim {
    now: Timestamp,
    lease_until: Timestamp,
    limit: i64,
    turns_before: Timestamp,
}

pub(super) enum NoticeOutput {
    /// The notices taken, how many pushes were held back first (their turn over), and when the
    /// earliest turn still waiting to be pushed began.
    Claimed(Vec<ClaimedNotice>, usize, Option<Timestamp>),
    Count(usize),
}

/// Pushes whose turn is over dropped in one claim, at most.
const DROP_AT_ONCE: i64 = 10_000;

impl WriteStep for NoticeWrite {
    type Output = NoticeOutput;

    async fn apply<D: Dialect>(
        &self,
        conn: &mut D::Connection,
    ) -> Result<NoticeOutput, StoreError> {
        match self {
            NoticeWrite::Round { settled, claim } => {
                settle::<D>(conn, settled).await?;
                let Some(claim) = claim else {
                    return Ok(NoticeOutput::Claimed(Vec::new(), 0, None));
                };
                let (mut held, next_turn) =
                    super::turn_pushes::take_turn_pushes::<D>(conn, claim.turns_before).await?;
                let past = Statement::new(DROP_PAST_TURNS)
                    .bind(claim.now)
                    .bind(DROP_AT_ONCE);
                held += D::fetch_all(conn, past).await?.len();
                let statement = Statement::new(D::CLAIM_NOTICES)
                    .bind(claim.now)
                    .bind(claim.lease_until)
                    .bind(claim.limit);
                let rows = D::fetch_all(conn, statement).await?;
                let claimed = rows.iter().map(claimed::<D>).collect::<Result<_, _>>()?;
                Ok(NoticeOutput::Claimed(claimed, held, next_turn))
            }
            NoticeWrite::Prune { before, limit } => {
                let statement = Statement::new(PRUNE_NOTICES).bind(*before).bind(*limit);
                Ok(NoticeOutput::Count(
                    D::fetch_all(conn, statement).await?.len(),
                ))
            }
            NoticeWrite::Release(None) => {
                D::execute(conn, Statement::new(RELEASE_NOTICES)).await?;
                Ok(NoticeOutput::Count(0))
            }
            NoticeWrite::Release(Some(seqs)) => {
                execute_set::<D, _>(conn, RELEASE_SOME_NOTICES, seqs, |row, seq| {
                    row.put("seq", *seq)
                })
                .await?;
                Ok(NoticeOutput::Count(seqs.len()))
            }
        }
    }
}

/// Keeps what came of each of `settled`: one statement for them all, then what a sent digest
/// or a gone subscription changes besides.
async fn settle<D: Dialect>(
    conn: &mut D::Connection,
    settled: &[(ClaimedNotice, NoticeOutcome, Timestamp)],
) -> Result<(), StoreError> {
    execute_set::<D, _>(
        conn,
        SETTLE_NOTICES,
        settled,
        |row, (notice, outcome, at)| {
            let (due, attempted, error, done) = match outcome {
                NoticeOutcome::Postponed(due) => (Some(*due), 0, None, None),
                NoticeOutcome::RetryAt(due, error) => (Some(*due), 1, Some(error.as_str()), None),
                NoticeOutcome::Sent => (None, 1, None, Some(*at)),
                NoticeOutcome::Held => (None, 0, None, Some(*at)),
                NoticeOutcome::Failed(error) => (None, 1, Some(error.as_str()), Some(*at)),
                NoticeOutcome::Gone => (None, 1, Some("the subscription is gone"), Some(*at)),
            };
            row.put("seq", notice.seq);
            row.put("state", outcome.state());
            row.put("due_at", due);
            row.put("attempted", attempted as i64);
            row.put("error", error.map(str::to_owned));
            row.put("done_at", done);
        },
    )
    .await?;
    for (notice, outcome, at) in settled {
        match outcome {
            NoticeOutcome::Sent if notice.kind == NoticeKind::Turns => {
                let statement = Statement::new(DIGEST_MAILED)
                    .bind(notice.player_id.as_str())
                    .bind(*at);
                D::execute(conn, statement).await?;
            }
            NoticeOutcome::Gone => {
                let statement = Statement::new(DROP_SUBSCRIPTION).bind(notice.destination.as_str());
                D::execute(conn, statement).await?;
            }
            _ => {}
        }
    }
    Ok(())
}

fn claimed<D: Dialect>(row: &D::Row) -> Result<ClaimedNotice, StoreError> {
    let corrupt = |what: &str, text: &str| StoreError::Corrupt(format!("notice {what} {text}"));
    let channel = D::text(row, "channel")?;
    let kind = D::text(row, "kind")?;
    Ok(ClaimedNotice {
        seq: D::int(row, "seq")?,
        channel: Channel::parse(&channel).ok_or_else(|| corrupt("channel", &channel))?,
        kind: NoticeKind::parse(&kind).ok_or_else(|| corrupt("kind", &kind))?,
        player_id: D::text(row, "player_id")?.into(),
        destination: D::text(row, "destination")?,
        room_id: D::maybe_text(row, "room_id")?.map(Into::into),
        version: D::maybe_int(row, "version")?,
        body: D::maybe_text(row, "body")?,
        created_at: D::time(row, "created_at")?,
        attempts: D::int(row, "attempts")?,
    })
}

/// A mail to the verified address of `player`, if they have one, in the write it goes with.
pub(super) async fn mail_to_verified<D: Dialect>(
    conn: &mut impl Exec,
    player: &str,
    kind: NoticeKind,
    letter: &Letter,
    at: Timestamp,
) -> Result<(), StoreError> {
    let statement = Statement::new(INSERT_MAIL_TO_VERIFIED)
        .bind(player)
        .bind(kind.as_str())
        .bind(serde_json::to_string(letter).expect("letters serialise"))
        .bind(at);
    conn.execute(statement).await?;
    Ok(())
}

/// A mail to `address`, in the write it goes with.
pub(super) async fn mail_to<D: Dialect>(
    conn: &mut impl Exec,
    player: &str,
    address: &str,
    kind: NoticeKind,
    letter: &Letter,
    at: Timestamp,
) -> Result<(), StoreError> {
    let statement = Statement::new(INSERT_NOTICE)
        .bind(Channel::Mail.as_str())
        .bind(kind.as_str())
        .bind(player)
        .bind(address)
        .bind(serde_json::to_string(letter).expect("letters serialise"))
        .bind(at);
    conn.execute(statement).await?;
    Ok(())
}

/// The store's side of the notices.
impl Store {
    /// Which notices turns begun cause from now on.
    pub fn set_notice_rules(&self, rules: NoticeRules) {
        *self.outbox.notices.rules.write().expect("never poisoned") = rules;
    }

    /// Waits until this server's writer next writes notices.
    pub async fn notices_written(&self) {
        self.outbox.notices.written.notified().await;
    }

    /// One round of the dispatcher's: keeps what came of the notices `settled`, then, with
    /// `claim` set, makes pushes of the turns that have lasted long enough and still stand, and
    /// takes up to that many notices due now for `lease`, after holding back the pushes whose
    /// turn is over. Those taken, how many were held back, and when the next turn waiting is
    /// to be pushed.
    pub async fn notice_round(
        &self,
        settled: Vec<(ClaimedNotice, NoticeOutcome, Timestamp)>,
        lease: Duration,
        claim: Option<i64>,
    ) -> Result<NoticeRound, StoreError> {
        let now = Timestamp::now();
        let push_after = self.outbox.notices.rules().push_after;
        let claim = claim.map(|limit| Claim {
            now,
            lease_until: now.after(lease),
            limit,
            turns_before: now.before(push_after),
        });
        match self
            .notice_write(NoticeWrite::Round { settled, claim })
            .await?
        {
            NoticeOutput::Claimed(claimed, held, next) => Ok(NoticeRound {
                claimed,
                held,
                next_push: next.map(|began| began.after(push_after)),
            }),
            NoticeOutput::Count(_) => Ok(NoticeRound::default()),
        }
    }

    /// Removes notices done before `before`, at most `limit`; how many.
    pub async fn prune_notices(&self, before: Timestamp, limit: i64) -> Result<usize, StoreError> {
        match self
            .notice_write(NoticeWrite::Prune { before, limit })
            .await?
        {
            NoticeOutput::Count(count) => Ok(count),
            NoticeOutput::Claimed(..) => Ok(0),
        }
    }

    /// Lets go of every notice taken (on a SQLite file no other server has open).
    pub async fn release_notices(&self) -> Result<(), StoreError> {
        self.notice_write(NoticeWrite::Release(None))
            .await
            .map(|_| ())
    }

    /// Lets go of the notices `seqs` this server holds, which it cannot finish.
    pub async fn release_notice_claims(&self, seqs: Vec<i64>) -> Result<(), StoreError> {
        self.notice_write(NoticeWrite::Release(Some(seqs)))
            .await
            .map(|_| ())
    }

    async fn notice_write(&self, write: NoticeWrite) -> Result<NoticeOutput, StoreError> {
        let (job, reply) = Job::new(write);
        let (_, output) = self.writer.write(job.into(), reply).await?;
        Ok(output)
    }
}
