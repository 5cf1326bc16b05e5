//! Every read the store makes, once for both databases: SQL both accept (`$n` placeholders,
//! which SQLite binds to the n-th argument too, and JSON columns read through `CAST(… AS
//! TEXT)`, a no-op on SQLite's text columns that turns PostgreSQL's `json`/`jsonb` into the
//! same text). Reads use their own pool and never wait for the writer.
//!
//! One stop in the life of a move: `docs/internals.md`.

use sqlx::Pool;

use super::dialect::Dialect;
use super::rows;
use super::sql::Statement;
use super::types::{Deadline, FileKey, QuickPlayGuard, RoomQuery, StoreError, StoredFile};
use crate::domain::records::{Account, GameLogLine, GameVersionRecord, Room, RoomEvent};
use crate::domain::time::Timestamp;

/// Every room column of the room aliased `r`, named as [`rows::room`] reads them (listings
/// put it after their `SELECT`).
const ROOM_COLUMNS: &str = "r.seq, r.id, r.game, r.game_version, r.private, r.rated, r.version, \
     r.joinable, r.finished, CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, \
     CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at, \
     r.trigger_timeout_at, r.to_move, CAST(r.turns AS TEXT) AS turns, \
     r.clock_move_seconds, \
     CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score";

pub(super) const ONE_ROOM: &str =
    "SELECT r.seq, r.id, r.game, r.game_version, r.private, r.rated, \
     r.version, r.joinable, r.finished, CAST(r.state AS TEXT) AS state, \
     CAST(r.players AS TEXT) AS players, CAST(r.inactive_players AS TEXT) AS inactive_players, \
     r.created_at, r.updated_at, r.trigger_timeout_at, r.to_move, \
     CAST(r.turns AS TEXT) AS turns, r.clock_move_seconds, \
     CAST(r.rematch AS TEXT) AS rematch, CAST(r.score AS TEXT) AS score \
     FROM rooms r WHERE r.id = $1";

/// A page of a room's history: `$1` the room, after version `$2`, at most `$3`.
pub(super) const EVENTS_PAGE: &str =
    "SELECT e.version, e.kind, e.player_id, p.username, CAST(e.move AS TEXT) AS move, \
     CAST(e.state AS TEXT) AS state, e.joinable, e.finished, CAST(e.players AS TEXT) AS players, \
     e.trigger_timeout_at, e.to_move, e.created_at FROM room_events e LEFT JOIN players p ON p.id = e.player_id \
     WHERE e.room_id = $1 AND e.version > $2 ORDER BY e.version LIMIT $3";

/// Game `$1`'s log lines after id `$2`, oldest first, at most `$3`.
pub(super) const GAME_LOG_AFTER: &str = "SELECT id, game, game_version, at, room, version, \
     hook, level, text FROM game_logs WHERE game = $1 AND id > $2 ORDER BY id LIMIT $3";

/// Game `$1`'s newest `$2` log lines, newest first.
pub(super) const GAME_LOG_NEWEST: &str = "SELECT id, game, game_version, at, room, version, \
     hook, level, text FROM game_logs WHERE game = $1 ORDER BY id DESC LIMIT $2";

pub(super) const ACCOUNT: &str = "SELECT id, username, created_at FROM players WHERE id = $1";

/// The player named `$1`, ignoring case (the exact name first: names that differed only by
/// case before that was refused are kept).
pub(super) const ACCOUNT_BY_NAME: &str = "SELECT id, username, created_at FROM players \
     WHERE (username = $1 OR username_key = lower($1)) ORDER BY username = $1 DESC LIMIT 1";

/// Versions of games with their owners, in the columns [`rows::game_version`] reads: version
/// `$2` of game `$1`, or the latest of each game where `$2` is null, of every game where `$1`
/// is null.
pub(super) const VERSIONS: &str = "SELECT v.game_id, v.version, v.name, v.description, \
     v.min_players, v.max_players, v.format, v.sha256, v.move_example, v.on_timeout, \
     v.on_player_view, v.enumerate_moves, v.winners, v.to_move, v.chat, \
     (SELECT count(*) FROM game_frontend_files f \
      WHERE f.game_id = v.game_id AND f.version = v.version) AS frontend_files, \
     v.frontend_background, v.frontend_height, v.created_at, g.owner_id, \
     p.username AS owner_name, g.created_at AS game_created_at, g.unpublished_at \
     FROM game_versions v JOIN games g ON g.id = v.game_id JOIN players p ON p.id = g.owner_id \
     WHERE ($1 IS NULL OR v.game_id = $1) AND v.version = coalesce($2, \
     (SELECT max(version) FROM game_versions l WHERE l.game_id = v.game_id)) \
     ORDER BY v.game_id";

pub(super) const GAME_SOURCE: &str =
    "SELECT source AS text FROM game_versions WHERE game_id = $1 AND version = $2";

/// A file of a version's frontend (`$1` game, `$2` version, `$3` path): its gzipped copy when
/// there is one.
pub(super) const FRONTEND_FILE_GZIP: &str =
    "SELECT content_type, etag, coalesce(gzip, body) AS body, gzip IS NOT NULL AS gzipped \
     FROM game_frontend_files WHERE game_id = $1 AND version = $2 AND path = $3";

/// A file of a version's frontend as uploaded.
pub(super) const FRONTEND_FILE: &str = "SELECT content_type, etag, body, false AS gzipped \
     FROM game_frontend_files WHERE game_id = $1 AND version = $2 AND path = $3";

/// Whether the database answers.
pub(super) const PING: &str = "SELECT 1";

pub(super) async fn ping<D: Dialect>(pool: &Pool<D>) -> Result<(), StoreError> {
    D::execute(&mut *pool.acquire().await?, Statement::new(PING)).await
}

pub(super) async fn room<D: Dialect>(pool: &Pool<D>, id: &str) -> Result<Option<Room>, StoreError> {
    let statement = Statement::new(ONE_ROOM).bind(id);
    match D::fetch_optional(&mut *pool.acquire().await?, statement).await? {
        Some(row) => Ok(Some(rows::room::<D>(&row)?.1)),
        None => Ok(None),
    }
}

/// The oldest room with the clock `move_seconds` quick play can put `seeker` in.
pub(super) async fn oldest_open_room<D: Dialect>(
    pool: &Pool<D>,
    game: &str,
    move_seconds: Option<i64>,
    now: Timestamp,
    seeker: &QuickPlayGuard,
) -> Result<Option<String>, StoreError> {
    let statement = Statement::new(D::OLDEST_OPEN_ROOM)
        .bind(game)
        .bind(seeker.player_id.as_str())
        .bind(move_seconds)
        .bind(now)
        .bind(seeker.seen_since)
        .bind(seeker.rating)
        .bind(seeker.at_ms);
    match D::fetch_optional(&mut *pool.acquire().await?, statement).await? {
        Some(row) => Ok(Some(D::text(&row, "id")?)),
        None => Ok(None),
    }
}

/// The `limit` earliest deadlines of all rooms, due or not, earliest first: one range of
/// `rooms_deadlines`, whatever the number of rooms with one.
pub(super) const EARLIEST_DEADLINES: &str = "SELECT id, version, trigger_timeout_at FROM rooms \
     WHERE trigger_timeout_at IS NOT NULL ORDER BY trigger_timeout_at LIMIT $1";

pub(super) async fn earliest_deadlines<D: Dialect>(
    pool: &Pool<D>,
    limit: i64,
) -> Result<Vec<Deadline>, StoreError> {
    let statement = Statement::new(EARLIEST_DEADLINES).bind(limit);
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    rows.iter()
        .map(|row| {
            Ok(Deadline {
                room_id: D::text(row, "id")?.into(),
                version: D::int(row, "version")?,
                at: D::time(row, "trigger_timeout_at")?,
            })
        })
        .collect()
}

/// Rooms waiting for players with no version since `before`, least recently changed first, at
/// most `limit`: one range of `rooms_waiting`.
pub(super) async fn idle_waiting_rooms<D: Dialect>(
    pool: &Pool<D>,
    before: Timestamp,
    limit: i64,
) -> Result<Vec<(String, i64)>, StoreError> {
    let statement = Statement::new(D::IDLE_WAITING_ROOMS)
        .bind(before)
        .bind(limit);
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    rows.iter()
        .map(|row| Ok((D::text(row, "id")?, D::int(row, "version")?)))
        .collect()
}

/// Each player's latest version in room `$1`: the last thing each of them did there.
pub(super) const LAST_ACTIONS: &str = "SELECT player_id, MAX(version) AS version \
     FROM room_events WHERE room_id = $1 AND player_id IS NOT NULL GROUP BY player_id";

pub(super) async fn last_actions<D: Dialect>(
    pool: &Pool<D>,
    room_id: &str,
) -> Result<Vec<(String, i64)>, StoreError> {
    let statement = Statement::new(LAST_ACTIONS).bind(room_id);
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    rows.iter()
        .map(|row| Ok((D::text(row, "player_id")?, D::int(row, "version")?)))
        .collect()
}

/// A page of rooms, newest first, each with its sequence number (for the next cursor).
pub(super) async fn rooms<D: Dialect>(
    pool: &Pool<D>,
    query: &RoomQuery,
) -> Result<Vec<(i64, Room)>, StoreError> {
    let mut conn = pool.acquire().await?;
    let mut ranges = Vec::new();
    if let Some(player) = &query.player {
        let ends = player_ends(query);
        match &query.game {
            Some(game) => ranges = MemberRange::of_games(&ends, &[game]),
            None => {
                for finished in ends {
                    let statement = Statement::new(PLAYER_GAMES)
                        .bind(finished)
                        .bind(player.as_str())
                        .bind(GAMES_AS_RANGES as i64 + 1);
                    let rows = D::fetch_all(&mut *conn, statement).await?;
                    let games = rows
                        .iter()
                        .map(|row| D::text(row, "game"))
                        .collect::<Result<Vec<String>, _>>()?;
                    match games.len() > GAMES_AS_RANGES {
                        true => ranges.push(MemberRange::new(finished, None)),
                        false => {
                            let games: Vec<&str> = games.iter().map(String::as_str).collect();
                            ranges.extend(MemberRange::of_games(&[finished], &games));
                        }
                    }
                }
            }
        }
        if ranges.is_empty() {
            // No memberships at all: nothing to list.
            return Ok(Vec::new());
        }
    }
    let rows = D::fetch_all(&mut *conn, listing::<D>(query, &ranges)).await?;
    rows.iter().map(rows::room::<D>).collect()
}

/// A player's games of more than this many are not read a range each (a statement of that
/// many parts) but in one walk of the player's memberships, sorted: see [`listing`].
pub(super) const GAMES_AS_RANGES: usize = 50;

/// The games player `$2` has memberships of that have ended (`$1` true) or not, in order, at
/// most `$3`: one seek of the memberships' index per game, each past the last game found.
pub(super) const PLAYER_GAMES: &str = "WITH RECURSIVE g (game) AS (\
     SELECT (SELECT game FROM room_players WHERE finished = $1 AND player_id = $2 \
     ORDER BY game LIMIT 1) \
     UNION ALL SELECT (SELECT game FROM room_players WHERE finished = $1 AND player_id = $2 \
     AND game > g.game ORDER BY game LIMIT 1) FROM g WHERE g.game IS NOT NULL) \
     SELECT game FROM g WHERE game IS NOT NULL LIMIT $3";

/// Which ends (`finished`) of a player's memberships a listing of their rooms reads.
pub(super) fn player_ends(query: &RoomQuery) -> Vec<bool> {
    // A joinable room is never finished: "joinable" reads the unfinished range.
    match (query.finished, query.joinable) {
        (Some(finished), _) => vec![finished],
        (None, Some(true)) => vec![false],
        (None, _) => vec![false, true],
    }
}

/// The member ranges a listing of `query` reads in the plan tests (a player of two games,
/// `tictactoe` and `connect4`, when no game is given), and how many index ranges it reads in
/// all: a player's, one for each end and game; the lobby's, one for each value of each flag
/// left out.
#[cfg(test)]
pub(super) fn test_ranges(query: &RoomQuery) -> (Vec<MemberRange>, usize) {
    let games = match &query.game {
        Some(game) => vec![game.as_str()],
        None => vec!["tictactoe", "connect4"],
    };
    match query.player.is_some() {
        true => {
            let ranges = MemberRange::of_games(&player_ends(query), &games);
            let count = ranges.len();
            (ranges, count)
        }
        false => {
            let count = [query.joinable, query.finished]
                .iter()
                .map(|flag| if flag.is_some() { 1 } else { 2 })
                .product();
            (Vec::new(), count)
        }
    }
}

/// Every filter set `GET /rooms` allows, with and without a cursor.
#[cfg(test)]
pub(super) fn every_listing_query() -> Vec<RoomQuery> {
    let flags = [None, Some(true)];
    let mut queries = Vec::new();
    for player in [None, Some("p".to_owned())] {
        for game in [None, Some("tictactoe".to_owned())] {
            for (joinable, finished) in flags.iter().flat_map(|j| flags.map(|f| (*j, f))) {
                for before_seq in [None, Some(10)] {
                    let privacy: &[bool] = match player {
                        Some(_) => &[false, true],
                        None => &[false],
                    };
                    for &include_private in privacy {
                        queries.push(RoomQuery {
                            game: game.clone().map(Into::into),
                            joinable,
                            finished,
                            player: player.clone().map(Into::into),
                            include_private,
                            before_seq,
                            limit: 51,
                        });
                    }
                }
            }
        }
    }
    queries
}

/// One range of a player's memberships a listing reads: the rooms that have ended
/// (`finished`) or not, of one game, or (`game` none) of all of them, a walk.
#[derive(Debug)]
pub(super) struct MemberRange {
    finished: bool,
    game: Option<String>,
}

impl MemberRange {
    pub(super) fn new(finished: bool, game: Option<&str>) -> Self {
        let game = game.map(str::to_owned);
        Self { finished, game }
    }

    /// The ranges of each of `games` at each of `ends`.
    pub(super) fn of_games(ends: &[bool], games: &[&str]) -> Vec<Self> {
        let ranges = ends
            .iter()
            .flat_map(|&end| games.iter().map(move |&game| Self::new(end, Some(game))));
        ranges.collect()
    }
}

/// Events of a room with a version above `after`, oldest first, at most `limit`.
pub(super) async fn events<D: Dialect>(
    pool: &Pool<D>,
    room_id: &str,
    after: i64,
    limit: i64,
) -> Result<Vec<RoomEvent>, StoreError> {
    let statement = Statement::new(EVENTS_PAGE)
        .bind(room_id)
        .bind(after)
        .bind(limit);
    let mut conn = pool.acquire().await?;
    let rows = D::fetch_all(&mut *conn, statement).await?;
    let mut events: Vec<RoomEvent> = rows
        .iter()
        .map(rows::event::<D>)
        .collect::<Result<_, _>>()?;
    // The finishing versions of rated games: what they did to the ratings, read for the page
    // in one range of the changes' key.
    if let (Some(first), Some(last)) = (events.first(), events.last()) {
        let (first, last) = (first.version, last.version);
        if events.iter().any(|e| e.finished) {
            let changes = super::ratings::changes_in::<D>(&mut conn, room_id, first, last).await?;
            for (version, change) in changes {
                if let Some(event) = events.iter_mut().find(|e| e.version == version) {
                    event.rating_changes.push(change);
                }
            }
        }
    }
    Ok(events)
}

/// Game `game`'s log lines, oldest first: those after id `after`, or the newest, at most
/// `limit`.
pub(super) async fn game_log<D: Dialect>(
    pool: &Pool<D>,
    game: &str,
    after: Option<i64>,
    limit: i64,
) -> Result<Vec<GameLogLine>, StoreError> {
    let statement = match after {
        Some(after) => Statement::new(GAME_LOG_AFTER)
            .bind(game)
            .bind(after)
            .bind(limit),
        None => Statement::new(GAME_LOG_NEWEST).bind(game).bind(limit),
    };
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    let mut lines = rows
        .iter()
        .map(rows::game_log_line::<D>)
        .collect::<Result<Vec<_>, _>>()?;
    if after.is_none() {
        lines.reverse();
    }
    Ok(lines)
}

/// The account with id `id`, or with `by_name`, its name.
pub(super) async fn account<D: Dialect>(
    pool: &Pool<D>,
    id: &str,
    by_name: bool,
) -> Result<Option<Account>, StoreError> {
    let sql = if by_name { ACCOUNT_BY_NAME } else { ACCOUNT };
    let statement = Statement::new(sql).bind(id);
    let row = D::fetch_optional(&mut *pool.acquire().await?, statement).await?;
    row.as_ref().map(rows::account::<D>).transpose()
}

/// The latest version of every uploaded game, by id.
pub(super) async fn latest_game_versions<D: Dialect>(
    pool: &Pool<D>,
) -> Result<Vec<GameVersionRecord>, StoreError> {
    let statement = Statement::new(VERSIONS)
        .bind(None::<String>)
        .bind(None::<i64>);
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    rows.iter().map(rows::game_version::<D>).collect()
}

/// One version of a game (the latest when `version` is `None`).
pub(super) async fn game_version<D: Dialect>(
    pool: &Pool<D>,
    game_id: &str,
    version: Option<i64>,
) -> Result<Option<GameVersionRecord>, StoreError> {
    let statement = Statement::new(VERSIONS).bind(game_id).bind(version);
    let row = D::fetch_optional(&mut *pool.acquire().await?, statement).await?;
    row.as_ref().map(rows::game_version::<D>).transpose()
}

/// The source of one version of a game.
pub(super) async fn game_source<D: Dialect>(
    pool: &Pool<D>,
    game_id: &str,
    version: i64,
) -> Result<Option<String>, StoreError> {
    version_text(pool, GAME_SOURCE, game_id, version).await
}

/// A file of one version's frontend, gzipped if `gzip` and a gzipped copy is kept.
pub(super) async fn frontend_file<D: Dialect>(
    pool: &Pool<D>,
    file: &FileKey<'_>,
    gzip: bool,
) -> Result<Option<StoredFile>, StoreError> {
    let sql = if gzip {
        FRONTEND_FILE_GZIP
    } else {
        FRONTEND_FILE
    };
    let statement = Statement::new(sql)
        .bind(file.game_id)
        .bind(file.version)
        .bind(file.path);
    let row = D::fetch_optional(&mut *pool.acquire().await?, statement).await?;
    row.as_ref().map(rows::frontend_file::<D>).transpose()
}

/// The `text` column `sql` selects from one version of a game, if there is one.
async fn version_text<D: Dialect>(
    pool: &Pool<D>,
    sql: &'static str,
    game_id: &str,
    version: i64,
) -> Result<Option<String>, StoreError> {
    let statement = Statement::new(sql).bind(game_id).bind(version);
    match D::fetch_optional(&mut *pool.acquire().await?, statement).await? {
        Some(row) => D::maybe_text(&row, "text"),
        None => Ok(None),
    }
}

/// The SQL for one listing, built for its filter set: only the filters given appear, as plain
/// equalities, so that each part is one range of an index, read newest first.
/// - The lobby's two indexes hold the public rooms by `(joinable, finished, seq)`, and by
///   `(game, joinable, finished, seq)`: a listing that leaves out either flag reads a range for
///   each of its values (up to four), merged, and only as far as the page goes.
/// - A player's rooms are read through their memberships, which carry each room's `seq`, game
///   and whether it is finished, and are indexed by `(finished, player_id, game, room_seq)`:
///   one index range for each of `ranges` (see [`rooms`]), the rooms of one game that have
///   ended or not, merged the same way. A player's rooms of every game are a range for each
///   game they have played, found first ([`PLAYER_GAMES`]); past [`GAMES_AS_RANGES`] games, a
///   walk of all their memberships at that end, sorted. (Two filters stay a walk, newest
///   first: someone else's view of a player's rooms skips the private ones, and
///   `joinable=false` without `finished` skips the joinable ones.)
///
/// On PostgreSQL the SQL also steers the planner to those ranges ([`Dialect::LISTING_STEERED`]).
pub(super) fn listing<D: Dialect>(query: &RoomQuery, ranges: &[MemberRange]) -> Statement {
    let no = D::FALSE;
    let steered = D::LISTING_STEERED;
    let mut args = Vec::new();
    // Appends `<clause>$n`, binding `value` as the n-th argument.
    let mut filter = |sql: &mut String, clause: &str, value: super::sql::Arg| {
        args.push(value);
        sql.push_str(clause);
        sql.push('$');
        sql.push_str(&args.len().to_string());
    };
    // A flag that picks the part's index range: a literal where the listing is steered, so that a
    // plan made once for every value still reads that range.
    let flag = |sql: &mut String,
                clause: &str,
                value: bool,
                filter: &mut dyn FnMut(&mut String, &str, super::sql::Arg)| {
        match steered {
            true => {
                sql.push_str(clause);
                sql.push_str(if value { D::TRUE } else { D::FALSE });
            }
            false => filter(sql, clause, value.into()),
        }
    };
    let mut parts: Vec<String> = Vec::new();
    match &query.player {
        Some(player) => {
            for range in ranges {
                let mut sql = String::new();
                // The membership's copy of `seq`, so that its index gives the order.
                sql.push_str("SELECT ");
                sql.push_str(&ROOM_COLUMNS.replacen("r.seq", "m.room_seq AS seq", 1));
                sql.push_str(match steered {
                    // Each membership's room looked up by key, in the memberships' order: a
                    // join the planner may choose for itself can walk the rooms' key instead,
                    // all rooms between a player's newest and their page's last.
                    true => {
                        " FROM room_players m CROSS JOIN LATERAL \
                         (SELECT * FROM rooms WHERE rooms.seq = m.room_seq OFFSET 0) r WHERE"
                    }
                    false => " FROM room_players m JOIN rooms r ON r.seq = m.room_seq WHERE",
                });
                flag(&mut sql, " m.finished = ", range.finished, &mut filter);
                filter(&mut sql, " AND m.player_id = ", player.clone().into());
                if let Some(game) = &range.game {
                    filter(&mut sql, " AND m.game = ", game.clone().into());
                }
                if let Some(joinable) = query.joinable {
                    flag(&mut sql, " AND r.joinable = ", joinable, &mut filter);
                }
                if !query.include_private {
                    sql.push_str(" AND r.private = ");
                    sql.push_str(no);
                }
                if let Some(before) = query.before_seq {
                    filter(&mut sql, " AND m.room_seq < ", before.into());
                }
                parts.push(sql);
            }
        }
        None => {
            // The public rooms are indexed by whether they are open and finished (and by game
            // before that): a flag left out of the filters is a range for each of its values.
            let values = |flag: Option<bool>| flag.map_or(vec![false, true], |f| vec![f]);
            let finished = values(query.finished);
            let ranges = values(query.joinable)
                .into_iter()
                .flat_map(|j| finished.iter().map(move |f| (j, *f)));
            for (joinable, finished) in ranges {
                let mut sql = format!("SELECT {ROOM_COLUMNS} FROM rooms r WHERE r.private = {no}");
                if let Some(game) = &query.game {
                    filter(&mut sql, " AND r.game = ", game.clone().into());
                }
                flag(&mut sql, " AND r.joinable = ", joinable, &mut filter);
                flag(&mut sql, " AND r.finished = ", finished, &mut filter);
                if let Some(before) = query.before_seq {
                    filter(&mut sql, " AND r.seq < ", before.into());
                }
                parts.push(sql);
            }
        }
    }
    if steered && parts.len() > 1 {
        // PostgreSQL's planner does not merge the parts' index orders under one LIMIT: it reads
        // every row of every part and sorts them all. Each part limited on its own is a range
        // read newest first as far as the page goes; the outer sort has at most a page a part.
        for (n, part) in parts.iter_mut().enumerate() {
            let mut limited = format!("SELECT * FROM ({part}");
            filter(
                &mut limited,
                " ORDER BY seq DESC LIMIT ",
                query.limit.into(),
            );
            limited.push_str(&format!(") part{n}"));
            *part = limited;
        }
    }
    let mut sql = parts.join(" UNION ALL ");
    // `seq` is the first column each part selects, so it orders one part or the two merged.
    filter(&mut sql, " ORDER BY seq DESC LIMIT ", query.limit.into());
    let mut statement = Statement::built(sql);
    for arg in args {
        statement.push(arg);
    }
    statement
}
