//! The browsers players turned notifications on in: each a Push API subscription, where its
//! pushes go and the keys that encrypt them. A subscription the push service says is gone is
//! removed when that answer is settled (`notices.rs`).

use sqlx::Pool;

use super::dialect::Dialect;
use super::queue::{Job, WriteStep};
use super::sql::Statement;
use super::types::StoreError;
use super::Store;
use crate::domain::ids::PlayerId;
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

/// Subscription `$1`.
pub(super) const SUBSCRIPTION: &str = "SELECT id, player_id, endpoint, p256dh, auth, \
     created_at FROM push_subscriptions WHERE id = $1";

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

async fn one<D: Dialect>(pool: &Pool<D>, id: &str) -> Result<Option<PushSubscription>, StoreError> {
    let statement = Statement::new(SUBSCRIPTION).bind(id);
    let row = D::fetch_optional(&mut *pool.acquire().await?, statement).await?;
    row.as_ref().map(subscription::<D>).transpose()
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

    /// One subscription.
    pub async fn push_subscription(
        &self,
        id: &str,
    ) -> Result<Option<PushSubscription>, StoreError> {
        read!(self, |pool| one(pool, id))
    }

    async fn push_write(&self, write: PushWrite) -> Result<Option<String>, StoreError> {
        let (job, reply) = Job::new(write);
        let (_, output) = self.writer.write(job.into(), reply).await?;
        Ok(output)
    }
}
