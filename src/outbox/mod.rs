//! The outbox's dispatcher: takes the rows due for each endpoint, hands each to its channel
//! (webhooks, for now) and keeps what came of it, with retries, disabling and pruning.
//!
//! - **At least once, through any crash.** A row is written in the commit that caused its
//!   event (see `store/outbox.rs`) and stays due until an attempt succeeds or its retry period
//!   is over. A server takes rows for [`OutboxRules::lease`]; one that dies holding rows
//!   leaves them to be taken again after that (at once, on a SQLite file no other server has
//!   open). A receiver may so see an event twice, with the same `webhook-id`, never one
//!   invented.
//! - **No endpoint holds up another.** Each endpoint has its own number of deliveries in
//!   flight ([`OutboxRules::per_endpoint`]), the server a total, and rows are taken for an
//!   endpoint only when it has room: a slow one's rows wait in the database, not in memory,
//!   and nothing of a move or a stream waits on any of it.
//! - **Deadlines' way.** Like the rooms' deadlines, nothing polls per row: a server looks for
//!   an endpoint's rows when its own writer has put some in, when an attempt to it ends, and
//!   once a second for every endpoint (other servers' rows, retries coming due).
//!
//! One stop in the life of a move: `docs/internals.md`.

mod backoff;

use crate::draining::{Drain, Draining};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, Notify, Semaphore};
use tokio::time::Instant;

use crate::domain::outgoing::room_body;
use crate::domain::records::RoomEvent;
use crate::domain::time::Timestamp;
use crate::domain::webhooks::{Endpoint, EventType, Payload, Subscription, Subscriptions};
use crate::store::{Claimed, Dispatch, Next, Settled, Store};

pub use backoff::retry_delay;

/// How long the dispatcher goes without looking (other servers' rows, retries coming due,
/// endpoints changed elsewhere).
const RESCAN: Duration = Duration::from_secs(1);
/// The least time between two looks, so that a burst of outcomes is one look.
const MIN_GAP: Duration = Duration::from_millis(5);
/// How often rows done for longer than they are kept are removed, and how many at a time (again
/// at the next look while a pruning finds as many as that).
const PRUNE_EVERY: Duration = Duration::from_secs(60);
const PRUNE_LIMIT: i64 = 5_000;

/// The outbox's settings (see `Config`'s `--webhook-*` flags).
#[derive(Debug, Clone, Copy)]
pub struct OutboxRules {
    /// How long an event is tried for before it is marked failed.
    pub retry_for: Duration,
    /// The wait before the first retry, doubled on each one after (with jitter).
    pub first_retry: Duration,
    /// The longest wait between two attempts.
    pub longest_wait: Duration,
    /// An endpoint that has failed every delivery for this long is disabled.
    pub disable_after: Duration,
    /// How long delivered and failed rows are kept for the delivery log.
    pub keep_for: Duration,
    /// Deliveries in flight at once, per endpoint and in all.
    pub per_endpoint: usize,
    pub total: usize,
    /// How long a server holds the rows it took: longer than an attempt can last.
    pub lease: Duration,
}

impl Default for OutboxRules {
    fn default() -> Self {
        Self {
            retry_for: Duration::from_secs(24 * 60 * 60),
            first_retry: Duration::from_secs(5),
            longest_wait: Duration::from_secs(60 * 60),
            disable_after: Duration::from_secs(5 * 24 * 60 * 60),
            keep_for: Duration::from_secs(7 * 24 * 60 * 60),
            per_endpoint: 8,
            total: 64,
            lease: Duration::from_secs(40),
        }
    }
}

/// What one attempt at a delivery came to.
#[derive(Debug, Clone)]
pub struct Attempted {
    /// The answer's status, if there was an answer.
    pub status: Option<u16>,
    /// Whether it counts as delivered.
    pub delivered: bool,
    pub latency: Duration,
    /// The answer's first bytes.
    pub response: String,
    /// Why there was no answer.
    pub error: Option<String>,
}

/// Where a row goes: a webhook endpoint (later, mail and push).
pub trait Channel: Send + Sync + 'static {
    /// Makes one attempt at `row`, whose body is `body`.
    fn deliver<'a>(&'a self, row: &'a Claimed, body: &'a str) -> BoxFuture<'a, Attempted>;
}

/// The outbox, running: its dispatcher, and a way to tell it endpoints changed.
#[derive(Clone)]
pub struct Outbox {
    store: Store,
    rules: OutboxRules,
    changed: Arc<Notify>,
}

impl Outbox {
    /// Starts the dispatcher, which delivers through `channel`, and tells the writer which
    /// endpoints take events before it returns.
    pub async fn start(
        store: Store,
        rules: OutboxRules,
        channel: Arc<dyn Channel>,
        drain: &Drain,
    ) -> Result<Self, crate::store::StoreError> {
        let outbox = Self {
            store,
            rules,
            changed: Arc::new(Notify::new()),
        };
        outbox.reload().await?;
        if outbox.store.solitude().is_some() {
            // No other server has the file open: rows a server took are nobody's now (this
            // one's, before a crash).
            outbox.store.release_outbox_claims().await?;
        }
        drain.spawn(outbox.clone().run(channel, drain.watch()));
        Ok(outbox)
    }

    pub fn rules(&self) -> &OutboxRules {
        &self.rules
    }

    /// Endpoints changed on this server: the writer learns of it now, the dispatcher at once.
    pub async fn endpoints_changed(&self) -> Result<(), crate::store::StoreError> {
        self.reload().await?;
        self.changed.notify_one();
        Ok(())
    }

    /// Reads the endpoints, tells the writer which take events, and returns them.
    async fn reload(&self) -> Result<Vec<Endpoint>, crate::store::StoreError> {
        let endpoints = self.store.webhook_endpoints().await?;
        let taking = endpoints
            .iter()
            .filter(|e| e.disabled_at.is_none())
            .map(|e| Subscription {
                endpoint_id: e.id.clone(),
                game: e.game.clone(),
                types: e.types,
            })
            .collect();
        self.store.set_subscriptions(Subscriptions {
            endpoints: Arc::new(taking),
        });
        Ok(endpoints)
    }

    async fn run(self, channel: Arc<dyn Channel>, mut draining: Draining) {
        let (done, mut outcomes) = mpsc::unbounded_channel::<Settled>();
        let mut dispatcher = Dispatcher {
            total: Arc::new(Semaphore::new(self.rules.total)),
            outbox: self,
            channel,
            done,
            in_flight: HashMap::new(),
            held: HashSet::new(),
            live: Vec::new(),
            maybe_due: HashSet::new(),
            settled: Vec::new(),
            next_full_look: Instant::now(),
            next_prune: Instant::now(),
        };
        loop {
            if let Some(deadline) = draining.deadline() {
                return dispatcher.finish(outcomes, deadline).await;
            }
            let looked = Instant::now();
            if looked >= dispatcher.next_full_look {
                dispatcher.look_at_every_endpoint(looked).await;
            }
            while let Ok(outcome) = outcomes.try_recv() {
                dispatcher.ended(outcome);
            }
            dispatcher.round().await;
            if looked >= dispatcher.next_prune {
                dispatcher.prune(looked).await;
            }
            let until = dispatcher.next_full_look.min(dispatcher.next_prune);
            let store = dispatcher.outbox.store.clone();
            let changed = dispatcher.outbox.changed.clone();
            tokio::select! {
                _ = tokio::time::sleep_until(until) => {}
                written_for = store.outbox_written() => dispatcher.maybe_due.extend(written_for),
                _ = changed.notified() => dispatcher.next_full_look = Instant::now(),
                Some(outcome) = outcomes.recv() => dispatcher.ended(outcome),
                deadline = draining.begun() => return dispatcher.finish(outcomes, deadline).await,
            }
            tokio::time::sleep_until(looked + MIN_GAP).await;
        }
    }
}

/// What one server's dispatcher keeps between its looks.
struct Dispatcher {
    outbox: Outbox,
    channel: Arc<dyn Channel>,
    /// Where each attempt's outcome goes when it ends.
    done: mpsc::UnboundedSender<Settled>,
    /// Deliveries in flight from this server, in all and per endpoint.
    total: Arc<Semaphore>,
    in_flight: HashMap<String, usize>,
    /// The rows being delivered from this server.
    held: HashSet<i64>,
    /// The endpoints taking deliveries (neither paused nor disabled) at the last full look.
    live: Vec<String>,
    /// Endpoints that may have rows due: all of them on each full look, those this server's
    /// writer put rows in for or an attempt to ended since, and those the last look found as
    /// many rows for as it asked.
    maybe_due: HashSet<String>,
    /// Outcomes not kept yet.
    settled: Vec<Settled>,
    next_full_look: Instant,
    next_prune: Instant,
}

impl Dispatcher {
    /// Reads the endpoints again (and tells the writer), and looks at every live one.
    async fn look_at_every_endpoint(&mut self, now: Instant) {
        self.next_full_look = now + RESCAN;
        match self.outbox.reload().await {
            Ok(endpoints) => {
                self.live = endpoints
                    .into_iter()
                    .filter(Endpoint::is_live)
                    .map(|e| e.id)
                    .collect();
            }
            Err(err) => tracing::warn!(error = %err, "could not read the webhook endpoints"),
        }
        self.maybe_due = self.live.iter().cloned().collect();
    }

    /// An attempt ended: its outcome waits to be kept, and its endpoint has room again.
    fn ended(&mut self, outcome: Settled) {
        self.held.remove(&outcome.seq);
        if let Some(n) = self.in_flight.get_mut(&outcome.endpoint_id) {
            *n = n.saturating_sub(1);
        }
        self.maybe_due.insert(outcome.endpoint_id.clone());
        self.settled.push(outcome);
    }

    /// How many rows to take for each endpoint that may have some due: as many as it has room
    /// for, within what the server has room for.
    fn claims(&self) -> Vec<(String, i64)> {
        let mut free = self.total.available_permits();
        let mut claims = Vec::new();
        for id in self.live.iter().filter(|id| self.maybe_due.contains(*id)) {
            let busy = self.in_flight.get(id).copied().unwrap_or(0);
            let room = self
                .outbox
                .rules
                .per_endpoint
                .saturating_sub(busy)
                .min(free);
            if room > 0 {
                free -= room;
                claims.push((id.clone(), room as i64));
            }
        }
        claims
    }

    /// Keeps the outcomes waiting and takes the rows due, in one write, and starts delivering
    /// what it took.
    async fn round(&mut self) {
        let claims = self.claims();
        if claims.is_empty() && self.settled.is_empty() {
            return;
        }
        let now = Timestamp::now();
        let rules = self.outbox.rules;
        let round = Dispatch {
            settled: std::mem::take(&mut self.settled),
            claims: claims.clone(),
            now,
            lease_until: now.after(rules.lease),
            disable_before: now.before(rules.disable_after),
        };
        let dispatched = match self.outbox.store.dispatch(round).await {
            Ok(dispatched) => dispatched,
            Err(err) => {
                tracing::warn!(error = %err, "could not take or settle the outbox's rows; trying again shortly");
                // Nothing of the round happened; its rows are taken again, and the attempts
                // whose outcomes it held are made again, once their lease is over.
                self.next_full_look = Instant::now() + RESCAN;
                return;
            }
        };
        for (id, asked) in &claims {
            let got = dispatched
                .claimed
                .iter()
                .filter(|c| &c.endpoint.id == id)
                .count();
            if (got as i64) < *asked {
                self.maybe_due.remove(id);
            }
        }
        for id in &dispatched.disabled {
            tracing::warn!(endpoint = %id, "a webhook endpoint failed every delivery for the disabling period; disabled");
            self.next_full_look = Instant::now();
        }
        let bodies = bodies_of(&self.outbox.store, &dispatched.claimed).await;
        for (row, body) in dispatched.claimed.into_iter().zip(bodies) {
            self.start(row, body);
        }
    }

    /// Delivers `row` off the dispatcher's loop; its outcome comes back through `done`.
    fn start(&mut self, row: Claimed, body: Result<String, String>) {
        *self.in_flight.entry(row.endpoint.id.clone()).or_default() += 1;
        self.held.insert(row.seq);
        let permit = self.total.clone().try_acquire_owned().ok();
        let (channel, done, rules) = (self.channel.clone(), self.done.clone(), self.outbox.rules);
        tokio::spawn(async move {
            let attempted = match body {
                Ok(body) => channel.deliver(&row, &body).await,
                Err(why) => Attempted {
                    status: None,
                    delivered: false,
                    latency: Duration::ZERO,
                    response: String::new(),
                    error: Some(why),
                },
            };
            let _ = done.send(outcome(&row, attempted, &rules));
            drop(permit);
        });
    }

    /// The server stops: nothing more is taken, the deliveries in flight are waited for until
    /// `deadline` and what came of them kept, and the rows still out are let go for another
    /// server.
    async fn finish(mut self, mut outcomes: mpsc::UnboundedReceiver<Settled>, deadline: Instant) {
        let last = deadline - crate::draining::LAST_WRITES;
        while !self.held.is_empty() {
            match tokio::time::timeout_at(last, outcomes.recv()).await {
                Ok(Some(outcome)) => self.ended(outcome),
                Ok(None) | Err(_) => break,
            }
        }
        self.live.clear();
        self.round().await;
        if !self.held.is_empty() {
            let left = self.held.len();
            let rows = self.held.drain().collect();
            match self.outbox.store.release_outbox_rows(rows).await {
                Ok(()) => tracing::info!(
                    left,
                    "stopping: webhook deliveries still in flight were let go for another server"
                ),
                Err(err) => {
                    tracing::warn!(error = %err, "stopping: could not let go of the deliveries in flight; they wait for their lease")
                }
            }
        }
    }

    /// Removes rows done for longer than they are kept, some at a time.
    async fn prune(&mut self, now: Instant) {
        let rules = self.outbox.rules;
        // A keeping period shorter than the pruning's own (a test's) is kept to as well.
        self.next_prune = now + PRUNE_EVERY.min(rules.keep_for.max(RESCAN));
        let before = Timestamp::now().before(rules.keep_for);
        match self.outbox.store.prune_outbox(before, PRUNE_LIMIT).await {
            // More are due: the next look prunes again.
            Ok(pruned) if pruned as i64 == PRUNE_LIMIT => self.next_prune = now,
            Ok(_) => {}
            Err(err) => tracing::warn!(error = %err, "could not prune the outbox"),
        }
    }
}

/// The body of each row: kept whole, or made from the version of the room's history it names
/// (read for all of them at once); why not, for one whose body cannot be made now.
async fn bodies_of(store: &Store, rows: &[Claimed]) -> Vec<Result<String, String>> {
    let mut wanted: Vec<(String, i64)> = rows
        .iter()
        .filter_map(|row| match &row.payload {
            Payload::Room {
                room_id, version, ..
            } => Some((room_id.clone(), *version)),
            Payload::Body(_) => None,
        })
        .collect();
    wanted.sort_unstable();
    wanted.dedup();
    let history: Result<HashMap<(String, i64), RoomEvent>, String> = match wanted.is_empty() {
        true => Ok(HashMap::new()),
        false => store
            .versions_of(&wanted)
            .await
            .map(|found| {
                found
                    .into_iter()
                    .map(|(room, event)| ((room, event.version), event))
                    .collect()
            })
            .map_err(|err| format!("the room's history cannot be read now: {err}")),
    };
    rows.iter()
        .map(|row| {
            let (room_id, game, version, extra) = match &row.payload {
                Payload::Body(body) => return Ok(body.clone()),
                Payload::Room {
                    room_id,
                    game,
                    version,
                    extra,
                } => (room_id, game, *version, extra),
            };
            let history = history.as_ref().map_err(Clone::clone)?;
            let kind = EventType::parse(&row.kind)
                .ok_or_else(|| format!("`{}` is not a room's event type", row.kind))?;
            let extra = extra
                .as_deref()
                .map(serde_json::from_str::<serde_json::Value>)
                .transpose()
                .map_err(|err| format!("the event's data cannot be read: {err}"))?;
            let at = history.get(&(room_id.clone(), version)).ok_or_else(|| {
                format!("version {version} of room {room_id} is not in its history")
            })?;
            Ok(room_body(kind, game, room_id, at, extra.as_ref()))
        })
        .collect()
}

/// What an attempt makes of its row: delivered, due again after a wait, or failed for good
/// once its retry period would be over.
fn outcome(row: &Claimed, attempted: Attempted, rules: &OutboxRules) -> Settled {
    let at = Timestamp::now();
    let attempt = row.attempts + 1;
    let next = if attempted.delivered {
        Next::Delivered
    } else {
        let until = row
            .retry_until
            .unwrap_or_else(|| row.created_at.after(rules.retry_for));
        let due = at.after(retry_delay(attempt, rules, rand::random()));
        match due <= until {
            true => Next::RetryAt(due),
            false => Next::Failed,
        }
    };
    Settled {
        seq: row.seq,
        endpoint_id: row.endpoint.id.clone(),
        attempt,
        at,
        status: attempted.status,
        latency_ms: attempted.latency.as_millis() as i64,
        response: attempted.response,
        error: attempted.error,
        next,
    }
}
