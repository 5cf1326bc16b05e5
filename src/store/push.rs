//! The browsers players turned notifications on in: each a Push API subscription, where its
//! pushes go and the keys that encrypt them. A subscription the push service says is gone is
//! removed when that answer is settled (`notices.rs`).

use sqlx::Pool;

use std::collections::HashMap;

use super::dialect::{Dialect, SetSql};
use super::queue::{Job, WriteStep};
use super::sets::set_statements;
use super::sql::Statement;
use super::turns::{turn_of, Turn};
use super::types::StoreError;
use super::Store;
use crate::domain::ids::PlayerId;
use crate::domain::notices::ClaimedNotice;
use crate::domain::time::Timestamp;

/// A browser's subscription, one row per endpoint: a browser subscribing again, or for another
/// player, replaces it. Its id, whether new or kept.
pub(super) const UPSERT_SUBSCRIPTION: &str = "INSERT INTO push_subscriptions (id, player_id, \
     endpoint, p256dh, auth, created_at) VALUES ($1, $2, $3, $4, $5, $6) \
     ON CONFLICT (endpoint) DO UPDATE SET player_id = excluded.player_id, \
     p256dh = excluded.p256dh, auth = excluded.auth RETURNING id";

/// How many browsers player `$1` has.
pub(super) const SUBSCRIPTION_COUNT: &str =
    "SELECT count(*) AS n FROM push_subscriptions WHERE player_id = $1";

/// Player `$1`'s browsers, oldest first.
pub(super) const SUBSCRIPTIONS_OF: &str = "SELECT id, player_id, endpoint, p256dh, auth, \
     created_at FROM push_subscriptions WHERE player_id = $1 ORDER BY created_at, id";

/// For each push taken (`seq`, to browser `subscription` of `player_id`, about `room_id`): the
/// browser and the room, if the browser is still that player's and the room still waits on
/// their move (as `GET /players/me/turns` has it); a push missing from the answer has nothing
/// left to say. One read for all the pushes a claim took.
pub(super) const PUSH_TARGETS: SetSql = SetSql {
    columns: "seq, subscription, player_id, room_id",
    statement: "SELECT v.seq, s.id AS subscription_id, s.player_id, s.endpoint, s.p256dh, s.auth, \
         s.created_at AS subscribed_at, r.id, r.game, r.version, CAST(r.players AS TEXT) AS players, \
         r.trigger_timeout_at, r.clock_move_seconds, (r.turns ->> m.player_id) AS turn_since \
         FROM v \
         JOIN push_subscriptions s ON s.id = v.subscription AND s.player_id = v.player_id \
         JOIN room_players m ON m.room_id = v.room_id AND m.player_id = v.player_id \
         JOIN rooms r ON r.id = m.room_id \
         WHERE (r.turns ->> m.player_id) IS NOT NULL AND m.active = true \
         AND r.finished = false",
};

/// Player `$1`'s subscription `$2`, removed.
pub(super) const REMOVE_SUBSCRIPTION: &str =
    "DELETE FROM push_subscriptions WHERE player_id = $1 AND id = $2 RETURNING id";

/// A browser's subscription as kept.
#[derive(Debug, Clone, PartialEq)]
pub struct PushSubscription {
    pub id: String,
    pub player_id: PlayerId,
    pub endpoint: String,
    pub p256dh: String,
    pub auth: String,
    pub created_at: Timestamp,
}

/// What the writer does about subscriptions.
pub(super) enum PushWrite {
    /// Keeps it, unless its player has `max` other browsers already (`None` then).
    Add {
        subscription: PushSubscription,
        max: i64,
    },
    Remove {
        player_id: PlayerId,
        id: String,
    },
}

impl WriteStep for PushWrite {
    /// The subscription's id (added), or whether there was one (removed).
    type Output = Option<String>;

    async fn apply<D: Dialect>(
        &self,
        conn: &mut D::Connection,
    ) -> Result<Option<String>, StoreError> {
        match self {
            PushWrite::Add { subscription, max } => {
                let count =
                    Statement::new(SUBSCRIPTION_COUNT).bind(subscription.player_id.as_str());
                let row = D::fetch_optional(conn, count).await?;
                let count = row.map(|row| D::int(&row, "n")).transpose()?.unwrap_or(0);
                if count >= *max {
                    return Ok(None);
                }
                let insert = Statement::new(UPSERT_SUBSCRIPTION)
                    .bind(subscription.id.as_str())
                    .bind(subscription.player_id.as_str())
                    .bind(subscription.endpoint.as_str())
                    .bind(subscription.p256dh.as_str())
                    .bind(subscription.auth.as_str())
                    .bind(subscription.created_at);
                let row = D::fetch_optional(conn, insert).await?;
                row.map(|row| D::text(&row, "id")).transpose()
            }
            PushWrite::Remove { player_id, id } => {
                let statement = Statement::new(REMOVE_SUBSCRIPTION)
                    .bind(player_id.as_str())
                    .bind(id.as_str());
                let row = D::fetch_optional(conn, statement).await?;
                row.map(|row| D::text(&row, "id")).transpose()
            }
        }
    }
}

fn subscription<D: Dialect>(row: &D::Row) -> Result<PushSubscription, StoreError> {
    Ok(PushSubscription {
        id: D::text(row, "id")?,
        player_id: D::text(row, "player_id")?.into(),
        endpoint: D::text(row, "endpoint")?,
        p256dh: D::text(row, "p256dh")?,
        auth: D::text(row, "auth")?,
        created_at: D::time(row, "created_at")?,
    })
}

async fn subscriptions_of<D: Dialect>(
    pool: &Pool<D>,
    player: &str,
) -> Result<Vec<PushSubscription>, StoreError> {
    let statement = Statement::new(SUBSCRIPTIONS_OF).bind(player);
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    rows.iter().map(subscription::<D>).collect()
}

/// Where each push of `pushes` goes and the turn it tells of, by the push's `seq`.
async fn push_targets<D: Dialect>(
    pool: &Pool<D>,
    pushes: &[&ClaimedNotice],
) -> Result<HashMap<i64, (PushSubscription, Turn)>, StoreError> {
    let statements = set_statements::<D, _>(PUSH_TARGETS, pushes, |row, push| {
        row.put("seq", push.seq);
        row.put("subscription", push.destination.as_str());
        row.put("player_id", push.player_id.as_str());
        row.put("room_id", push.room_id.as_deref().unwrap_or_default());
    });
    let mut targets = HashMap::with_capacity(pushes.len());
    for statement in statements {
        for row in D::fetch_all(&mut *pool.acquire().await?, statement).await? {
            let subscription = PushSubscription {
                id: D::text(&row, "subscription_id")?,
                player_id: D::text(&row, "player_id")?.into(),
                endpoint: D::text(&row, "endpoint")?,
                p256dh: D::text(&row, "p256dh")?,
                auth: D::text(&row, "auth")?,
                created_at: D::time(&row, "subscribed_at")?,
            };
            targets.insert(D::int(&row, "seq")?, (subscription, turn_of::<D>(&row)?));
        }
    }
    Ok(targets)
}

/// The store's side of push subscriptions.
impl Store {
    /// Keeps a browser's subscription (replacing the one of the same endpoint): its id, or
    /// `None` if its player has `max` browsers already.
    pub async fn add_push_subscription(
        &self,
        subscription: PushSubscription,
        max: i64,
    ) -> Result<Option<String>, StoreError> {
        self.push_write(PushWrite::Add { subscription, max }).await
    }

    /// Removes one of the player's subscriptions: whether there was one.
    pub async fn remove_push_subscription(
        &self,
        player_id: &PlayerId,
        id: &str,
    ) -> Result<bool, StoreError> {
        let write = PushWrite::Remove {
            player_id: player_id.clone(),
            id: id.to_owned(),
        };
        Ok(self.push_write(write).await?.is_some())
    }

    /// The player's subscriptions, oldest first.
    pub async fn push_subscriptions_of(
        &self,
        player: &str,
    ) -> Result<Vec<PushSubscription>, StoreError> {
        read!(self, |pool| subscriptions_of(pool, player))
    }

    /// Where each of `pushes` goes and the turn it tells of, by the push's `seq`: those
    /// missing have nothing left to say (the turn is over, or the browser gone).
    pub async fn push_targets(
        &self,
        pushes: &[&ClaimedNotice],
    ) -> Result<HashMap<i64, (PushSubscription, Turn)>, StoreError> {
        if pushes.is_empty() {
            return Ok(HashMap::new());
        }
        read!(self, |pool| push_targets(pool, pushes))
    }

    async fn push_write(&self, write: PushWrite) -> Result<Option<String>, StoreError> {
        let (job, reply) = Job::new(write);
        let (_, output) = self.writer.write(job.into(), reply).await?;
        Ok(output)
    }
}
