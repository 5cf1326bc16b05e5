//! Persistence: the one seam between the engine and the database.
//!
//! Writes go through a single connection (SQLite has one writer anyway; queuing in-process is
//! cheaper than spinning on the file lock), and every change to a room arrives as one
//! [`RoomCommit`]: the new record, the version it replaces, and the events that produced it.
//! That shape lets a batching writer group many commits into one transaction later without the
//! engine or the HTTP layer noticing. Reads use their own pool and never wait for the writer.

mod accounts;
mod events;
mod games;
mod rooms;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::model::{Room, RoomEvent};

pub use rooms::RoomQuery;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the room changed since it was read")]
    Conflict,
    #[error("that username is taken")]
    UsernameTaken,
    #[error("the game belongs to another player")]
    NotTheOwner,
    #[error("stored data could not be read: {0}")]
    Corrupt(String),
    #[error("bad database URL: {0}")]
    BadUrl(String),
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    #[error(transparent)]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Maps a unique-constraint violation to the domain error it means; the one place that does.
fn on_unique(err: sqlx::Error, meaning: StoreError) -> StoreError {
    match &err {
        sqlx::Error::Database(db) if db.is_unique_violation() => meaning,
        _ => StoreError::Database(err),
    }
}

/// A change to one room, applied atomically or not at all.
pub struct RoomCommit<'a> {
    /// The room as it is after the change.
    pub room: &'a Room,
    /// The version the change was computed from; `None` creates the room.
    pub expected_version: Option<i64>,
    /// One event per version between `expected_version` and `room.version`.
    pub events: &'a [RoomEvent],
    /// Whether `players` or `inactive_players` changed, so memberships must be rewritten.
    pub members_changed: bool,
    /// For a new room: write it only if no open public room of its game that this player is
    /// not already in exists at the moment of writing (quick play), else [`StoreError::Conflict`].
    pub only_if_no_open_room_for: Option<&'a str>,
}

#[derive(Clone)]
pub struct Store {
    read: SqlitePool,
    write: SqlitePool,
}

const READ_CONNECTIONS: u32 = 8;

impl Store {
    /// Opens (creating and migrating if need be) the database at `url`: a `sqlite:` URL or a
    /// plain file path.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let url = if url.starts_with("sqlite:") {
            url.to_owned()
        } else {
            format!("sqlite://{url}")
        };
        let options = SqliteConnectOptions::from_str(&url)
            .map_err(|e| StoreError::BadUrl(e.to_string()))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // FULL: an acknowledged write survives a power cut, not only a process kill.
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5));
        if let Some(dir) = Path::new(options.get_filename()).parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir)?;
            }
        }
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options.clone())
            .await?;
        sqlx::migrate!("./migrations").run(&write).await?;
        let read = SqlitePoolOptions::new()
            .max_connections(READ_CONNECTIONS)
            .connect_with(options)
            .await?;
        Ok(Self { read, write })
    }

    /// Answers when the database does.
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.read).await?;
        Ok(())
    }

    /// Applies a room change: the compare-and-set on `version`, the memberships and the events,
    /// in one transaction. [`StoreError::Conflict`] when the room moved on (or, for a new room,
    /// already exists); nothing is written then.
    #[tracing::instrument(level = "debug", skip_all, fields(room = %commit.room.id, version = commit.room.version))]
    pub async fn commit(&self, commit: RoomCommit<'_>) -> Result<(), StoreError> {
        // IMMEDIATE: take the write lock before reading anything, so another process's commit
        // can never invalidate what this transaction read.
        let mut tx = self.write.begin_with("BEGIN IMMEDIATE").await?;
        let written = match commit.expected_version {
            None => rooms::insert(&mut tx, commit.room, commit.only_if_no_open_room_for).await?,
            Some(version) => rooms::update_if_version(&mut tx, commit.room, version).await?,
        };
        if !written {
            return Err(StoreError::Conflict);
        }
        if commit.members_changed {
            rooms::write_members(&mut tx, commit.room).await?;
        }
        for event in commit.events {
            events::insert(&mut tx, &commit.room.id, event).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub async fn close(&self) {
        self.read.close().await;
        self.write.close().await;
    }
}
