//! What differs between SQLite and PostgreSQL, in one trait: the SQL that is not the same in
//! both, and the two steps whose code differs (quick play's lock and telling other servers of
//! a commit). Everything else (the reads in [`super::reads`], the batch in [`super::batch`],
//! the other writes in [`super::writes`]) is written once, generic over a [`Dialect`].
//!
//! The differences in SQL are few: PostgreSQL keeps JSON in `json`/`jsonb` columns, so text
//! bound for them is cast, while SQLite keeps it as text (and must not cast it: its `CAST(… AS
//! json)` would turn a document into a number); SQLite spells a flag 0 or 1 and its partial
//! indexes are written with those literals; and each makes ids and counts its own way. Each
//! database writes its statements out in full, in its own module, so the statement that runs
//! is the one a reader sees; `statements.sql` beside this file holds every final statement of
//! both, rewritten by a test, so a review shows what changed.

use std::future::Future;

pub(super) use super::sql::SetSql;
use super::sql::{AnyConnection, Arg, Exec, Sql, Statement};
use super::types::{RoomCommit, StoreError};

/// One row of a [`SetSql`] being bound: each value is put under its column's name, which must
/// be the next one the statement lists (checked in debug builds, so a reordering that would
/// shift every value fails the first test that writes; a release build only counts, since
/// finding the name was a few tenths of a percent of the writer's samples).
pub(super) struct SetRow<'a> {
    statement: &'a mut Statement,
    sql: SetSql,
    /// How many columns have been given a value so far.
    given: usize,
}

impl<'a> SetRow<'a> {
    pub(super) fn new(statement: &'a mut Statement, sql: &SetSql) -> Self {
        Self {
            statement,
            sql: *sql,
            given: 0,
        }
    }

    pub(super) fn put(&mut self, column: &str, value: impl Into<Arg>) {
        debug_assert_eq!(
            self.sql.columns.split(", ").nth(self.given),
            Some(column),
            "values are put in the order of the statement's columns"
        );
        self.given += 1;
        self.statement.push(value);
    }

    /// Whether every column was given a value.
    pub(super) fn complete(self) -> bool {
        self.given == self.sql.width()
    }
}

/// The row of a new room: its record and, for quick play, the player it must not be open to
/// (see [`Dialect::INSERT_ROOMS`]).
pub(super) const NEW_ROOM_ROW: &str = "id, game, private, rated, \
     version, joinable, finished, state, players, inactive_players, trigger_timeout_at, \
     to_move, turns, rematch, seats_held_until, score, \
     created_at, updated_at, game_version, clock_move_seconds, quick_play_for, seen_since, \
     quick_play_rating, quick_play_since";

/// The row of a room change: what it writes, and the version it replaces.
pub(super) const ROOM_CHANGE_ROW: &str = "id, \
     version, joinable, finished, state, players, inactive_players, trigger_timeout_at, \
     to_move, turns, rematch, seats_held_until, score, updated_at, expected_version";

/// The row of one version in a room's history.
pub(super) const EVENT_ROW: &str = "room_id, version, kind, player_id, move, state, \
     joinable, finished, players, created_at, trigger_timeout_at, to_move";

/// One database's SQL and the steps whose code differs.
pub(super) trait Dialect: Sql<Connection: Exec> {
    /// Begins the writer's transaction.
    const BEGIN: &'static str;
    /// Whether a statement built at run time numbers its placeholders (`$n`) or leaves them
    /// anonymous (`?`, bound in order).
    const NUMBERED_PLACEHOLDERS: bool;
    /// Whether the writer runs on a thread of its own, with a runtime of one thread, rather
    /// than on the server's runtime: right where the connection is a thread of sqlx's with no
    /// socket (SQLite), which needs nothing of the server runtime's reactor.
    const WRITER_THREAD: bool;
    /// Whether a batch's writes go to the database merged into fewer statements
    /// ([`super::merging`]): where each statement is a round trip to another process.
    const MERGES_WRITES: bool;
    /// The literal for false in a partial index's condition.
    const FALSE: &'static str;
    /// The literal for true.
    const TRUE: &'static str;
    /// Whether a room listing ([`super::reads::listing`]) steers the planner to its index
    /// ranges: each range limited to the page on its own, its flags named as literals (so that
    /// a plan made once for any values still reads that range), and each membership's room
    /// looked up by key. PostgreSQL's planner otherwise reads every row of every range and
    /// sorts them, or walks the rooms' key to join them. SQLite merges the ranges in their
    /// index order and stops at the page.
    const LISTING_STEERED: bool;
    /// Quick play's search: the oldest room of game `$1` with clock `$3` open to player `$2`
    /// at `$4` (no seats held), with someone in it seen since `$5`, and opened by quick play
    /// for a rating whose window holds `$6` at `$7` ms (see
    /// [`super::types::QuickPlayGuard`]).
    const OLDEST_OPEN_ROOM: &'static str;
    /// Rooms waiting for players (joinable, unfinished) with no version since `$1`, least
    /// recently changed first, at most `$2`.
    const IDLE_WAITING_ROOMS: &'static str;
    /// New rooms ([`NEW_ROOM_ROW`]), each inserted unless its id is taken or, for quick play,
    /// a room of its game with its clock is open to that player; returns the ids inserted.
    const INSERT_ROOMS: SetSql;
    /// The compare-and-set of a batch's moves ([`ROOM_CHANGE_ROW`]); returns the ids written
    /// (a room not returned lost its race).
    const UPDATE_ROOMS: SetSql;
    /// The same, for changes that also move the room in the lobby (`joinable`, `finished`);
    /// `None` where [`Self::UPDATE_ROOMS`] writes those too at no cost to a move.
    const UPDATE_LISTED_ROOMS: Option<SetSql>;
    /// The history of a batch ([`EVENT_ROW`]).
    const INSERT_EVENTS: SetSql;
    /// The owner of game `$1`, its row locked until the transaction ends where others could
    /// publish at the same time.
    const GAME_OWNER: &'static str;
    /// `$2` copies of room `$1` under new random ids.
    const COPY_ROOMS: &'static str;
    /// Takes at most `$4` of endpoint `$1`'s rows due at `$2` that no server holds, until
    /// `$3`, earliest due first; returns them.
    const CLAIM_OUTBOX: &'static str;
    /// Takes notices due at `$1` until `$2`, at most `$3`, in the columns `notices::claimed`
    /// reads.
    const CLAIM_NOTICES: &'static str;
    /// Takes (removes) the turns waiting to be pushed that began by `$1` and makes pushes of
    /// those that still stand, in one statement answering `taken` and `made` (the turns taken
    /// and those pushed), where the database can (PostgreSQL: several servers take turns at
    /// once); `None` where the writer is alone (SQLite), which does it in steps
    /// (`turn_pushes::take_turn_pushes`).
    const TAKE_TURN_PUSHES: Option<&'static str>;
    /// Held until the transaction ends, on place `$1` (a room's id, or `lobby`): where
    /// several servers write messages (PostgreSQL), a place's messages commit in the order of
    /// their ids, so a stream that read up to one id has every message before it. `None`
    /// where the writer is alone (SQLite), which commits in that order anyway.
    const CHAT_LOCK: Option<&'static str>;
    /// Tells other servers, once the transaction commits, of chat change `$1` (see
    /// `postgres::listener`); `None` where there are no others to tell.
    const CHAT_NOTIFY: Option<&'static str>;

    /// What the writer keeps from one batch to the next besides its connection.
    type PreparedStatements: Default + Send;
    /// Where a batch's room changes and its COMMIT run: the writer's connection as it is, or
    /// (SQLite) its handle taken from sqlx's thread for the batch (`sqlite::raw`).
    type Batch<'c>: Exec
    where
        Self: 'c;

    /// `conn`, as the connection of this database among the two.
    fn any(conn: &mut Self::Connection) -> AnyConnection<'_>;

    /// The batch's way to `conn` for as long as it lasts.
    fn batch<'c>(
        conn: &'c mut Self::Connection,
        kept: &'c mut Self::PreparedStatements,
    ) -> impl Future<Output = Result<Self::Batch<'c>, StoreError>> + Send;

    /// Makes quick play's check-then-insert for `games` atomic against other servers' (held
    /// until the transaction ends).
    fn lock_quick_play(
        conn: &mut impl Exec,
        games: &[&str],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Makes the read-then-write of the ratings of `keys` (game, player) atomic against other
    /// servers' (held until the transaction ends).
    fn lock_ratings(
        conn: &mut impl Exec,
        keys: &[(&str, &str)],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Tells other servers on the database about these commits once they are durable.
    fn announce(
        conn: &mut impl Exec,
        commits: &[&RoomCommit],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

#[cfg(test)]
mod tests {
    use super::SetSql;

    #[test]
    fn a_set_statement_numbers_its_rows_placeholders_in_order() {
        let sql = SetSql {
            columns: "id, a",
            statement: "UPDATE t SET a = v.a FROM v WHERE t.id = v.id",
        };
        assert_eq!(
            sql.text(3, true),
            "WITH v (id, a) AS (VALUES ($1, $2), ($3, $4), ($5, $6)) \
             UPDATE t SET a = v.a FROM v WHERE t.id = v.id"
        );
        assert_eq!(
            sql.text(2, false),
            "WITH v (id, a) AS (VALUES (?, ?), (?, ?)) UPDATE t SET a = v.a FROM v WHERE t.id = v.id"
        );
    }
}
