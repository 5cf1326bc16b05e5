//! Turns waiting to be pushed: a row of `turn_pushes` for each turn begun for a player with a
//! browser to push to, written in the batch that commits the turn. Once the turn has lasted
//! `--push-after`, the notices' dispatcher takes it and makes a push (a row of `notices` per
//! browser) if the turn still stands. A player at the board, who moves within it, is not
//! pushed about a turn already taken, and their turns cost one row each, written and taken in
//! the order they began, not a notice written, indexed and removed again.
//!
//! Taking is a `DELETE … RETURNING`, so that of several servers on one PostgreSQL database each
//! row goes to one (`FOR UPDATE SKIP LOCKED`), and the pushes made of them are in the same
//! transaction: a crash loses none and makes none twice.

use std::collections::{HashMap, HashSet};

use super::dialect::{Dialect, SetSql};
use super::sets::{execute_set, set_statements};
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

/// A push to each browser of the player, for each turn taken that still waits on them, the
/// same turn (their membership's `turn_since` is when it began: a turn taken and another
/// begun since is not this one), unless they muted the room since: the room and player of
/// each push made.
pub(super) const MAKE_TURN_PUSHES: SetSql = SetSql {
    columns: "player_id, room_id, version, at",
    statement: "INSERT INTO notices (channel, kind, player_id, destination, room_id, version, \
         created_at, state, due_at) SELECT 'push', 'turn', v.player_id, s.id, v.room_id, \
         v.version, v.at, 'pending', v.at FROM v \
         JOIN push_subscriptions s ON s.player_id = v.player_id \
         WHERE EXISTS (SELECT 1 FROM room_players m WHERE m.room_id = v.room_id \
         AND m.player_id = v.player_id AND m.turn_since = v.at) \
         AND NOT EXISTS (SELECT 1 FROM muted_rooms u \
         WHERE u.player_id = v.player_id AND u.room_id = v.room_id) \
         RETURNING room_id, player_id",
};

/// Turns taken in one round, at most.
const TAKE_AT_ONCE: i64 = 10_000;

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

/// When the earliest turn waiting began.
pub(super) const NEXT_TURN_PUSH: &str = "SELECT min(at) AS at FROM turn_pushes";

/// Takes the turns waiting that began by `before` and makes pushes of those that still stand
/// (of a player's turns in one room, the latest only): how many were dropped because the turn
/// was over, and when the earliest turn still waiting began.
pub(super) async fn take_turn_pushes<D: Dialect>(
    conn: &mut D::Connection,
    before: Timestamp,
) -> Result<(usize, Option<Timestamp>), StoreError> {
    let taken = Statement::new(D::TAKE_TURN_PUSHES)
        .bind(before)
        .bind(TAKE_AT_ONCE);
    let rows = D::fetch_all(conn, taken).await?;
    let next = D::fetch_optional(conn, Statement::new(NEXT_TURN_PUSH)).await?;
    let next = match next {
        Some(row) => D::maybe_time(&row, "at")?,
        None => None,
    };
    if rows.is_empty() {
        return Ok((0, next));
    }
    let mut latest: HashMap<(String, String), (i64, Timestamp)> = HashMap::new();
    for row in &rows {
        let key = (D::text(row, "room_id")?, D::text(row, "player_id")?);
        let turn = (D::int(row, "version")?, D::time(row, "at")?);
        let kept = latest.entry(key).or_insert(turn);
        if turn.0 > kept.0 {
            *kept = turn;
        }
    }
    let turns: Vec<_> = latest.into_iter().collect();
    let mut pushed: HashSet<(String, String)> = HashSet::new();
    for statement in set_statements::<D, _>(MAKE_TURN_PUSHES, &turns, |row, (key, turn)| {
        row.put("player_id", key.1.as_str());
        row.put("room_id", key.0.as_str());
        row.put("version", turn.0);
        row.put("at", turn.1);
    }) {
        for row in D::fetch_all(conn, statement).await? {
            pushed.insert((D::text(&row, "room_id")?, D::text(&row, "player_id")?));
        }
    }
    Ok((rows.len() - pushed.len(), next))
}
