//! What the catalog shows: every game, a game's versions, sources and frontends.

use super::{Catalog, CatalogError};
use crate::domain::records::{GameListing, GameVersionRecord};
use crate::frontend::INDEX;
use crate::game::Game;
use crate::store::{FileKey, StoredFile};

impl Catalog {
    /// Every game: built in first, then uploaded ones, each by id.
    pub async fn games(&self) -> Result<Vec<GameListing>, CatalogError> {
        let mut all: Vec<GameListing> = self
            .games
            .all()
            .map(|game| builtin_listing(game.as_ref()))
            .collect();
        let hosted = self.store.latest_game_versions().await?;
        all.extend(
            hosted
                .iter()
                .filter(|game| game.unpublished_at.is_none())
                .map(GameVersionRecord::listing),
        );
        Ok(all)
    }

    /// One game; for an uploaded game, version `version` (the latest when `None`).
    pub async fn game_listing(
        &self,
        id: &str,
        version: Option<i64>,
    ) -> Result<GameListing, CatalogError> {
        match (self.games.get(id), version) {
            (Some(game), None) => Ok(builtin_listing(game.as_ref())),
            (Some(_), Some(version)) => Err(CatalogError::GameVersionNotFound {
                game: id.to_owned(),
                version,
            }),
            (None, _) => Ok(self.uploaded_version(id, version).await?.listing()),
        }
    }

    /// The source of a version of an uploaded game (the latest by default).
    pub async fn game_source(
        &self,
        id: &str,
        version: Option<i64>,
    ) -> Result<(i64, String), CatalogError> {
        if self.games.get(id).is_some() {
            return Err(CatalogError::GameIsBuiltin(id.to_owned()));
        }
        let record = self.uploaded_version(id, version).await?;
        let source = self
            .store
            .game_source(id, record.version)
            .await?
            .ok_or_else(|| CatalogError::GameNotFound(id.to_owned()))?;
        Ok((record.version, source))
    }

    /// The page a version of a game ships (the latest version by default), when it is one
    /// document; `None` when it is a folder, to be read at [`Catalog::frontend_file`].
    pub async fn game_frontend(
        &self,
        id: &str,
        version: Option<i64>,
    ) -> Result<(i64, Option<StoredFile>), CatalogError> {
        if self.games.get(id).is_some() {
            return Err(CatalogError::FrontendNotFound {
                game: id.to_owned(),
                version: None,
            });
        }
        let record = self.uploaded_version(id, version).await?;
        if record.frontend_files != 1 {
            return match record.frontend_files {
                0 => Err(CatalogError::FrontendNotFound {
                    game: id.to_owned(),
                    version: Some(record.version),
                }),
                _ => Ok((record.version, None)),
            };
        }
        let index = FileKey {
            game_id: id,
            version: record.version,
            path: INDEX,
        };
        Ok((
            record.version,
            self.store.frontend_file(&index, false).await?,
        ))
    }

    /// A file of a version's frontend, gzipped when `gzip` is set and a copy is kept. One read
    /// when the file is there; only a miss asks what is missing.
    pub async fn frontend_file(
        &self,
        file: FileKey<'_>,
        gzip: bool,
    ) -> Result<StoredFile, CatalogError> {
        if let Some(found) = self.store.frontend_file(&file, gzip).await? {
            return Ok(found);
        }
        let game = file.game_id.to_owned();
        if self.games.get(&game).is_some() {
            return Err(CatalogError::FrontendNotFound {
                game,
                version: None,
            });
        }
        let record = self.uploaded_version(&game, Some(file.version)).await?;
        Err(if record.frontend_files == 0 {
            CatalogError::FrontendNotFound {
                game,
                version: Some(record.version),
            }
        } else {
            CatalogError::FrontendFileNotFound {
                game,
                version: record.version,
                path: file.path.to_owned(),
            }
        })
    }

    /// A version of an uploaded game (the latest when `version` is `None`), or which of the
    /// two is missing.
    async fn uploaded_version(
        &self,
        id: &str,
        version: Option<i64>,
    ) -> Result<GameVersionRecord, CatalogError> {
        match (self.store.game_version(id, version).await?, version) {
            (Some(record), _) => Ok(record),
            (None, Some(version)) if self.store.game_version(id, None).await?.is_some() => {
                Err(CatalogError::GameVersionNotFound {
                    game: id.to_owned(),
                    version,
                })
            }
            (None, _) => Err(CatalogError::GameNotFound(id.to_owned())),
        }
    }

    /// [`CatalogError::GameNotFound`] unless a game of this id exists, built in or uploaded.
    pub async fn require_game(&self, id: &str) -> Result<(), CatalogError> {
        if self.games.get(id).is_some() || self.store.game_version(id, None).await?.is_some() {
            Ok(())
        } else {
            Err(CatalogError::GameNotFound(id.to_owned()))
        }
    }

    /// [`CatalogError::GameUnpublished`] if `game_id` is an uploaded game an admin unpublished,
    /// [`CatalogError::GameNotFound`] if there is no such game.
    pub async fn require_published(&self, game_id: &str) -> Result<(), CatalogError> {
        if self.games.get(game_id).is_some() {
            return Ok(());
        }
        match self.store.game_version(game_id, None).await? {
            None => Err(CatalogError::GameNotFound(game_id.to_owned())),
            Some(record) if record.unpublished_at.is_some() => {
                Err(CatalogError::GameUnpublished(game_id.to_owned()))
            }
            Some(_) => Ok(()),
        }
    }
}

fn builtin_listing(game: &dyn Game) -> GameListing {
    GameListing::builtin(game.info(), game.move_example(), game.capabilities())
}
