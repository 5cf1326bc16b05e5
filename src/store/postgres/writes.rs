//! The steps of every write in PostgreSQL's SQL.
//!
//! Several servers write at once here, each in its own transaction at READ COMMITTED. What
//! keeps that safe: the compare-and-set is one `UPDATE … WHERE version = $n`, which PostgreSQL
//! re-checks against the latest row after waiting for another writer's lock, so exactly one of
//! two racing commits matches; refusals use `ON CONFLICT DO NOTHING` and row counts rather than
//! failed statements (a failed statement would abort the whole batch's transaction); and quick
//! play takes a per-game advisory lock, because `INSERT … WHERE NOT EXISTS` alone lets two
//! transactions that cannot see each other both insert.

use sqlx::PgConnection;

use super::super::reads::open_to_player;
use super::super::rows::PlayerRow;
use super::super::writes::{bind_event, bind_room, shared_steps, WriteSql};
use super::super::{RoomCommit, StoreError};
use super::CHANNEL;
use crate::game::{BotLevel, PlayerRef};
use crate::model::{Account, NewGameVersion, Room, RoomEvent};

impl WriteSql for PgConnection {
    shared_steps!(
        lock_game: " FOR UPDATE",
        copy_rooms: "INSERT INTO rooms (id, game, private, version, joinable, finished, state, players, \
             inactive_players, created_at, updated_at, game_version) \
             SELECT replace(gen_random_uuid()::text, '-', ''), game, private, version, joinable, \
             finished, state, players, inactive_players, created_at, updated_at, game_version \
             FROM generate_series(1, $2) AS n, rooms WHERE id = $1 ORDER BY n"
    );

    async fn insert_room(
        &mut self,
        room: &Room,
        unless_open_for: Option<&str>,
    ) -> Result<bool, StoreError> {
        if unless_open_for.is_some() {
            // Held until this transaction ends: a quick play on another server that is about
            // to open a room of this game waits here, then sees the room this one opened.
            sqlx::query(
                "SELECT pg_advisory_xact_lock(hashtextextended('turnhouse quick play ' || $1, 0))",
            )
            .bind(&room.game)
            .execute(&mut *self)
            .await?;
        }
        let result = bind_room(
            sqlx::query(concat!(
                "INSERT INTO rooms (id, game, private, version, joinable, finished, state, players, inactive_players, created_at, updated_at, game_version) \
                 SELECT $1, $2, $3, $4, $5, $6, CAST($7 AS json), CAST($8 AS jsonb), CAST($9 AS jsonb), $10, $11, $13 \
                 WHERE CAST($12 AS text) IS NULL OR NOT EXISTS (SELECT 1 FROM rooms o WHERE ",
                open_to_player!("$2", "$12", "false", "true"),
                ") ON CONFLICT DO NOTHING"
            )),
            room,
        )
        .bind(unless_open_for)
        .bind(room.game_version)
        .execute(self)
        .await?;
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
                    "UPDATE rooms SET version = $4, ",
                    $listing,
                    "state = CAST($7 AS json), players = CAST($8 AS jsonb), \
                     inactive_players = CAST($9 AS jsonb), updated_at = $11 \
                     WHERE id = $1 AND version = $12"
                )
            };
        }
        let sql = if listing_changed {
            update!("joinable = $5, finished = $6, ")
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
             VALUES ($1, $2, $3, $4, CAST($5 AS json), CAST($6 AS json), $7, $8, CAST($9 AS jsonb), $10)",
        ),
            room_id,
            event,
        )
        .execute(self)
        .await?;
        Ok(())
    }

    /// `NOTIFY`, which PostgreSQL delivers only once the transaction has committed: the room,
    /// its new version, this server (so it can skip what it published itself) and, for a
    /// public room whose lobby entry changed, how. Order and completeness come from the
    /// history, which a listener reads; the notification only says there is more.
    async fn announce(&mut self, commit: &RoomCommit) -> Result<(), StoreError> {
        let lobby = match commit.lobby_change {
            Some(change) if !commit.room.private => change,
            _ => "-",
        };
        sqlx::query(
            "SELECT pg_notify($1, $2 || ' ' || $3 || ' ' || current_setting('turnhouse.instance') || ' ' || $4)",
        )
        .bind(CHANNEL)
        .bind(&commit.room.id)
        .bind(commit.room.version.to_string())
        .bind(lobby)
        .execute(self)
        .await?;
        Ok(())
    }
}
