//! What differs between SQLite and PostgreSQL, in one trait: the SQL that is not the same in
//! both, and the two steps whose code differs (quick play's lock and telling other servers of
//! a commit). Everything else (the reads in [`super::reads`], the batch in [`super::batch`],
//! the other writes in [`super::writes`]) is written once, generic over a [`Dialect`].
//!
//! The differences in SQL are few: PostgreSQL keeps JSON in `json`/`jsonb` columns, so text
//! bound for them is cast, while SQLite keeps it as text (and must not cast it: its `CAST(… AS
//! json)` would turn a document into a number); SQLite spells a flag 0 or 1 and its partial
//! indexes are written with those literals; and each makes ids and counts its own way. The
//! macros below build each statement from the parts both share and the database's spelling.

use std::future::Future;

use super::sql::Sql;
use super::types::{RoomCommit, StoreError};

/// A statement over a set of rows: `<head> FROM (VALUES (…), (…)) AS v <tail>`, each row
/// `width` arguments wide, read as `v.column1`… (both databases name a `VALUES` list's columns
/// so). One statement serves a whole batch, whatever its size.
#[derive(Debug, Clone, Copy)]
pub(super) struct SetSql {
    pub(super) head: &'static str,
    pub(super) width: usize,
    pub(super) tail: &'static str,
}

impl SetSql {
    /// The statement's text for `rows` rows, with placeholders `$1`, `$2`… when `numbered`,
    /// else `?` each (which SQLite binds in order without looking each one up by name, a cost
    /// that grows with the square of the placeholders).
    pub(super) fn text(&self, rows: usize, numbered: bool) -> String {
        let mut sql =
            String::with_capacity(self.head.len() + self.tail.len() + rows * self.width * 5 + 32);
        sql.push_str(self.head);
        sql.push_str(" FROM (VALUES ");
        for row in 0..rows {
            sql.push_str(if row == 0 { "(" } else { ", (" });
            for column in 0..self.width {
                if column > 0 {
                    sql.push_str(", ");
                }
                match numbered {
                    true => {
                        sql.push('$');
                        sql.push_str(&(row * self.width + column + 1).to_string());
                    }
                    false => sql.push('?'),
                }
            }
            sql.push(')');
        }
        sql.push_str(") AS v ");
        sql.push_str(self.tail);
        sql
    }
}

/// One database's SQL and the steps whose code differs.
pub(super) trait Dialect: Sql {
    /// Begins the writer's transaction.
    const BEGIN: &'static str;
    /// Whether a statement built at run time numbers its placeholders (`$n`) or leaves them
    /// anonymous (`?`, bound in order).
    const NUMBERED_PLACEHOLDERS: bool;
    /// The literal for false in a partial index's condition.
    const FALSE: &'static str;
    /// Quick play's search: the oldest room of game `$1` with clock `$3` open to player `$2`.
    const OLDEST_OPEN_ROOM: &'static str;
    /// New rooms (row: [`super::batch`]'s room columns and the quick-play player), each
    /// inserted unless its id is taken or, for quick play, a room of its game is open to that
    /// player; returns the ids inserted.
    const INSERT_ROOMS: SetSql;
    /// The compare-and-set of a batch's moves; returns the ids written (a room not returned
    /// lost its race).
    const UPDATE_ROOMS: SetSql;
    /// The same, for changes that also move the room in the lobby (`joinable`, `finished`).
    const UPDATE_LISTED_ROOMS: SetSql;
    const INSERT_EVENTS: SetSql;
    /// The owner of game `$1`, its row locked until the transaction ends where others could
    /// publish at the same time.
    const GAME_OWNER: &'static str;
    /// `$2` copies of room `$1` under new random ids.
    const COPY_ROOMS: &'static str;

    /// Makes quick play's check-then-insert for `games` atomic against other servers' (held
    /// until the transaction ends).
    fn lock_quick_play(
        conn: &mut Self::Connection,
        games: &[&str],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Tells other servers on the database about these commits once they are durable.
    fn announce(
        conn: &mut Self::Connection,
        commits: &[&RoomCommit],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// `<room o> is open to <player>`: of the game, with the same clock (`$is` is the database's
/// null-safe equality), public, joinable, unfinished, and the player is not in it, with the
/// database's literals for false and true. Shaped for the partial index on public
/// rooms by game, joinable and finished, oldest first, with one primary-key probe of the
/// memberships per candidate (never a walk of everything the player was in).
macro_rules! open_to_player {
    ($game:literal, $player:literal, $clock:literal, $no:literal, $yes:literal, $is:literal) => {
        concat!(
            "o.game = ",
            $game,
            " AND o.clock_move_seconds ",
            $is,
            " ",
            $clock,
            " AND o.private = ",
            $no,
            " AND o.joinable = ",
            $yes,
            " AND o.finished = ",
            $no,
            " AND NOT EXISTS (SELECT 1 FROM room_players m WHERE m.room_id = o.id \
             AND m.player_id = ",
            $player,
            " AND m.active = ",
            $yes,
            ")"
        )
    };
}

/// Quick play's search (`$1` the game, `$2` the player, `$3` the clock's move seconds).
macro_rules! oldest_open_room {
    ($no:literal, $yes:literal, $is:literal) => {
        concat!(
            "SELECT o.id FROM rooms o WHERE ",
            $crate::store::dialect::open_to_player!("$1", "$2", "$3", $no, $yes, $is),
            " ORDER BY o.seq LIMIT 1"
        )
    };
}

/// `INSERT_ROOMS`; `$json`/`$jsonb` wrap a text column written to a JSON column, e.g.
/// `("CAST(", " AS json)")`, or `("", "")` where JSON is text.
macro_rules! insert_rooms {
    (($j:literal, $jc:literal), ($b:literal, $bc:literal), $no:literal, $yes:literal, $is:literal) => {
        $crate::store::dialect::SetSql {
            head: concat!(
                "INSERT INTO rooms (id, game, private, version, joinable, finished, state, \
                 players, inactive_players, trigger_timeout_at, created_at, updated_at, \
                 game_version, clock_move_seconds) \
                 SELECT v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, ",
                $j,
                "v.column7",
                $jc,
                ", ",
                $b,
                "v.column8",
                $bc,
                ", ",
                $b,
                "v.column9",
                $bc,
                ", v.column10, v.column11, v.column12, v.column13, v.column14"
            ),
            width: 15,
            tail: concat!(
                "WHERE v.column15 IS NULL OR NOT EXISTS (SELECT 1 FROM rooms o WHERE ",
                $crate::store::dialect::open_to_player!(
                    "v.column2",
                    "v.column15",
                    "v.column14",
                    $no,
                    $yes,
                    $is
                ),
                ") ON CONFLICT DO NOTHING RETURNING id"
            ),
        }
    };
}

/// `UPDATE_ROOMS` (`$listing` empty) or `UPDATE_LISTED_ROOMS`; the row is id, version,
/// joinable, finished, state, players, inactive players, deadline, updated at, expected
/// version.
macro_rules! update_rooms {
    ($listing:literal, ($j:literal, $jc:literal), ($b:literal, $bc:literal)) => {
        $crate::store::dialect::SetSql {
            head: concat!(
                "UPDATE rooms SET version = v.column2, ",
                $listing,
                "state = ",
                $j,
                "v.column5",
                $jc,
                ", players = ",
                $b,
                "v.column6",
                $bc,
                ", inactive_players = ",
                $b,
                "v.column7",
                $bc,
                ", trigger_timeout_at = v.column8, updated_at = v.column9"
            ),
            width: 10,
            tail: "WHERE rooms.id = v.column1 AND rooms.version = v.column10 RETURNING rooms.id",
        }
    };
}

/// `INSERT_EVENTS`: one row per version, in table order.
macro_rules! insert_events {
    (($j:literal, $jc:literal), ($b:literal, $bc:literal)) => {
        $crate::store::dialect::SetSql {
            head: concat!(
                "INSERT INTO room_events (room_id, version, kind, player_id, move, state, \
                 joinable, finished, players, created_at, trigger_timeout_at) \
                 SELECT v.column1, v.column2, v.column3, v.column4, ",
                $j,
                "v.column5",
                $jc,
                ", ",
                $j,
                "v.column6",
                $jc,
                ", v.column7, v.column8, ",
                $b,
                "v.column9",
                $bc,
                ", v.column10, v.column11"
            ),
            width: 11,
            tail: "",
        }
    };
}

pub(super) use {insert_events, insert_rooms, oldest_open_room, open_to_player, update_rooms};

#[cfg(test)]
mod tests {
    use super::SetSql;

    #[test]
    fn a_set_statement_numbers_its_rows_placeholders_in_order() {
        let sql = SetSql {
            head: "UPDATE t SET a = v.column2",
            width: 2,
            tail: "WHERE t.id = v.column1",
        };
        assert_eq!(
            sql.text(3, true),
            "UPDATE t SET a = v.column2 FROM (VALUES ($1, $2), ($3, $4), ($5, $6)) AS v \
             WHERE t.id = v.column1"
        );
        assert_eq!(
            sql.text(2, false),
            "UPDATE t SET a = v.column2 FROM (VALUES (?, ?), (?, ?)) AS v WHERE t.id = v.column1"
        );
    }
}
