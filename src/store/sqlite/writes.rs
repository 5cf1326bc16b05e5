//! The steps of every write in SQLite's SQL.

use sqlx::SqliteConnection;

use super::super::rows::PlayerRow;
use super::super::writes::{bind_event, bind_room, shared_steps, WriteSql};
use super::super::{on_unique, RoomCommit, StoreError};
use super::open_to_player;
use crate::game::{BotLevel, PlayerRef};
use crate::model::{Account, NewGameVersion, Room, RoomEvent};

impl WriteSql for SqliteConnection {
    shared_steps!(
        lock_game: "",
        copy_rooms: "WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $2) \
             INSERT INTO rooms (id, game, private, version, joinable, finished, state, players, \
             inactive_players, created_at, updated_at, game_version) \
             SELECT lower(hex(randomblob(16))), game, private, version, joinable, finished, state, \
             players, inactive_players, created_at, updated_at, game_version \
             FROM n, rooms WHERE id = $1 ORDER BY i"
    );

    async fn insert_room(
        &mut self,
        room: &Room,
        unless_open_for: Option<&str>,
    ) -> Result<bool, StoreError> {
        // One statement, and SQLite has one writer at a time: no room can open between the
        // check and the insert.
        let result = bind_room(
            sqlx::query(concat!(
                "INSERT INTO rooms (id, game, private, version, joinable, finished, state, players, inactive_players, created_at, updated_at, game_version) \
                 SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?13 \
                 WHERE ?12 IS NULL OR NOT EXISTS (SELECT 1 FROM rooms o WHERE ",
                open_to_player!("?2", "?12", "0", "1"),
                ")"
            )),
            room,
        )
        .bind(unless_open_for)
        .bind(room.game_version)
        .execute(self)
        .await
        .map_err(|e| on_unique(e, StoreError::Conflict))?;
        Ok(result.rows_affected() == 1)
    }

    async fn update_room(
        &mut self,
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
            .execute(self)
            .await?;
        Ok(result.rows_affected() == 1)
    }

    async fn insert_event(&mut self, room_id: &str, event: &RoomEvent) -> Result<(), StoreError> {
        bind_event(
            sqlx::query(
            "INSERT INTO room_events (room_id, version, kind, player_id, move, state, joinable, finished, players, created_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ),
            room_id,
            event,
        )
        .execute(self)
        .await?;
        Ok(())
    }

    /// Servers sharing a SQLite file are not told: each reads what the other wrote from the file.
    async fn announce(&mut self, _commit: &RoomCommit) -> Result<(), StoreError> {
        Ok(())
    }
}
