//! What the notifications slice refuses, and why.

use crate::problem::{ErrorKind, Problem};
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum NotificationError {
    #[error("you have no verified e-mail address: set one first (PUT /players/me/email)")]
    NoAddress,
    #[error("that link does not work: it was not made by this server")]
    InvalidLink,
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
            NotificationError::Store(err) => err.classify(),
        }
    }
}
