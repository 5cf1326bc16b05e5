//! What the webhooks slice refuses, and why.

use crate::catalog::CatalogError;
use crate::outbound::OutboundError;
use crate::problem::{ErrorKind, Problem};
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("there is no such webhook endpoint here")]
    NotFound,
    #[error("there is no such delivery for this endpoint")]
    DeliveryNotFound,
    #[error("the endpoint is disabled (it failed every delivery for the disabling period); resume it first")]
    Disabled,
    #[error("only the owner of the game `{0}` may see or change its webhooks")]
    NotYourGame(String),
    #[error("the webhook URL cannot be used: {0}")]
    BadUrl(#[from] OutboundError),
    #[error("the webhook URL is longer than {0} characters")]
    UrlTooLong(usize),
    #[error("`{0}` is not an event type one can subscribe to (see the webhooks in openapi.yaml)")]
    UnknownEventType(String),
    #[error("an endpoint takes at least one event type")]
    NoEventTypes,
    #[error("a game has at most {0} webhook endpoints")]
    TooManyEndpoints(usize),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Problem for WebhookError {
    fn wrapped(&self) -> Option<&dyn Problem> {
        match self {
            WebhookError::Catalog(err) => Some(err),
            WebhookError::Store(err) => Some(err),
            _ => None,
        }
    }

    fn classify(&self) -> (ErrorKind, &'static str) {
        use ErrorKind as K;
        match self {
            WebhookError::NotFound => (K::NotFound, "webhook_not_found"),
            WebhookError::DeliveryNotFound => (K::NotFound, "delivery_not_found"),
            WebhookError::Disabled => (K::Conflict, "webhook_disabled"),
            WebhookError::NotYourGame(_) => (K::Forbidden, "not_your_game"),
            WebhookError::BadUrl(OutboundError::NotPublic(_)) => {
                (K::Unprocessable, "destination_not_allowed")
            }
            WebhookError::BadUrl(OutboundError::NotHttps) => (K::Unprocessable, "https_required"),
            WebhookError::BadUrl(_) | WebhookError::UrlTooLong(_) => {
                (K::Unprocessable, "invalid_webhook_url")
            }
            WebhookError::UnknownEventType(_) => (K::Unprocessable, "unknown_event_type"),
            WebhookError::NoEventTypes => (K::Unprocessable, "no_event_types"),
            WebhookError::TooManyEndpoints(_) => (K::Conflict, "too_many_webhooks"),
            WebhookError::Catalog(err) => err.classify(),
            WebhookError::Store(err) => err.classify(),
        }
    }
}
