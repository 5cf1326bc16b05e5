//! Rooms and who is in them.

use serde::de::DeserializeOwned;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection};

use super::{events, on_unique, RoomCommit, Store, StoreError};
use crate::model::Room;

/// `SELECT <every room column> FROM rooms <tail>`, as one static string.
macro_rules! select_rooms {
    ($tail:literal) => {
        concat!(
            "SELECT seq, id, game, game_version, private, version, joinable, finished, state, \
             players, inactive_players, created_at, updated_at FROM rooms ",
            $tail
        )
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

/// `<room> is open to <player>`: public, joinable, unfinished, and the player is not in it.
macro_rules! open_to_player {
    ($game:literal, $player:literal) => {
        concat!(
            "game = ",
            $game,
            " AND private = 0 AND joinable = 1 AND finished = 0 \
             AND id NOT IN (SELECT room_id FROM room_players WHERE player_id = ",
            $player,
            " AND active = 1)"
        )
    };
}

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
        Some(version) => update_if_version(conn, &commit.room, version).await?,
    };
    if !written {
        return Err(StoreError::Conflict);
    }
    if commit.members_changed {
        write_members(conn, &commit.room).await?;
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
    let result = sqlx::query(concat!(
        "INSERT INTO rooms (id, game, private, version, joinable, finished, state, players, inactive_players, created_at, updated_at, game_version) \
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?13 \
         WHERE ?12 IS NULL OR NOT EXISTS (SELECT 1 FROM rooms WHERE ",
        open_to_player!("?2", "?12"),
        ")"
    ))
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
    .bind(unless_open_for)
    .bind(room.game_version)
    .execute(conn)
    .await
    .map_err(|e| on_unique(e, StoreError::Conflict))?;
    Ok(result.rows_affected() == 1)
}

/// The compare-and-set: writes the room only if it is still at `expected_version`.
async fn update_if_version(
    conn: &mut SqliteConnection,
    room: &Room,
    expected_version: i64,
) -> Result<bool, StoreError> {
    let result = sqlx::query(
        "UPDATE rooms SET version = ?, joinable = ?, finished = ?, state = ?, players = ?, \
         inactive_players = ?, updated_at = ? WHERE id = ? AND version = ?",
    )
    .bind(room.version)
    .bind(room.joinable)
    .bind(room.finished)
    .bind(room.state.to_string())
    .bind(to_json(&room.players))
    .bind(to_json(&room.inactive_players))
    .bind(&room.updated_at)
    .bind(&room.id)
    .bind(expected_version)
    .execute(conn)
    .await?;
    Ok(result.rows_affected() == 1)
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
            "INSERT INTO room_players (room_id, player_id, active) VALUES (?, ?, ?) \
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
        let row = sqlx::query(select_rooms!("WHERE id = ?"))
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
        let id = sqlx::query_scalar(concat!(
            "SELECT id FROM rooms WHERE ",
            open_to_player!("?1", "?2"),
            " ORDER BY seq LIMIT 1"
        ))
        .bind(game)
        .bind(player_id)
        .fetch_optional(&self.read)
        .await?;
        Ok(id)
    }

    /// A page of rooms, newest first, each with its sequence number (for the next cursor).
    pub async fn rooms(&self, query: &RoomQuery) -> Result<Vec<(i64, Room)>, StoreError> {
        let sql = select_rooms!(
            "WHERE (private = 0 OR ?1) \
               AND (?2 IS NULL OR game = ?2) \
               AND (?3 IS NULL OR joinable = ?3) \
               AND (?4 IS NULL OR finished = ?4) \
               AND (?5 IS NULL OR id IN (SELECT room_id FROM room_players WHERE player_id = ?5)) \
               AND (?6 IS NULL OR seq < ?6) \
             ORDER BY seq DESC LIMIT ?7"
        );
        let rows = sqlx::query(sql)
            .bind(query.include_private)
            .bind(&query.game)
            .bind(query.joinable)
            .bind(query.finished)
            .bind(&query.player)
            .bind(query.before_seq)
            .bind(query.limit)
            .fetch_all(&self.read)
            .await?;
        rows.iter().map(room_from_row).collect()
    }
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
