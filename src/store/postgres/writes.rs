//! The steps of every write in PostgreSQL's SQL.
//!
//! Several servers write at once here, each in its own transaction at READ COMMITTED. What
//! keeps that safe: the compare-and-set is one `UPDATE … WHERE version = $n`, which PostgreSQL
//! re-checks against the latest row after waiting for another writer's lock, so exactly one of
//! two racing commits matches; refusals use `ON CONFLICT DO NOTHING` and row counts rather than
//! failed statements (a failed statement would abort the whole batch's transaction); and quick
//! play takes a per-game advisory lock, because `INSERT … WHERE NOT EXISTS` alone lets two
//! transactions that cannot see each other both insert.

use serde_json::Value;
use sqlx::postgres::PgArguments;
use sqlx::query::Query;
use sqlx::{PgConnection, Postgres};

use super::super::reads::open_to_player;
use super::super::rows::{to_json, PlayerRow};
use super::super::writes::WriteSql;
use super::super::{RoomCommit, StoreError};
use super::CHANNEL;
use crate::game::{BotLevel, PlayerRef};
use crate::model::{Account, NewGameVersion, Room, RoomEvent};

impl WriteSql for PgConnection {
    async fn run(&mut self, statement: &'static str) -> Result<(), StoreError> {
        sqlx::query(statement).execute(self).await?;
        Ok(())
    }

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

    async fn insert_event(&mut self, room_id: &str, event: &RoomEvent) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO room_events (room_id, version, kind, player_id, move, state, joinable, finished, players, created_at) \
             VALUES ($1, $2, $3, $4, CAST($5 AS json), CAST($6 AS json), $7, $8, CAST($9 AS jsonb), $10)",
        )
        .bind(room_id)
        .bind(event.version)
        .bind(event.kind.as_str())
        .bind(event.player.as_ref().map(|p| &p.id))
        .bind(event.mv.as_ref().map(Value::to_string))
        .bind(event.state.to_string())
        .bind(event.joinable)
        .bind(event.finished)
        .bind(to_json(&event.players))
        .bind(&event.created_at)
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

    async fn insert_account(&mut self, account: &Account) -> Result<(), StoreError> {
        let result = sqlx::query(
            "INSERT INTO players (id, username, token_hash, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT DO NOTHING",
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
            "INSERT INTO players (id, username, token_hash, created_at, bot) VALUES ($1, $2, '', $3, $4) \
             ON CONFLICT DO NOTHING",
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
            "INSERT INTO games (id, owner_id, created_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&upload.game_id)
        .bind(&upload.owner_id)
        .bind(&upload.created_at)
        .execute(&mut *self)
        .await?;
        // The game's row lock makes two servers publishing the same game at once take turns,
        // so each gets its own next version number.
        let owner: String =
            sqlx::query_scalar("SELECT owner_id FROM games WHERE id = $1 FOR UPDATE")
                .bind(&upload.game_id)
                .fetch_one(&mut *self)
                .await?;
        if owner != upload.owner_id {
            return Err(StoreError::NotTheOwner);
        }
        let version: i64 = sqlx::query_scalar(
            "INSERT INTO game_versions (game_id, version, name, description, min_players, max_players, \
             format, source, sha256, created_at) \
             SELECT $1, coalesce(max(version), 0) + 1, $2, $3, $4, $5, $6, $7, $8, $9 \
             FROM game_versions WHERE game_id = $1 RETURNING version",
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
        .fetch_one(self)
        .await?;
        Ok(version)
    }

    async fn copy_room(&mut self, template: &str, copies: i64) -> Result<(), StoreError> {
        let before: i64 = sqlx::query_scalar("SELECT coalesce(max(seq), 0) FROM rooms")
            .fetch_one(&mut *self)
            .await?;
        sqlx::query(
            "INSERT INTO rooms (id, game, private, version, joinable, finished, state, players, \
             inactive_players, created_at, updated_at, game_version) \
             SELECT replace(gen_random_uuid()::text, '-', ''), game, private, version, joinable, \
             finished, state, players, inactive_players, created_at, updated_at, game_version \
             FROM generate_series(1, $2) AS n, rooms WHERE id = $1 ORDER BY n",
        )
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
             SELECT r.id, e.version, e.kind, e.player_id, e.move, e.state, e.joinable, e.finished, \
             e.players, e.created_at \
             FROM rooms r, room_events e WHERE r.seq > $2 AND e.room_id = $1",
        )
        .bind(template)
        .bind(before)
        .execute(self)
        .await?;
        Ok(())
    }
}

/// Binds the room's columns as `$1` to `$11`, in table order, for both the insert and the update.
fn bind_room<'q>(
    query: Query<'q, Postgres, PgArguments>,
    room: &'q Room,
) -> Query<'q, Postgres, PgArguments> {
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
