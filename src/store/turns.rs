//! Whose move it is, read across rooms: a player's turns inbox, from their unfinished
//! memberships and each room's own row, which says since when it has been each player's move
//! (`turns`, a JSON object by player id, written with each version, so every server reads the
//! same).

use super::dialect::Dialect;
use super::rows::parse_json;
use super::sql::Statement;
use super::types::StoreError;
use super::Store;
use crate::domain::ids::RoomId;
use crate::domain::time::Timestamp;
use crate::game::{Clock, PlayerRef};

/// Player `$1`'s unfinished rooms where it is their move, the soonest deadline first (rooms
/// with none after), then the longest waiting; at most `$2`. Read from the player's unfinished
/// memberships (`m.finished`, which follows the room's, leads their index).
pub(super) const TURNS_OF: &str = "SELECT r.id, r.game, r.version, \
     CAST(r.players AS TEXT) AS players, r.trigger_timeout_at, r.clock_move_seconds, \
     (r.turns ->> m.player_id) AS turn_since FROM room_players m JOIN rooms r ON r.id = m.room_id \
     WHERE m.finished = false AND m.player_id = $1 AND m.active = true AND r.finished = false \
     AND (r.turns ->> m.player_id) IS NOT NULL \
     ORDER BY r.trigger_timeout_at IS NULL, r.trigger_timeout_at, (r.turns ->> m.player_id), r.id \
     LIMIT $2";

/// A room waiting on one player's move.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub room: RoomId,
    pub game: String,
    pub version: i64,
    pub players: Vec<PlayerRef>,
    /// When the room's deadline passes, if it has one.
    pub deadline: Option<Timestamp>,
    pub clock: Option<Clock>,
    /// Since when it has been the player's move.
    pub since: Timestamp,
}

async fn turns_of<D: Dialect>(
    pool: &sqlx::Pool<D>,
    player: &str,
    limit: i64,
) -> Result<Vec<Turn>, StoreError> {
    let statement = Statement::new(TURNS_OF).bind(player).bind(limit);
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    rows.iter().map(turn_of::<D>).collect()
}

/// A room waiting on a player, from a row of [`TURNS_OF`]'s columns.
pub(super) fn turn_of<D: Dialect>(row: &D::Row) -> Result<Turn, StoreError> {
    Ok(Turn {
        room: D::text(row, "id")?.into(),
        game: D::text(row, "game")?,
        version: D::int(row, "version")?,
        players: parse_json(&D::text(row, "players")?)?,
        deadline: D::maybe_time(row, "trigger_timeout_at")?,
        clock: D::maybe_int(row, "clock_move_seconds")?.map(|seconds| Clock {
            move_seconds: seconds as u32,
        }),
        since: D::time(row, "turn_since")?,
    })
}

/// The store's reads of whose move it is.
impl Store {
    /// The rooms waiting on `player`'s move, soonest deadline first, then longest waiting; at
    /// most `limit`.
    pub async fn turns_of(&self, player: &str, limit: i64) -> Result<Vec<Turn>, StoreError> {
        read!(self, |pool| turns_of(pool, player, limit))
    }
}
