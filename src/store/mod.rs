//! Persistence: the one seam between the engine and the database, on SQLite (the embedded
//! default) or PostgreSQL (for several servers on one database).
//!
//! Writes go through one task per server that groups whatever is waiting into one transaction
//! (see [`writer`]), and every change to a room arrives as one [`RoomCommit`]: the new record,
//! the version it replaces, and the events that produced it. Reads use their own pool and
//! never wait for the writer. The two databases share everything but their SQL: the order of
//! a write's steps ([`writes`]), the reads ([`reads`]) and the decoding of rows ([`rows`]).

mod fault;
mod postgres;
mod reads;
mod rows;
mod sqlite;
mod writer;
mod writes;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::game::{BotLevel, PlayerRef};
use crate::model::{Account, GameVersionRecord, NewGameVersion, Room, RoomEvent};
use postgres::PgStore;
use sqlite::SqliteStore;
use writer::Writer;
use writes::{Write, Written};

pub use fault::StorageFault;
pub use postgres::Change;

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
    /// How the room's lobby entry changed (`created`, `updated`), if it did.
    pub lobby_change: Option<&'static str>,
}

/// A lobby query. Private rooms are only included when `include_private` is set, and then only
/// those of `player` (the API sets it when a player lists their own rooms).
#[derive(Debug, Clone, Default)]
pub struct RoomQuery {
    pub game: Option<String>,
    pub joinable: Option<bool>,
    pub finished: Option<bool>,
    pub player: Option<String>,
    pub include_private: bool,
    /// Only rooms created before the room with this sequence number (the page cursor).
    pub before_seq: Option<i64>,
    pub limit: i64,
}

#[derive(Clone)]
pub struct Store {
    writer: Writer,
    reads: Arc<Reads>,
}

enum Reads {
    Sqlite(SqliteStore),
    Postgres(PgStore),
}

/// Runs `$call` on whichever database's store this is.
macro_rules! on_database {
    ($store:expr, $db:ident => $call:expr) => {
        match &*$store.reads {
            Reads::Sqlite($db) => $call,
            Reads::Postgres($db) => $call,
        }
    };
}

/// How long a statement waits for a lock held elsewhere (someone in `sqlite3`, another server
/// on the same file) before giving up.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

impl Store {
    /// Opens (creating and migrating if need be) the database at `url`: a `postgres://` (or
    /// `postgresql://`) URL, a `sqlite:` URL, or a plain file path (SQLite).
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        Self::open_with(url, DEFAULT_BUSY_TIMEOUT).await
    }

    /// Like [`Store::open`], waiting up to `busy_timeout` for a lock another connection holds
    /// before a statement fails with [`StorageFault::Busy`].
    pub async fn open_with(url: &str, busy_timeout: Duration) -> Result<Self, StoreError> {
        let (reads, writer) = if postgres::is_postgres_url(url) {
            let (store, writer) = PgStore::open(url, busy_timeout).await?;
            (Reads::Postgres(store), Writer::start(writer))
        } else {
            let (store, writer) = SqliteStore::open(url, busy_timeout).await?;
            (Reads::Sqlite(store), Writer::start(writer))
        };
        Ok(Self {
            writer,
            reads: Arc::new(reads),
        })
    }

    /// Whether this store is sure to be the only one writing its database: a SQLite file no
    /// other server has open. Only then is what this process last wrote sure to be current.
    /// Never on PostgreSQL, which is there to be shared.
    pub fn alone(&self) -> bool {
        match &*self.reads {
            Reads::Sqlite(db) => db.alone(),
            Reads::Postgres(_) => false,
        }
    }

    /// What other servers commit, as they commit it (PostgreSQL); `None` where no other server
    /// can say (SQLite). Each call starts one listening connection, and returns once it listens.
    pub async fn changes(&self) -> Result<Option<mpsc::Receiver<Change>>, StoreError> {
        match &*self.reads {
            Reads::Sqlite(_) => Ok(None),
            Reads::Postgres(db) => Ok(Some(db.listen().await?)),
        }
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
        on_database!(self, db => db.ping().await)
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

    pub async fn room(&self, id: &str) -> Result<Option<Room>, StoreError> {
        on_database!(self, db => db.room(id).await)
    }

    /// The oldest room quick play can put `player_id` in.
    pub async fn oldest_open_room(
        &self,
        game: &str,
        player_id: &str,
    ) -> Result<Option<String>, StoreError> {
        on_database!(self, db => db.oldest_open_room(game, player_id).await)
    }

    /// A page of rooms, newest first, each with its sequence number (for the next cursor).
    pub async fn rooms(&self, query: &RoomQuery) -> Result<Vec<(i64, Room)>, StoreError> {
        on_database!(self, db => db.rooms(query).await)
    }

    /// Events of a room with a version above `after`, oldest first, at most `limit`.
    pub async fn events(
        &self,
        room_id: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<RoomEvent>, StoreError> {
        on_database!(self, db => db.events(room_id, after, limit).await)
    }

    /// Replaces a player's token hash: the old token is refused from the commit on.
    pub async fn set_token_hash(
        &self,
        player_id: &str,
        token_hash: &str,
    ) -> Result<(), StoreError> {
        let write = Write::TokenHash {
            player_id: player_id.to_owned(),
            token_hash: token_hash.to_owned(),
        };
        self.writer.write(write).await?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(username = %account.username))]
    pub async fn create_account(&self, account: &Account) -> Result<(), StoreError> {
        match self.writer.write(Write::Account(account.clone())).await? {
            Written::Applied => Ok(()),
            _ => unreachable!("an account write answers as one"),
        }
    }

    pub async fn account(&self, id: &str) -> Result<Option<Account>, StoreError> {
        on_database!(self, db => db.account(id).await)
    }

    /// The account of the bot of `level`, created with `id`, `username` and `created_at` if it
    /// does not exist yet. Bots have no token: their empty hash matches no secret.
    pub async fn bot_account(
        &self,
        level: BotLevel,
        id: &str,
        username: &str,
        created_at: &str,
    ) -> Result<PlayerRef, StoreError> {
        let write = Write::Bot {
            level,
            id: id.to_owned(),
            username: username.to_owned(),
            created_at: created_at.to_owned(),
        };
        match self.writer.write(write).await? {
            Written::Bot(bot) => Ok(bot),
            _ => unreachable!("a bot write answers with the bot"),
        }
    }

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
        on_database!(self, db => db.latest_game_versions().await)
    }

    /// One version of a game (the latest when `version` is `None`).
    pub async fn game_version(
        &self,
        game_id: &str,
        version: Option<i64>,
    ) -> Result<Option<GameVersionRecord>, StoreError> {
        on_database!(self, db => db.game_version(game_id, version).await)
    }

    /// The source of one version of a game.
    pub async fn game_source(
        &self,
        game_id: &str,
        version: i64,
    ) -> Result<Option<String>, StoreError> {
        on_database!(self, db => db.game_source(game_id, version).await)
    }

    /// The page one version of a game ships, if that version exists and has one.
    pub async fn game_frontend(
        &self,
        game_id: &str,
        version: i64,
    ) -> Result<Option<String>, StoreError> {
        on_database!(self, db => db.game_frontend(game_id, version).await)
    }
}
