//! Uploaded games and every version of their source.

use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection};

use super::writer::{Write, Written};
use super::{Store, StoreError};
use crate::game::PlayerRef;
use crate::model::{GameVersionRecord, NewGameVersion};

/// `SELECT <a version with its game's owner> FROM … <tail>`, as one static string.
macro_rules! select_versions {
    ($tail:literal) => {
        concat!(
            "SELECT v.game_id, v.version, v.name, v.description, v.min_players, v.max_players, \
             v.format, v.sha256, v.created_at, g.owner_id, p.username AS owner_name, \
             g.created_at AS game_created_at \
             FROM game_versions v JOIN games g ON g.id = v.game_id \
             JOIN players p ON p.id = g.owner_id ",
            $tail
        )
    };
}

/// Publishes the next version of a game inside the caller's transaction, creating the game
/// (owned by `upload.owner`) if it is new. [`StoreError::NotTheOwner`] if someone else owns it.
pub(super) async fn publish(
    conn: &mut SqliteConnection,
    upload: &NewGameVersion,
) -> Result<i64, StoreError> {
    sqlx::query(
        "INSERT INTO games (id, owner_id, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING",
    )
    .bind(&upload.game_id)
    .bind(&upload.owner_id)
    .bind(&upload.created_at)
    .execute(&mut *conn)
    .await?;
    let owner: String = sqlx::query_scalar("SELECT owner_id FROM games WHERE id = ?")
        .bind(&upload.game_id)
        .fetch_one(&mut *conn)
        .await?;
    if owner != upload.owner_id {
        return Err(StoreError::NotTheOwner);
    }
    let version: i64 = sqlx::query_scalar(
        "SELECT coalesce(max(version), 0) + 1 FROM game_versions WHERE game_id = ?",
    )
    .bind(&upload.game_id)
    .fetch_one(&mut *conn)
    .await?;
    sqlx::query(
        "INSERT INTO game_versions (game_id, version, name, description, min_players, max_players, \
         format, source, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&upload.game_id)
    .bind(version)
    .bind(&upload.name)
    .bind(&upload.description)
    .bind(upload.min_players as i64)
    .bind(upload.max_players as i64)
    .bind(&upload.format)
    .bind(&upload.source)
    .bind(&upload.sha256)
    .bind(&upload.created_at)
    .execute(&mut *conn)
    .await?;
    Ok(version)
}

impl Store {
    /// Publishes the next version of a game, creating the game (owned by `upload.owner`) if it
    /// is new. [`StoreError::NotTheOwner`] if someone else owns it; nothing is written then.
    /// Returns the version number.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %upload.game_id))]
    pub async fn publish_game_version(&self, upload: &NewGameVersion) -> Result<i64, StoreError> {
        match self
            .writer
            .write(Write::GameVersion(upload.clone()))
            .await?
        {
            Written::GameVersion(version) => Ok(version),
            _ => unreachable!("a game version write answers with its number"),
        }
    }

    /// The latest version of every uploaded game, by id.
    pub async fn latest_game_versions(&self) -> Result<Vec<GameVersionRecord>, StoreError> {
        let rows = sqlx::query(select_versions!(
            "WHERE v.version = (SELECT max(version) FROM game_versions WHERE game_id = v.game_id) \
             ORDER BY v.game_id"
        ))
        .fetch_all(&self.read)
        .await?;
        rows.iter().map(version_from_row).collect()
    }

    /// One version of a game (the latest when `version` is `None`).
    pub async fn game_version(
        &self,
        game_id: &str,
        version: Option<i64>,
    ) -> Result<Option<GameVersionRecord>, StoreError> {
        let row = sqlx::query(select_versions!(
            "WHERE v.game_id = ?1 AND v.version = coalesce(?2, \
             (SELECT max(version) FROM game_versions WHERE game_id = ?1))"
        ))
        .bind(game_id)
        .bind(version)
        .fetch_optional(&self.read)
        .await?;
        row.as_ref().map(version_from_row).transpose()
    }

    /// The source of one version of a game.
    pub async fn game_source(
        &self,
        game_id: &str,
        version: i64,
    ) -> Result<Option<String>, StoreError> {
        Ok(
            sqlx::query_scalar(
                "SELECT source FROM game_versions WHERE game_id = ? AND version = ?",
            )
            .bind(game_id)
            .bind(version)
            .fetch_optional(&self.read)
            .await?,
        )
    }
}

fn version_from_row(row: &SqliteRow) -> Result<GameVersionRecord, StoreError> {
    let min: i64 = row.try_get("min_players")?;
    let max: i64 = row.try_get("max_players")?;
    Ok(GameVersionRecord {
        game_id: row.try_get("game_id")?,
        version: row.try_get("version")?,
        name: row.try_get("name")?,
        description: row.try_get("description")?,
        min_players: min as usize,
        max_players: max as usize,
        format: row.try_get("format")?,
        sha256: row.try_get("sha256")?,
        owner: PlayerRef {
            id: row.try_get("owner_id")?,
            username: row.try_get("owner_name")?,
        },
        published_at: row.try_get("created_at")?,
        created_at: row.try_get("game_created_at")?,
    })
}
