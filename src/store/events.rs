//! Room history: one row per version.

use serde_json::Value;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection};

use super::{on_unique, Store, StoreError};
use crate::game::PlayerRef;
use crate::model::{EventKind, RoomEvent};

pub(super) async fn insert(
    conn: &mut SqliteConnection,
    room_id: &str,
    event: &RoomEvent,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO room_events (room_id, version, kind, player_id, move, state, joinable, finished, players, created_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(room_id)
    .bind(event.version)
    .bind(event.kind.as_str())
    .bind(event.player.as_ref().map(|p| &p.id))
    .bind(event.mv.as_ref().map(Value::to_string))
    .bind(event.state.to_string())
    .bind(event.joinable)
    .bind(event.finished)
    .bind(super::rooms::to_json(&event.players))
    .bind(&event.created_at)
    .execute(conn)
    .await
    .map_err(|e| on_unique(e, StoreError::Conflict))?;
    Ok(())
}

impl Store {
    /// Events of a room with a version above `after`, oldest first, at most `limit`.
    pub async fn events(
        &self,
        room_id: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<RoomEvent>, StoreError> {
        let rows = sqlx::query(
            "SELECT e.version, e.kind, e.player_id, p.username, e.move, e.state, e.joinable, e.finished, e.players, e.created_at \
             FROM room_events e LEFT JOIN players p ON p.id = e.player_id \
             WHERE e.room_id = ? AND e.version > ? ORDER BY e.version LIMIT ?",
        )
        .bind(room_id)
        .bind(after)
        .bind(limit)
        .fetch_all(&self.read)
        .await?;
        rows.iter().map(event_from_row).collect()
    }
}

fn event_from_row(row: &SqliteRow) -> Result<RoomEvent, StoreError> {
    let kind: String = row.try_get("kind")?;
    let player_id: Option<String> = row.try_get("player_id")?;
    let username: Option<String> = row.try_get("username")?;
    let mv: Option<String> = row.try_get("move")?;
    Ok(RoomEvent {
        version: row.try_get("version")?,
        kind: EventKind::parse(&kind)
            .ok_or_else(|| StoreError::Corrupt(format!("event kind {kind}")))?,
        player: player_id.map(|id| PlayerRef {
            id,
            username: username.unwrap_or_default(),
        }),
        mv: mv.as_deref().map(super::rooms::parse_json).transpose()?,
        state: super::rooms::parse_json(&row.try_get::<String, _>("state")?)?,
        joinable: row.try_get("joinable")?,
        finished: row.try_get("finished")?,
        players: super::rooms::parse_json(&row.try_get::<String, _>("players")?)?,
        created_at: row.try_get("created_at")?,
    })
}
