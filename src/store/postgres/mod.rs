//! PostgreSQL, for running several servers on one database.
//!
//! Each server writes through its own group-committing writer and reads through its own pool;
//! the database's row locks, the version compare-and-set and an advisory lock for quick play
//! keep the servers from stepping on each other (see its [`Dialect`]). Every room commit sends a
//! `NOTIFY` (delivered only once it is durable), and each server keeps one connection
//! listening (see [`listener`]), so live streams on one server hear of moves made on another.
//!
//! One stop in the life of a move: `docs/internals.md`.

mod listener;
#[cfg(test)]
mod merging_tests;
#[cfg(test)]
mod plan_tests;
pub(super) mod presence;
mod session_reads;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{PgConnection, Postgres};

use super::dialect::{Dialect, SetRow, SetSql, EVENT_ROW, NEW_ROOM_ROW, ROOM_CHANGE_ROW};
use super::sets::execute_set;
use super::sql::{AnyConnection, Exec, Statement};
use super::types::{RoomCommit, StoreError};
use crate::domain::ids::new_id;
use session_reads::SessionReads;

/// Quick play's lock on game `$1`, held until the transaction ends.
pub(super) const QUICK_PLAY_LOCK: &str =
    "SELECT pg_advisory_xact_lock(hashtextextended('turnhouse quick play ' || $1, 0))";

/// The ratings' locks, one per (game, player), held until the transaction ends: taken in one
/// order (by their number), so two servers' batches never wait for each other in a circle
/// over them.
pub(super) const RATINGS_LOCK: SetSql = SetSql {
    columns: "game, player_id",
    statement: "SELECT pg_advisory_xact_lock(s.lock) FROM (SELECT DISTINCT \
         hashtextextended('turnhouse rating ' || v.game || ' ' || v.player_id, 0) AS lock \
         FROM v) s ORDER BY s.lock",
};

/// The channel every room commit is announced on ([`NOTIFY`] names it too).
pub(super) const CHANNEL: &str = "turnhouse";

/// Announces commits: for each, the room, its new version, this server (so it can skip what it
/// published itself) and, for a public room whose lobby entry changed, how (`-` if not).
pub(super) const NOTIFY: SetSql = SetSql {
    columns: "room_id, version, lobby",
    statement: "SELECT pg_notify('turnhouse', v.room_id || ' ' || v.version || ' ' || \
         current_setting('turnhouse.instance') || ' ' || v.lobby) FROM v",
};
const READ_CONNECTIONS: u32 = 8;

pub(super) fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

#[derive(Clone)]
pub(super) struct PgStore {
    pub(super) read: PgPool,
    /// Requests' sessions, read together through `read`.
    pub(super) sessions: Arc<SessionReads>,
    /// This server among those on the database: its commits' notifications carry it.
    instance: String,
}

/// PostgreSQL keeps JSON in `json` (state, moves, kept exactly as written) and `jsonb` (seat
/// lists) columns, so text bound for them is cast; several servers write at once.
///
/// What keeps several writers safe: each compare-and-set is an `UPDATE … WHERE version = …`,
/// which PostgreSQL re-checks against the latest row after waiting for another writer's lock,
/// so exactly one of two racing commits matches; refusals use `ON CONFLICT DO NOTHING` and what
/// comes back rather than failed statements (a failed statement would abort the whole batch's
/// transaction); and quick play takes a per-game advisory lock, because `INSERT … WHERE NOT
/// EXISTS` alone lets two transactions that cannot see each other both insert.
impl Dialect for Postgres {
    /// READ COMMITTED, PostgreSQL's default: each statement sees what other servers committed
    /// before it began, which is what the compare-and-set and the quick-play check need.
    const BEGIN: &'static str = "BEGIN";
    const NUMBERED_PLACEHOLDERS: bool = true;
    /// The connections' sockets are the server runtime's: a writer elsewhere would hear of
    /// each answer through that runtime's thread, one more hand-off per statement.
    const WRITER_THREAD: bool = false;
    const MERGES_WRITES: bool = true;
    const FALSE: &'static str = "false";
    const TRUE: &'static str = "true";
    const LISTING_STEERED: bool = true;
    /// The game's open rooms are walked in their index's order, oldest first, and the walk
    /// stops at the first that passes: as on SQLite. Left to itself, PostgreSQL's planner
    /// multiplies the filters' guesses into a row or two, reads every open room to sort what
    /// passes, and, planning for a player with no memberships, can join each open room to a
    /// scan of all memberships. So the filters are one `CASE`, whose selectivity it does not
    /// guess so low, and each `EXISTS` has an `OFFSET 0`, which keeps it a lookup by key for
    /// each room walked rather than a join, or a hash of the player's memberships.
    const OLDEST_OPEN_ROOM: &'static str = "SELECT o.id FROM rooms o \
         WHERE o.game = $1 AND o.private = false AND o.joinable = true AND o.finished = false \
         AND CASE WHEN o.clock_move_seconds IS NOT DISTINCT FROM $3 \
         AND (o.seats_held_until IS NULL OR o.seats_held_until <= $4) \
         AND NOT EXISTS (SELECT 1 FROM room_players m \
         WHERE m.room_id = o.id AND m.player_id = $2 AND m.active = true OFFSET 0) \
         AND (o.updated_at >= $5 OR EXISTS (SELECT 1 FROM room_players s \
         JOIN players p ON p.id = s.player_id \
         WHERE s.room_id = o.id AND s.active = true AND p.last_seen_at >= $5 OFFSET 0)) \
         AND (o.quick_play_rating IS NULL OR $7 - o.quick_play_since >= 60000 \
         OR abs(o.quick_play_rating - $6) <= 100 + 50 * (($7 - o.quick_play_since) / 5000)) \
         THEN true ELSE false END \
         ORDER BY o.seq LIMIT 1";
    /// `waiting_since` is `updated_at` while a room is joinable and unfinished (migration
    /// 0031 says why it is a column of its own).
    const IDLE_WAITING_ROOMS: &'static str = "SELECT id, version FROM rooms \
         WHERE waiting_since < $1 ORDER BY waiting_since LIMIT $2";
    const INSERT_ROOMS: SetSql = SetSql {
        columns: NEW_ROOM_ROW,
        statement:
            "INSERT INTO rooms (id, game, private, rated, version, joinable, finished, state, \
             players, inactive_players, trigger_timeout_at, to_move, turns, rematch, \
             seats_held_until, score, \
             created_at, updated_at, game_version, clock_move_seconds, quick_play_rating, \
             quick_play_since) \
             SELECT v.id, v.game, v.private, v.rated, v.version, v.joinable, v.finished, \
             CAST(v.state AS json), CAST(v.players AS jsonb), \
             CAST(v.inactive_players AS jsonb), v.trigger_timeout_at, v.to_move, \
             CAST(v.turns AS json), \
             CAST(v.rematch AS jsonb), v.seats_held_until, CAST(v.score AS jsonb), \
             v.created_at, v.updated_at, v.game_version, v.clock_move_seconds, v.quick_play_rating, v.quick_play_since FROM v \
             WHERE v.quick_play_for IS NULL OR NOT EXISTS (SELECT 1 FROM rooms o \
             WHERE o.game = v.game \
             AND o.clock_move_seconds IS NOT DISTINCT FROM v.clock_move_seconds \
             AND o.private = false AND o.joinable = true AND o.finished = false \
             AND (o.seats_held_until IS NULL OR o.seats_held_until <= v.updated_at) \
             AND NOT EXISTS (SELECT 1 FROM room_players m \
             WHERE m.room_id = o.id AND m.player_id = v.quick_play_for AND m.active = true) \
             AND (o.updated_at >= v.seen_since OR EXISTS (SELECT 1 FROM room_players s \
             JOIN players p ON p.id = s.player_id \
             WHERE s.room_id = o.id AND s.active = true AND p.last_seen_at >= v.seen_since)) \
             AND (o.quick_play_rating IS NULL \
             OR v.quick_play_since - o.quick_play_since >= 60000 \
             OR abs(o.quick_play_rating - v.quick_play_rating) <= 100 + 50 * \
             ((v.quick_play_since - o.quick_play_since) / 5000))) \
             ON CONFLICT DO NOTHING RETURNING id",
    };
    /// Moves and changes that move the room in the lobby alike, in one statement and so one
    /// round trip: PostgreSQL writes a row's new version in its page, with no index entry
    /// ("heap-only"), when no indexed value changed, whether or not the `UPDATE` assigned it.
    const UPDATE_ROOMS: SetSql = SetSql {
        columns: ROOM_CHANGE_ROW,
        statement: "UPDATE rooms SET version = v.version, joinable = v.joinable, \
             finished = v.finished, state = CAST(v.state AS json), \
             players = CAST(v.players AS jsonb), \
             inactive_players = CAST(v.inactive_players AS jsonb), \
             trigger_timeout_at = v.trigger_timeout_at, to_move = v.to_move, \
             turns = CAST(v.turns AS json), \
             rematch = CAST(v.rematch AS jsonb), \
             seats_held_until = v.seats_held_until, score = CAST(v.score AS jsonb), \
             updated_at = v.updated_at \
             FROM v WHERE rooms.id = v.id AND rooms.version = v.expected_version \
             RETURNING rooms.id",
    };
    const UPDATE_LISTED_ROOMS: Option<SetSql> = None;
    const INSERT_EVENTS: SetSql = SetSql {
        columns: EVENT_ROW,
        statement: "INSERT INTO room_events (room_id, version, kind, player_id, move, state, \
             joinable, finished, players, created_at, trigger_timeout_at, to_move) \
             SELECT v.room_id, v.version, v.kind, v.player_id, CAST(v.move AS json), \
             CAST(v.state AS json), v.joinable, v.finished, CAST(v.players AS jsonb), \
             v.created_at, v.trigger_timeout_at, v.to_move FROM v",
    };
    const GAME_OWNER: &'static str = "SELECT owner_id FROM games WHERE id = $1 FOR UPDATE";
    /// A row another server is taking is skipped, not waited for: each goes to one server.
    const CLAIM_OUTBOX: &'static str = "UPDATE outbox SET claimed_until = $3 WHERE seq IN \
         (SELECT seq FROM outbox WHERE endpoint_id = $1 AND due_at <= $2 \
         AND (claimed_until IS NULL OR claimed_until <= $2) ORDER BY due_at LIMIT $4 FOR UPDATE SKIP LOCKED) \
         RETURNING seq, id, type, room_id, game, version, data, body, created_at, retry_until, \
         attempts";
    const CLAIM_NOTICES: &'static str = "UPDATE notices SET claimed_until = $2 WHERE seq IN \
         (SELECT seq FROM notices WHERE due_at <= $1 \
         AND (claimed_until IS NULL OR claimed_until <= $1) ORDER BY due_at LIMIT $3 \
         FOR UPDATE SKIP LOCKED) \
         RETURNING seq, channel, kind, player_id, destination, room_id, version, body, \
         created_at, attempts";
    const TAKE_TURN_PUSHES: Option<&'static str> = Some(
        "WITH taken AS (DELETE FROM turn_pushes WHERE at <= $1 \
         RETURNING room_id, player_id, version, at), \
         made AS (INSERT INTO notices (channel, kind, player_id, destination, room_id, version, \
         created_at, state, due_at) SELECT 'push', 'turn', t.player_id, s.id, t.room_id, \
         t.version, t.at, 'pending', t.at FROM taken t \
         JOIN rooms r ON r.id = t.room_id AND (r.turns ->> t.player_id) = t.at \
         JOIN push_subscriptions s ON s.player_id = t.player_id \
         WHERE NOT EXISTS (SELECT 1 FROM muted_rooms u \
         WHERE u.player_id = t.player_id AND u.room_id = t.room_id) \
         RETURNING room_id, player_id) \
         SELECT (SELECT count(*) FROM taken) AS taken, \
         (SELECT count(*) FROM (SELECT DISTINCT room_id, player_id FROM made) d) AS made",
    );
    const CHAT_LOCK: Option<&'static str> =
        Some("SELECT pg_advisory_xact_lock(hashtextextended('turnhouse chat ' || $1, 0))");
    const CHAT_NOTIFY: Option<&'static str> = Some(
        "SELECT pg_notify('turnhouse_chat', $1 || ' ' || current_setting('turnhouse.instance'))",
    );
    const COPY_ROOMS: &'static str =
        "INSERT INTO rooms (id, game, private, rated, version, joinable, finished, state, players, \
         inactive_players, created_at, updated_at, game_version, trigger_timeout_at, to_move, turns, \
         clock_move_seconds, rematch, seats_held_until, score) \
         SELECT replace(gen_random_uuid()::text, '-', ''), game, private, rated, version, joinable, \
         finished, state, players, inactive_players, created_at, updated_at, game_version, trigger_timeout_at, \
         to_move, turns, clock_move_seconds, rematch, seats_held_until, score \
         FROM generate_series(1, $2) AS n, rooms WHERE id = $1 ORDER BY n";

    type PreparedStatements = ();
    type Batch<'c> = &'c mut PgConnection;

    fn any(conn: &mut Self::Connection) -> AnyConnection<'_> {
        AnyConnection::Postgres(conn)
    }

    async fn batch<'c>(
        conn: &'c mut PgConnection,
        _kept: &'c mut (),
    ) -> Result<&'c mut PgConnection, StoreError> {
        Ok(conn)
    }

    /// Held until the transaction ends: a quick play on another server that is about to open
    /// a room of one of these games waits here, then sees the room this one opened.
    async fn lock_quick_play(conn: &mut impl Exec, games: &[&str]) -> Result<(), StoreError> {
        for game in games {
            let lock = Statement::new(QUICK_PLAY_LOCK).bind(*game);
            conn.execute(lock).await?;
        }
        Ok(())
    }

    /// Held until the transaction ends: another server finishing a game of the same player
    /// reads the rating once this one's is committed, in a statement of its own (a statement
    /// sees the database as it was when it began, before any wait for a lock in it).
    async fn lock_ratings(conn: &mut impl Exec, keys: &[(&str, &str)]) -> Result<(), StoreError> {
        execute_set::<Self, _>(conn, RATINGS_LOCK, keys, |row, (game, player)| {
            row.put("game", *game);
            row.put("player_id", *player);
        })
        .await
    }

    /// `NOTIFY`, which PostgreSQL delivers only once the transaction has committed: for each
    /// commit the room, its new version, this server (so it can skip what it published
    /// itself) and, for a public room whose lobby entry changed, how. Order and completeness
    /// come from the history, which a listener reads; a notification only says there is more.
    async fn announce(conn: &mut impl Exec, commits: &[&RoomCommit]) -> Result<(), StoreError> {
        let mut statement = Statement::of_set(NOTIFY, commits.len(), true);
        for commit in commits {
            let lobby = match commit.lobby_change {
                Some(change) if !commit.room.private => change.as_str(),
                _ => "-",
            };
            let mut row = SetRow::new(&mut statement, &NOTIFY);
            row.put("room_id", commit.room.id.as_str());
            row.put("version", commit.room.version.to_string());
            row.put("lobby", lobby);
        }
        conn.execute(statement).await
    }
}

/// How long the first connection may take before the server gives up on PostgreSQL.
const FIRST_CONNECTION: Duration = Duration::from_secs(10);

/// One connection made before any pool: a pool retries a refused connection until its own
/// time-out (30 s) and then says only that it timed out, where an operator needs the address
/// and the cause at once.
async fn first_connection(options: &PgConnectOptions) -> Result<(), StoreError> {
    let unreachable = |cause: String| StoreError::Unreachable {
        host: options.get_host().to_owned(),
        port: options.get_port(),
        cause,
    };
    let connecting = sqlx::ConnectOptions::connect(options);
    match tokio::time::timeout(FIRST_CONNECTION, connecting).await {
        Ok(Ok(conn)) => {
            let _ = sqlx::Connection::close(conn).await;
            Ok(())
        }
        Ok(Err(err)) => Err(unreachable(err.to_string())),
        Err(_) => Err(unreachable(format!(
            "no answer within {} s",
            FIRST_CONNECTION.as_secs()
        ))),
    }
}

/// Statements the writer's connection keeps prepared. A batch's statements differ by their
/// number of rows, so each kind has up to one text per batch size (at most 256).
const WRITER_STATEMENTS: usize = 1024;

/// The writer's connection: its statements (a batch's, whose texts vary only by their number
/// of rows) each planned once, when first prepared, rather than for every batch. By default
/// PostgreSQL plans each execution of a statement with parameters anew for its values (a
/// "custom" plan), which was about a sixth of what the writer's PostgreSQL process spent; the
/// plans of these statements do not depend on the values (each row is found by its key).
///
/// A plan made once is kept for the life of the connection, so it must not depend on the
/// tables' sizes either. Planned while the memberships held 2,000 rows, a batch's update of 14
/// of them was a hash join over a scan of the whole table, cheaper then than 14 lookups by
/// key; kept while the table grew fivefold in a few seconds, that plan made the statement
/// take 1.4 ms instead of about 0.05. Every statement the writer sends finds its rows by a
/// key or an index, so it plans nested loops over index lookups only (a table with no index
/// to use is still scanned).
fn writer_options(options: PgConnectOptions) -> PgConnectOptions {
    options
        .statement_cache_capacity(WRITER_STATEMENTS)
        .options([
            ("plan_cache_mode", "force_generic_plan"),
            ("enable_hashjoin", "off"),
            ("enable_mergejoin", "off"),
            ("enable_seqscan", "off"),
        ])
}

impl PgStore {
    /// Connects to the database at `url` and brings its schema up to date (migrations run
    /// under PostgreSQL's advisory lock, so servers starting together apply them once). A
    /// statement waits up to `busy_timeout` for a lock another connection holds.
    pub(super) async fn open(
        url: &str,
        busy_timeout: Duration,
    ) -> Result<(Self, PgPool), StoreError> {
        let instance = new_id();
        let options = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::BadUrl(e.to_string()))?
            .application_name("turnhouse")
            .options([
                ("lock_timeout", busy_timeout.as_millis().to_string()),
                ("turnhouse.instance", instance.clone()),
            ]);
        first_connection(&options).await?;
        let read = PgPoolOptions::new()
            .max_connections(READ_CONNECTIONS)
            .connect_with(options.clone())
            .await?;
        // On a connection planning as PostgreSQL does by default: a migration may rewrite whole
        // tables, which the writer's plans (lookups by key only) would make slow.
        sqlx::migrate!("./migrations/postgres").run(&read).await?;
        // One writing connection per server: its batches already carry every write waiting.
        let write = PgPoolOptions::new()
            .max_connections(1)
            .connect_with(writer_options(options))
            .await?;
        let sessions = SessionReads::new(read.clone());
        Ok((
            Self {
                read,
                sessions,
                instance,
            },
            write,
        ))
    }
}
