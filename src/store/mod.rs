//! Persistence: the one seam between the engine and the database.
//!
//! Writes go through a single connection (SQLite has one writer anyway; queuing in-process is
//! cheaper than spinning on the file lock), and every change to a room arrives as one
//! [`RoomCommit`]: the new record, the version it replaces, and the events that produced it.
//! That shape lets a batching writer group many commits into one transaction later without the
//! engine or the HTTP layer noticing. Reads use their own pool and never wait for the writer.

mod accounts;
mod events;
mod fault;
mod games;
mod presence;
mod rooms;
mod writer;

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::ConnectOptions;

use crate::model::{Room, RoomEvent};
use presence::Presence;
use writer::{Write, Writer, Written};

pub use fault::StorageFault;
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
    /// The transaction holding this write could not be committed; nothing in it happened.
    #[error("the write could not be committed: {0}")]
    Batch(Arc<StoreError>),
    #[error("the database writer has stopped")]
    WriterStopped,
    #[error(transparent)]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl StoreError {
    /// A write refused for what it would do (it wrote nothing), as opposed to one that failed.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            StoreError::Conflict | StoreError::UsernameTaken | StoreError::NotTheOwner
        )
    }
}

/// Maps a unique-constraint violation to the domain error it means; the one place that does.
fn on_unique(err: sqlx::Error, meaning: StoreError) -> StoreError {
    match &err {
        sqlx::Error::Database(db) if db.is_unique_violation() => meaning,
        _ => StoreError::Database(err),
    }
}

/// A change to one room, applied atomically or not at all. It owns its data, so it can wait
/// in the writer's queue; the store hands it back once it is durable.
#[derive(Debug)]
pub struct RoomCommit {
    /// The room as it is after the change.
    pub room: Room,
    /// The version the change was computed from; `None` creates the room.
    pub expected_version: Option<i64>,
    /// One event per version between `expected_version` and `room.version`.
    pub events: Vec<RoomEvent>,
    /// Whether `players` or `inactive_players` changed, so memberships must be rewritten.
    pub members_changed: bool,
    /// Whether `joinable` or `finished` changed. Most moves change neither, and leaving them
    /// out of the update spares the six lobby indexes that contain them.
    pub listing_changed: bool,
    /// Whether `finished` changed, so memberships (which carry it) must be rewritten.
    pub finished_changed: bool,
    /// For a new room: write it only if no open public room of its game that this player is
    /// not already in exists at the moment of writing (quick play), else [`StoreError::Conflict`].
    pub only_if_no_open_room_for: Option<String>,
}

#[derive(Clone)]
pub struct Store {
    read: SqlitePool,
    writer: Writer,
    /// `None` for an in-memory database, which no one else can open.
    presence: Option<Arc<Presence>>,
}

const READ_CONNECTIONS: u32 = 8;
/// How long a statement waits for a lock held elsewhere (someone in `sqlite3`, another server
/// on the same file) before giving up.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

impl Store {
    /// Opens (creating and migrating if need be) the database at `url`: a `sqlite:` URL or a
    /// plain file path.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        Self::open_with(url, DEFAULT_BUSY_TIMEOUT).await
    }

    /// Like [`Store::open`], waiting up to `busy_timeout` for a lock another connection holds
    /// before a statement fails with [`StorageFault::Busy`].
    pub async fn open_with(url: &str, busy_timeout: Duration) -> Result<Self, StoreError> {
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
            .busy_timeout(busy_timeout);
        if let Some(dir) = Path::new(options.get_filename()).parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir)?;
            }
        }
        let mut write = options.connect().await?;
        sqlx::migrate!("./migrations").run(&mut write).await?;
        let file = Path::new(options.get_filename());
        let presence = match file.exists() {
            true => Some(Arc::new(Presence::join(file)?)),
            false => None,
        };
        let read = SqlitePoolOptions::new()
            .max_connections(READ_CONNECTIONS)
            .connect_with(options)
            .await?;
        Ok(Self {
            read,
            writer: Writer::start(write),
            presence,
        })
    }

    /// Whether this store is the only one open on its database file, in this process or any
    /// other: only then is what this process last wrote sure to be current.
    pub fn alone(&self) -> bool {
        self.presence.as_ref().is_none_or(|p| p.alone())
    }

    /// The writer's figures, in the Prometheus text format.
    pub fn render_metrics(&self, out: &mut crate::metrics::Exposition) {
        self.writer.stats.render(out);
    }

    /// Writes `copies` rooms just like `template` (record, memberships, history) but for their
    /// ids, in one transaction: a fast way to fill a database for measuring.
    pub async fn copy_room(&self, template: &str, copies: i64) -> Result<(), StoreError> {
        self.writer
            .write(Write::CopyRoom {
                template: template.to_owned(),
                copies,
            })
            .await?;
        Ok(())
    }

    /// Why the last write failed, while writes keep failing; `None` once one succeeds.
    pub fn write_fault(&self) -> Option<StorageFault> {
        self.writer.health.fault()
    }

    /// Answers when the database does.
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.read).await?;
        Ok(())
    }

    /// Applies a room change: the compare-and-set on `version`, the memberships and the events,
    /// in one transaction (shared with other writes waiting at the same moment). Returns the
    /// commit once it is durable. [`StoreError::Conflict`] when the room moved on (or, for a
    /// new room, already exists); nothing is written then.
    #[tracing::instrument(level = "debug", skip_all, fields(room = %commit.room.id, version = commit.room.version))]
    pub async fn commit(&self, commit: RoomCommit) -> Result<RoomCommit, StoreError> {
        match self.writer.write(Write::Room(Box::new(commit))).await? {
            Written::Room(commit) => Ok(*commit),
            _ => unreachable!("a room write answers with its commit"),
        }
    }
}

/// A database at `path` with only the first `migrations` applied, as an older release left it.
#[cfg(test)]
pub(crate) async fn database_before(path: &Path, migrations: usize) -> SqlitePool {
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let old = SqlitePoolOptions::new().connect(&url).await.unwrap();
    let mut earlier = sqlx::migrate!("./migrations");
    earlier.migrations = std::borrow::Cow::Owned(earlier.migrations[..migrations].to_vec());
    earlier.run(&old).await.unwrap();
    old
}
