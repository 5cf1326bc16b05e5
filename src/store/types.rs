//! The store's vocabulary, shared by the facade, the reads, the writer and both databases: its
//! errors, the faults that come from the database's surroundings, a room change and a lobby
//! query. It imports no other store module.
//!
//! Faults (another process holding the write lock, a full disk, a file turned read-only, a
//! PostgreSQL server that went away) are told apart from everything else so that clients get a
//! `503` to retry instead of a `500`, and so that the writer can say in one log line when
//! writes start failing and when they work again.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::sync::Arc;

use crate::domain::game_id::GameId;
use crate::domain::ids::{PlayerId, RoomId};
use crate::domain::records::{LobbyChange, Room, RoomEvent};
use crate::domain::time::Timestamp;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the room changed since it was read")]
    Conflict,
    #[error("that username is taken")]
    UsernameTaken,
    #[error("another account has that address")]
    AddressTaken,
    #[error("the game belongs to another player")]
    NotTheOwner,
    /// The player is suspended (for this reason), so no session of theirs can be opened.
    #[error("the player is suspended")]
    Suspended(String),
    #[error("stored data could not be read: {0}")]
    Corrupt(String),
    #[error("bad database URL: {0}")]
    BadUrl(String),
    #[error(
        "`{0}:` databases are not supported: give a file path, a sqlite: URL or a postgres:// URL"
    )]
    UnknownScheme(String),
    /// A command that works on an existing database found none where it looked.
    #[error("there is no database at {0} (set --database or DATABASE_URL to the server's)")]
    NoDatabase(String),
    #[error("cannot connect to PostgreSQL at {host}:{port}: {cause}")]
    Unreachable {
        host: String,
        port: u16,
        cause: String,
    },
    #[error("{0} already exists; a backup is written to a new file")]
    BackupExists(String),
    #[error("this is a PostgreSQL database: back it up with pg_dump (docs/operations.md)")]
    PostgresBackup,
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    /// The transaction holding this write could not be committed; nothing in it happened.
    #[error("the write could not be committed: {0}")]
    Batch(Arc<StoreError>),
    #[error("the database writer has stopped")]
    WriterStopped,
    /// A read made for several requests at once failed (each of them gets this).
    #[error("the read could not be made: {0}")]
    SharedRead(Arc<StoreError>),
    #[error(transparent)]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The write was committed but the log holding it could not be synced to disk: it may
    /// be lost if the machine stops before the log is synced again.
    #[error("the write could not be made durable: {0}")]
    Unsynced(Arc<std::io::Error>),
}

impl StoreError {
    /// A write refused for what it would do (it wrote nothing), as opposed to one that failed.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            StoreError::Conflict
                | StoreError::UsernameTaken
                | StoreError::AddressTaken
                | StoreError::NotTheOwner
                | StoreError::Suspended(_)
        )
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
    /// For a new room by quick play: write it only if, at the moment of writing, there is no
    /// room quick play would have joined instead, else [`StoreError::Conflict`].
    pub quick_play: Option<QuickPlayGuard>,
    /// How the room's lobby entry changed (`created`, `updated`), if it did.
    pub lobby_change: Option<LobbyChange>,
    /// The admin action this change is, kept in the audit log in the same commit.
    pub audit: Option<crate::domain::records::AuditEntry>,
    /// The rated game this change finishes, whose ratings change in the same commit.
    pub rated_result: Option<crate::domain::records::RatedResult>,
    /// Whether the room was joinable, and finished, before the change (for the events that
    /// leave the server: a room starts when it stops being joinable).
    pub joinable_before: bool,
    pub finished_before: bool,
    /// The winners of the game this change finishes, when it finishes one and they are known.
    pub winners: Option<Vec<crate::domain::ids::PlayerId>>,
    /// The players whose move it became (notices may tell them).
    pub turns_begun: Vec<crate::domain::ids::PlayerId>,
}

/// What writing a [`RoomCommit`] produced, beside the commit itself.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RoomWritten {
    /// What the rated game it finished did to each player's rating (none for most changes).
    pub rating_changes: Vec<crate::domain::records::RatingChange>,
}

/// The rooms quick play joins rather than opening one: open public rooms of the game, with
/// the same clock, that `player_id` is not in, that hold no seats for a rematch, and that
/// someone is still in: changed, or with a player seen, since `seen_since`;
/// and, for a room quick play opened, whose creator's rating is within its window of
/// `rating`: 100 points either way, 50 more for each 5 s it has waited by `at_ms`, anyone's
/// after a minute. A room quick play opens keeps `rating` and `at_ms` for the next to come.
#[derive(Debug, Clone)]
pub struct QuickPlayGuard {
    pub player_id: PlayerId,
    pub seen_since: Timestamp,
    /// The player's rating in the game.
    pub rating: f64,
    /// Now, in milliseconds since the Unix epoch.
    pub at_ms: i64,
}

/// One file of one version of a game's frontend.
#[derive(Debug, Clone, Copy)]
pub struct FileKey<'a> {
    pub game_id: &'a str,
    pub version: i64,
    pub path: &'a str,
}

/// A frontend file as stored, ready to send.
#[derive(Debug, Clone)]
pub struct StoredFile {
    pub content_type: String,
    pub etag: String,
    pub body: Vec<u8>,
    /// Whether `body` is the gzipped copy.
    pub gzipped: bool,
}

/// A lobby query. Private rooms are only included when `include_private` is set, and then only
/// those of `player` (the API sets it when a player lists their own rooms).
#[derive(Debug, Clone, Default)]
pub struct RoomQuery {
    pub game: Option<GameId>,
    pub joinable: Option<bool>,
    pub finished: Option<bool>,
    pub player: Option<PlayerId>,
    pub include_private: bool,
    /// Only rooms created before the room with this sequence number (the page cursor).
    pub before_seq: Option<i64>,
    pub limit: i64,
}

/// A room, and the players one server's streams show in it (who is here).
pub type RoomPresence = (String, Vec<String>);

/// Why the database cannot do what was asked at the moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageFault {
    /// Another connection (another process, or someone in `sqlite3`) held the write lock for
    /// longer than the busy timeout.
    Busy,
    /// The database cannot be written at all: the disk is full, the file or its directory is
    /// read-only, the file cannot be reached, or the PostgreSQL server cannot be.
    Unavailable,
}

impl StorageFault {
    pub fn as_str(self) -> &'static str {
        match self {
            StorageFault::Busy => "busy",
            StorageFault::Unavailable => "unavailable",
        }
    }
}

impl StoreError {
    /// The environmental fault behind this error, if that is what it is.
    pub fn fault(&self) -> Option<StorageFault> {
        match self {
            StoreError::Database(err) => sqlx_fault(err),
            StoreError::Batch(err) | StoreError::SharedRead(err) => err.fault(),
            StoreError::WriterStopped | StoreError::Io(_) | StoreError::Unsynced(_) => {
                Some(StorageFault::Unavailable)
            }
            _ => None,
        }
    }

    /// The transaction lost to another server's (a deadlock, a serialisation failure): none
    /// of it happened, and applying it again will most likely work.
    pub fn is_lost_race(&self) -> bool {
        match self {
            StoreError::Database(sqlx::Error::Database(db)) => {
                matches!(postgres_code(db.as_ref()), Some("40001" | "40P01"))
            }
            _ => false,
        }
    }
}

/// PostgreSQL's SQLSTATE, if the error comes from PostgreSQL.
fn postgres_code(db: &dyn sqlx::error::DatabaseError) -> Option<&str> {
    db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>()
        .map(|pg| pg.code())
}

fn sqlx_fault(err: &sqlx::Error) -> Option<StorageFault> {
    match err {
        sqlx::Error::Database(db) if postgres_code(db.as_ref()).is_some() => {
            let code = postgres_code(db.as_ref())?;
            match code {
                // lock_not_available (the lock timeout), query_canceled
                "55P03" | "57014" => Some(StorageFault::Busy),
                // the server is shutting down or starting, is read-only, or is out of disk,
                // memory or connections; the database takes no new connections now
                // (55000 on connecting: ALLOW_CONNECTIONS false, as for maintenance) or is
                // gone (3D000)
                "57P01" | "57P02" | "57P03" | "25006" | "55000" | "3D000" => {
                    Some(StorageFault::Unavailable)
                }
                // The connection failed, the server is out of resources, or it no longer takes
                // the server's role or password (class 28: rotated under it, say): the
                // operator's to mend, not the request's.
                _ if code.starts_with("08") || code.starts_with("53") || code.starts_with("28") => {
                    Some(StorageFault::Unavailable)
                }
                _ => None,
            }
        }
        sqlx::Error::Database(db) => {
            // SQLite reports extended result codes; the primary code is the low byte.
            let code: i64 = db.code()?.parse().ok()?;
            match code & 0xff {
                SQLITE_BUSY | SQLITE_LOCKED => Some(StorageFault::Busy),
                SQLITE_READONLY | SQLITE_IOERR | SQLITE_FULL | SQLITE_CANTOPEN => {
                    Some(StorageFault::Unavailable)
                }
                _ => None,
            }
        }
        sqlx::Error::PoolTimedOut => Some(StorageFault::Busy),
        sqlx::Error::Io(_) | sqlx::Error::PoolClosed | sqlx::Error::WorkerCrashed => {
            Some(StorageFault::Unavailable)
        }
        _ => None,
    }
}

const SQLITE_BUSY: i64 = 5;
const SQLITE_LOCKED: i64 = 6;
const SQLITE_READONLY: i64 = 8;
const SQLITE_IOERR: i64 = 10;
const SQLITE_FULL: i64 = 13;
const SQLITE_CANTOPEN: i64 = 14;

/// A room's deadline as the store lists them: the room, the version that holds it, and when
/// it passes (RFC 3339, UTC).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deadline {
    pub room_id: RoomId,
    pub version: i64,
    pub at: Timestamp,
}

/// What other servers on a shared database commit, as [`super::Store::changes`] hears it
/// (PostgreSQL's `LISTEN`).
/// Something another server did, or the news that some of it went unheard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Another server committed `version` of `room`; `lobby` says how the room's lobby entry
    /// changed when it did and the room is public.
    Room {
        room: RoomId,
        version: i64,
        lobby: Option<LobbyChange>,
    },
    /// The listener (re)connected: changes made before may not have been heard.
    Resync,
    /// Another server changed a chat.
    Chat(ChatChange),
    /// Another server, `server`, says who its streams show in these rooms.
    Presence {
        server: String,
        rooms: Vec<RoomPresence>,
    },
}

/// What another server did to a chat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatChange {
    /// Wrote messages in a room (`None`: the lobby).
    Written { room: Option<RoomId> },
    /// An admin deleted this message.
    Deleted { message: i64 },
    /// The player blocked or unblocked someone.
    Blocks(PlayerId),
}
