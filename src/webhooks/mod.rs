//! Webhooks: events that leave the server, signed as Standard Webhooks specifies, for the
//! operator (every event of the server) and for each game's owner (their game's rooms).
//!
//! This slice keeps the endpoints (made, listed, changed, paused, resumed, rotated, removed),
//! shows each one's delivery log, queues pings and redeliveries, and signs and sends each
//! delivery for the outbox's dispatcher ([`sender`]). See `docs/webhooks.md`.

mod error;
mod sender;
pub mod signing;

use std::time::Duration;

use serde_json::json;

pub use error::WebhookError;
pub use sender::WebhookSender;

use crate::catalog::{Catalog, CatalogError};
use crate::domain::game_id::GameId;
use crate::domain::ids::PlayerId;
use crate::domain::outgoing::Outgoing;
use crate::domain::time::Timestamp;
use crate::domain::webhooks::{
    new_endpoint_id, new_message_id, Delivery, Endpoint, EventType, EventTypes,
};
use crate::metrics::Exposition;
use crate::outbound::Destinations;
use crate::outbox::Outbox;
use crate::store::{EndpointWrite, Store};
use signing::Secret;

/// How long the previous secret still signs after a rotation.
pub const ROTATION_OVERLAP: Duration = Duration::from_secs(24 * 60 * 60);
/// Endpoints one game may have.
pub const MAX_ENDPOINTS_PER_GAME: usize = 10;
/// The longest URL kept.
const MAX_URL: usize = 2048;

/// Whose endpoints: the operator's (every event of the server), or a game's owner's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    Server,
    Game(GameId),
}

impl Scope {
    fn holds(&self, endpoint: &Endpoint) -> bool {
        match self {
            Scope::Server => endpoint.game.is_none(),
            Scope::Game(game) => endpoint.game.as_ref() == Some(game),
        }
    }
}

/// A new endpoint, with its secret: shown this once.
#[derive(Debug, Clone)]
pub struct Created {
    pub endpoint: Endpoint,
}

#[derive(Clone)]
pub struct Webhooks {
    store: Store,
    /// Who owns which game (none for an operator's command, which sees the server's only).
    catalog: Option<Catalog>,
    /// The server's outbox, told when endpoints change (none for an operator's command: the
    /// servers see the change on their next look, within a second).
    outbox: Option<Outbox>,
    destinations: Destinations,
    retry_for: Duration,
}

impl Webhooks {
    /// The webhooks of a running server.
    pub fn new(store: Store, catalog: Catalog, outbox: Outbox, destinations: Destinations) -> Self {
        Self {
            retry_for: outbox.rules().retry_for,
            store,
            catalog: Some(catalog),
            outbox: Some(outbox),
            destinations,
        }
    }

    /// The operator's endpoints, from the command line.
    pub fn for_operator(store: Store, destinations: Destinations, retry_for: Duration) -> Self {
        Self {
            store,
            catalog: None,
            outbox: None,
            destinations,
            retry_for,
        }
    }

    /// The outbox's backlog for `/metrics`: deliveries waiting for endpoints that take them,
    /// and how long past due the earliest is. Left out when the database cannot be read, so
    /// the rest of the figures still reach the scraper.
    pub async fn render_metrics(&self, out: &mut Exposition) {
        let (waiting, earliest) = match self.store.outbox_backlog().await {
            Ok(backlog) => backlog,
            Err(err) => {
                tracing::warn!(error = %err, "the outbox's backlog could not be read for /metrics");
                return;
            }
        };
        out.single(
            "turnhouse_outbox_waiting",
            "gauge",
            "Webhook deliveries waiting (due now or retrying later) for endpoints that take them: \
             not paused, not disabled.",
            waiting,
        );
        let overdue = earliest.map_or(0.0, |at| Timestamp::now().since(at).as_secs_f64());
        out.single(
            "turnhouse_outbox_overdue_seconds",
            "gauge",
            "How long past due the earliest waiting delivery is (0 when none is): one that keeps \
             growing is an outbox that does not keep up.",
            overdue,
        );
    }

    /// The scope of game `game`'s endpoints, for `caller`: theirs only if they own it.
    pub async fn game_scope(
        &self,
        caller: &PlayerId,
        game: &GameId,
    ) -> Result<Scope, WebhookError> {
        let Some(catalog) = &self.catalog else {
            return Err(WebhookError::NotYourGame(game.to_string()));
        };
        // A built-in game has no owner: only operators' endpoints take its events.
        let owner = match catalog.owner_of(game).await {
            Err(CatalogError::GameIsBuiltin(_)) => {
                return Err(WebhookError::NotYourGame(game.to_string()))
            }
            owner => owner?,
        };
        match &owner == caller {
            true => Ok(Scope::Game(game.clone())),
            false => Err(WebhookError::NotYourGame(game.to_string())),
        }
    }

    /// A new endpoint at `url` taking `types`, made by `by` (an operator on the command line:
    /// nobody).
    pub async fn create(
        &self,
        scope: &Scope,
        by: Option<&PlayerId>,
        url: &str,
        types: &[String],
    ) -> Result<Endpoint, WebhookError> {
        let url = self.check_url(url)?;
        let types = parse_types(types)?;
        if matches!(scope, Scope::Game(_))
            && self.list(scope).await?.len() >= MAX_ENDPOINTS_PER_GAME
        {
            return Err(WebhookError::TooManyEndpoints(MAX_ENDPOINTS_PER_GAME));
        }
        let endpoint = Endpoint {
            id: new_endpoint_id(),
            game: match scope {
                Scope::Server => None,
                Scope::Game(game) => Some(game.clone()),
            },
            created_by: by.map(|p| p.to_string()),
            url,
            types,
            secret: Secret::generate().text(),
            previous_secret: None,
            previous_secret_until: None,
            paused_at: None,
            disabled_at: None,
            disabled_reason: None,
            failing_since: None,
            created_at: Timestamp::now(),
        };
        self.change(EndpointWrite::Create(endpoint.clone())).await?;
        Ok(endpoint)
    }

    /// The scope's endpoints, oldest first.
    pub async fn list(&self, scope: &Scope) -> Result<Vec<Endpoint>, WebhookError> {
        let all = self.store.webhook_endpoints().await?;
        Ok(all.into_iter().filter(|e| scope.holds(e)).collect())
    }

    pub async fn get(&self, scope: &Scope, id: &str) -> Result<Endpoint, WebhookError> {
        match self.store.webhook_endpoint(id).await? {
            Some(endpoint) if scope.holds(&endpoint) => Ok(endpoint),
            _ => Err(WebhookError::NotFound),
        }
    }

    /// Changes an endpoint's URL or types (or both).
    pub async fn update(
        &self,
        scope: &Scope,
        id: &str,
        url: Option<&str>,
        types: Option<&[String]>,
    ) -> Result<Endpoint, WebhookError> {
        self.get(scope, id).await?;
        let url = url.map(|url| self.check_url(url)).transpose()?;
        let types = types.map(parse_types).transpose()?;
        let update = EndpointWrite::Update {
            id: id.to_owned(),
            url,
            types,
        };
        self.change(update).await?;
        self.get(scope, id).await
    }

    /// Holds the endpoint's deliveries until it is resumed.
    pub async fn pause(&self, scope: &Scope, id: &str) -> Result<Endpoint, WebhookError> {
        self.get(scope, id).await?;
        let at = Timestamp::now();
        self.change(EndpointWrite::Pause {
            id: id.to_owned(),
            at,
        })
        .await?;
        self.get(scope, id).await
    }

    /// Delivers again: after a pause, or after the endpoint was disabled for failing.
    pub async fn resume(&self, scope: &Scope, id: &str) -> Result<Endpoint, WebhookError> {
        self.get(scope, id).await?;
        self.change(EndpointWrite::Resume { id: id.to_owned() })
            .await?;
        self.get(scope, id).await
    }

    /// A new secret, shown this once; the previous one signs too for [`ROTATION_OVERLAP`].
    pub async fn rotate(&self, scope: &Scope, id: &str) -> Result<Endpoint, WebhookError> {
        self.get(scope, id).await?;
        let rotate = EndpointWrite::Rotate {
            id: id.to_owned(),
            secret: Secret::generate().text(),
            previous_until: Timestamp::now().after(ROTATION_OVERLAP),
        };
        self.change(rotate).await?;
        self.get(scope, id).await
    }

    /// Removes the endpoint and its deliveries.
    pub async fn delete(&self, scope: &Scope, id: &str) -> Result<(), WebhookError> {
        self.get(scope, id).await?;
        self.change(EndpointWrite::Delete { id: id.to_owned() })
            .await
    }

    /// Queues a `ping` for the endpoint alone; its delivery.
    pub async fn ping(&self, scope: &Scope, id: &str) -> Result<Delivery, WebhookError> {
        let endpoint = self.get(scope, id).await?;
        // A disabled endpoint takes nothing until it is resumed, a ping neither.
        if endpoint.disabled_at.is_some() {
            return Err(WebhookError::Disabled);
        }
        let data = json!({"endpoint": {"id": endpoint.id, "url": endpoint.url}});
        let event = Outgoing::new(EventType::Ping, Timestamp::now(), data);
        let delivery = new_message_id();
        let ping = EndpointWrite::Ping {
            id: id.to_owned(),
            event,
            delivery: delivery.clone(),
        };
        self.change(ping).await?;
        self.delivery(scope, id, &delivery).await
    }

    /// The endpoint's deliveries before `before` (a delivery's place, from an earlier page),
    /// newest first, each with its attempts.
    pub async fn deliveries(
        &self,
        scope: &Scope,
        id: &str,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<Delivery>, WebhookError> {
        self.get(scope, id).await?;
        let page = self
            .store
            .deliveries(id, before.unwrap_or(i64::MAX), limit)
            .await?;
        Ok(self.with_retry_until(page))
    }

    pub async fn delivery(
        &self,
        scope: &Scope,
        id: &str,
        delivery: &str,
    ) -> Result<Delivery, WebhookError> {
        self.get(scope, id).await?;
        let found = self.store.delivery(id, delivery).await?;
        let found = found.ok_or(WebhookError::DeliveryNotFound)?;
        Ok(self.with_retry_until(vec![found]).remove(0))
    }

    /// Delivers one event again, now, with the same `webhook-id`, for a whole retry period.
    pub async fn redeliver(
        &self,
        scope: &Scope,
        id: &str,
        delivery: &str,
    ) -> Result<Delivery, WebhookError> {
        self.get(scope, id).await?;
        let now = Timestamp::now();
        let redeliver = EndpointWrite::Redeliver {
            id: id.to_owned(),
            delivery: delivery.to_owned(),
            now,
            until: now.after(self.retry_for),
        };
        match self.change(redeliver).await {
            Err(WebhookError::NotFound) => Err(WebhookError::DeliveryNotFound),
            Err(err) => Err(err),
            Ok(()) => self.delivery(scope, id, delivery).await,
        }
    }

    /// Applies `change`, and tells the outbox; [`WebhookError::NotFound`] if what it names is
    /// not there.
    async fn change(&self, change: EndpointWrite) -> Result<(), WebhookError> {
        if !self.store.change_endpoint(change).await? {
            return Err(WebhookError::NotFound);
        }
        if let Some(outbox) = &self.outbox {
            outbox.endpoints_changed().await?;
        }
        Ok(())
    }

    fn check_url(&self, url: &str) -> Result<String, WebhookError> {
        if url.len() > MAX_URL {
            return Err(WebhookError::UrlTooLong(MAX_URL));
        }
        Ok(self.destinations.check_url(url)?.to_string())
    }

    /// Each delivery's retry period as it stands: kept when redelivered, else the server's.
    fn with_retry_until(&self, mut deliveries: Vec<Delivery>) -> Vec<Delivery> {
        let retry_for = self.retry_for;
        for delivery in &mut deliveries {
            delivery
                .retry_until
                .get_or_insert(delivery.created_at.after(retry_for));
        }
        deliveries
    }
}

/// The types named, at least one.
fn parse_types(names: &[String]) -> Result<EventTypes, WebhookError> {
    let types = EventTypes::parse_names(names.iter().map(String::as_str))
        .map_err(WebhookError::UnknownEventType)?;
    match types.is_empty() {
        true => Err(WebhookError::NoEventTypes),
        false => Ok(types),
    }
}
