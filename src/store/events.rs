//! Room history: one row per version.

use serde_json::Value;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection};

use super::{Store, StoreError};
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
    .await?;
    // Not a refusal: the room's compare-and-set, written first, already decided that this
    // version is new, so a duplicate here is a failure that undoes the whole transaction.
    Ok(())
}

/// A page of a room's history: `room_id`, after `version`, at most `limit`.
pub(super) const PAGE: &str =
    "SELECT e.version, e.kind, e.player_id, p.username, e.move, e.state, e.joinable, e.finished, \
     e.players, e.created_at FROM room_events e LEFT JOIN players p ON p.id = e.player_id \
     WHERE e.room_id = ? AND e.version > ? ORDER BY e.version LIMIT ?";

impl Store {
    /// Events of a room with a version above `after`, oldest first, at most `limit`.
    pub async fn events(
        &self,
        room_id: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<RoomEvent>, StoreError> {
        let rows = sqlx::query(PAGE)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A database written before versions recorded their players gets them by replaying each
    /// room's history: joins seat, quits unseat, a start or play again empties the table.
    #[tokio::test]
    async fn history_from_before_seats_were_recorded_gets_them_by_replay() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        let old = crate::store::database_before(&path, 3).await;
        for (id, name) in [("a", "alice"), ("b", "bob")] {
            sqlx::query(
                "INSERT INTO players (id, username, token_hash, created_at) VALUES (?, ?, '', '')",
            )
            .bind(id)
            .bind(name)
            .execute(&old)
            .await
            .unwrap();
        }
        sqlx::query(
            "INSERT INTO rooms (id, game, private, version, joinable, finished, state, players, \
             inactive_players, created_at, updated_at) \
             VALUES ('r', 'tictactoe', 0, 9, 1, 0, 'null', '[]', '[]', '', '')",
        )
        .execute(&old)
        .await
        .unwrap();
        let history = [
            ("room_start", "a"),
            ("join", "a"),
            ("quit", "a"),
            ("join", "b"),
            ("join", "a"),
            ("move", "b"),
            ("quit", "b"),
            ("reset", "a"),
            ("join", "a"),
        ];
        for (version, (kind, player)) in history.iter().enumerate() {
            sqlx::query(
                "INSERT INTO room_events (room_id, version, kind, player_id, state, joinable, finished, created_at) \
                 VALUES ('r', ?, ?, ?, 'null', 1, 0, '')",
            )
            .bind(version as i64 + 1)
            .bind(kind)
            .bind(player)
            .execute(&old)
            .await
            .unwrap();
        }
        old.close().await;

        let store = Store::open(path.to_str().unwrap()).await.unwrap();
        let seated: Vec<Vec<String>> = store
            .events("r", 0, 100)
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.players.into_iter().map(|p| p.username).collect())
            .collect();
        let expected: [&[&str]; 9] = [
            &[],
            &["alice"],
            &[],
            &["bob"],
            &["bob", "alice"],
            &["bob", "alice"],
            &["alice"],
            &[],
            &["alice"],
        ];
        assert_eq!(seated, expected.map(|s| s.to_vec()));
    }
}
