//! What the notifications slice refuses, and why.

use crate::outbound::OutboundError;
use crate::problem::{ErrorKind, Problem};
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum NotificationError {
    #[error("you have no verified e-mail address: set one first (PUT /players/me/email)")]
    NoAddress,
    #[error("that link does not work: it was not made by this server")]
    InvalidLink,
    #[error("the push subscription cannot be used: {0}")]
    InvalidSubscription(String),
    #[error("the push endpoint cannot be used: {0}")]
    BadEndpoint(#[from] OutboundError),
    #[error("a player turns notifications on in at most {0} browsers; turn them off in one first")]
    TooManyBrowsers(i64),
    #[error("you have no browser with notifications on with that id")]
    SubscriptionNotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Problem for NotificationError {
    fn wrapped(&self) -> Option<&dyn Problem> {
        match self {
            NotificationError::Store(err) => Some(err),
            _ => None,
        }
    }

    fn classify(&self) -> (ErrorKind, &'static str) {
        match self {
            NotificationError::NoAddress => (ErrorKind::Conflict, "no_email"),
            NotificationError::InvalidLink => (ErrorKind::Unprocessable, "invalid_link"),
            NotificationError::InvalidSubscription(_)
            | NotificationError::BadEndpoint(OutboundError::NotAUrl(_)) => {
                (ErrorKind::Unprocessable, "invalid_push_subscription")
            }
            NotificationError::BadEndpoint(OutboundError::NotHttps) => {
                (ErrorKind::Unprocessable, "https_required")
            }
            NotificationError::BadEndpoint(_) => {
                (ErrorKind::Unprocessable, "destination_not_allowed")
            }
            NotificationError::TooManyBrowsers(_) => {
                (ErrorKind::Conflict, "too_many_push_subscriptions")
            }
            NotificationError::SubscriptionNotFound => {
                (ErrorKind::NotFound, "push_subscription_not_found")
            }
            NotificationError::Store(err) => err.classify(),
        }
    }
}
