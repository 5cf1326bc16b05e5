//! Turns waiting to be pushed: a row of `turn_pushes` for each turn begun for a player with a
//! browser to push to, written in the batch that commits the turn. Once the turn has lasted
//! `--push-after`, the notices' dispatcher takes it and makes a push (a row of `notices` per
//! browser) if the turn still stands. A player at the board, who moves within it, is not
//! pushed about a turn already taken, and their turns cost one row each, written and taken in
//! the order they began, not a notice written, indexed and removed again.
//!
//! Taking removes the turns and makes their pushes in one transaction, so a crash loses none
//! and makes none twice; on PostgreSQL in one statement whose `DELETE` takes each row for one
//! server of several.

use std::collections::HashSet;

use super::dialect::{Dialect, SetSql};
use super::sets::execute_set;
use super::sql::{Exec, Statement};
use super::types::{RoomCommit, StoreError};
use crate::domain::time::Timestamp;

/// A turn waiting to be pushed for each player a turn began for who has a browser to push to,
/// unless they muted the room.
pub(super) const INSERT_TURN_PUSHES: SetSql = SetSql {
    columns: "player_id, room_id, version, at",
    statement: "INSERT INTO turn_pushes (room_id, player_id, version, at) \
         SELECT v.room_id, v.player_id, v.version, v.at FROM v \
         WHERE EXISTS (SELECT 1 FROM push_subscriptions s WHERE s.player_id = v.player_id) \
         AND NOT EXISTS (SELECT 1 FROM muted_rooms m \
         WHERE m.player_id = v.player_id AND m.room_id = v.room_id)",
};

/// A push to each browser of the player, for each turn waiting that began by `$1` and still
/// waits on them, the same turn (the room's `turns` say when it began: a turn taken and another
/// begun since is not this one), unless they muted the room since: the room
/// and player of each push made.
pub(super) const MAKE_TURN_PUSHES: &str = "INSERT INTO notices (channel, kind, player_id, \
     destination, room_id, version, created_at, state, due_at) SELECT 'push', 'turn', \
     t.player_id, s.id, t.room_id, t.version, t.at, 'pending', t.at FROM turn_pushes t \
     JOIN rooms r ON r.id = t.room_id AND (r.turns ->> t.player_id) = t.at \
     JOIN push_subscriptions s ON s.player_id = t.player_id \
     WHERE t.at <= $1 AND NOT EXISTS (SELECT 1 FROM muted_rooms u \
     WHERE u.player_id = t.player_id AND u.room_id = t.room_id) \
     RETURNING room_id, player_id";

/// How many turns waiting began by `$1`.
pub(super) const DUE_TURN_PUSHES: &str = "SELECT count(*) AS taken FROM turn_pushes WHERE at <= $1";

/// The turns waiting that began by `$1`, taken.
pub(super) const DROP_TURN_PUSHES: &str = "DELETE FROM turn_pushes WHERE at <= $1";

/// When the earliest turn waiting began.
pub(super) const NEXT_TURN_PUSH: &str = "SELECT min(at) AS at FROM turn_pushes";

/// Writes the turns `begun` in a batch's commits (each commit with the players it now waits on).
pub(super) async fn insert_turn_pushes<D: Dialect>(
    conn: &mut impl Exec,
    begun: &[(&RoomCommit, &str)],
) -> Result<(), StoreError> {
    execute_set::<D, _>(conn, INSERT_TURN_PUSHES, begun, |row, (commit, player)| {
        row.put("player_id", *player);
        row.put("room_id", commit.room.id.as_str());
        row.put("version", commit.room.version);
        row.put("at", commit.room.updated_at);
    })
    .await
}

/// Takes the turns waiting that began by `before` and makes pushes of those that still stand:
/// how many were dropped because the turn was over, and when the earliest turn still waiting
/// began. All of it in the database: a round costs the moves' writer a few statements, not a
/// row carried out and back for each turn.
pub(super) async fn take_turn_pushes<D: Dialect>(
    conn: &mut D::Connection,
    before: Timestamp,
) -> Result<(usize, Option<Timestamp>), StoreError> {
    let (taken, made) = match D::TAKE_TURN_PUSHES {
        Some(sql) => {
            let row = D::fetch_optional(conn, Statement::new(sql).bind(before)).await?;
            match row {
                Some(row) => (D::int(&row, "taken")?, D::int(&row, "made")?),
                None => (0, 0),
            }
        }
        // The writer is alone: what it counts, makes and removes in one transaction is the
        // same set of turns.
        None => {
            let due = Statement::new(DUE_TURN_PUSHES).bind(before);
            let taken = match D::fetch_optional(conn, due).await? {
                Some(row) => D::int(&row, "taken")?,
                None => 0,
            };
            let mut pushed: HashSet<(String, String)> = HashSet::new();
            if taken > 0 {
                let made = Statement::new(MAKE_TURN_PUSHES).bind(before);
                for row in D::fetch_all(conn, made).await? {
                    pushed.insert((D::text(&row, "room_id")?, D::text(&row, "player_id")?));
                }
                D::execute(conn, Statement::new(DROP_TURN_PUSHES).bind(before)).await?;
            }
            (taken, pushed.len() as i64)
        }
    };
    let next = D::fetch_optional(conn, Statement::new(NEXT_TURN_PUSH)).await?;
    let next = match next {
        Some(row) => D::maybe_time(&row, "at")?,
        None => None,
    };
    Ok(((taken - made).max(0) as usize, next))
}
