//! The game a room plays: built in, or an uploaded version started in the sandbox, kept in a
//! small cache by (game, version).
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::sync::Arc;

use super::{Catalog, CatalogError};
use crate::cache::{BoundedCache, WhileAlone};
use crate::domain::records::{GameVersionRecord, Room};
use crate::game::Game;
use crate::sandbox::HostedGame;

/// Uploaded game versions ready to run, by (id, version), the most recently used kept.
pub type HostedCache = BoundedCache<(String, i64), Arc<HostedGame>>;

/// The latest version of each uploaded game new rooms were opened of lately, by id.
pub type CurrentVersions = WhileAlone<String, Arc<GameVersionRecord>>;

impl Catalog {
    /// The game to open a new room of, and the version the room will play (uploaded games).
    pub async fn game_for_new_room(
        &self,
        id: &str,
    ) -> Result<(Arc<dyn Game>, Option<i64>), CatalogError> {
        if let Some(game) = self.games.get(id) {
            return Ok((game.clone(), None));
        }
        let record = self.current_version(id).await?;
        if record.unpublished_at.is_some() {
            return Err(CatalogError::GameUnpublished(id.to_owned()));
        }
        let version = record.version;
        if let Some(game) = self.hosted.get(&(id.to_owned(), version)) {
            return Ok((game, Some(version)));
        }
        Ok((self.hosted_game((*record).clone()).await?, Some(version)))
    }

    /// The latest version of uploaded game `id`: from memory while this server is alone on
    /// its database, since every change of it is made here ([`Catalog::versions_changed`]);
    /// else, and the first time, from the database.
    async fn current_version(&self, id: &str) -> Result<Arc<GameVersionRecord>, CatalogError> {
        if let Some(record) = self.current.get(&self.store, id) {
            return Ok(record);
        }
        let epoch = self.current.epoch(&self.store);
        let record = self
            .store
            .game_version(id, None)
            .await?
            .map(Arc::new)
            .ok_or_else(|| CatalogError::GameNotFound(id.to_owned()))?;
        self.current
            .remember(epoch, id.to_owned(), Arc::clone(&record));
        Ok(record)
    }

    /// Game `id`'s versions or its publication changed here (or may have, if the write
    /// failed): the next room reads which version it opens with from the database.
    pub(crate) fn versions_changed(&self, id: &str) {
        self.current.forget(id);
    }

    /// The game a stored room plays, at the version it was created with.
    pub async fn game_of(&self, room: &Room) -> Result<Arc<dyn Game>, CatalogError> {
        let unavailable = || CatalogError::GameUnavailable(room.game.to_string());
        match room.game_version {
            None => self.games.get(&room.game).cloned().ok_or_else(unavailable),
            Some(version) => {
                if let Some(game) = self.hosted.get(&(room.game.to_string(), version)) {
                    return Ok(game);
                }
                // Boxed: loading is rare, and its future is large; unboxed it would be
                // carried by every future that asks for a room's game, cached or not.
                Box::pin(self.load_hosted(&room.game, version)).await
            }
        }
    }

    /// A hosted game's version, read from the database and started.
    async fn load_hosted(&self, id: &str, version: i64) -> Result<Arc<dyn Game>, CatalogError> {
        let record = self
            .store
            .game_version(id, Some(version))
            .await?
            .ok_or_else(|| CatalogError::GameUnavailable(id.to_owned()))?;
        self.hosted_game(record).await
    }

    async fn hosted_game(&self, record: GameVersionRecord) -> Result<Arc<dyn Game>, CatalogError> {
        let (id, version) = (record.game_id.as_str(), record.version);
        if let Some(game) = self.hosted.get(&(id.to_owned(), version)) {
            return Ok(game);
        }
        let source = self
            .store
            .game_source(id, version)
            .await?
            .ok_or_else(|| CatalogError::GameUnavailable(id.to_owned()))?;
        let game = Arc::new(HostedGame::new(
            record.info(),
            version,
            source.into(),
            self.sandbox.clone(),
            record.hooks,
            self.logs.clone(),
        ));
        self.hosted.insert((id.to_owned(), version), game.clone());
        Ok(game)
    }
}
