//! The embedded default: one SQLite file, in WAL mode, written by one connection.

mod allocator;
mod checkpoint;
mod raw;
mod servers_on_file;

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{Sqlite, SqliteConnection};

use super::dialect::{Dialect, SetSql, EVENT_ROW, NEW_ROOM_ROW, ROOM_CHANGE_ROW};
use super::sql::{AnyConnection, Exec};
use super::types::{RoomCommit, StoreError};
pub(super) use checkpoint::Checkpoints;
use raw::{Prepared, RawBatch};
use servers_on_file::ServersOnFile;

const READ_CONNECTIONS: u32 = 8;

/// The pages of log past which the writer's commit checkpoints (copies the log into the
/// database file) itself, where SQLite's default is 1,000: about 16 MiB of log. The
/// checkpointing connection (`checkpoint.rs`) copies the log long before, so the bound is what
/// that connection has in hand; with a few of its checkpoints between two of the writer's,
/// games/s 1.03–1.08× and action p99 0.92–0.97× (`scripts/ab --together`, three pairs, with
/// its checkpoints every 15 ms as before; `docs/benchmarks.md`).
pub(super) const LOG_BOUND_PAGES: u32 = 4_000;
#[derive(Clone)]
pub(super) struct SqliteStore {
    pub(super) read: SqlitePool,
    /// `None` for an in-memory database, which no one else can open.
    servers: Option<Arc<ServersOnFile>>,
    /// The write-ahead log of a database in a file, which the writer syncs.
    log: Option<SyncedLog>,
}

/// SQLite keeps JSON as text, flags as 0 and 1, and has one writer at a time, so quick play's
/// check and insert need no lock of their own.
impl Dialect for Sqlite {
    /// IMMEDIATE: the write lock is taken before anything is read, so another process's
    /// commit can never invalidate what this transaction read.
    const BEGIN: &'static str = "BEGIN IMMEDIATE";
    const NUMBERED_PLACEHOLDERS: bool = false;
    const WRITER_THREAD: bool = true;
    /// A statement is a call into the server's own process: nothing to save.
    const MERGES_WRITES: bool = false;
    const FALSE: &'static str = "0";
    const TRUE: &'static str = "1";
    const LISTING_STEERED: bool = false;
    const OLDEST_OPEN_ROOM: &'static str = "SELECT o.id FROM rooms o \
         WHERE o.game = $1 AND o.clock_move_seconds IS $3 \
         AND o.private = 0 AND o.joinable = 1 AND o.finished = 0 \
         AND (o.seats_held_until IS NULL OR o.seats_held_until <= $4) \
         AND NOT EXISTS (SELECT 1 FROM room_players m \
         WHERE m.room_id = o.id AND m.player_id = $2 AND m.active = 1) \
         AND (o.updated_at >= $5 OR EXISTS (SELECT 1 FROM room_players s \
         JOIN players p ON p.id = s.player_id \
         WHERE s.room_id = o.id AND s.active = 1 AND p.last_seen_at >= $5)) \
         AND (o.quick_play_rating IS NULL OR $7 - o.quick_play_since >= 60000 \
         OR abs(o.quick_play_rating - $6) <= 100 + 50 * (($7 - o.quick_play_since) / 5000)) \
         ORDER BY o.seq LIMIT 1";
    const IDLE_WAITING_ROOMS: &'static str = "SELECT id, version FROM rooms \
         WHERE joinable = 1 AND finished = 0 AND updated_at < $1 ORDER BY updated_at LIMIT $2";
    const INSERT_ROOMS: SetSql = SetSql {
        columns: NEW_ROOM_ROW,
        statement:
            "INSERT INTO rooms (id, game, private, rated, version, joinable, finished, state, \
             players, inactive_players, trigger_timeout_at, to_move, turns, rematch, \
             seats_held_until, score, \
             created_at, updated_at, game_version, clock_move_seconds, quick_play_rating, \
             quick_play_since) \
             SELECT v.id, v.game, v.private, v.rated, v.version, v.joinable, v.finished, v.state, \
             v.players, v.inactive_players, v.trigger_timeout_at, v.to_move, v.turns, v.rematch, \
             v.seats_held_until, v.score, v.created_at, v.updated_at, \
             v.game_version, v.clock_move_seconds, v.quick_play_rating, v.quick_play_since FROM v \
             WHERE v.quick_play_for IS NULL OR NOT EXISTS (SELECT 1 FROM rooms o \
             WHERE o.game = v.game AND o.clock_move_seconds IS v.clock_move_seconds \
             AND o.private = 0 AND o.joinable = 1 AND o.finished = 0 \
             AND (o.seats_held_until IS NULL OR o.seats_held_until <= v.updated_at) \
             AND NOT EXISTS (SELECT 1 FROM room_players m \
             WHERE m.room_id = o.id AND m.player_id = v.quick_play_for AND m.active = 1) \
             AND (o.updated_at >= v.seen_since OR EXISTS (SELECT 1 FROM room_players s \
             JOIN players p ON p.id = s.player_id \
             WHERE s.room_id = o.id AND s.active = 1 AND p.last_seen_at >= v.seen_since)) \
             AND (o.quick_play_rating IS NULL \
             OR v.quick_play_since - o.quick_play_since >= 60000 \
             OR abs(o.quick_play_rating - v.quick_play_rating) <= 100 + 50 * \
             ((v.quick_play_since - o.quick_play_since) / 5000))) \
             ON CONFLICT DO NOTHING RETURNING id",
    };
    const UPDATE_ROOMS: SetSql = SetSql {
        columns: ROOM_CHANGE_ROW,
        statement: "UPDATE rooms SET version = v.version, state = v.state, players = v.players, \
             inactive_players = v.inactive_players, trigger_timeout_at = v.trigger_timeout_at, \
             to_move = v.to_move, turns = v.turns, rematch = v.rematch, \
             seats_held_until = v.seats_held_until, score = v.score, \
             updated_at = v.updated_at \
             FROM v WHERE rooms.id = v.id AND rooms.version = v.expected_version \
             RETURNING rooms.id",
    };
    /// SQLite picks the indexes an `UPDATE` rewrites by the columns it assigns, changed or
    /// not: a move, which leaves the lobby's columns as they were, must not assign them.
    const UPDATE_LISTED_ROOMS: Option<SetSql> = Some(SetSql {
        columns: ROOM_CHANGE_ROW,
        statement: "UPDATE rooms SET version = v.version, joinable = v.joinable, \
             finished = v.finished, state = v.state, players = v.players, \
             inactive_players = v.inactive_players, trigger_timeout_at = v.trigger_timeout_at, \
             to_move = v.to_move, turns = v.turns, rematch = v.rematch, \
             seats_held_until = v.seats_held_until, score = v.score, \
             updated_at = v.updated_at \
             FROM v WHERE rooms.id = v.id AND rooms.version = v.expected_version \
             RETURNING rooms.id",
    });
    const INSERT_EVENTS: SetSql = SetSql {
        columns: EVENT_ROW,
        statement: "INSERT INTO room_events (room_id, version, kind, player_id, move, state, \
             joinable, finished, players, created_at, trigger_timeout_at, to_move) \
             SELECT v.room_id, v.version, v.kind, v.player_id, v.move, v.state, v.joinable, \
             v.finished, v.players, v.created_at, v.trigger_timeout_at, v.to_move FROM v",
    };
    const GAME_OWNER: &'static str = "SELECT owner_id FROM games WHERE id = $1";
    /// The database's one writer at a time decides who takes a row.
    const CLAIM_OUTBOX: &'static str = "UPDATE outbox SET claimed_until = $3 WHERE seq IN \
         (SELECT seq FROM outbox WHERE endpoint_id = $1 AND due_at <= $2 \
         AND (claimed_until IS NULL OR claimed_until <= $2) ORDER BY due_at LIMIT $4) \
         RETURNING seq, id, type, room_id, game, version, data, body, created_at, retry_until, \
         attempts";
    const CLAIM_NOTICES: &'static str = "UPDATE notices SET claimed_until = $2 WHERE seq IN \
         (SELECT seq FROM notices WHERE due_at <= $1 \
         AND (claimed_until IS NULL OR claimed_until <= $1) ORDER BY due_at LIMIT $3) \
         RETURNING seq, channel, kind, player_id, destination, room_id, version, body, \
         created_at, attempts";
    const TAKE_TURN_PUSHES: Option<&'static str> = None;
    const CHAT_LOCK: Option<&'static str> = None;
    const CHAT_NOTIFY: Option<&'static str> = None;
    const COPY_ROOMS: &'static str =
        "WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $2) \
         INSERT INTO rooms (id, game, private, rated, version, joinable, finished, state, players, \
         inactive_players, created_at, updated_at, game_version, trigger_timeout_at, to_move, turns, \
         clock_move_seconds, rematch, seats_held_until, score) \
         SELECT lower(hex(randomblob(16))), game, private, rated, version, joinable, finished, state, \
         players, inactive_players, created_at, updated_at, game_version, trigger_timeout_at, \
         to_move, turns, clock_move_seconds, rematch, seats_held_until, score \
         FROM n, rooms WHERE id = $1 ORDER BY i";

    type PreparedStatements = Prepared;
    type Batch<'c> = RawBatch<'c>;

    fn any(conn: &mut Self::Connection) -> AnyConnection<'_> {
        AnyConnection::Sqlite(conn)
    }

    async fn batch<'c>(
        conn: &'c mut SqliteConnection,
        kept: &'c mut Prepared,
    ) -> Result<RawBatch<'c>, StoreError> {
        RawBatch::lock(conn, kept).await
    }

    async fn lock_quick_play(_conn: &mut impl Exec, _games: &[&str]) -> Result<(), StoreError> {
        Ok(())
    }

    /// The only writer of the file: its transaction already holds every rating.
    async fn lock_ratings(_conn: &mut impl Exec, _keys: &[(&str, &str)]) -> Result<(), StoreError> {
        Ok(())
    }

    /// Servers sharing a SQLite file are not told: each reads what the other wrote from the
    /// file.
    async fn announce(_conn: &mut impl Exec, _commits: &[&RoomCommit]) -> Result<(), StoreError> {
        Ok(())
    }
}

/// A SQLite file's write-ahead log, which the writer syncs.
#[derive(Clone)]
pub(super) struct SyncedLog {
    pub(super) path: PathBuf,
    /// Told after each sync: what is durable in the log can go on into the database file.
    pub(super) checkpoints: Checkpoints,
}

impl SqliteStore {
    /// Opens (creating and migrating if need be) the database at `url`: a `sqlite:` URL or a
    /// plain file path. Statements wait up to `busy_timeout` for a lock held elsewhere.
    pub(super) async fn open(
        url: &str,
        busy_timeout: Duration,
    ) -> Result<(Self, SqlitePool), StoreError> {
        let options = connect_options(url, busy_timeout)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // FULL: an acknowledged write survives a power cut, not only a process kill.
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true);
        let file = Path::new(options.get_filename());
        if !in_memory(url) && !file.exists() {
            tracing::info!(file = %whole_path(file), "creating a new database");
        }
        if let Some(dir) = file.parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir)?;
            }
        }
        // One writing connection, kept for good: SQLite has one writer anyway, and queuing
        // in-process is cheaper than spinning on the file lock.
        // The room changes' statements, whose texts vary with the batch's size, the writer
        // prepares and keeps itself (`raw::Prepared`); sqlx's own cache holds the rest.
        // It commits without syncing: the writer syncs the log after each commit, off its
        // path, and answers only then (`store::durable`).
        // Its statement journals (the pages a batch statement changes, kept until the statement
        // ends so that a failing one can be undone alone) stay in memory: past 64 KiB SQLite
        // moves them to a temporary file, and writing that file was a twelfth of the server's
        // time. They are never needed after a crash, which undoes the whole transaction.
        // Its own checkpoints come at LOG_BOUND_PAGES of log rather than SQLite's 1,000.
        let writing = options
            .clone()
            .synchronous(SqliteSynchronous::Normal)
            .pragma("temp_store", "memory")
            .pragma("wal_autocheckpoint", LOG_BOUND_PAGES.to_string());
        // Never tested before it is taken (a round trip to sqlx's thread per batch) or
        // replaced: the writer keeps statements prepared on it (`raw::Prepared`), which sqlx
        // could not close. Were sqlx's thread for it ever to die, writes would be answered
        // 503 `storage_unavailable` (sqlx's `WorkerCrashed`) until a restart.
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .test_before_acquire(false)
            .connect_with(writing)
            .await?;
        sqlx::migrate!("./migrations/sqlite").run(&write).await?;
        let file = Path::new(options.get_filename());
        let servers = match file.exists() {
            true => Some(Arc::new(ServersOnFile::join(file)?)),
            false => None,
        };
        let log = match servers.is_some() {
            true => {
                let mut path = file.as_os_str().to_owned();
                path.push("-wal");
                let path = PathBuf::from(path);
                let checkpoints = Checkpoints::start(&options).await?;
                Some(SyncedLog { path, checkpoints })
            }
            false => None,
        };
        let read = SqlitePoolOptions::new()
            .max_connections(READ_CONNECTIONS)
            .connect_with(options)
            .await?;
        let store = Self { read, servers, log };
        Ok((store, write))
    }

    /// The write-ahead log the writer syncs: `None` for a database in memory.
    pub(super) fn log(&self) -> Option<SyncedLog> {
        self.log.clone()
    }

    /// See [`Store::solitude`]. A database in memory is this store's alone, for good.
    pub(super) fn solitude(&self) -> Option<u64> {
        self.servers.as_ref().map_or(Some(0), |s| s.solitude())
    }
}

/// How to reach the database at `url` (a `sqlite:` URL or a plain file path), waiting up to
/// `busy_timeout` for a lock held elsewhere. Every connection starts here, so SQLite's
/// allocator is set before the first of them, whichever way in (the server, a backup).
fn connect_options(url: &str, busy_timeout: Duration) -> Result<SqliteConnectOptions, StoreError> {
    allocator::configure();
    let url = match url.starts_with("sqlite:") {
        true => url.to_owned(),
        false => format!("sqlite://{url}"),
    };
    Ok(SqliteConnectOptions::from_str(&url)
        .map_err(|e| StoreError::BadUrl(e.to_string()))?
        .busy_timeout(busy_timeout))
}

/// How to reach the database file at `url`, which must exist: a command that works on a
/// server's database refuses to make an empty one, and names the file it looked for.
pub(super) fn existing_file(url: &str) -> Result<SqliteConnectOptions, StoreError> {
    let options = connect_options(url, Duration::from_secs(5))?;
    let file = options.get_filename();
    if in_memory(url) || file.exists() {
        return Ok(options);
    }
    Err(StoreError::NoDatabase(whole_path(file)))
}

/// `file` from the root, as an operator must be told where a database is (a relative path
/// depends on the folder the command ran in).
fn whole_path(file: &Path) -> String {
    let whole = std::path::absolute(file).unwrap_or_else(|_| file.to_owned());
    whole.display().to_string()
}

/// Whether `url` names a database in memory, which has no file.
fn in_memory(url: &str) -> bool {
    url.contains(":memory:") || url.contains("mode=memory")
}

/// A consistent copy of the database to the new file `?`.
pub(super) const BACKUP: &str = "VACUUM INTO ?";

/// Copies the database at `url` to `dest` (a new file) while servers keep writing to it:
/// `VACUUM INTO` reads one snapshot, as a read transaction does, so the copy is every commit
/// up to one moment and none after, and writers are never held up (in WAL mode a reader does
/// not block them). Returns the copy's size in bytes.
pub(super) async fn backup(url: &str, dest: &Path) -> Result<u64, StoreError> {
    let options = existing_file(url)?;
    let mut conn = sqlx::ConnectOptions::connect(&options.read_only(true)).await?;
    sqlx::query(BACKUP)
        .bind(dest.display().to_string())
        .execute(&mut conn)
        .await?;
    Ok(std::fs::metadata(dest)?.len())
}

/// A database at `path` with only the first `migrations` applied, as an older release left it.
#[cfg(test)]
pub(crate) async fn database_before(path: &Path, migrations: usize) -> SqlitePool {
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let old = SqlitePoolOptions::new().connect(&url).await.unwrap();
    let mut earlier = sqlx::migrate!("./migrations/sqlite");
    earlier.migrations = std::borrow::Cow::Owned(earlier.migrations[..migrations].to_vec());
    earlier.run(&old).await.unwrap();
    old
}

#[cfg(test)]
mod tests;
