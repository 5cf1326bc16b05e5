//! Persistence: the one seam between the engine and the database, on SQLite (the embedded
//! default) or PostgreSQL (for several servers on one database).
//!
//! Writes go through one task per server that groups whatever is waiting into one transaction
//! (see [`writer`]), and every change to a room arrives as one [`RoomCommit`]: the new record,
//! the version it replaces, and the events that produced it. Reads use their own pool and
//! never wait for the writer.
//!
//! The two databases share everything but what their [`dialect::Dialect`] says: the reads
//! ([`reads`]), the batch of room changes ([`batch`]), the other writes ([`writes`]) and the
//! decoding of rows ([`rows`]) are each written once, as functions generic over it. The
//! vocabulary they share is in [`types`].
//!
//! One stop in the life of a move: `docs/internals.md`.

/// Runs a read on this store's read pool, whichever database it is: the one place reads tell
/// the two apart (each read is written once, generic over the [`dialect::Dialect`]). Defined
/// before the modules, so the ones that hold their part of the store's methods use it too.
///
/// The read runs boxed: sqlx's futures are large (a room's read on PostgreSQL is 8.8 KB), and
/// unboxed each would be carried inside every future that might await it, down to the HTTP
/// handler's, which is allocated and moved whole for every request. An action whose room is
/// cached reads nothing, yet its handler's future was 15 KB.
macro_rules! read {
    ($store:expr, |$pool:ident| $read:expr) => {
        match &$store.database {
            $crate::store::Database::Sqlite(db) => {
                let $pool = &db.read;
                Box::pin($read).await
            }
            $crate::store::Database::Postgres(db) => {
                let $pool = &db.read;
                Box::pin($read).await
            }
        }
    };
}

mod batch;
mod chat;
mod chat_writes;
mod dialect;
mod durable;
mod emails;
mod gather;
mod health;
mod merging;
mod moderation;
mod notices;
mod outbox;
mod postgres;
mod profiles;
mod push;
mod queue;
mod ratings;
mod reads;
mod rows;
mod sessions;
mod sets;
mod sql;
mod sqlite;
#[cfg(test)]
mod statements;
mod turn_pushes;
mod turns;
mod types;
mod webhook_endpoints;
mod writer;
mod writer_stats;
mod writes;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::domain::records::{
    Account, GameLogLine, GameVersionRecord, NewGameVersion, Room, RoomEvent, Session,
};
use crate::domain::time::Timestamp;
use crate::game::{BotLevel, Clock, PlayerRef};
pub use emails::{EmailRecord, LinkPurpose, NewLink};
pub use gather::WriteComing;
pub use notices::{NoticeRound, NoticeRules};
pub use outbox::{Claimed, Dispatch, Dispatched, Next, Settled, ACTIVATION as WEBHOOK_ACTIVATION};
use postgres::PgStore;
pub use profiles::{GameStanding, RoomRating};
pub use push::PushSubscription;
use queue::Job;
use queue::Write;
pub use ratings::{Rebuilt, Standing};
pub use sessions::{Ending, MAX_LIVE_CODES};
use sqlite::SqliteStore;
pub use turns::Turn;
pub use webhook_endpoints::EndpointWrite;
use writer::Writer;
use writes::{NewBot, RoomCopies, Seen};

pub use types::{
    Change, ChatChange, Deadline, FileKey, QuickPlayGuard, RoomCommit, RoomPresence, RoomQuery,
    RoomWritten, StorageFault, StoreError, StoredFile,
};
pub use writes::GAME_LOG_LINES;

#[derive(Clone)]
pub struct Store {
    writer: Writer,
    database: Database,
    outbox: Arc<outbox::OutboxBoard>,
}

/// Where reads go, and what else each database has.
#[derive(Clone)]
enum Database {
    Sqlite(SqliteStore),
    Postgres(PgStore),
}

/// A URL with a scheme that names neither database (`mysql://…`) is a mistake, not a file
/// path: taken as one, it would be served as a new, empty SQLite database.
fn refuse_unknown_scheme(url: &str) -> Result<(), StoreError> {
    let Some((scheme, _)) = url.split_once("://") else {
        return Ok(());
    };
    let is_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    match is_scheme && !matches!(scheme, "sqlite" | "postgres" | "postgresql") {
        true => Err(StoreError::UnknownScheme(scheme.to_owned())),
        false => Ok(()),
    }
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
        refuse_unknown_scheme(url)?;
        let outbox = Arc::new(outbox::OutboxBoard::default());
        let (database, writer) = if postgres::is_postgres_url(url) {
            let (store, write) = PgStore::open(url, busy_timeout).await?;
            let writer = Writer::start(write, None, outbox.clone())?;
            (Database::Postgres(store), writer)
        } else {
            let (store, write) = SqliteStore::open(url, busy_timeout).await?;
            let writer = Writer::start(write, store.log(), outbox.clone())?;
            (Database::Sqlite(store), writer)
        };
        Ok(Self {
            writer,
            database,
            outbox,
        })
    }

    /// Like [`Store::open_with`], for a command that works on a server's existing database (an
    /// admin's, a rebuild): a SQLite file that is not there is refused, naming where it was
    /// looked for, rather than created empty.
    pub async fn open_existing(url: &str, busy_timeout: Duration) -> Result<Self, StoreError> {
        refuse_unknown_scheme(url)?;
        if !postgres::is_postgres_url(url) {
            sqlite::existing_file(url)?;
        }
        Self::open_with(url, busy_timeout).await
    }

    /// Copies the SQLite database at `url` to the new file `dest` while servers keep writing to
    /// it (see `sqlite::backup`); its size. PostgreSQL has `pg_dump` for this.
    pub async fn backup(url: &str, dest: &std::path::Path) -> Result<u64, StoreError> {
        refuse_unknown_scheme(url)?;
        if postgres::is_postgres_url(url) {
            return Err(StoreError::PostgresBackup);
        }
        if dest.exists() {
            return Err(StoreError::BackupExists(dest.display().to_string()));
        }
        sqlite::backup(url, dest).await
    }

    /// `Some` when this store is sure to be the only one writing its database: a SQLite file
    /// no other server has open. Only then is what this process last wrote sure to be current.
    /// The number in it changes whenever another store opens the file, so a cache that last
    /// looked at another number knows that company came since, even if it has gone again.
    /// Never on PostgreSQL, which is there to be shared.
    pub fn solitude(&self) -> Option<u64> {
        match &self.database {
            Database::Sqlite(db) => db.solitude(),
            Database::Postgres(_) => None,
        }
    }

    /// What other servers commit, as they commit it (PostgreSQL); `None` where no other server
    /// can say (SQLite). Each call starts one listening connection, and returns once it listens.
    pub async fn changes(&self) -> Result<Option<mpsc::Receiver<Change>>, StoreError> {
        match &self.database {
            Database::Sqlite(_) => Ok(None),
            Database::Postgres(db) => Ok(Some(db.listen().await?)),
        }
    }

    /// Tells the other servers on the database who this one's streams show in `rooms`
    /// (PostgreSQL; nobody else can hear on SQLite). A notification, not a write.
    pub async fn announce_presence(&self, rooms: &[RoomPresence]) -> Result<(), StoreError> {
        match &self.database {
            Database::Sqlite(_) => Ok(()),
            Database::Postgres(db) => db.announce_presence(rooms).await,
        }
    }

    /// The writer's figures, in the Prometheus text format.
    pub fn render_metrics(&self, out: &mut crate::metrics::Exposition) {
        self.writer.stats.render(out);
    }

    /// Why the last write failed, while writes keep failing; `None` once one succeeds.
    pub fn write_fault(&self) -> Option<StorageFault> {
        self.writer.health.fault()
    }

    /// Says that an action has begun which will commit a room change soon: keep the guard
    /// until the commit is handed over ([`Store::commit`]). While several are on their way,
    /// the writer waits a little for them rather than commit the few waiting (`gather.rs`).
    pub fn write_coming(&self) -> WriteComing {
        self.writer.on_their_way.announce()
    }

    /// Applies a room change: the compare-and-set on `version`, the memberships and the events,
    /// in one transaction (shared with other writes waiting at the same moment). Returns the
    /// commit once it is durable. [`StoreError::Conflict`] when the room moved on (or, for a
    /// new room, already exists); nothing is written then.
    #[tracing::instrument(level = "debug", skip_all, fields(room = %commit.room.id, version = commit.room.version))]
    pub async fn commit(
        &self,
        commit: Box<RoomCommit>,
    ) -> Result<(Box<RoomCommit>, RoomWritten), StoreError> {
        let (job, reply) = Job::new(commit);
        self.writer.write(Write::Room(job), reply).await
    }

    /// Writes `copies` rooms just like `template` (record, memberships, history) but for their
    /// ids, in one transaction: a fast way to fill a database for measuring.
    pub async fn copy_room(&self, template: &str, copies: i64) -> Result<(), StoreError> {
        let (job, reply) = Job::new(RoomCopies {
            template: template.to_owned(),
            copies,
        });
        self.writer.write(job.into(), reply).await?;
        Ok(())
    }

    /// After a bulk load (`seed-rooms`): PostgreSQL's planner works from statistics that
    /// autovacuum refreshes only on its next look (up to a minute later), and until then plans
    /// statements (each cached plan too) as if the tables were as small as before the load:
    /// as empty, for a new database. SQLite keeps no statistics unless asked.
    pub async fn refresh_statistics(&self) -> Result<(), StoreError> {
        if let Database::Postgres(db) = &self.database {
            sqlx::query("ANALYZE").execute(&db.read).await?;
        }
        Ok(())
    }

    /// Creates the account and its first session; [`StoreError::UsernameTaken`] if the name
    /// is taken, and nothing is written then.
    #[tracing::instrument(level = "debug", skip_all, fields(username = %account.username))]
    pub async fn create_account(
        &self,
        account: &Account,
        session: &Session,
    ) -> Result<(), StoreError> {
        let (job, reply) = Job::new((account.clone(), session.clone()));
        self.writer.write(job.into(), reply).await?;
        Ok(())
    }

    /// The account of the bot of `level`, created with `id`, `username` and `created_at` if it
    /// does not exist yet. Bots have no token: their empty hash matches no secret.
    pub async fn bot_account(
        &self,
        level: BotLevel,
        id: &str,
        username: &str,
        created_at: Timestamp,
    ) -> Result<PlayerRef, StoreError> {
        let (job, reply) = Job::new(NewBot {
            level,
            id: id.to_owned(),
            username: username.to_owned(),
            created_at: created_at.to_owned(),
        });
        let (_, bot) = self.writer.write(job.into(), reply).await?;
        Ok(bot)
    }

    /// Publishes the next version of a game, creating the game (owned by `upload.owner`) if it
    /// is new. [`StoreError::NotTheOwner`] if someone else owns it; nothing is written then.
    /// Returns the version number.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %upload.game_id))]
    pub async fn publish_game_version(&self, upload: NewGameVersion) -> Result<i64, StoreError> {
        let (job, reply) = Job::new(upload);
        let (_, version) = self.writer.write(job.into(), reply).await?;
        Ok(version)
    }

    /// Adds `lines` to their games' logs, each game's oldest beyond [`GAME_LOG_LINES`] going.
    pub async fn append_game_logs(&self, lines: Vec<GameLogLine>) -> Result<(), StoreError> {
        let (job, reply) = Job::new(lines);
        self.writer.write(job.into(), reply).await?;
        Ok(())
    }

    /// Game `game`'s log lines, oldest first: those after id `after`, or else the newest; at
    /// most `limit`.
    pub async fn game_log(
        &self,
        game: &str,
        after: Option<i64>,
        limit: i64,
    ) -> Result<Vec<GameLogLine>, StoreError> {
        read!(self, |pool| reads::game_log(pool, game, after, limit))
    }

    /// Answers when the database does.
    pub async fn ping(&self) -> Result<(), StoreError> {
        read!(self, |pool| reads::ping(pool))
    }

    /// Waits until every write queued so far is durable (or failed): a stopping server's
    /// last step.
    pub async fn flush(&self) -> Result<(), StoreError> {
        let (job, reply) = queue::Job::new(writer::Flush);
        self.writer.write(job.into(), reply).await.map(|_| ())
    }

    pub async fn room(&self, id: &str) -> Result<Option<Room>, StoreError> {
        read!(self, |pool| reads::room(pool, id))
    }

    /// The oldest room with clock `clock` quick play can put `seeker` in.
    pub async fn oldest_open_room(
        &self,
        game: &str,
        clock: Option<Clock>,
        now: Timestamp,
        seeker: &QuickPlayGuard,
    ) -> Result<Option<String>, StoreError> {
        let seconds = clock.map(|clock| i64::from(clock.move_seconds));
        read!(self, |pool| reads::oldest_open_room(
            pool, game, seconds, now, seeker
        ))
    }

    /// Rooms waiting for players with no version since `before`, least
    /// recently changed first, at most `limit`, each with its version.
    pub async fn idle_waiting_rooms(
        &self,
        before: Timestamp,
        limit: i64,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        read!(self, |pool| reads::idle_waiting_rooms(pool, before, limit))
    }

    /// Each player's latest version in a room, by player id.
    pub async fn last_actions(&self, room_id: &str) -> Result<Vec<(String, i64)>, StoreError> {
        read!(self, |pool| reads::last_actions(pool, room_id))
    }

    /// Records that a server saw `player_id` at `at`, through `session_id` if it
    /// names one (its last use is kept to the minute); never moves either back.
    pub async fn mark_seen(
        &self,
        player_id: &str,
        session_id: Option<&str>,
        at: Timestamp,
    ) -> Result<(), StoreError> {
        let (job, reply) = Job::new(Seen {
            player_id: player_id.to_owned(),
            session_id: session_id.map(str::to_owned),
            at: at.to_owned(),
        });
        self.writer.write(job.into(), reply).await?;
        Ok(())
    }

    /// The `limit` earliest deadlines of all rooms, due or not, earliest first.
    pub async fn earliest_deadlines(&self, limit: i64) -> Result<Vec<Deadline>, StoreError> {
        read!(self, |pool| reads::earliest_deadlines(pool, limit))
    }

    /// A page of rooms, newest first, each with its sequence number (for the next cursor).
    pub async fn rooms(&self, query: &RoomQuery) -> Result<Vec<(i64, Room)>, StoreError> {
        read!(self, |pool| reads::rooms(pool, query))
    }

    /// Events of a room with a version above `after`, oldest first, at most `limit`.
    pub async fn events(
        &self,
        room_id: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<RoomEvent>, StoreError> {
        read!(self, |pool| reads::events(pool, room_id, after, limit))
    }

    pub async fn account(&self, id: &str) -> Result<Option<Account>, StoreError> {
        read!(self, |pool| reads::account(pool, id, false))
    }

    pub async fn account_by_name(&self, username: &str) -> Result<Option<Account>, StoreError> {
        read!(self, |pool| reads::account(pool, username, true))
    }

    /// The latest version of every uploaded game, by id.
    pub async fn latest_game_versions(&self) -> Result<Vec<GameVersionRecord>, StoreError> {
        read!(self, |pool| reads::latest_game_versions(pool))
    }

    /// One version of a game (the latest when `version` is `None`).
    pub async fn game_version(
        &self,
        game_id: &str,
        version: Option<i64>,
    ) -> Result<Option<GameVersionRecord>, StoreError> {
        read!(self, |pool| reads::game_version(pool, game_id, version))
    }

    /// The source of one version of a game.
    pub async fn game_source(
        &self,
        game_id: &str,
        version: i64,
    ) -> Result<Option<String>, StoreError> {
        read!(self, |pool| reads::game_source(pool, game_id, version))
    }

    /// A file of one version's frontend, if there is one: its gzipped copy when `gzip` is
    /// set and one is kept.
    pub async fn frontend_file(
        &self,
        file: &FileKey<'_>,
        gzip: bool,
    ) -> Result<Option<StoredFile>, StoreError> {
        read!(self, |pool| reads::frontend_file(pool, file, gzip))
    }
}
