//! The outbox and the webhook endpoints it delivers to.
//!
//! - **Written with what caused it.** A room's events go in by the batch that commits its
//!   version ([`insert_room_events`], called from [`super::batch::apply_round`]), for every
//!   endpoint the writer knows to take them (see [`Subscriptions`]): no endpoint, no row, and
//!   nothing more is run. A game's publication goes in with it.
//! - **Taken by one server.** A server takes due rows of an endpoint by setting
//!   `claimed_until` (on PostgreSQL, `FOR UPDATE SKIP LOCKED`, so two servers never take the
//!   same row; on SQLite the database's single writer decides). A server that dies holding
//!   rows holds them only until then.
//! - **Its outcome kept.** Each attempt is a row of `outbox_attempts`; the delivery is
//!   delivered, due again later, or failed once its retry period is over.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::dialect::{Dialect, SetSql};
use super::queue::WriteStep;
use super::rows;
use super::sets::{execute_set, set_statements};
use super::sql::{Exec, Sql, Statement};
use super::types::{RoomCommit, RoomWritten, StoreError};
use super::{Job, Store};
use crate::domain::outgoing::{CommitStory, Outgoing};
use crate::domain::records::RoomEvent;
use crate::domain::time::Timestamp;
use crate::domain::webhooks::{
    new_message_id, DeliveryState, Endpoint, EventTypes, OutboxRow, Payload, Subscription,
    Subscriptions,
};

/// What the writer knows of the endpoints, kept up to date by the outbox's dispatcher (at
/// least once a second), and how it tells the dispatcher that rows were written.
#[derive(Default)]
pub(super) struct OutboxBoard {
    subscriptions: RwLock<(Subscriptions, Option<Instant>)>,
    /// The endpoints this server's writer put rows in for since the dispatcher last asked.
    written_for: Mutex<HashSet<String>>,
    written: Notify,
    /// The notices to players the writer may write (mail, pushes).
    pub(super) notices: super::notices::NoticeBoard,
}

/// How old the writer's list of endpoints may be. A new endpoint takes events from
/// [`ACTIVATION`] after it is made: by then every server's list holds it, or the list is
/// older than this and the writer reads the endpoints in its transaction instead. So no
/// event committed after that moment misses an endpoint, on any server.
const FRESH: Duration = Duration::from_millis(1_500);
pub const ACTIVATION: Duration = Duration::from_secs(2);

impl OutboxBoard {
    /// The endpoints, if the list is fresh.
    fn fresh_subscriptions(&self) -> Option<Subscriptions> {
        let kept = self.subscriptions.read().expect("never poisoned");
        let fresh = kept.1.is_some_and(|at| at.elapsed() < FRESH);
        fresh.then(|| kept.0.clone())
    }
}

/// The endpoints that take events (none disabled), in the columns [`subscriptions_in`] reads.
pub(super) const SUBSCRIPTIONS: &str = "SELECT id, coalesce(game_id, '') AS game_id, events \
     FROM webhook_endpoints WHERE disabled_at IS NULL";

/// The endpoints, read on the writer's own connection.
async fn subscriptions_in<E: Exec>(conn: &mut E) -> Result<Subscriptions, StoreError> {
    let mut endpoints = Vec::new();
    for row in conn.fetch_all(Statement::new(SUBSCRIPTIONS)).await? {
        let game = E::text(&row, "game_id")?;
        let events = E::text(&row, "events")?;
        endpoints.push(Subscription {
            endpoint_id: E::text(&row, "id")?,
            game: (!game.is_empty()).then(|| game.into()),
            types: EventTypes::parse_list(&events).map_err(|name| {
                StoreError::Corrupt(format!(
                    "an endpoint takes `{name}`, which is no event type"
                ))
            })?,
        });
    }
    Ok(Subscriptions {
        endpoints: Arc::new(endpoints),
    })
}

/// A new row: `$1` id … (see [`OutboxRow`]), for an endpoint that is still there and not
/// disabled (one another server removed a moment ago takes nothing).
pub(super) const INSERT_OUTBOX: SetSql = SetSql {
    columns: "id, endpoint_id, type, room_id, game, version, data, body, created_at, retry_until",
    statement: "INSERT INTO outbox (id, endpoint_id, type, room_id, game, version, data, body, \
         created_at, state, due_at, retry_until) \
         SELECT v.id, v.endpoint_id, v.type, v.room_id, v.game, v.version, v.data, v.body, \
         v.created_at, 'pending', \
         v.created_at, v.retry_until FROM v JOIN webhook_endpoints e ON e.id = v.endpoint_id \
         WHERE e.disabled_at IS NULL",
};

/// What a delivery's attempt did to it: `state`, when next due (pending) or when done.
pub(super) const SETTLE_OUTBOX: SetSql = SetSql {
    columns: "seq, state, due_at, status, done_at",
    statement: "UPDATE outbox SET state = v.state, due_at = v.due_at, claimed_until = NULL, \
         attempts = attempts + 1, last_status = v.status, done_at = v.done_at \
         FROM v WHERE outbox.seq = v.seq",
};

/// The attempts' log.
pub(super) const INSERT_ATTEMPTS: SetSql = SetSql {
    columns: "outbox_seq, attempt, at, status, latency_ms, response, error",
    statement: "INSERT INTO outbox_attempts (outbox_seq, attempt, at, status, latency_ms, \
         response, error) SELECT v.outbox_seq, v.attempt, v.at, v.status, v.latency_ms, \
         v.response, v.error FROM v WHERE true ON CONFLICT DO NOTHING",
};

/// The endpoints not disabled that take game `$1`'s events of type `$2`.
pub(super) const SUBSCRIBERS: &str = "SELECT id FROM webhook_endpoints \
     WHERE disabled_at IS NULL AND (game_id IS NULL OR game_id = $1) \
     AND ',' || events || ',' LIKE '%,' || $2 || ',%'";

/// A run of failures of endpoint `$1` goes on at `$2`.
pub(super) const ENDPOINT_FAILING: &str = "UPDATE webhook_endpoints \
     SET failing_since = coalesce(failing_since, $2) WHERE id = $1";

/// Endpoint `$1` answered: its run of failures is over.
pub(super) const ENDPOINT_ANSWERING: &str = "UPDATE webhook_endpoints \
     SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL";

/// Disables endpoint `$1` at `$2` for `$3` if it has failed every delivery since `$4` or before.
pub(super) const DISABLE_ENDPOINT: &str = "UPDATE webhook_endpoints \
     SET disabled_at = $2, disabled_reason = $3 \
     WHERE id = $1 AND disabled_at IS NULL AND failing_since <= $4 RETURNING id";

/// Versions of rooms' histories, each by room and version, in the columns [`rows::event`]
/// reads.
pub(super) const VERSIONS_OF: SetSql = SetSql {
    columns: "room_id, version",
    statement: "SELECT e.room_id, e.version, e.kind, e.player_id, p.username, \
         CAST(e.move AS TEXT) AS move, CAST(e.state AS TEXT) AS state, e.joinable, e.finished, \
         CAST(e.players AS TEXT) AS players, e.trigger_timeout_at, e.to_move, e.created_at \
         FROM v JOIN room_events e ON e.room_id = v.room_id AND e.version = v.version \
         LEFT JOIN players p ON p.id = e.player_id",
};

/// Rows done (delivered or failed) before `$1`, at most `$2` of them.
pub(super) const PRUNE_OUTBOX: &str = "DELETE FROM outbox WHERE seq IN \
     (SELECT seq FROM outbox WHERE done_at < $1 ORDER BY done_at LIMIT $2) RETURNING seq";

/// Every row taken by a server, let go: on a SQLite file this server alone has open, no other
/// server can be delivering them.
pub(super) const RELEASE_CLAIMS: &str = "UPDATE outbox SET claimed_until = NULL \
     WHERE due_at IS NOT NULL AND claimed_until IS NOT NULL";

/// The rows `seq` a server holds, let go (it stops, and cannot finish them): another server
/// takes them at once rather than when their lease is over.
pub(super) const RELEASE_ROWS: SetSql = SetSql {
    columns: "seq",
    statement: "UPDATE outbox SET claimed_until = NULL FROM v \
         WHERE outbox.seq = v.seq AND outbox.due_at IS NOT NULL",
};

/// The rows for the events of a round's `accepted` commits (`written`: what writing each
/// produced, by room id), for the endpoints that take them.
pub(super) async fn insert_room_events<D: Dialect>(
    conn: &mut impl Exec,
    board: &OutboxBoard,
    accepted: &[&RoomCommit],
    written: &std::collections::HashMap<String, RoomWritten>,
) -> Result<(), StoreError> {
    let subscriptions = match board.fresh_subscriptions() {
        Some(subscriptions) => subscriptions,
        None => subscriptions_in(conn).await?,
    };
    if subscriptions.endpoints.is_empty() {
        return Ok(());
    }
    let mut rows = Vec::new();
    for commit in accepted {
        let room = &commit.room;
        let (subscribers, wanted) = subscriptions.for_game(&room.game);
        if wanted.is_empty() {
            continue;
        }
        let story = CommitStory {
            room,
            created: commit.expected_version.is_none(),
            joinable_before: commit.joinable_before,
            finished_before: commit.finished_before,
            versions: &commit.events,
            winners: commit.winners.as_deref(),
            rating_changes: written
                .get(room.id.as_str())
                .map_or(&[], |w| w.rating_changes.as_slice()),
        };
        for notice in story.notices(wanted) {
            let extra = notice.extra.as_ref().map(|extra| extra.to_string());
            for subscriber in subscribers.iter().filter(|s| s.types.contains(notice.kind)) {
                rows.push(OutboxRow {
                    id: new_message_id(),
                    endpoint_id: subscriber.endpoint_id.clone(),
                    kind: notice.kind,
                    payload: Payload::Room {
                        room_id: room.id.to_string(),
                        game: room.game.to_string(),
                        version: notice.version,
                        extra: extra.clone(),
                    },
                    created_at: notice.created_at,
                    retry_until: None,
                });
            }
        }
    }
    if rows.is_empty() {
        return Ok(());
    }
    insert_rows::<D>(conn, &rows).await?;
    // Told before the commit: the dispatcher's next write comes after it in the writer's queue,
    // so the rows are there when it looks.
    let mut written_for = board.written_for.lock().expect("never poisoned");
    written_for.extend(rows.into_iter().map(|row| row.endpoint_id));
    drop(written_for);
    board.written.notify_one();
    Ok(())
}

/// A row for `event` (not a room's) to `endpoint_id`.
pub(super) fn row_for(event: &Outgoing, endpoint_id: &str) -> OutboxRow {
    OutboxRow {
        id: new_message_id(),
        endpoint_id: endpoint_id.to_owned(),
        kind: event.kind,
        payload: Payload::Body(event.body.clone()),
        created_at: event.created_at,
        retry_until: None,
    }
}

pub(super) async fn insert_rows<D: Dialect>(
    conn: &mut impl Exec,
    rows: &[OutboxRow],
) -> Result<(), StoreError> {
    execute_set::<D, _>(conn, INSERT_OUTBOX, rows, |row, r| {
        row.put("id", r.id.as_str());
        row.put("endpoint_id", r.endpoint_id.as_str());
        row.put("type", r.kind.as_str());
        let (room, game, version, extra, body) = match &r.payload {
            Payload::Room {
                room_id,
                game,
                version,
                extra,
            } => (
                Some(room_id),
                Some(game),
                Some(*version),
                extra.as_ref(),
                None,
            ),
            Payload::Body(body) => (None, None, None, None, Some(body)),
        };
        row.put("room_id", room.cloned());
        row.put("game", game.cloned());
        row.put("version", version);
        row.put("data", extra.cloned());
        row.put("body", body.cloned());
        row.put("created_at", r.created_at);
        row.put("retry_until", r.retry_until);
    })
    .await
}

/// An event that is not a room's, for every endpoint that takes it (a game's publication), or
/// for one endpoint (a ping).
pub(super) async fn insert_event<D: Dialect>(
    conn: &mut D::Connection,
    event: &Outgoing,
    game: &str,
) -> Result<usize, StoreError> {
    let subscribers = Statement::new(SUBSCRIBERS)
        .bind(game)
        .bind(event.kind.as_str());
    let rows: Vec<OutboxRow> = D::fetch_all(conn, subscribers)
        .await?
        .iter()
        .map(|r| D::text(r, "id").map(|id| row_for(event, &id)))
        .collect::<Result<_, _>>()?;
    insert_rows::<D>(conn, &rows).await?;
    Ok(rows.len())
}

fn payload<D: Sql>(row: &D::Row) -> Result<Payload, StoreError> {
    if let Some(body) = D::maybe_text(row, "body")? {
        return Ok(Payload::Body(body));
    }
    let missing = || StoreError::Corrupt("an outbox row has neither a body nor a room".into());
    Ok(Payload::Room {
        room_id: D::maybe_text(row, "room_id")?.ok_or_else(missing)?,
        game: D::maybe_text(row, "game")?.ok_or_else(missing)?,
        version: D::maybe_int(row, "version")?.ok_or_else(missing)?,
        extra: D::maybe_text(row, "data")?,
    })
}

/// A delivery taken to be attempted.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub seq: i64,
    pub id: String,
    pub endpoint: Arc<Endpoint>,
    pub kind: String,
    /// What its body is made from.
    pub payload: Payload,
    pub created_at: Timestamp,
    pub retry_until: Option<Timestamp>,
    /// Attempts made before this one.
    pub attempts: i64,
}

/// What one attempt did.
#[derive(Debug, Clone)]
pub struct Settled {
    pub seq: i64,
    pub endpoint_id: String,
    /// The attempt's number, from 1.
    pub attempt: i64,
    pub at: Timestamp,
    pub status: Option<u16>,
    pub latency_ms: i64,
    pub response: String,
    pub error: Option<String>,
    /// What the delivery is now: delivered, due again at a time, or failed.
    pub next: Next,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Delivered,
    RetryAt(Timestamp),
    Failed,
}

/// One round of the dispatcher's: the outcomes of attempts that ended, and the endpoints to
/// take due rows of (how many each) at `now`, held until `lease_until`. An endpoint that has
/// failed every delivery since `disable_before` is disabled.
pub struct Dispatch {
    pub settled: Vec<Settled>,
    pub claims: Vec<(String, i64)>,
    pub now: Timestamp,
    pub lease_until: Timestamp,
    pub disable_before: Timestamp,
}

/// What a round took, and the endpoints it disabled.
#[derive(Debug, Default)]
pub struct Dispatched {
    pub claimed: Vec<Claimed>,
    pub disabled: Vec<String>,
}

impl WriteStep for Dispatch {
    type Output = Dispatched;

    async fn apply<D: Dialect>(&self, conn: &mut D::Connection) -> Result<Dispatched, StoreError> {
        let disabled = settle::<D>(conn, self).await?;
        let mut claimed = Vec::new();
        for (endpoint_id, limit) in &self.claims {
            let read =
                Statement::new(super::webhook_endpoints::ENDPOINT).bind(endpoint_id.as_str());
            let Some(row) = D::fetch_optional(conn, read).await? else {
                continue;
            };
            let endpoint = Arc::new(super::webhook_endpoints::endpoint::<D>(&row)?);
            if !endpoint.is_live() {
                continue;
            }
            let claim = Statement::new(D::CLAIM_OUTBOX)
                .bind(endpoint_id.as_str())
                .bind(self.now)
                .bind(self.lease_until)
                .bind(*limit);
            for row in D::fetch_all(conn, claim).await? {
                claimed.push(Claimed {
                    seq: D::int(&row, "seq")?,
                    id: D::text(&row, "id")?,
                    endpoint: endpoint.clone(),
                    kind: D::text(&row, "type")?,
                    payload: payload::<D>(&row)?,
                    created_at: D::time(&row, "created_at")?,
                    retry_until: D::maybe_time(&row, "retry_until")?,
                    attempts: D::int(&row, "attempts")?,
                });
            }
        }
        claimed.sort_by_key(|c| c.seq);
        Ok(Dispatched { claimed, disabled })
    }
}

/// Keeps the outcomes of `round`'s attempts; the endpoints it disabled.
async fn settle<D: Dialect>(
    conn: &mut D::Connection,
    round: &Dispatch,
) -> Result<Vec<String>, StoreError> {
    if round.settled.is_empty() {
        return Ok(Vec::new());
    }
    execute_set::<D, _>(conn, SETTLE_OUTBOX, &round.settled, |row, s| {
        let (state, due, done) = match s.next {
            Next::Delivered => (DeliveryState::Delivered, None, Some(s.at)),
            Next::RetryAt(at) => (DeliveryState::Pending, Some(at), None),
            Next::Failed => (DeliveryState::Failed, None, Some(s.at)),
        };
        row.put("seq", s.seq);
        row.put("state", state.as_str());
        row.put("due_at", due);
        row.put("status", s.status.map(i64::from));
        row.put("done_at", done);
    })
    .await?;
    execute_set::<D, _>(conn, INSERT_ATTEMPTS, &round.settled, |row, s| {
        row.put("outbox_seq", s.seq);
        row.put("attempt", s.attempt);
        row.put("at", s.at);
        row.put("status", s.status.map(i64::from));
        row.put("latency_ms", s.latency_ms);
        row.put("response", s.response.as_str());
        row.put("error", s.error.clone());
    })
    .await?;
    // An endpoint is failing only if every attempt of the round failed.
    let mut endpoints: Vec<(&str, bool, &Settled)> = Vec::new();
    for s in &round.settled {
        let ok = s.next == Next::Delivered;
        match endpoints.iter_mut().find(|(id, ..)| *id == s.endpoint_id) {
            Some(entry) => {
                entry.1 |= ok;
                entry.2 = s;
            }
            None => endpoints.push((&s.endpoint_id, ok, s)),
        }
    }
    let mut disabled = Vec::new();
    for (id, answered, last) in endpoints {
        if answered {
            D::execute(conn, Statement::new(ENDPOINT_ANSWERING).bind(id)).await?;
            continue;
        }
        let failing = Statement::new(ENDPOINT_FAILING).bind(id).bind(round.now);
        D::execute(conn, failing).await?;
        let why = match (&last.status, &last.error) {
            (Some(status), _) => format!("HTTP {status}"),
            (None, Some(error)) => error.clone(),
            (None, None) => "no answer".to_owned(),
        };
        let reason = format!(
            "every delivery failed since {} (the last: {why})",
            round.disable_before
        );
        let disable = Statement::new(DISABLE_ENDPOINT)
            .bind(id)
            .bind(round.now)
            .bind(reason)
            .bind(round.disable_before);
        if D::fetch_optional(conn, disable).await?.is_some() {
            disabled.push(id.to_owned());
        }
    }
    Ok(disabled)
}

/// Old rows pruned: those done before `before`, at most `limit`.
struct Prune {
    pub before: Timestamp,
    pub limit: i64,
}

/// How many rows went.
impl WriteStep for Prune {
    type Output = usize;

    async fn apply<D: Dialect>(&self, conn: &mut D::Connection) -> Result<usize, StoreError> {
        let prune = Statement::new(PRUNE_OUTBOX)
            .bind(self.before)
            .bind(self.limit);
        Ok(D::fetch_all(conn, prune).await?.len())
    }
}

/// Claims let go: every one (see [`RELEASE_CLAIMS`]), or those of the rows listed.
struct ReleaseClaims(Option<Vec<i64>>);

impl WriteStep for ReleaseClaims {
    type Output = ();

    async fn apply<D: Dialect>(&self, conn: &mut D::Connection) -> Result<(), StoreError> {
        match &self.0 {
            None => D::execute(conn, Statement::new(RELEASE_CLAIMS)).await,
            Some(rows) => {
                execute_set::<D, _>(conn, RELEASE_ROWS, rows, |row, seq| row.put("seq", *seq)).await
            }
        }
    }
}

/// The outbox's part of the store.
impl Store {
    /// Tells the writer which endpoints take events from now on.
    pub fn set_subscriptions(&self, subscriptions: Subscriptions) {
        *self.outbox.subscriptions.write().expect("never poisoned") =
            (subscriptions, Some(Instant::now()));
    }

    /// Waits until this server's writer next puts rows in the outbox; the endpoints it put
    /// rows in for since the last call.
    pub async fn outbox_written(&self) -> HashSet<String> {
        self.outbox.written.notified().await;
        std::mem::take(&mut *self.outbox.written_for.lock().expect("never poisoned"))
    }

    /// Keeps a round's outcomes and takes the due rows it asks for.
    pub async fn dispatch(&self, round: Dispatch) -> Result<Dispatched, StoreError> {
        self.outbox_write(round).await
    }

    /// Removes rows done before `before`, at most `limit` of them: how many went.
    pub async fn prune_outbox(&self, before: Timestamp, limit: i64) -> Result<usize, StoreError> {
        self.outbox_write(Prune { before, limit }).await
    }

    /// Lets go of every row a server holds (see [`RELEASE_CLAIMS`]).
    pub async fn release_outbox_claims(&self) -> Result<(), StoreError> {
        self.outbox_write(ReleaseClaims(None)).await
    }

    /// Lets go of the rows `seqs` this server holds (see [`RELEASE_ROWS`]).
    pub async fn release_outbox_rows(&self, seqs: Vec<i64>) -> Result<(), StoreError> {
        self.outbox_write(ReleaseClaims(Some(seqs))).await
    }

    pub(super) async fn outbox_write<S: WriteStep>(
        &self,
        step: S,
    ) -> Result<S::Output, StoreError> {
        let (job, reply) = Job::new(step);
        let (_, output) = self.writer.write(job.into(), reply).await?;
        Ok(output)
    }

    /// The versions `wanted` (room, version) of rooms' histories, each with its room's id;
    /// those not there are left out. One read, for a round of deliveries' bodies.
    pub async fn versions_of(
        &self,
        wanted: &[(String, i64)],
    ) -> Result<Vec<(String, RoomEvent)>, StoreError> {
        read!(self, |pool| read_versions(pool, wanted))
    }
}

async fn read_versions<D: Dialect>(
    pool: &sqlx::Pool<D>,
    wanted: &[(String, i64)],
) -> Result<Vec<(String, RoomEvent)>, StoreError> {
    let mut conn = pool.acquire().await?;
    let mut found = Vec::with_capacity(wanted.len());
    for statement in set_statements::<D, _>(VERSIONS_OF, wanted, |row, (room, version)| {
        row.put("room_id", room.as_str());
        row.put("version", *version);
    }) {
        for row in D::fetch_all(&mut conn, statement).await? {
            found.push((D::text(&row, "room_id")?, rows::event::<D>(&row)?));
        }
    }
    Ok(found)
}
