//! Every write the store makes, as a value, and how one is applied inside a transaction: the
//! order of the steps is decided here once; each database says how to do each step in its SQL
//! ([`WriteSql`]).

use std::future::Future;

use serde_json::Value;
use sqlx::query::Query;
use sqlx::{Database, Encode, Type};

use super::rows::to_json;
use super::{RoomCommit, StoreError};
use crate::game::{BotLevel, PlayerRef};
use crate::model::{Account, NewGameVersion, Room, RoomEvent};

/// One write, as a value: what the writer task applies.
pub(super) enum Write {
    Room(Box<RoomCommit>),
    Account(Account),
    TokenHash {
        player_id: String,
        token_hash: String,
    },
    Bot {
        level: BotLevel,
        id: String,
        username: String,
        created_at: String,
    },
    GameVersion(NewGameVersion),
    /// Copies of a room, to fill a database for measuring.
    CopyRoom {
        template: String,
        copies: i64,
    },
}

impl Write {
    /// The room this write changes, if any. Writes to different rooms never depend on each
    /// other, so a batch may apply them in any order; ordering them by room makes every
    /// transaction take its row locks in one order, so two servers' batches cannot deadlock
    /// over the same rooms.
    pub(super) fn room(&self) -> Option<&str> {
        match self {
            Write::Room(commit) => Some(&commit.room.id),
            _ => None,
        }
    }
}

/// What a write produced, handed back once it is durable.
pub(super) enum Written {
    Room(Box<RoomCommit>),
    /// A write with nothing to hand back: an account, copies of a room.
    Applied,
    Bot(PlayerRef),
    GameVersion(i64),
}

/// What a write produced, before it is handed back with the write itself.
pub(super) enum Done {
    Nothing,
    Bot(PlayerRef),
    GameVersion(i64),
}

impl Done {
    pub(super) fn with(self, write: Write) -> Written {
        match (self, write) {
            (Done::Nothing, Write::Room(commit)) => Written::Room(commit),
            (Done::Bot(bot), _) => Written::Bot(bot),
            (Done::GameVersion(version), _) => Written::GameVersion(version),
            (Done::Nothing, _) => Written::Applied,
        }
    }
}

/// The steps of every write, in one database's SQL, run on a connection inside a transaction.
///
/// A refusal ([`StoreError::is_refusal`]) must be decided without a failed statement: in
/// PostgreSQL a failed statement aborts the whole transaction, which would undo the other
/// writes of the batch.
pub(super) trait WriteSql: Send {
    /// Runs a statement that takes no arguments and returns nothing (`BEGIN`, `COMMIT`).
    fn run(
        &mut self,
        statement: &'static str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Inserts a new room; with `unless_open_for`, only if no public room of its game is open
    /// to that player at this moment (quick play). `false` if it was not inserted.
    fn insert_room(
        &mut self,
        room: &Room,
        unless_open_for: Option<&str>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// The compare-and-set: writes the room only if it is still at `expected_version`.
    /// `joinable` and `finished` are written only when `listing_changed`.
    fn update_room(
        &mut self,
        room: &Room,
        expected_version: i64,
        listing_changed: bool,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Records that `player_id` is (`active`) or was in the room.
    fn write_member(
        &mut self,
        room_id: &str,
        player_id: &str,
        active: bool,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Copies the room's `finished` onto its memberships.
    fn set_members_finished(
        &mut self,
        room_id: &str,
        finished: bool,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    fn insert_event(
        &mut self,
        room_id: &str,
        event: &RoomEvent,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Tells other servers on the database about the commit once it is durable (PostgreSQL's
    /// `NOTIFY`, delivered only if the transaction commits); nothing where there are none.
    fn announce(
        &mut self,
        commit: &RoomCommit,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// [`StoreError::UsernameTaken`] if the name is taken.
    fn insert_account(
        &mut self,
        account: &Account,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The bot account of `level`, created first if it does not exist yet.
    fn ensure_bot(
        &mut self,
        level: BotLevel,
        id: &str,
        username: &str,
        created_at: &str,
    ) -> impl Future<Output = Result<PlayerRef, StoreError>> + Send;

    fn set_token_hash(
        &mut self,
        player_id: &str,
        token_hash: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Publishes the next version of a game, creating the game (owned by `upload.owner`) if it
    /// is new; [`StoreError::NotTheOwner`] if someone else owns it. The version number.
    fn publish(
        &mut self,
        upload: &NewGameVersion,
    ) -> impl Future<Output = Result<i64, StoreError>> + Send;

    /// Writes `copies` new rooms identical to `template` but for their ids: record,
    /// memberships and whole history, one statement per table.
    fn copy_room(
        &mut self,
        template: &str,
        copies: i64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// Binds the room's columns as the first eleven arguments, in table order, for both the
/// insert and the update (JSON as text: PostgreSQL's statements cast it). Values are bound
/// owned: sqlx's SQLite driver only encodes a borrowed string for the query's own lifetime,
/// which no bound over both databases can name.
pub(super) fn bind_room<'q, DB>(
    query: Query<'q, DB, DB::Arguments>,
    room: &'q Room,
) -> Query<'q, DB, DB::Arguments>
where
    DB: Database,
    for<'t> String: Encode<'t, DB> + Type<DB>,
    for<'t> bool: Encode<'t, DB> + Type<DB>,
    for<'t> i64: Encode<'t, DB> + Type<DB>,
{
    query
        .bind(room.id.clone())
        .bind(room.game.clone())
        .bind(room.private)
        .bind(room.version)
        .bind(room.joinable)
        .bind(room.finished)
        .bind(room.state.to_string())
        .bind(to_json(&room.players))
        .bind(to_json(&room.inactive_players))
        .bind(room.created_at.clone())
        .bind(room.updated_at.clone())
}

/// Binds an event of `room_id` as the ten arguments of an insert into `room_events`, in
/// table order.
pub(super) fn bind_event<'q, DB>(
    query: Query<'q, DB, DB::Arguments>,
    room_id: &'q str,
    event: &'q RoomEvent,
) -> Query<'q, DB, DB::Arguments>
where
    DB: Database,
    for<'t> String: Encode<'t, DB> + Type<DB>,
    for<'t> Option<String>: Encode<'t, DB> + Type<DB>,
    for<'t> bool: Encode<'t, DB> + Type<DB>,
    for<'t> i64: Encode<'t, DB> + Type<DB>,
{
    query
        .bind(room_id.to_owned())
        .bind(event.version)
        .bind(event.kind.as_str().to_owned())
        .bind(event.player.as_ref().map(|p| p.id.clone()))
        .bind(event.mv.as_ref().map(Value::to_string))
        .bind(event.state.to_string())
        .bind(event.joinable)
        .bind(event.finished)
        .bind(to_json(&event.players))
        .bind(event.created_at.clone())
}

/// Applies one write inside the batch's transaction.
pub(super) async fn apply<C: WriteSql>(conn: &mut C, write: &Write) -> Result<Done, StoreError> {
    match write {
        Write::Room(commit) => {
            apply_commit(conn, commit).await?;
            Ok(Done::Nothing)
        }
        Write::Account(account) => {
            conn.insert_account(account).await?;
            Ok(Done::Nothing)
        }
        Write::TokenHash {
            player_id,
            token_hash,
        } => {
            conn.set_token_hash(player_id, token_hash).await?;
            Ok(Done::Nothing)
        }
        Write::Bot {
            level,
            id,
            username,
            created_at,
        } => Ok(Done::Bot(
            conn.ensure_bot(*level, id, username, created_at).await?,
        )),
        Write::GameVersion(upload) => Ok(Done::GameVersion(conn.publish(upload).await?)),
        Write::CopyRoom { template, copies } => {
            conn.copy_room(template, *copies).await?;
            Ok(Done::Nothing)
        }
    }
}

/// A room change: the compare-and-set (or the insert), then the memberships and the events.
/// [`StoreError::Conflict`] if the room moved on, decided before anything is written.
async fn apply_commit<C: WriteSql>(conn: &mut C, commit: &RoomCommit) -> Result<(), StoreError> {
    let room = &commit.room;
    let written = match commit.expected_version {
        None => {
            conn.insert_room(room, commit.only_if_no_open_room_for.as_deref())
                .await?
        }
        Some(version) => {
            conn.update_room(room, version, commit.listing_changed)
                .await?
        }
    };
    if !written {
        return Err(StoreError::Conflict);
    }
    if commit.members_changed {
        let members = room
            .players
            .iter()
            .map(|p| (p, true))
            .chain(room.inactive_players.iter().map(|p| (p, false)));
        for (player, active) in members {
            conn.write_member(&room.id, &player.id, active).await?;
        }
    }
    if commit.finished_changed && commit.expected_version.is_some() {
        conn.set_members_finished(&room.id, room.finished).await?;
    }
    // Not a refusal if one fails: the compare-and-set, written first, already decided that
    // these versions are new, so a duplicate is a failure that undoes the whole transaction.
    for event in &commit.events {
        conn.insert_event(&room.id, event).await?;
    }
    conn.announce(commit).await
}

/// The steps whose SQL both databases accept as it is (SQLite binds `$n` placeholders too),
/// for the body of an `impl WriteSql`. `$lock_game` is the clause that locks a game's row
/// while its next version is numbered (empty on SQLite, whose one writer needs none), and
/// `$copy_rooms` inserts `$2` copies of room `$1` under new random ids, in the database's
/// own way of counting and of making ids.
macro_rules! shared_steps {
    (lock_game: $lock_game:literal, copy_rooms: $copy_rooms:literal) => {
        async fn run(&mut self, statement: &'static str) -> Result<(), StoreError> {
            sqlx::query(statement).execute(self).await?;
            Ok(())
        }

        async fn write_member(
            &mut self,
            room_id: &str,
            player_id: &str,
            active: bool,
        ) -> Result<(), StoreError> {
            sqlx::query(
                "INSERT INTO room_players (room_id, player_id, active, room_seq, game, finished) \
                 SELECT $1, $2, $3, seq, game, finished FROM rooms WHERE id = $1 \
                 ON CONFLICT (room_id, player_id) DO UPDATE SET active = excluded.active",
            )
            .bind(room_id)
            .bind(player_id)
            .bind(active)
            .execute(self)
            .await?;
            Ok(())
        }

        async fn set_members_finished(
            &mut self,
            room_id: &str,
            finished: bool,
        ) -> Result<(), StoreError> {
            sqlx::query("UPDATE room_players SET finished = $2 WHERE room_id = $1")
                .bind(room_id)
                .bind(finished)
                .execute(self)
                .await?;
            Ok(())
        }

        /// A taken name is refused by the row count, not by a failed statement.
        async fn insert_account(&mut self, account: &Account) -> Result<(), StoreError> {
            let result = sqlx::query(
                "INSERT INTO players (id, username, token_hash, created_at) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            )
            .bind(&account.id)
            .bind(&account.username)
            .bind(&account.token_hash)
            .bind(&account.created_at)
            .execute(self)
            .await?;
            // Ids are random 128-bit numbers: a conflict is the name.
            match result.rows_affected() {
                1 => Ok(()),
                _ => Err(StoreError::UsernameTaken),
            }
        }

        async fn ensure_bot(
            &mut self,
            level: BotLevel,
            id: &str,
            username: &str,
            created_at: &str,
        ) -> Result<PlayerRef, StoreError> {
            sqlx::query(
                "INSERT INTO players (id, username, token_hash, created_at, bot) \
                 VALUES ($1, $2, '', $3, $4) ON CONFLICT DO NOTHING",
            )
            .bind(id)
            .bind(username)
            .bind(created_at)
            .bind(level.as_str())
            .execute(&mut *self)
            .await?;
            let bot: PlayerRow = sqlx::query_as("SELECT id, username FROM players WHERE bot = $1")
                .bind(level.as_str())
                .fetch_one(self)
                .await?;
            Ok(bot.into())
        }

        async fn set_token_hash(
            &mut self,
            player_id: &str,
            token_hash: &str,
        ) -> Result<(), StoreError> {
            sqlx::query("UPDATE players SET token_hash = $1 WHERE id = $2 AND bot IS NULL")
                .bind(token_hash)
                .bind(player_id)
                .execute(self)
                .await?;
            Ok(())
        }

        async fn publish(&mut self, upload: &NewGameVersion) -> Result<i64, StoreError> {
            sqlx::query(
                "INSERT INTO games (id, owner_id, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (id) DO NOTHING",
            )
            .bind(&upload.game_id)
            .bind(&upload.owner_id)
            .bind(&upload.created_at)
            .execute(&mut *self)
            .await?;
            let owner: String =
                sqlx::query_scalar(concat!("SELECT owner_id FROM games WHERE id = $1", $lock_game))
                    .bind(&upload.game_id)
                    .fetch_one(&mut *self)
                    .await?;
            if owner != upload.owner_id {
                return Err(StoreError::NotTheOwner);
            }
            let version: i64 = sqlx::query_scalar(
                "INSERT INTO game_versions (game_id, version, name, description, min_players, \
                 max_players, format, source, sha256, created_at, frontend, move_example) \
                 SELECT $1, coalesce(max(version), 0) + 1, $2, $3, $4, $5, $6, $7, $8, $9, $10, \
                 $11 FROM game_versions WHERE game_id = $1 RETURNING version",
            )
            .bind(&upload.game_id)
            .bind(&upload.name)
            .bind(&upload.description)
            .bind(upload.min_players as i64)
            .bind(upload.max_players as i64)
            .bind(&upload.format)
            .bind(&upload.source)
            .bind(&upload.sha256)
            .bind(&upload.created_at)
            .bind(&upload.frontend)
            .bind(&upload.move_example)
            .fetch_one(self)
            .await?;
            Ok(version)
        }

        async fn copy_room(&mut self, template: &str, copies: i64) -> Result<(), StoreError> {
            let before: i64 = sqlx::query_scalar("SELECT coalesce(max(seq), 0) FROM rooms")
                .fetch_one(&mut *self)
                .await?;
            sqlx::query($copy_rooms)
                .bind(template)
                .bind(copies)
                .execute(&mut *self)
                .await?;
            sqlx::query(
                "INSERT INTO room_players (room_id, player_id, active, room_seq, game, finished) \
                 SELECT r.id, m.player_id, m.active, r.seq, r.game, r.finished \
                 FROM rooms r, room_players m WHERE r.seq > $2 AND m.room_id = $1",
            )
            .bind(template)
            .bind(before)
            .execute(&mut *self)
            .await?;
            sqlx::query(
                "INSERT INTO room_events (room_id, version, kind, player_id, move, state, joinable, \
                 finished, players, created_at) \
                 SELECT r.id, e.version, e.kind, e.player_id, e.move, e.state, e.joinable, \
                 e.finished, e.players, e.created_at \
                 FROM rooms r, room_events e WHERE r.seq > $2 AND e.room_id = $1",
            )
            .bind(template)
            .bind(before)
            .execute(self)
            .await?;
            Ok(())
        }
    };
}
pub(super) use shared_steps;
