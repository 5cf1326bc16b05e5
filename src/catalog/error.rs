use serde_json::{json, Map, Value};

use crate::frontend::FrontendError;
use crate::game::at_line;
use crate::problem::{ErrorKind, Problem};
use crate::store::StoreError;

/// Why the catalog refused or could not answer. Whatever the variant, nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("there is no game `{0}`")]
    GameNotFound(String),
    #[error("this server no longer hosts the game `{0}` this room plays")]
    GameUnavailable(String),
    #[error("there is no version {version} of the game `{game}`")]
    GameVersionNotFound { game: String, version: i64 },
    #[error("{}", frontend_missing(game, *version))]
    FrontendNotFound { game: String, version: Option<i64> },
    #[error("version {version} of the game `{game}` has no file `{path}` in its frontend")]
    FrontendFileNotFound {
        game: String,
        version: i64,
        path: String,
    },
    #[error("the frontend cannot be published: {0}")]
    InvalidFrontend(#[from] FrontendError),
    #[error("`{0}` is a built-in game; it has no uploaded source and cannot be replaced")]
    GameIsBuiltin(String),
    #[error("the game `{0}` belongs to another player; only its owner can publish it")]
    NotTheOwner(String),
    #[error("only the owner of an uploaded game may read its logs, and `{0}` is not yours")]
    LogsNotYours(String),
    #[error("the game's code cannot be hosted: {message}{}", at_line(*line))]
    InvalidGameCode { message: String, line: Option<u32> },
    #[error("{0}")]
    InvalidGameSettings(String),
    #[error("the game `{0}` was unpublished by an admin: it opens no new rooms")]
    GameUnpublished(String),
    #[error("games cannot be run right now: {0}")]
    SandboxUnavailable(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Problem for CatalogError {
    fn wrapped(&self) -> Option<&dyn Problem> {
        match self {
            CatalogError::Store(err) => Some(err),
            _ => None,
        }
    }

    fn classify(&self) -> (ErrorKind, &'static str) {
        use ErrorKind as K;
        match self {
            CatalogError::GameNotFound(_) => (K::NotFound, "game_not_found"),
            CatalogError::GameUnavailable(_) => (K::Unavailable, "game_unavailable"),
            CatalogError::GameVersionNotFound { .. } => (K::NotFound, "game_version_not_found"),
            CatalogError::FrontendNotFound { .. } => (K::NotFound, "frontend_not_found"),
            CatalogError::FrontendFileNotFound { .. } => (K::NotFound, "frontend_file_not_found"),
            CatalogError::InvalidFrontend(_) => (K::Unprocessable, "invalid_frontend"),
            CatalogError::GameIsBuiltin(_) => (K::Conflict, "game_is_builtin"),
            CatalogError::NotTheOwner(_) | CatalogError::LogsNotYours(_) => {
                (K::Forbidden, "not_the_owner")
            }
            CatalogError::InvalidGameCode { .. } => (K::Unprocessable, "invalid_game_code"),
            CatalogError::InvalidGameSettings(_) => (K::Unprocessable, "invalid_game_settings"),
            CatalogError::GameUnpublished(_) => (K::Conflict, "game_unpublished"),
            CatalogError::SandboxUnavailable(_) => (K::Unavailable, "sandbox_unavailable"),
            CatalogError::Store(err) => err.classify(),
        }
    }

    fn extensions(&self, extra: &mut Map<String, Value>) {
        match self {
            CatalogError::InvalidGameCode {
                line: Some(line), ..
            } => {
                extra.insert("line".into(), json!(line));
            }
            CatalogError::InvalidFrontend(err) => {
                if let Some(entry) = &err.entry {
                    extra.insert("entry".into(), json!(entry));
                }
            }
            _ => {}
        }
    }

    fn retry_after(&self) -> Option<u64> {
        matches!(self, CatalogError::SandboxUnavailable(_)).then_some(1)
    }

    fn public_detail(&self) -> Option<String> {
        matches!(self, CatalogError::SandboxUnavailable(_))
            .then(|| "uploaded games cannot be run right now; try again later".into())
    }
}

fn frontend_missing(game: &str, version: Option<i64>) -> String {
    match version {
        Some(version) => {
            format!("version {version} of the game `{game}` has no frontend of its own")
        }
        None => format!("the built-in game `{game}` has no frontend of its own; the page draws it"),
    }
}
