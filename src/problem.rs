//! What every slice's error shares, so that the API renders any of them the same way: a kind
//! (which the API turns into a status), a stable code, and what more a client is told.
//!
//! Each slice keeps its own error enum; the API knows each one only through [`Problem`].
//!
//! One stop in the life of a move: `docs/internals.md`.

use serde_json::{Map, Value};

use crate::store::{StorageFault, StoreError};

/// What kind of refusal or failure an error is, for a caller to put in its own terms (the API
/// gives each an HTTP status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    NotFound,
    /// The credentials given do not sign anyone in.
    Unauthorized,
    Forbidden,
    /// The room or game is not in a state that allows it.
    Conflict,
    /// Understood, and refused for what it says.
    Unprocessable,
    /// The version pinned is not the room's.
    PreconditionFailed,
    /// Passes by itself: try again later.
    Unavailable,
    /// The game's own code failed.
    GameFault,
    Internal,
}

/// An error a slice gives its callers.
pub trait Problem: std::error::Error {
    /// The problem this one carries from elsewhere (a store failure, another slice's refusal),
    /// which then says everything about it.
    fn wrapped(&self) -> Option<&dyn Problem> {
        None
    }

    /// The kind and the stable, documented code, from one match so the two never drift apart
    /// (asked only of a problem that wraps none).
    fn classify(&self) -> (ErrorKind, &'static str);

    /// Members added to the problem object beyond the standard ones.
    fn extensions(&self, _extra: &mut Map<String, Value>) {}

    /// Seconds a client should wait before trying again, for problems that pass by themselves.
    fn retry_after(&self) -> Option<u64> {
        None
    }

    /// What a client is told, when it is not the error's own text (server-side failures are
    /// not described beyond their kind).
    fn public_detail(&self) -> Option<String> {
        None
    }

    /// The stable, documented name of the problem.
    fn code(&self) -> &'static str
    where
        Self: Sized,
    {
        innermost(self).classify().1
    }
}

/// The problem that says everything about `problem`: the one it carries, if it carries one.
pub fn innermost(mut problem: &dyn Problem) -> &dyn Problem {
    while let Some(inner) = problem.wrapped() {
        problem = inner;
    }
    problem
}

/// The store's failures, whichever slice met them.
impl Problem for StoreError {
    fn classify(&self) -> (ErrorKind, &'static str) {
        match self.fault() {
            Some(StorageFault::Busy) => (ErrorKind::Unavailable, "storage_busy"),
            Some(StorageFault::Unavailable) => (ErrorKind::Unavailable, "storage_unavailable"),
            None => (ErrorKind::Internal, "internal"),
        }
    }

    fn retry_after(&self) -> Option<u64> {
        match self.fault()? {
            StorageFault::Busy => Some(2),
            StorageFault::Unavailable => Some(10),
        }
    }

    fn public_detail(&self) -> Option<String> {
        Some(match self.fault() {
            Some(StorageFault::Busy) => "the database is locked by another connection; \
                                         nothing was changed; try again shortly"
                .into(),
            Some(StorageFault::Unavailable) => "the database cannot be reached or written \
                                                right now (stopping, read-only, or out of \
                                                disk or connections); nothing was changed; \
                                                try again later"
                .into(),
            None => "the server could not complete the request".into(),
        })
    }
}
