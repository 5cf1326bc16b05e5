//! The notices' dispatcher, on every server: takes the notices due (one server each), makes
//! each one's words from the rooms as they are when it is sent, sends it, and keeps what came
//! of it: sent, held back (nothing left to say), due again after a backoff, or failed for
//! good. Nothing of a move waits on any of it.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::compose;
use super::mailer::{MailError, Mailer};
use super::pusher::{Push, Pushed, Pusher};
use super::unsubscribe::{MailKind, Unsubscribe};
use crate::catalog::Catalog;
use crate::domain::notices::{Channel, ClaimedNotice, Letter, NoticeKind, NoticeOutcome};
use crate::domain::time::Timestamp;
use crate::draining::Draining;
use crate::metrics::Exposition;
use crate::outbox::{retry_delay, OutboxRules};
use crate::store::{NoticeRound, PushSubscription, Store, Turn};

/// How long the dispatcher goes without looking (other servers' notices, retries coming due).
const RESCAN: Duration = Duration::from_secs(1);
/// Notices being sent at once from one server.
const IN_FLIGHT: usize = 64;
/// How often notices done for longer than they are kept are removed, and how many at a time.
const PRUNE_EVERY: Duration = Duration::from_secs(60);
const PRUNE_LIMIT: i64 = 5_000;

/// What the dispatcher needs to send.
pub struct Senders {
    pub mailer: Option<Mailer>,
    pub public_url: crate::domain::public_url::PublicUrl,
    /// At most one digest per player per this period.
    pub every: Duration,
    pub unsubscribe: Unsubscribe,
    pub presence: Arc<dyn super::Presence>,
    pub pusher: Pusher,
}

/// Notices counted since start, by what came of them (for `GET /metrics`).
#[derive(Default)]
pub struct NoticeCounts {
    counts: [[AtomicU64; 4]; 2],
}

const OUTCOMES: [&str; 4] = ["sent", "held", "retried", "failed"];

impl NoticeCounts {
    fn count(&self, channel: Channel, outcome: &NoticeOutcome) {
        let at = match outcome {
            NoticeOutcome::Sent => 0,
            NoticeOutcome::Held => 1,
            NoticeOutcome::RetryAt(..) => 2,
            NoticeOutcome::Failed(_) | NoticeOutcome::Gone => 3,
            NoticeOutcome::Postponed(_) => return,
        };
        self.counts[channel as usize][at].fetch_add(1, Ordering::Relaxed);
    }

    /// `count` notices held back together.
    fn held(&self, channel: Channel, count: usize) {
        self.counts[channel as usize][1].fetch_add(count as u64, Ordering::Relaxed);
    }

    pub fn render(&self, out: &mut Exposition) {
        let name = "turnhouse_notices_total";
        out.family(
            name,
            "counter",
            "Notices to players this server dealt with, by channel and by what came of each: sent, held back (the player was looking, or had moved, by the time it was due), tried again later, failed.",
        );
        for channel in [Channel::Mail, Channel::Push] {
            for (at, outcome) in OUTCOMES.iter().enumerate() {
                let count = self.counts[channel as usize][at].load(Ordering::Relaxed);
                let labels = format!("channel=\"{}\",outcome=\"{outcome}\"", channel.as_str());
                out.sample(name, &labels, count);
            }
        }
    }
}

/// The dispatcher's loop: each round keeps what came of the notices sent since the last one
/// and takes those due, in one write, then reads where the pushes taken go in one read.
/// Rounds come at most every [`PACE`] unless the last took all it could: a write and a read per
/// notice would compete with the moves for the writer (its transaction and its thread), and
/// batching them costs a push at most that long.
pub(super) async fn run(
    store: Store,
    catalog: Catalog,
    rules: OutboxRules,
    senders: Arc<Senders>,
    counts: Arc<NoticeCounts>,
    mut draining: Draining,
) {
    let (done, mut outcomes) = mpsc::unbounded_channel::<Outcome>();
    // The notices this server holds, being sent.
    let mut in_flight: HashSet<i64> = HashSet::new();
    let mut settled = Vec::new();
    let mut next_prune = Instant::now();
    loop {
        if let Some(deadline) = draining.deadline() {
            return finish(&store, rules, settled, in_flight, outcomes, deadline).await;
        }
        let round_began = Instant::now();
        while let Ok(outcome) = outcomes.try_recv() {
            in_flight.remove(&outcome.0.seq);
            settled.push(outcome);
        }
        let free = IN_FLIGHT - in_flight.len();
        let claim = (free > 0).then_some(free as i64);
        let round = take_round(&store, &rules, &counts, std::mem::take(&mut settled), claim).await;
        let (claimed, next_push) = (round.claimed, round.next_push);
        let full = claimed.len() == free && free > 0;
        let targets = targets_of(&store, &claimed).await;
        for (notice, target) in claimed.into_iter().zip(targets) {
            in_flight.insert(notice.seq);
            let (store, catalog, senders, counts, done) = (
                store.clone(),
                catalog.clone(),
                senders.clone(),
                counts.clone(),
                done.clone(),
            );
            tokio::spawn(async move {
                let outcome = deliver(&store, &catalog, &senders, &notice, target, &rules).await;
                counts.count(notice.channel, &outcome);
                let _ = done.send((notice, outcome, Timestamp::now()));
            });
        }
        if Instant::now() >= next_prune {
            next_prune = Instant::now() + PRUNE_EVERY.min(rules.keep_for.max(RESCAN));
            prune(&store, &rules).await;
        }
        if full {
            continue;
        }
        // The next look: when a turn waiting is to be pushed, and at least once in a while.
        let look = next_push.map_or(RESCAN, |at| at.since(Timestamp::now()).min(RESCAN));
        tokio::select! {
            _ = tokio::time::sleep(look) => {}
            _ = store.notices_written() => {}
            Some(outcome) = outcomes.recv() => {
                in_flight.remove(&outcome.0.seq);
                settled.push(outcome);
            }
            deadline = draining.begun() => {
                return finish(&store, rules, settled, in_flight, outcomes, deadline).await;
            }
        }
        tokio::time::sleep_until(round_began + PACE).await;
    }
}

/// One round's write: keeps what came of `settled` and, with `claim` set, takes that many
/// notices due, counting the pushes held back. Nothing taken if it fails: what came of those
/// settled is then lost, their lease runs out, and they are sent again.
async fn take_round(
    store: &Store,
    rules: &OutboxRules,
    counts: &NoticeCounts,
    settled: Vec<Outcome>,
    claim: Option<i64>,
) -> NoticeRound {
    match store.notice_round(settled, rules.lease, claim).await {
        Ok(round) => {
            counts.held(Channel::Push, round.held);
            round
        }
        Err(err) => {
            tracing::warn!(error = %err, "could not keep what came of notices, nor take those due");
            NoticeRound::default()
        }
    }
}

/// What each of `claimed` needs besides itself, in the same order: one read for where all the
/// pushes go and whether their turns still stand.
async fn targets_of(store: &Store, claimed: &[ClaimedNotice]) -> Vec<Target> {
    let pushes: Vec<&ClaimedNotice> = (claimed.iter())
        .filter(|notice| notice.channel == Channel::Push)
        .collect();
    let mut targets = store
        .push_targets(&pushes)
        .await
        .map_err(|err| err.to_string());
    (claimed.iter())
        .map(|notice| match (&mut targets, notice.channel) {
            (_, Channel::Mail) => Target::Mail,
            (Ok(targets), Channel::Push) => Target::Push(targets.remove(&notice.seq).map(Box::new)),
            (Err(err), Channel::Push) => Target::Unknown(err.clone()),
        })
        .collect()
}

/// Removes the notices done for longer than they are kept, and the links that expired.
async fn prune(store: &Store, rules: &OutboxRules) {
    let before = Timestamp::now().before(rules.keep_for);
    if let Err(err) = store.prune_notices(before, PRUNE_LIMIT).await {
        tracing::warn!(error = %err, "could not prune the notices");
    }
    if let Err(err) = store.prune_links(Timestamp::now()).await {
        tracing::warn!(error = %err, "could not forget expired links");
    }
}

/// What came of one notice, and when.
type Outcome = (ClaimedNotice, NoticeOutcome, Timestamp);

/// The server stops: nothing more is taken, the notices being sent are waited for until
/// `deadline` and what came of them kept, and those still out are let go for another server.
async fn finish(
    store: &Store,
    rules: OutboxRules,
    mut settled: Vec<Outcome>,
    mut in_flight: HashSet<i64>,
    mut outcomes: mpsc::UnboundedReceiver<Outcome>,
    deadline: Instant,
) {
    let last = deadline - crate::draining::LAST_WRITES;
    while !in_flight.is_empty() {
        match tokio::time::timeout_at(last, outcomes.recv()).await {
            Ok(Some(outcome)) => {
                in_flight.remove(&outcome.0.seq);
                settled.push(outcome);
            }
            Ok(None) | Err(_) => break,
        }
    }
    if !settled.is_empty() {
        if let Err(err) = store.notice_round(settled, rules.lease, None).await {
            tracing::warn!(error = %err, "stopping: could not keep what came of notices; they are sent again once their lease is over");
        }
    }
    if !in_flight.is_empty() {
        let left = in_flight.len();
        match store
            .release_notice_claims(in_flight.into_iter().collect())
            .await
        {
            Ok(()) => tracing::info!(
                left,
                "stopping: notices still being sent were let go for another server"
            ),
            Err(err) => {
                tracing::warn!(error = %err, "stopping: could not let go of the notices being sent; they wait for their lease")
            }
        }
    }
}

/// The shortest time between two rounds that did not take all they could.
const PACE: Duration = Duration::from_millis(25);

/// What a notice taken needs besides itself.
enum Target {
    /// A mail, made when sent.
    Mail,
    /// A push: its browser and the turn it tells of, or nothing left to say.
    Push(Option<Box<(PushSubscription, Turn)>>),
    /// A push whose browser and turn could not be read: why.
    Unknown(String),
}

/// One attempt at `notice`: what came of it.
async fn deliver(
    store: &Store,
    catalog: &Catalog,
    senders: &Senders,
    notice: &ClaimedNotice,
    target: Target,
    rules: &OutboxRules,
) -> NoticeOutcome {
    let made = match (target, notice.kind) {
        (Target::Push(target), _) => return push(catalog, senders, notice, target, rules).await,
        (Target::Unknown(err), _) => return store_failed(err),
        (Target::Mail, NoticeKind::Turns) => digest(store, catalog, senders, notice).await,
        (Target::Mail, NoticeKind::Clock) => clock(store, catalog, senders, notice).await,
        (Target::Mail, _) => kept_letter(notice),
    };
    let (letter, unsubscribe) = match made {
        Ok(made) => made,
        Err(outcome) => return outcome,
    };
    let Some(mailer) = &senders.mailer else {
        return NoticeOutcome::Failed("this server has no SMTP server set".into());
    };
    match mailer
        .send(&notice.destination, &letter, unsubscribe.as_deref())
        .await
    {
        Ok(()) => NoticeOutcome::Sent,
        Err(MailError::Permanent(why)) => NoticeOutcome::Failed(why),
        Err(MailError::Transient(why)) => again(notice, rules, why),
    }
}

/// Due again after a backoff, or failed once its retry period would be over.
fn again(notice: &ClaimedNotice, rules: &OutboxRules, why: String) -> NoticeOutcome {
    let now = Timestamp::now();
    let due = now.after(retry_delay(notice.attempts + 1, rules, rand::random()));
    match due <= notice.created_at.after(rules.retry_for) {
        true => NoticeOutcome::RetryAt(due, why),
        false => NoticeOutcome::Failed(why),
    }
}

type Made = Result<(Letter, Option<String>), NoticeOutcome>;

/// A mail whose words were kept with it.
fn kept_letter(notice: &ClaimedNotice) -> Made {
    let body = notice.body.as_deref().unwrap_or_default();
    match serde_json::from_str::<Letter>(body) {
        Ok(letter) => Ok((letter, None)),
        Err(err) => Err(NoticeOutcome::Failed(format!(
            "the mail's words cannot be read: {err}"
        ))),
    }
}

fn store_failed(err: impl std::fmt::Display) -> NoticeOutcome {
    NoticeOutcome::RetryAt(
        Timestamp::now().after(RESCAN * 5),
        format!("the database cannot be read now: {err}"),
    )
}

/// The digest: postponed within the player's period, held back when no room is left to list.
async fn digest(
    store: &Store,
    catalog: &Catalog,
    senders: &Senders,
    notice: &ClaimedNotice,
) -> Made {
    let (turns, mailed_at) = store
        .digest_of(&notice.player_id)
        .await
        .map_err(store_failed)?;
    if let Some(next) = mailed_at.map(|at| at.after(senders.every)) {
        if next > Timestamp::now() {
            return Err(NoticeOutcome::Postponed(next));
        }
    }
    // Sent only if the player has been away since some turn began, and is not looking now;
    // then it lists them all.
    let rooms: Vec<&str> = turns.iter().map(|(turn, _)| turn.room.as_str()).collect();
    let looking = senders.presence.watching(&notice.player_id, &rooms);
    if looking || !turns.iter().any(|(_, away)| *away) {
        return Err(NoticeOutcome::Held);
    }
    let mut named: Vec<(Turn, String)> = Vec::with_capacity(turns.len());
    for (turn, _) in turns {
        let name = game_name(catalog, &turn.game).await;
        named.push((turn, name));
    }
    let unsubscribe = unsubscribe_url(senders, notice, MailKind::Turns);
    let letter = compose::digest(
        &senders.public_url.get(),
        &notice.player_id,
        &named,
        &unsubscribe,
    );
    Ok((letter, Some(unsubscribe)))
}

/// The clock's warning: held back once the player has moved, or the room has no deadline left.
async fn clock(
    store: &Store,
    catalog: &Catalog,
    senders: &Senders,
    notice: &ClaimedNotice,
) -> Made {
    let room_id = notice.room_id.as_deref().unwrap_or_default();
    let room = store.room(room_id).await.map_err(store_failed)?;
    let Some(room) = room else {
        return Err(NoticeOutcome::Held);
    };
    let waiting = room
        .to_move
        .as_ref()
        .is_some_and(|to_move| to_move.contains(&notice.player_id));
    let deadline = room.trigger_timeout_at.filter(|at| *at > Timestamp::now());
    let (true, false, Some(deadline)) = (waiting, room.finished, deadline) else {
        return Err(NoticeOutcome::Held);
    };
    let name = game_name(catalog, &room.game).await;
    let title = compose::room_title(&name, &room.players, &notice.player_id);
    let unsubscribe = unsubscribe_url(senders, notice, MailKind::Clock);
    let letter = compose::clock_warning(
        &senders.public_url.get(),
        &title,
        room_id,
        deadline,
        &unsubscribe,
    );
    Ok((letter, Some(unsubscribe)))
}

/// A push that it is the player's move: held back once they have moved (no `target` then),
/// or while they look at the room; collapsed per room, kept by the push service until the
/// room's deadline.
async fn push(
    catalog: &Catalog,
    senders: &Senders,
    notice: &ClaimedNotice,
    target: Option<Box<(PushSubscription, Turn)>>,
    rules: &OutboxRules,
) -> NoticeOutcome {
    let Some(target) = target else {
        return NoticeOutcome::Held;
    };
    let (subscription, turn) = *target;
    let room_id = turn.room.as_str();
    if senders.presence.watching(&notice.player_id, &[room_id]) {
        return NoticeOutcome::Held;
    }
    let name = game_name(catalog, &turn.game).await;
    let title = compose::room_title(&name, &turn.players, &notice.player_id);
    let payload = serde_json::json!({
        "title": "Your move",
        "body": format!("Your move: {title}"),
        "url": format!("{}/#/room/{room_id}", senders.public_url.get()),
        "room": room_id,
        "version": turn.version,
    })
    .to_string();
    let left = turn.deadline.map(|at| at.since(Timestamp::now()));
    let push = Push {
        payload: payload.as_bytes(),
        topic: room_id,
        ttl: left.map_or(PUSH_KEPT, |left| left.as_secs().clamp(60, PUSH_KEPT)),
        urgency: match left {
            Some(left) if left < Duration::from_secs(3600) => "high",
            _ => "normal",
        },
    };
    match senders.pusher.push(&subscription, &push).await {
        Pushed::Sent => NoticeOutcome::Sent,
        Pushed::Gone => NoticeOutcome::Gone,
        Pushed::Refused(why) => NoticeOutcome::Failed(why),
        Pushed::Later(why) => again(notice, rules, why),
    }
}

/// How long a push service keeps a push for a browser that is away, for a room without a
/// deadline (its `TTL`): a day.
const PUSH_KEPT: u64 = 24 * 60 * 60;

fn unsubscribe_url(senders: &Senders, notice: &ClaimedNotice, kind: MailKind) -> String {
    let token = senders.unsubscribe.token(&notice.player_id, kind);
    format!(
        "{}/mail/unsubscribe?token={token}",
        senders.public_url.get()
    )
}

/// A game's name as players know it (its id, if it cannot be read).
async fn game_name(catalog: &Catalog, game: &str) -> String {
    match catalog.game_listing(game, None).await {
        Ok(listing) => listing.info.name.into_owned(),
        Err(_) => game.to_owned(),
    }
}
