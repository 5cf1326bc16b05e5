use crate::accounts::AccountError;
use crate::catalog::CatalogError;
use crate::engine::EngineError;
use crate::problem::{ErrorKind, Problem};
use crate::store::StoreError;

/// Why an admin's action was refused. Whatever the variant, nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum ModerationError {
    #[error("only an admin may do this")]
    NotAdmin,
    #[error("publishing games on this server is open to {0} only")]
    UploadsRestricted(&'static str),
    #[error("there is no player with that id")]
    PlayerNotFound,
    #[error("the username `{0}` is taken")]
    UsernameTaken(String),
    #[error(transparent)]
    Room(#[from] EngineError),
    #[error(transparent)]
    Account(#[from] AccountError),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Problem for ModerationError {
    fn wrapped(&self) -> Option<&dyn Problem> {
        match self {
            ModerationError::Room(err) => Some(err),
            ModerationError::Account(err) => Some(err),
            ModerationError::Catalog(err) => Some(err),
            ModerationError::Store(err) => Some(err),
            _ => None,
        }
    }

    fn classify(&self) -> (ErrorKind, &'static str) {
        use ErrorKind as K;
        match self {
            ModerationError::NotAdmin => (K::Forbidden, "not_admin"),
            ModerationError::UploadsRestricted(_) => (K::Forbidden, "uploads_restricted"),
            ModerationError::PlayerNotFound => (K::NotFound, "player_not_found"),
            ModerationError::UsernameTaken(_) => (K::Conflict, "username_taken"),
            ModerationError::Room(err) => err.classify(),
            ModerationError::Account(err) => err.classify(),
            ModerationError::Catalog(err) => err.classify(),
            ModerationError::Store(err) => err.classify(),
        }
    }
}
