//! The catalog: the games a room can play. Built-in games come from the registry; uploaded
//! ones live in the database, one row per version, each checked in the sandbox before it is
//! stored and started there when a room plays it. Their owners read their logs here.
//!
//! One stop in the life of a move: `docs/internals.md`.

mod error;
mod listing;
mod logs;
mod publishing;
mod running;

use std::sync::Arc;

use tokio::sync::watch;

pub use error::CatalogError;
pub use publishing::{
    FieldUpdate, FrontendUpload, GameUpload, Publication, MAX_DESCRIPTION_CHARS,
    MAX_FRONTEND_BYTES, MAX_NAME_CHARS, MAX_SOURCE_BYTES,
};
use running::{CurrentVersions, HostedCache};

use crate::domain::ids::PlayerId;
use crate::game::GameRegistry;
use crate::metrics::Exposition;
use crate::sandbox::{GameLogSink, SandboxPool};
use crate::store::Store;

/// Uploaded game versions kept ready to run (each holds its source, at most 1 MiB).
const CACHED_VERSIONS: usize = 64;

/// Uploaded games whose latest version is kept in memory for opening rooms (no source).
const CACHED_CURRENT: usize = 1024;

/// The games, and what runs and publishes them.
#[derive(Clone)]
pub struct Catalog {
    store: Store,
    games: Arc<GameRegistry>,
    sandbox: SandboxPool,
    hosted: Arc<HostedCache>,
    /// The version new rooms of each uploaded game open with.
    current: Arc<CurrentVersions>,
    /// Where uploaded games' log lines go, for their owners.
    logs: GameLogSink,
    /// Moves on whenever log lines have been stored.
    log_stored: Arc<watch::Sender<u64>>,
}

impl Catalog {
    /// The built-in `games`, and uploaded ones run in `sandbox`. Starts the task that stores
    /// games' log lines.
    pub fn start(store: Store, games: GameRegistry, sandbox: SandboxPool) -> Self {
        let (logs, lines) = GameLogSink::new();
        let log_stored = Arc::new(watch::Sender::new(0));
        tokio::spawn(logs::keep(store.clone(), lines, (*log_stored).clone()));
        Self {
            store,
            games: Arc::new(games),
            sandbox,
            hosted: Arc::new(HostedCache::new(CACHED_VERSIONS)),
            current: Arc::new(CurrentVersions::new(CACHED_CURRENT)),
            logs,
            log_stored,
        }
    }

    /// Who owns uploaded game `game`: [`CatalogError::GameIsBuiltin`] for a built-in one,
    /// which nobody owns.
    pub async fn owner_of(&self, game: &str) -> Result<PlayerId, CatalogError> {
        if self.games.get(game).is_some() {
            return Err(CatalogError::GameIsBuiltin(game.to_owned()));
        }
        let latest = self
            .store
            .game_version(game, None)
            .await?
            .ok_or_else(|| CatalogError::GameNotFound(game.to_owned()))?;
        Ok(latest.owner.id)
    }

    /// The built-in games.
    pub fn builtin(&self) -> &GameRegistry {
        &self.games
    }

    /// Where uploaded games' hooks run.
    pub fn sandbox(&self) -> &SandboxPool {
        &self.sandbox
    }

    /// Figures for `GET /metrics`.
    pub fn render_metrics(&self, out: &mut Exposition) {
        out.single(
            "turnhouse_game_log_lines_dropped_total",
            "counter",
            "Lines of games' logs dropped because the queue to store them was full.",
            self.logs.dropped(),
        );
        self.sandbox.render_metrics(out);
    }
}
