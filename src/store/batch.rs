//! A batch of room changes in a few statements, whatever its size: one insert for the new
//! rooms, one compare-and-set for the moves and one for changes that move a room in the lobby
//! (`WITH v AS (VALUES …) UPDATE … FROM v … RETURNING`: a room not returned lost its race), one statement
//! per kind of membership change, and one insert for the history.
//!
//! The writer splits a batch into rounds ([`rounds`]) so that no statement sees the same room
//! twice, and no two quick-play creations of one game are checked in one statement (neither
//! would see the other). A round's refusals are decided by the compare-and-set and the inserts
//! alone, before anything else of it is written, so a refused change leaves nothing behind.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::collections::{HashMap, HashSet};

use super::dialect::{Dialect, SetRow, SetSql};
use super::merging::Merging;
use super::outbox::{insert_room_events, OutboxBoard};
use super::rows::to_json;
use super::sets::{execute_set, set_statements};
use super::sql::{Exec, Statement};
use super::types::{RoomCommit, RoomWritten, StoreError};
use crate::domain::records::{Room, Score};

/// A membership: who is (`active`) or was in a room.
pub(super) const UPSERT_MEMBERS: SetSql = SetSql {
    columns: "room_id, player_id, active",
    statement: "INSERT INTO room_players (room_id, player_id, active, room_seq, game, finished) \
         SELECT v.room_id, v.player_id, v.active, r.seq, r.game, r.finished \
         FROM v JOIN rooms r ON r.id = v.room_id WHERE true \
         ON CONFLICT (room_id, player_id) DO UPDATE SET active = excluded.active",
};

/// A room's `finished`, copied onto its memberships.
pub(super) const SET_MEMBERS_FINISHED: SetSql = SetSql {
    columns: "room_id, player_id, finished",
    statement: "UPDATE room_players SET finished = v.finished FROM v \
         WHERE room_players.room_id = v.room_id AND room_players.player_id = v.player_id",
};

/// Splits `commits` (in the order they arrived) into rounds, each a list of indexes: a commit
/// goes in the round after the last one holding a commit to the same room, and a quick-play
/// creation also after the last one creating a room of the same game that way. Commits to
/// different rooms never depend on each other, so most batches are one round.
pub(super) fn rounds(commits: &[&RoomCommit]) -> Vec<Vec<usize>> {
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    let mut last: HashMap<(bool, &str), usize> = HashMap::new();
    for (at, commit) in commits.iter().enumerate() {
        let mut keys = vec![(false, commit.room.id.as_str())];
        if commit.quick_play.is_some() {
            keys.push((true, commit.room.game.as_str()));
        }
        let round = keys
            .iter()
            .filter_map(|key| last.get(key).map(|round| round + 1))
            .max()
            .unwrap_or(0);
        for key in keys {
            last.insert(key, round);
        }
        if round == rounds.len() {
            rounds.push(Vec::new());
        }
        rounds[round].push(at);
    }
    rounds
}

/// Applies one round (no room twice, see [`rounds`]) and says, for each commit, what writing it
/// produced; `None` for one that lost its race and wrote nothing.
pub(super) async fn apply_round<D: Dialect>(
    conn: &mut impl Exec,
    commits: &[&RoomCommit],
    outbox: &OutboxBoard,
) -> Result<Vec<Option<RoomWritten>>, StoreError> {
    let conn = &mut Merging::<D, _>::new(conn);
    let texts = RoomTexts::of(commits);
    let (new, changed): (Vec<&RoomCommit>, Vec<&RoomCommit>) =
        commits.iter().partition(|c| c.expected_version.is_none());
    let mut written = HashSet::new();
    if !new.is_empty() {
        let mut games: Vec<&str> = new
            .iter()
            .filter(|c| c.quick_play.is_some())
            .map(|c| c.room.game.as_str())
            .collect();
        if !games.is_empty() {
            // In one order everywhere, so two servers' batches cannot deadlock on them.
            games.sort_unstable();
            games.dedup();
            D::lock_quick_play(conn, &games).await?;
        }
        written.extend(insert_rooms::<D>(conn, &new, &texts).await?);
    }
    let (listed, moves): (Vec<&RoomCommit>, Vec<&RoomCommit>) = match D::UPDATE_LISTED_ROOMS {
        Some(_) => changed.into_iter().partition(|c| c.listing_changed),
        None => (Vec::new(), changed),
    };
    if !moves.is_empty() {
        written.extend(update_rooms::<D>(conn, D::UPDATE_ROOMS, &moves, &texts).await?);
    }
    if let (false, Some(sql)) = (listed.is_empty(), D::UPDATE_LISTED_ROOMS) {
        written.extend(update_rooms::<D>(conn, sql, &listed, &texts).await?);
    }
    let accepted: Vec<&RoomCommit> = commits
        .iter()
        .copied()
        .filter(|c| written.contains(c.room.id.as_str()))
        .collect();
    // Not refusals if these fail: the compare-and-set already decided that these versions are
    // new, so a failure here (a duplicate version, a missing player) is a bug that undoes the
    // whole transaction.
    upsert_members::<D>(conn, &accepted).await?;
    set_members_finished::<D>(conn, &accepted).await?;
    insert_events::<D>(conn, &accepted, &texts).await?;
    for audit in accepted.iter().filter_map(|c| c.audit.as_ref()) {
        super::moderation::insert_audit(conn, audit).await?;
    }
    let mut rated: HashMap<String, RoomWritten> = super::ratings::rate::<D>(conn, &accepted)
        .await?
        .into_iter()
        .map(|(id, rating_changes)| (id, RoomWritten { rating_changes }))
        .collect();
    insert_room_events::<D>(conn, outbox, &accepted, &rated).await?;
    super::notices::insert_turn_notices::<D>(conn, &outbox.notices, &accepted).await?;
    if !accepted.is_empty() {
        D::announce(conn, &accepted).await?;
    }
    // Within the round, so that a write that fails is blamed on it.
    conn.flush().await?;
    Ok(commits
        .iter()
        .map(|c| {
            let id = c.room.id.as_str();
            written
                .contains(id)
                .then(|| rated.remove(id).unwrap_or_default())
        })
        .collect())
}

/// Each room's state and players as JSON, made once for its row and for the history row of
/// its latest version, which holds the same. Keyed by room id: a round has each room once.
struct RoomTexts<'a>(HashMap<&'a str, (String, String)>);

impl<'a> RoomTexts<'a> {
    fn of(commits: &[&'a RoomCommit]) -> Self {
        let texts = commits.iter().map(|commit| {
            let room = &commit.room;
            let texts = (to_json(&room.state), to_json(&room.players));
            (room.id.as_str(), texts)
        });
        Self(texts.collect())
    }

    fn state(&self, room: &Room) -> String {
        self.0[room.id.as_str()].0.clone()
    }

    fn players(&self, room: &Room) -> String {
        self.0[room.id.as_str()].1.clone()
    }
}

/// The new rooms; the ids written.
async fn insert_rooms<D: Dialect>(
    conn: &mut impl Exec,
    rooms: &[&RoomCommit],
    texts: &RoomTexts<'_>,
) -> Result<Vec<String>, StoreError> {
    let statements = set_statements::<D, _>(D::INSERT_ROOMS, rooms, |row, commit| {
        let room = &commit.room;
        row.put("id", room.id.as_str());
        row.put("game", room.game.as_str());
        row.put("private", room.private);
        row.put("rated", room.rated);
        put_changing_columns(row, room, texts);
        row.put("created_at", room.created_at);
        row.put("updated_at", room.updated_at);
        row.put("game_version", room.game_version);
        let move_seconds = room.clock.map(|clock| i64::from(clock.move_seconds));
        row.put("clock_move_seconds", move_seconds);
        let guard = commit.quick_play.as_ref();
        row.put("quick_play_for", guard.map(|g| g.player_id.clone()));
        row.put("seen_since", guard.map(|g| g.seen_since));
        row.put("quick_play_rating", guard.map(|g| g.rating));
        row.put("quick_play_since", guard.map(|g| g.at_ms));
    });
    returned_ids(conn, statements).await
}

/// The columns a room change writes, which a new room's row has in the same order.
fn put_changing_columns(row: &mut SetRow, room: &Room, texts: &RoomTexts) {
    row.put("version", room.version);
    row.put("joinable", room.joinable);
    row.put("finished", room.finished);
    row.put("state", texts.state(room));
    row.put("players", texts.players(room));
    row.put("inactive_players", to_json(&room.inactive_players));
    row.put("trigger_timeout_at", room.trigger_timeout_at);
    row.put("to_move", room.to_move.as_ref().map(to_json));
    row.put(
        "turns",
        (!room.turns.is_empty()).then(|| to_json(&room.turns)),
    );
    row.put("rematch", room.rematch.as_ref().map(to_json));
    let held_until = room.rematch.as_ref().map(|r| r.until);
    row.put("seats_held_until", held_until);
    let score = (room.score != Score::default()).then(|| to_json(&room.score));
    row.put("score", score);
}

/// The compare-and-set of `changes` with `sql` ([`Dialect::UPDATE_ROOMS`] or
/// [`Dialect::UPDATE_LISTED_ROOMS`]); the ids written.
async fn update_rooms<D: Dialect>(
    conn: &mut impl Exec,
    sql: SetSql,
    changes: &[&RoomCommit],
    texts: &RoomTexts<'_>,
) -> Result<Vec<String>, StoreError> {
    let statements = set_statements::<D, _>(sql, changes, |row, commit| {
        let room = &commit.room;
        row.put("id", room.id.as_str());
        put_changing_columns(row, room, texts);
        row.put("updated_at", room.updated_at);
        row.put("expected_version", commit.expected_version);
    });
    returned_ids(conn, statements).await
}

/// Rewrites the memberships of the rooms whose seats changed: everyone seated, and everyone
/// who was.
async fn upsert_members<D: Dialect>(
    conn: &mut impl Exec,
    commits: &[&RoomCommit],
) -> Result<(), StoreError> {
    let mut members: Vec<(&str, &str, bool)> = Vec::new();
    for commit in commits.iter().filter(|c| c.members_changed) {
        let room = &commit.room;
        let seated = room.players.iter().map(|p| (p, true));
        let left = room.inactive_players.iter().map(|p| (p, false));
        for (player, active) in seated.chain(left) {
            // One row per player and room in a statement (PostgreSQL refuses an upsert that
            // meets a row twice); the last word wins, as writing them one by one would.
            match members
                .iter_mut()
                .find(|(r, p, _)| *r == room.id && *p == player.id)
            {
                Some(member) => member.2 = active,
                None => members.push((&room.id, &player.id, active)),
            }
        }
    }
    execute_set::<D, _>(conn, UPSERT_MEMBERS, &members, |row, member| {
        row.put("room_id", member.0);
        row.put("player_id", member.1);
        row.put("active", member.2);
    })
    .await
}

/// Everyone with a membership of `room`: its players and those who left it (a membership is
/// never removed, and a player who leaves stays in `inactive_players`).
fn members(room: &Room) -> impl Iterator<Item = &crate::game::PlayerRef> {
    room.players.iter().chain(&room.inactive_players)
}

/// Copies `finished` onto the memberships of existing rooms where it changed (a new room's
/// memberships take it from the room as they are written).
async fn set_members_finished<D: Dialect>(
    conn: &mut impl Exec,
    commits: &[&RoomCommit],
) -> Result<(), StoreError> {
    let members: Vec<(&str, &str, bool)> = commits
        .iter()
        .filter(|c| c.finished_changed && c.expected_version.is_some())
        .flat_map(|c| {
            let room = &c.room;
            members(room).map(|p| (room.id.as_str(), p.id.as_str(), room.finished))
        })
        .collect();
    execute_set::<D, _>(conn, SET_MEMBERS_FINISHED, &members, |row, member| {
        row.put("room_id", member.0);
        row.put("player_id", member.1);
        row.put("finished", member.2);
    })
    .await
}

async fn insert_events<D: Dialect>(
    conn: &mut impl Exec,
    commits: &[&RoomCommit],
    texts: &RoomTexts<'_>,
) -> Result<(), StoreError> {
    let events: Vec<_> = commits
        .iter()
        .flat_map(|c| c.events.iter().map(move |e| (&c.room, e)))
        .collect();
    execute_set::<D, _>(conn, D::INSERT_EVENTS, &events, |row, (room, event)| {
        // The latest version is the room as it is written.
        let latest = event.version == room.version;
        debug_assert!(!latest || (event.state == room.state && event.players == room.players));
        row.put("room_id", room.id.as_str());
        row.put("version", event.version);
        row.put("kind", event.kind.as_str());
        row.put("player_id", event.player.as_ref().map(|p| p.id.clone()));
        row.put("move", event.mv.as_ref().map(to_json));
        match latest {
            true => row.put("state", texts.state(room)),
            false => row.put("state", to_json(&event.state)),
        }
        row.put("joinable", event.joinable);
        row.put("finished", event.finished);
        match latest {
            true => row.put("players", texts.players(room)),
            false => row.put("players", to_json(&event.players)),
        }
        row.put("created_at", event.created_at);
        row.put("trigger_timeout_at", event.trigger_timeout_at);
        row.put("to_move", event.to_move.as_ref().map(to_json));
    })
    .await
}

/// Runs statements that return written rooms' `id`s; all of them.
async fn returned_ids<E: Exec>(
    conn: &mut E,
    statements: Vec<Statement>,
) -> Result<Vec<String>, StoreError> {
    let mut ids = Vec::new();
    for statement in statements {
        for row in conn.fetch_all(statement).await? {
            ids.push(E::text(&row, "id")?);
        }
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::QuickPlayGuard;

    fn commit(room: &str, game: &str, quick_play: bool) -> RoomCommit {
        RoomCommit {
            room: Room::for_tests(room, game),
            expected_version: None,
            events: Vec::new(),
            members_changed: false,
            listing_changed: false,
            finished_changed: false,
            quick_play: quick_play.then(|| QuickPlayGuard {
                player_id: "p".into(),
                seen_since: crate::domain::time::Timestamp::now(),
                rating: 1500.0,
                at_ms: 0,
            }),
            lobby_change: None,
            audit: None,
            rated_result: None,
            joinable_before: true,
            finished_before: false,
            winners: None,
            turns_begun: Vec::new(),
        }
    }

    #[test]
    fn a_room_or_a_quick_play_game_seen_again_waits_for_the_next_round() {
        let commits = [
            commit("a", "g", false),
            commit("b", "g", true),
            commit("a", "g", false),
            commit("c", "g", true),
            commit("d", "h", true),
            commit("a", "g", false),
        ];
        let refs: Vec<&RoomCommit> = commits.iter().collect();
        assert_eq!(rounds(&refs), vec![vec![0, 1, 4], vec![2, 3], vec![5]]);
    }
}
