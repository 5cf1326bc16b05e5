//! Webhook endpoints as the store keeps them: their changes (made, changed, paused, resumed,
//! rotated, removed; a ping or a redelivery queued for one), and the reads of them and of
//! their delivery log. The outbox's rows and their delivery are in [`super::outbox`].

use super::dialect::Dialect;
use super::outbox::{insert_rows, row_for};
use super::queue::WriteStep;
use super::sql::{Sql, Statement};
use super::types::StoreError;
use super::Store;
use crate::domain::outgoing::Outgoing;
use crate::domain::time::Timestamp;
use crate::domain::webhooks::{
    Delivery, DeliveryAttempt, DeliveryState, Endpoint, EventTypes, OutboxRow,
};

/// An endpoint, in the columns [`endpoint`] reads.
pub(super) const ENDPOINT: &str = "SELECT id, game_id, created_by, url, events, secret, \
     previous_secret, previous_secret_until, paused_at, disabled_at, disabled_reason, \
     failing_since, created_at FROM webhook_endpoints WHERE id = $1";

/// Every endpoint, oldest first.
pub(super) const ENDPOINTS: &str = "SELECT id, game_id, created_by, url, events, secret, \
     previous_secret, previous_secret_until, paused_at, disabled_at, disabled_reason, \
     failing_since, created_at FROM webhook_endpoints ORDER BY created_at, id";

pub(super) const INSERT_ENDPOINT: &str = "INSERT INTO webhook_endpoints (id, game_id, \
     created_by, url, events, secret, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// Endpoint `$1`'s URL (`$2`, unless null) and types (`$3`, unless null).
pub(super) const UPDATE_ENDPOINT: &str = "UPDATE webhook_endpoints \
     SET url = coalesce($2, url), events = coalesce($3, events) WHERE id = $1 RETURNING id";

pub(super) const PAUSE_ENDPOINT: &str = "UPDATE webhook_endpoints \
     SET paused_at = coalesce(paused_at, $2) WHERE id = $1 RETURNING id";

/// Resumes endpoint `$1`, enabling it again if it was disabled.
pub(super) const RESUME_ENDPOINT: &str = "UPDATE webhook_endpoints SET paused_at = NULL, \
     disabled_at = NULL, disabled_reason = NULL, failing_since = NULL WHERE id = $1 RETURNING id";

/// A new secret `$2` for endpoint `$1`, the old one signing too until `$3`.
pub(super) const ROTATE_SECRET: &str = "UPDATE webhook_endpoints SET previous_secret = secret, \
     previous_secret_until = $3, secret = $2 WHERE id = $1 RETURNING id";

pub(super) const DELETE_ENDPOINT: &str = "DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id";

/// The columns of a delivery, as [`delivery`] reads them.
pub(super) const DELIVERIES: &str = "SELECT seq, id, endpoint_id, type, room_id, state, \
     created_at, due_at, retry_until, attempts, last_status FROM outbox \
     WHERE endpoint_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3";

pub(super) const DELIVERY: &str = "SELECT seq, id, endpoint_id, type, room_id, state, \
     created_at, due_at, retry_until, attempts, last_status FROM outbox \
     WHERE endpoint_id = $1 AND id = $2";

/// The attempts at endpoint `$1`'s deliveries `$2` to `$3` (by `seq`).
pub(super) const ATTEMPTS: &str = "SELECT a.outbox_seq, a.attempt, a.at, a.status, \
     a.latency_ms, a.response, a.error FROM outbox_attempts a \
     JOIN outbox o ON o.seq = a.outbox_seq \
     WHERE o.endpoint_id = $1 AND a.outbox_seq BETWEEN $2 AND $3 \
     ORDER BY a.outbox_seq, a.attempt";

/// Delivery `$2` of endpoint `$1` due again at `$3`, tried until `$4`.
/// The deliveries waiting for endpoints that take them now (not paused, not disabled), and
/// when the earliest of them was due: a backlog that only grows, or an earliest due long past,
/// is an outbox that does not keep up.
pub(super) const OUTBOX_BACKLOG: &str = "SELECT count(*) AS waiting, min(o.due_at) AS earliest \
    FROM outbox o JOIN webhook_endpoints e ON e.id = o.endpoint_id \
    WHERE o.due_at IS NOT NULL AND e.paused_at IS NULL AND e.disabled_at IS NULL";

pub(super) const REDELIVER: &str = "UPDATE outbox SET state = 'pending', due_at = $3, \
     retry_until = $4, claimed_until = NULL, done_at = NULL \
     WHERE endpoint_id = $1 AND id = $2 RETURNING seq";

pub(super) fn endpoint<D: Sql>(row: &D::Row) -> Result<Endpoint, StoreError> {
    let events = D::text(row, "events")?;
    Ok(Endpoint {
        id: D::text(row, "id")?,
        game: D::maybe_text(row, "game_id")?.map(Into::into),
        created_by: D::maybe_text(row, "created_by")?,
        url: D::text(row, "url")?,
        types: EventTypes::parse_list(&events).map_err(|name| {
            StoreError::Corrupt(format!(
                "an endpoint takes `{name}`, which is no event type"
            ))
        })?,
        secret: D::text(row, "secret")?,
        previous_secret: D::maybe_text(row, "previous_secret")?,
        previous_secret_until: D::maybe_time(row, "previous_secret_until")?,
        paused_at: D::maybe_time(row, "paused_at")?,
        disabled_at: D::maybe_time(row, "disabled_at")?,
        disabled_reason: D::maybe_text(row, "disabled_reason")?,
        failing_since: D::maybe_time(row, "failing_since")?,
        created_at: D::time(row, "created_at")?,
    })
}

fn delivery<D: Sql>(row: &D::Row) -> Result<Delivery, StoreError> {
    let state = D::text(row, "state")?;
    Ok(Delivery {
        seq: D::int(row, "seq")?,
        id: D::text(row, "id")?,
        endpoint_id: D::text(row, "endpoint_id")?,
        kind: D::text(row, "type")?,
        room_id: D::maybe_text(row, "room_id")?,
        state: DeliveryState::parse(&state)
            .ok_or_else(|| StoreError::Corrupt(format!("a delivery is `{state}`")))?,
        created_at: D::time(row, "created_at")?,
        next_attempt_at: D::maybe_time(row, "due_at")?,
        retry_until: D::maybe_time(row, "retry_until")?,
        attempts: D::int(row, "attempts")?,
        last_status: D::maybe_int(row, "last_status")?,
        attempt_log: Vec::new(),
    })
}

fn attempt<D: Sql>(row: &D::Row) -> Result<(i64, DeliveryAttempt), StoreError> {
    Ok((
        D::int(row, "outbox_seq")?,
        DeliveryAttempt {
            attempt: D::int(row, "attempt")?,
            at: D::time(row, "at")?,
            status: D::maybe_int(row, "status")?,
            latency_ms: D::int(row, "latency_ms")?,
            response: D::text(row, "response")?,
            error: D::maybe_text(row, "error")?,
        },
    ))
}

/// A change to an endpoint.
pub enum EndpointWrite {
    Create(Endpoint),
    Update {
        id: String,
        url: Option<String>,
        types: Option<EventTypes>,
    },
    Pause {
        id: String,
        at: Timestamp,
    },
    Resume {
        id: String,
    },
    Rotate {
        id: String,
        secret: String,
        previous_until: Timestamp,
    },
    Delete {
        id: String,
    },
    /// A ping, for the endpoint alone, as delivery `delivery`.
    Ping {
        id: String,
        event: Outgoing,
        delivery: String,
    },
    /// A delivery due again now, tried until `until`.
    Redeliver {
        id: String,
        delivery: String,
        now: Timestamp,
        until: Timestamp,
    },
}

/// Whether the endpoint (or delivery) the write names was there.
impl WriteStep for EndpointWrite {
    type Output = bool;

    async fn apply<D: Dialect>(&self, conn: &mut D::Connection) -> Result<bool, StoreError> {
        let found = |row: Option<D::Row>| Ok(row.is_some());
        match self {
            EndpointWrite::Create(e) => {
                let insert = Statement::new(INSERT_ENDPOINT)
                    .bind(e.id.as_str())
                    .bind(e.game.as_ref().map(|g| g.to_string()))
                    .bind(e.created_by.clone())
                    .bind(e.url.as_str())
                    .bind(e.types.text())
                    .bind(e.secret.as_str())
                    .bind(e.created_at);
                D::execute(conn, insert).await?;
                Ok(true)
            }
            EndpointWrite::Update { id, url, types } => {
                let update = Statement::new(UPDATE_ENDPOINT)
                    .bind(id.as_str())
                    .bind(url.clone())
                    .bind(types.map(EventTypes::text));
                found(D::fetch_optional(conn, update).await?)
            }
            EndpointWrite::Pause { id, at } => {
                let pause = Statement::new(PAUSE_ENDPOINT).bind(id.as_str()).bind(*at);
                found(D::fetch_optional(conn, pause).await?)
            }
            EndpointWrite::Resume { id } => {
                let resume = Statement::new(RESUME_ENDPOINT).bind(id.as_str());
                found(D::fetch_optional(conn, resume).await?)
            }
            EndpointWrite::Rotate {
                id,
                secret,
                previous_until,
            } => {
                let rotate = Statement::new(ROTATE_SECRET)
                    .bind(id.as_str())
                    .bind(secret.as_str())
                    .bind(*previous_until);
                found(D::fetch_optional(conn, rotate).await?)
            }
            EndpointWrite::Delete { id } => {
                let delete = Statement::new(DELETE_ENDPOINT).bind(id.as_str());
                found(D::fetch_optional(conn, delete).await?)
            }
            EndpointWrite::Ping {
                id,
                event,
                delivery,
            } => {
                let row = OutboxRow {
                    id: delivery.clone(),
                    ..row_for(event, id)
                };
                insert_rows::<D>(conn, &[row]).await?;
                Ok(true)
            }
            EndpointWrite::Redeliver {
                id,
                delivery,
                now,
                until,
            } => {
                let redeliver = Statement::new(REDELIVER)
                    .bind(id.as_str())
                    .bind(delivery.as_str())
                    .bind(*now)
                    .bind(*until);
                found(D::fetch_optional(conn, redeliver).await?)
            }
        }
    }
}

/// The endpoints' part of the store.
impl Store {
    /// Changes an endpoint (or queues a ping or a redelivery to it): whether what the change
    /// names was there.
    pub async fn change_endpoint(&self, change: EndpointWrite) -> Result<bool, StoreError> {
        self.outbox_write(change).await
    }

    pub async fn webhook_endpoint(&self, id: &str) -> Result<Option<Endpoint>, StoreError> {
        read!(self, |pool| read_endpoint(pool, id))
    }

    /// Every endpoint, oldest first.
    pub async fn webhook_endpoints(&self) -> Result<Vec<Endpoint>, StoreError> {
        read!(self, |pool| read_endpoints(pool))
    }

    /// Endpoint `endpoint`'s deliveries before `before` (by `seq`), newest first, at most
    /// `limit`, each with its attempts.
    pub async fn deliveries(
        &self,
        endpoint: &str,
        before: i64,
        limit: i64,
    ) -> Result<Vec<Delivery>, StoreError> {
        read!(self, |pool| read_deliveries(pool, endpoint, before, limit))
    }

    /// How many deliveries wait for endpoints that take them, and when the earliest was due.
    pub async fn outbox_backlog(&self) -> Result<(i64, Option<Timestamp>), StoreError> {
        read!(self, |pool| read_backlog(pool))
    }

    /// One delivery of an endpoint, with its attempts.
    pub async fn delivery(&self, endpoint: &str, id: &str) -> Result<Option<Delivery>, StoreError> {
        read!(self, |pool| read_delivery(pool, endpoint, id))
    }
}

async fn read_endpoint<D: Dialect>(
    pool: &sqlx::Pool<D>,
    id: &str,
) -> Result<Option<Endpoint>, StoreError> {
    let mut conn = pool.acquire().await?;
    let row = D::fetch_optional(&mut conn, Statement::new(ENDPOINT).bind(id)).await?;
    row.as_ref().map(endpoint::<D>).transpose()
}

async fn read_endpoints<D: Dialect>(pool: &sqlx::Pool<D>) -> Result<Vec<Endpoint>, StoreError> {
    let mut conn = pool.acquire().await?;
    let rows = D::fetch_all(&mut conn, Statement::new(ENDPOINTS)).await?;
    rows.iter().map(endpoint::<D>).collect()
}

async fn read_backlog<D: Dialect>(
    pool: &sqlx::Pool<D>,
) -> Result<(i64, Option<Timestamp>), StoreError> {
    let mut conn = pool.acquire().await?;
    let row = D::fetch_optional(&mut conn, Statement::new(OUTBOX_BACKLOG)).await?;
    let Some(row) = row else { return Ok((0, None)) };
    Ok((D::int(&row, "waiting")?, D::maybe_time(&row, "earliest")?))
}

async fn read_deliveries<D: Dialect>(
    pool: &sqlx::Pool<D>,
    endpoint: &str,
    before: i64,
    limit: i64,
) -> Result<Vec<Delivery>, StoreError> {
    let mut conn = pool.acquire().await?;
    let page = Statement::new(DELIVERIES)
        .bind(endpoint)
        .bind(before)
        .bind(limit);
    let rows = D::fetch_all(&mut conn, page).await?;
    let mut deliveries: Vec<Delivery> = rows.iter().map(delivery::<D>).collect::<Result<_, _>>()?;
    with_attempts::<D>(&mut conn, endpoint, &mut deliveries).await?;
    Ok(deliveries)
}

async fn read_delivery<D: Dialect>(
    pool: &sqlx::Pool<D>,
    endpoint: &str,
    id: &str,
) -> Result<Option<Delivery>, StoreError> {
    let mut conn = pool.acquire().await?;
    let one = Statement::new(DELIVERY).bind(endpoint).bind(id);
    let Some(row) = D::fetch_optional(&mut conn, one).await? else {
        return Ok(None);
    };
    let mut deliveries = vec![delivery::<D>(&row)?];
    with_attempts::<D>(&mut conn, endpoint, &mut deliveries).await?;
    Ok(deliveries.pop())
}

/// Fills in each delivery's attempts.
async fn with_attempts<D: Dialect>(
    conn: &mut D::Connection,
    endpoint: &str,
    deliveries: &mut [Delivery],
) -> Result<(), StoreError> {
    let (Some(low), Some(high)) = (
        deliveries.iter().map(|d| d.seq).min(),
        deliveries.iter().map(|d| d.seq).max(),
    ) else {
        return Ok(());
    };
    let attempts = Statement::new(ATTEMPTS).bind(endpoint).bind(low).bind(high);
    for row in D::fetch_all(conn, attempts).await? {
        let (seq, attempt) = attempt::<D>(&row)?;
        if let Some(delivery) = deliveries.iter_mut().find(|d| d.seq == seq) {
            delivery.attempt_log.push(attempt);
        }
    }
    Ok(())
}
