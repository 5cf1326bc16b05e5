//! Rows as both databases return them, and the records they become.
//!
//! Each backend selects the same column names with the same types: JSON comes back as text
//! (PostgreSQL casts its `json`/`jsonb` columns to `text` in the query), flags as booleans and
//! numbers as 64-bit integers. So one decoding, here, serves both.

use serde::de::DeserializeOwned;
use sqlx::FromRow;

use super::StoreError;
use crate::game::PlayerRef;
use crate::model::{Account, EventKind, GameVersionRecord, Room, RoomEvent};

/// A room, with `seq`: its place in creation order, which pages the lobby.
#[derive(FromRow)]
pub(super) struct RoomRow {
    seq: i64,
    id: String,
    game: String,
    game_version: Option<i64>,
    private: bool,
    version: i64,
    joinable: bool,
    finished: bool,
    state: String,
    players: String,
    inactive_players: String,
    created_at: String,
    updated_at: String,
}

impl RoomRow {
    pub(super) fn into_room(self) -> Result<(i64, Room), StoreError> {
        Ok((
            self.seq,
            Room {
                id: self.id,
                game: self.game,
                game_version: self.game_version,
                private: self.private,
                version: self.version,
                joinable: self.joinable,
                finished: self.finished,
                state: parse_json(&self.state)?,
                players: parse_json(&self.players)?,
                inactive_players: parse_json(&self.inactive_players)?,
                created_at: self.created_at,
                updated_at: self.updated_at,
            },
        ))
    }
}

/// One version of a room's history, with the username of who caused it.
#[derive(FromRow)]
pub(super) struct EventRow {
    version: i64,
    kind: String,
    player_id: Option<String>,
    username: Option<String>,
    #[sqlx(rename = "move")]
    mv: Option<String>,
    state: String,
    joinable: bool,
    finished: bool,
    players: String,
    created_at: String,
}

impl EventRow {
    pub(super) fn into_event(self) -> Result<RoomEvent, StoreError> {
        Ok(RoomEvent {
            version: self.version,
            kind: EventKind::parse(&self.kind)
                .ok_or_else(|| StoreError::Corrupt(format!("event kind {}", self.kind)))?,
            player: self.player_id.map(|id| PlayerRef {
                id,
                username: self.username.unwrap_or_default(),
            }),
            mv: self.mv.as_deref().map(parse_json).transpose()?,
            state: parse_json(&self.state)?,
            joinable: self.joinable,
            finished: self.finished,
            players: parse_json(&self.players)?,
            created_at: self.created_at,
        })
    }
}

#[derive(FromRow)]
pub(super) struct AccountRow {
    id: String,
    username: String,
    token_hash: String,
    created_at: String,
}

impl From<AccountRow> for Account {
    fn from(row: AccountRow) -> Self {
        Account {
            id: row.id,
            username: row.username,
            token_hash: row.token_hash,
            created_at: row.created_at,
        }
    }
}

#[derive(FromRow)]
pub(super) struct PlayerRow {
    id: String,
    username: String,
}

impl From<PlayerRow> for PlayerRef {
    fn from(row: PlayerRow) -> Self {
        PlayerRef {
            id: row.id,
            username: row.username,
        }
    }
}

/// A published version of a game with its owner, without the source.
#[derive(FromRow)]
pub(super) struct VersionRow {
    game_id: String,
    version: i64,
    name: String,
    description: String,
    min_players: i64,
    max_players: i64,
    format: String,
    sha256: String,
    has_frontend: bool,
    move_example: Option<String>,
    created_at: String,
    owner_id: String,
    owner_name: String,
    game_created_at: String,
}

impl From<VersionRow> for GameVersionRecord {
    fn from(row: VersionRow) -> Self {
        GameVersionRecord {
            game_id: row.game_id,
            version: row.version,
            name: row.name,
            description: row.description,
            min_players: row.min_players as usize,
            max_players: row.max_players as usize,
            format: row.format,
            sha256: row.sha256,
            has_frontend: row.has_frontend,
            // Checked as JSON when it was published.
            move_example: row
                .move_example
                .and_then(|text| serde_json::from_str(&text).ok()),
            owner: PlayerRef {
                id: row.owner_id,
                username: row.owner_name,
            },
            published_at: row.created_at,
            created_at: row.game_created_at,
        }
    }
}

pub(super) fn parse_json<T: DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(e.to_string()))
}

pub(super) fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("records always serialise")
}
