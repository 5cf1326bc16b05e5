//! Rooms and who is in them.

use serde::de::DeserializeOwned;
use sqlx::query::Query;
use sqlx::sqlite::{SqliteArguments, SqliteRow};
use sqlx::{QueryBuilder, Row, Sqlite, SqliteConnection};

use super::{events, on_unique, RoomCommit, Store, StoreError};
use crate::model::Room;

/// Every room column, of the room aliased `r`.
macro_rules! room_columns {
    () => {
        "r.seq, r.id, r.game, r.game_version, r.private, r.version, r.joinable, r.finished, \
         r.state, r.players, r.inactive_players, r.created_at, r.updated_at"
    };
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

/// `<room o> is open to <player>`: public, joinable, unfinished, and the player is not in it.
/// Shaped for `rooms_public_by_game_joinable_finished`, oldest first, with one primary-key
/// probe of the memberships per candidate (never a walk of everything the player was in).
macro_rules! open_to_player {
    ($game:literal, $player:literal) => {
        concat!(
            "o.game = ",
            $game,
            " AND o.private = 0 AND o.joinable = 1 AND o.finished = 0 \
             AND NOT EXISTS (SELECT 1 FROM room_players m WHERE m.room_id = o.id \
             AND m.player_id = ",
            $player,
            " AND m.active = 1)"
        )
    };
}

const ONE_ROOM: &str = concat!("SELECT ", room_columns!(), " FROM rooms r WHERE r.id = ?");

/// Quick play's search: `?1` the game, `?2` the player.
const OLDEST_OPEN_ROOM: &str = concat!(
    "SELECT o.id FROM rooms o WHERE ",
    open_to_player!("?1", "?2"),
    " ORDER BY o.seq LIMIT 1"
);

/// Writes a room change inside the caller's transaction: the compare-and-set (or the insert),
/// the memberships and the events. [`StoreError::Conflict`] if the room moved on.
pub(super) async fn apply_commit(
    conn: &mut SqliteConnection,
    commit: &RoomCommit,
) -> Result<(), StoreError> {
    let written = match commit.expected_version {
        None => {
            insert(
                conn,
                &commit.room,
                commit.only_if_no_open_room_for.as_deref(),
            )
            .await?
        }
        Some(version) => {
            update_if_version(conn, &commit.room, version, commit.listing_changed).await?
        }
    };
    if !written {
        return Err(StoreError::Conflict);
    }
    if commit.members_changed {
        write_members(conn, &commit.room).await?;
    }
    if commit.finished_changed && commit.expected_version.is_some() {
        sqlx::query("UPDATE room_players SET finished = ?2 WHERE room_id = ?1")
            .bind(&commit.room.id)
            .bind(commit.room.finished)
            .execute(&mut *conn)
            .await?;
    }
    for event in &commit.events {
        events::insert(conn, &commit.room.id, event).await?;
    }
    Ok(())
}

/// Inserts a new room; with `unless_open_for`, only if no room is open to that player.
async fn insert(
    conn: &mut SqliteConnection,
    room: &Room,
    unless_open_for: Option<&str>,
) -> Result<bool, StoreError> {
    let result = bind_room(
        sqlx::query(concat!(
            "INSERT INTO rooms (id, game, private, version, joinable, finished, state, players, inactive_players, created_at, updated_at, game_version) \
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?13 \
             WHERE ?12 IS NULL OR NOT EXISTS (SELECT 1 FROM rooms o WHERE ",
            open_to_player!("?2", "?12"),
            ")"
        )),
        room,
    )
    .bind(unless_open_for)
    .bind(room.game_version)
    .execute(conn)
    .await
    .map_err(|e| on_unique(e, StoreError::Conflict))?;
    Ok(result.rows_affected() == 1)
}

/// The compare-and-set: writes the room only if it is still at `expected_version`.
/// `joinable` and `finished` are written only when `listing_changed`.
async fn update_if_version(
    conn: &mut SqliteConnection,
    room: &Room,
    expected_version: i64,
    listing_changed: bool,
) -> Result<bool, StoreError> {
    macro_rules! update {
        ($listing:literal) => {
            concat!(
                "UPDATE rooms SET version = ?4, ",
                $listing,
                "state = ?7, players = ?8, inactive_players = ?9, updated_at = ?11 \
                 WHERE id = ?1 AND version = ?12"
            )
        };
    }
    let sql = if listing_changed {
        update!("joinable = ?5, finished = ?6, ")
    } else {
        update!("")
    };
    let result = bind_room(sqlx::query(sql), room)
        .bind(expected_version)
        .execute(conn)
        .await?;
    Ok(result.rows_affected() == 1)
}

/// Binds the room's columns as `?1` to `?11`, in table order, for both the insert and the update.
fn bind_room<'q>(
    query: Query<'q, Sqlite, SqliteArguments>,
    room: &'q Room,
) -> Query<'q, Sqlite, SqliteArguments> {
    query
        .bind(&room.id)
        .bind(&room.game)
        .bind(room.private)
        .bind(room.version)
        .bind(room.joinable)
        .bind(room.finished)
        .bind(room.state.to_string())
        .bind(to_json(&room.players))
        .bind(to_json(&room.inactive_players))
        .bind(&room.created_at)
        .bind(&room.updated_at)
}

/// Writes `copies` new rooms identical to `template` but for their ids: its record, its
/// memberships and its whole history. For filling a database to measure (`turnhouse
/// seed-rooms`); one statement per table, whatever the number of copies.
pub(super) async fn copy(
    conn: &mut SqliteConnection,
    template: &str,
    copies: i64,
) -> Result<(), StoreError> {
    let before: i64 = sqlx::query_scalar("SELECT coalesce(max(seq), 0) FROM rooms")
        .fetch_one(&mut *conn)
        .await?;
    sqlx::query(
        "WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2) \
         INSERT INTO rooms (id, game, private, version, joinable, finished, state, players, \
         inactive_players, created_at, updated_at, game_version) \
         SELECT lower(hex(randomblob(16))), game, private, version, joinable, finished, state, \
         players, inactive_players, created_at, updated_at, game_version \
         FROM n, rooms WHERE id = ?1 ORDER BY i",
    )
    .bind(template)
    .bind(copies)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "INSERT INTO room_players (room_id, player_id, active, room_seq, game, finished) \
         SELECT r.id, m.player_id, m.active, r.seq, r.game, r.finished \
         FROM rooms r, room_players m WHERE r.seq > ?2 AND m.room_id = ?1",
    )
    .bind(template)
    .bind(before)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "INSERT INTO room_events (room_id, version, kind, player_id, move, state, joinable, \
         finished, players, created_at) \
         SELECT r.id, e.version, e.kind, e.player_id, e.move, e.state, e.joinable, e.finished, \
         e.players, e.created_at \
         FROM rooms r, room_events e WHERE r.seq > ?2 AND e.room_id = ?1",
    )
    .bind(template)
    .bind(before)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Records every current (active) and former (inactive) player of the room.
async fn write_members(conn: &mut SqliteConnection, room: &Room) -> Result<(), StoreError> {
    let members = room
        .players
        .iter()
        .map(|p| (p, true))
        .chain(room.inactive_players.iter().map(|p| (p, false)));
    for (player, active) in members {
        sqlx::query(
            "INSERT INTO room_players (room_id, player_id, active, room_seq, game, finished) \
             SELECT ?1, ?2, ?3, seq, game, finished FROM rooms WHERE id = ?1 \
             ON CONFLICT (room_id, player_id) DO UPDATE SET active = excluded.active",
        )
        .bind(&room.id)
        .bind(&player.id)
        .bind(active)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

impl Store {
    pub async fn room(&self, id: &str) -> Result<Option<Room>, StoreError> {
        let row = sqlx::query(ONE_ROOM)
            .bind(id)
            .fetch_optional(&self.read)
            .await?;
        row.as_ref()
            .map(room_from_row)
            .transpose()
            .map(|r| r.map(|(_, room)| room))
    }

    /// The oldest room quick play can put `player_id` in.
    pub async fn oldest_open_room(
        &self,
        game: &str,
        player_id: &str,
    ) -> Result<Option<String>, StoreError> {
        let id = sqlx::query_scalar(OLDEST_OPEN_ROOM)
            .bind(game)
            .bind(player_id)
            .fetch_optional(&self.read)
            .await?;
        Ok(id)
    }

    /// A page of rooms, newest first, each with its sequence number (for the next cursor).
    pub async fn rooms(&self, query: &RoomQuery) -> Result<Vec<(i64, Room)>, StoreError> {
        let rows = listing(query).build().fetch_all(&self.read).await?;
        rows.iter().map(room_from_row).collect()
    }
}

/// The SQL for one listing, built for its filter set: only the filters given appear, as plain
/// equalities, so the planner can use the index made for exactly that set (see migration 0005)
/// instead of scanning. A player's rooms are read through their memberships, which carry each
/// room's `seq`, game and whether it is finished. (Two filters stay a walk, newest first:
/// someone else's view of a player's rooms skips the private ones, and `joinable=false`
/// without `finished` skips the joinable ones.)
fn listing(query: &RoomQuery) -> QueryBuilder<Sqlite> {
    let mut sql = QueryBuilder::new(concat!("SELECT ", room_columns!()));
    let seq = match &query.player {
        Some(player) => {
            sql.push(
                " FROM room_players m JOIN rooms r ON r.seq = m.room_seq WHERE m.player_id = ",
            )
            .push_bind(player);
            if let Some(game) = &query.game {
                sql.push(" AND m.game = ").push_bind(game);
            }
            // A joinable room is never finished: "joinable" reads the unfinished range.
            let finished = match (query.finished, query.joinable) {
                (None, Some(true)) => Some(false),
                (finished, _) => finished,
            };
            if let Some(finished) = finished {
                sql.push(" AND m.finished = ").push_bind(finished);
            }
            if let Some(joinable) = query.joinable {
                sql.push(" AND r.joinable = ").push_bind(joinable);
            }
            if !query.include_private {
                sql.push(" AND r.private = 0");
            }
            "m.room_seq"
        }
        None => {
            sql.push(" FROM rooms r WHERE r.private = 0");
            if let Some(game) = &query.game {
                sql.push(" AND r.game = ").push_bind(game);
            }
            if let Some(joinable) = query.joinable {
                sql.push(" AND r.joinable = ").push_bind(joinable);
            }
            if let Some(finished) = query.finished {
                sql.push(" AND r.finished = ").push_bind(finished);
            }
            "r.seq"
        }
    };
    if let Some(before) = query.before_seq {
        sql.push(format_args!(" AND {seq} < ")).push_bind(before);
    }
    sql.push(format_args!(" ORDER BY {seq} DESC LIMIT "))
        .push_bind(query.limit);
    sql
}

fn room_from_row(row: &SqliteRow) -> Result<(i64, Room), StoreError> {
    Ok((
        row.try_get("seq")?,
        Room {
            id: row.try_get("id")?,
            game: row.try_get("game")?,
            game_version: row.try_get("game_version")?,
            private: row.try_get("private")?,
            version: row.try_get("version")?,
            joinable: row.try_get("joinable")?,
            finished: row.try_get("finished")?,
            state: parse_json(&row.try_get::<String, _>("state")?)?,
            players: parse_json(&row.try_get::<String, _>("players")?)?,
            inactive_players: parse_json(&row.try_get::<String, _>("inactive_players")?)?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        },
    ))
}

pub(super) fn parse_json<T: DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(e.to_string()))
}

pub(super) fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("records always serialise")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan SQLite chooses for `sql`, one line per step (placeholders left unbound: the
    /// plan does not depend on the values).
    async fn plan(store: &Store, sql: &str) -> Vec<String> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!("EXPLAIN QUERY PLAN {sql}")))
            .fetch_all(&store.read)
            .await
            .unwrap_or_else(|e| panic!("cannot plan {sql}: {e}"));
        rows.iter().map(|row| row.get("detail")).collect()
    }

    /// Fails on any step that reads a whole table or index, or sorts, which is what a listing
    /// would do if its SQL stopped matching an index.
    fn assert_no_scan(sql: &str, plan: &[String], unless_unfiltered: bool) {
        for step in plan {
            let scans = step.starts_with("SCAN");
            let ordered_walk = unless_unfiltered && step == "SCAN r USING INDEX rooms_public";
            assert!(
                (!scans || ordered_walk) && !step.contains("TEMP B-TREE"),
                "{sql}\nplans {plan:#?}"
            );
        }
    }

    fn store_dir() -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plans.db").display().to_string();
        (dir, path)
    }

    /// Every filter set `GET /rooms` allows, with and without a cursor, reads one index range:
    /// each filter it can is a `col=?` in the index search, and nothing is scanned or sorted.
    #[tokio::test]
    async fn every_listing_is_an_index_range() {
        let (_dir, path) = store_dir();
        let store = Store::open(&path).await.unwrap();
        let flags = [None, Some(true)];
        let mut checked = 0;
        for player in [None, Some("p".to_owned())] {
            for game in [None, Some("tictactoe".to_owned())] {
                for (joinable, finished) in flags.iter().flat_map(|j| flags.map(|f| (*j, f))) {
                    for before_seq in [None, Some(10)] {
                        let privacy: &[bool] = match player {
                            Some(_) => &[false, true],
                            None => &[false],
                        };
                        for &include_private in privacy {
                            let query = RoomQuery {
                                game: game.clone(),
                                joinable,
                                finished,
                                player: player.clone(),
                                include_private,
                                before_seq,
                                limit: 51,
                            };
                            let sql = listing(&query).into_sql().as_str().to_owned();
                            let steps = plan(&store, &sql).await;
                            let unfiltered = player.is_none()
                                && game.is_none()
                                && joinable.is_none()
                                && finished.is_none()
                                && before_seq.is_none();
                            assert_no_scan(&sql, &steps, unfiltered);
                            let (table, seq) = if player.is_some() {
                                ("m", "room_seq")
                            } else {
                                ("r", "seq")
                            };
                            let search = steps
                                .iter()
                                .find(|s| s.starts_with(&format!("SEARCH {table} ")))
                                .or(steps.first())
                                .unwrap();
                            let mut expected = Vec::new();
                            if player.is_some() {
                                expected.push("player_id=?".to_owned());
                            }
                            if game.is_some() {
                                expected.push("game=?".to_owned());
                            }
                            if player.is_none() {
                                expected.extend(joinable.map(|_| "joinable=?".to_owned()));
                            }
                            if finished.is_some() || (player.is_some() && joinable.is_some()) {
                                expected.push("finished=?".to_owned());
                            }
                            if before_seq.is_some() {
                                expected.push(format!("{seq}<?"));
                            }
                            for term in expected {
                                assert!(search.contains(&term), "{sql}\nplans {steps:#?}");
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(checked, 48);
    }

    /// Memberships written before they carried the room's `seq` and game get them from the
    /// room, so a player's older rooms are still listed, newest first.
    #[tokio::test]
    async fn memberships_from_before_listing_indexes_are_listed() {
        let (dir, path) = store_dir();
        let old = crate::store::database_before(std::path::Path::new(&path), 4).await;
        sqlx::query("INSERT INTO players (id, username, token_hash, created_at) VALUES ('p', 'pat', '', '')")
            .execute(&old)
            .await
            .unwrap();
        for (room, game) in [
            ("r1", "tictactoe"),
            ("r2", "tictactoe3d"),
            ("r3", "tictactoe"),
        ] {
            sqlx::query(
                "INSERT INTO rooms (id, game, private, version, joinable, finished, state, players, \
                 inactive_players, created_at, updated_at) \
                 VALUES (?, ?, 0, 1, 1, 0, 'null', '[]', '[]', '', '')",
            )
            .bind(room)
            .bind(game)
            .execute(&old)
            .await
            .unwrap();
            sqlx::query("INSERT INTO room_players (room_id, player_id, active) VALUES (?, 'p', 1)")
                .bind(room)
                .execute(&old)
                .await
                .unwrap();
        }
        old.close().await;
        let store = Store::open(&path).await.unwrap();
        let listed = |game: Option<&str>| RoomQuery {
            game: game.map(str::to_owned),
            player: Some("p".into()),
            limit: 10,
            ..RoomQuery::default()
        };
        let ids =
            |rooms: Vec<(i64, Room)>| rooms.into_iter().map(|(_, r)| r.id).collect::<Vec<_>>();
        assert_eq!(
            ids(store.rooms(&listed(None)).await.unwrap()),
            ["r3", "r2", "r1"]
        );
        assert_eq!(
            ids(store.rooms(&listed(Some("tictactoe"))).await.unwrap()),
            ["r3", "r1"]
        );
        drop(dir);
    }

    /// Quick play's search, its guard when creating a room, one room, and history pages.
    #[tokio::test]
    async fn lookups_are_index_searches() {
        let (_dir, path) = store_dir();
        let store = Store::open(&path).await.unwrap();
        for sql in [OLDEST_OPEN_ROOM, ONE_ROOM, events::PAGE] {
            let steps = plan(&store, sql).await;
            assert_no_scan(sql, &steps, false);
            assert!(steps[0].starts_with("SEARCH"), "{sql}\nplans {steps:#?}");
        }
        let steps = plan(&store, OLDEST_OPEN_ROOM).await;
        assert!(
            steps[0].contains(
                "rooms_public_by_game_joinable_finished (game=? AND joinable=? AND finished=?)"
            ),
            "{steps:#?}"
        );
    }
}
