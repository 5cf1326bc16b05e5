//! Rows as both databases return them, and the records they become.
//!
//! Every read selects the same column names with the same types on both databases: JSON comes
//! back as text (PostgreSQL casts its `json`/`jsonb` columns to `text` in the query), flags as
//! booleans and numbers as 64-bit integers. So one decoding, here, serves both.

use serde::de::DeserializeOwned;

use super::sql::Sql;
use super::types::{StoreError, StoredFile};
use crate::domain::records::{Account, EventKind, GameLogLine, GameVersionRecord, Room, RoomEvent};
use crate::game::{Capabilities, Clock, Hook, LogLevel, PlayerRef};

/// A room, with `seq`: its place in creation order, which pages the lobby.
pub(super) fn room<D: Sql>(row: &D::Row) -> Result<(i64, Room), StoreError> {
    Ok((
        D::int(row, "seq")?,
        Room {
            id: D::text(row, "id")?.into(),
            game: D::text(row, "game")?.into(),
            game_version: D::maybe_int(row, "game_version")?,
            private: D::flag(row, "private")?,
            rated: D::flag(row, "rated")?,
            version: D::int(row, "version")?,
            joinable: D::flag(row, "joinable")?,
            finished: D::flag(row, "finished")?,
            state: parse_json(&D::text(row, "state")?)?,
            players: parse_json(&D::text(row, "players")?)?,
            inactive_players: parse_json(&D::text(row, "inactive_players")?)?,
            trigger_timeout_at: D::maybe_time(row, "trigger_timeout_at")?,
            to_move: maybe_json::<D, _>(row, "to_move")?,
            turns: maybe_json::<D, _>(row, "turns")?.unwrap_or_default(),
            clock: D::maybe_int(row, "clock_move_seconds")?.map(|seconds| Clock {
                move_seconds: seconds as u32,
            }),
            rematch: D::maybe_text(row, "rematch")?
                .as_deref()
                .map(parse_json)
                .transpose()?,
            score: D::maybe_text(row, "score")?
                .as_deref()
                .map(parse_json)
                .transpose()?
                .unwrap_or_default(),
            created_at: D::time(row, "created_at")?,
            updated_at: D::time(row, "updated_at")?,
        },
    ))
}

/// One version of a room's history, with the username of who caused it.
pub(super) fn event<D: Sql>(row: &D::Row) -> Result<RoomEvent, StoreError> {
    let kind = D::text(row, "kind")?;
    let player = match D::maybe_text(row, "player_id")? {
        Some(id) => Some(PlayerRef {
            id: id.into(),
            username: D::maybe_text(row, "username")?.unwrap_or_default(),
        }),
        None => None,
    };
    Ok(RoomEvent {
        version: D::int(row, "version")?,
        kind: EventKind::parse(&kind)
            .ok_or_else(|| StoreError::Corrupt(format!("event kind {kind}")))?,
        player,
        mv: D::maybe_text(row, "move")?
            .as_deref()
            .map(parse_json)
            .transpose()?,
        state: parse_json(&D::text(row, "state")?)?,
        joinable: D::flag(row, "joinable")?,
        finished: D::flag(row, "finished")?,
        players: parse_json(&D::text(row, "players")?)?,
        trigger_timeout_at: D::maybe_time(row, "trigger_timeout_at")?,
        to_move: maybe_json::<D, _>(row, "to_move")?,
        created_at: D::time(row, "created_at")?,
        rating_changes: Vec::new(),
    })
}

pub(super) fn account<D: Sql>(row: &D::Row) -> Result<Account, StoreError> {
    Ok(Account {
        id: D::text(row, "id")?.into(),
        username: D::text(row, "username")?,
        created_at: D::time(row, "created_at")?,
    })
}

pub(super) fn player<D: Sql>(row: &D::Row) -> Result<PlayerRef, StoreError> {
    Ok(PlayerRef {
        id: D::text(row, "id")?.into(),
        username: D::text(row, "username")?,
    })
}

/// A published version of a game with its owner, without the source.
pub(super) fn game_version<D: Sql>(row: &D::Row) -> Result<GameVersionRecord, StoreError> {
    Ok(GameVersionRecord {
        game_id: D::text(row, "game_id")?.into(),
        version: D::int(row, "version")?,
        name: D::text(row, "name")?,
        description: D::text(row, "description")?,
        min_players: D::int(row, "min_players")? as usize,
        max_players: D::int(row, "max_players")? as usize,
        format: D::text(row, "format")?,
        sha256: D::text(row, "sha256")?,
        frontend_files: D::int(row, "frontend_files")?,
        frontend_background: D::maybe_text(row, "frontend_background")?,
        frontend_height: D::maybe_int(row, "frontend_height")?.and_then(|h| u32::try_from(h).ok()),
        chat: D::flag(row, "chat")?,
        hooks: Capabilities {
            timeouts: D::flag(row, "on_timeout")?,
            player_view: D::flag(row, "on_player_view")?,
            bots: D::flag(row, "enumerate_moves")?,
            winners: D::flag(row, "winners")?,
            to_move: D::flag(row, "to_move")?,
        },
        // Checked as JSON when it was published.
        move_example: D::maybe_text(row, "move_example")?
            .and_then(|text| serde_json::from_str(&text).ok()),
        owner: PlayerRef {
            id: D::text(row, "owner_id")?.into(),
            username: D::text(row, "owner_name")?,
        },
        published_at: D::time(row, "created_at")?,
        created_at: D::time(row, "game_created_at")?,
        unpublished_at: D::maybe_time(row, "unpublished_at")?,
    })
}

pub(super) fn game_log_line<D: Sql>(row: &D::Row) -> Result<GameLogLine, StoreError> {
    let hook = D::text(row, "hook")?;
    Ok(GameLogLine {
        id: D::int(row, "id")?,
        game: D::text(row, "game")?.into(),
        game_version: D::int(row, "game_version")?,
        at: D::time(row, "at")?,
        room: D::text(row, "room")?.into(),
        version: D::int(row, "version")?,
        hook: Hook::from_name(&hook)
            .ok_or_else(|| StoreError::Corrupt(format!("a log line names no hook: {hook}")))?,
        level: LogLevel::from_name(&D::text(row, "level")?),
        text: D::text(row, "text")?,
    })
}

pub(super) fn frontend_file<D: Sql>(row: &D::Row) -> Result<StoredFile, StoreError> {
    Ok(StoredFile {
        content_type: D::text(row, "content_type")?,
        etag: D::text(row, "etag")?,
        body: D::bytes(row, "body")?,
        gzipped: D::flag(row, "gzipped")?,
    })
}

pub(super) fn parse_json<T: DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(e.to_string()))
}

pub(super) fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("records always serialise")
}

/// A JSON column that may be NULL.
fn maybe_json<D: Sql, T: DeserializeOwned>(
    row: &D::Row,
    column: &str,
) -> Result<Option<T>, StoreError> {
    D::maybe_text(row, column)?
        .as_deref()
        .map(parse_json)
        .transpose()
}
