//! What the notifications slice refuses, and why.

use crate::problem::{ErrorKind, Problem};
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum NotificationError {
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Problem for NotificationError {
    fn wrapped(&self) -> Option<&dyn Problem> {
        match self {
            NotificationError::Store(err) => Some(err),
        }
    }

    fn classify(&self) -> (ErrorKind, &'static str) {
        match self {
            NotificationError::Store(err) => err.classify(),
        }
    }
}
