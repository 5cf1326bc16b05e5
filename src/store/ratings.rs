//! Ratings: the step of a batch that changes the ratings of a finished rated game's players, in
//! the transaction that writes the version finishing it, so a rating changes exactly once
//! whatever is retried, killed or raced; and the reads of ratings.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::collections::{HashMap, HashSet};

use super::dialect::{Dialect, SetSql};
use super::queue::{Job, WriteStep};
use super::sets::{execute_set, set_statements};
use super::sql::{Exec, Statement};
use super::types::{RoomCommit, StoreError};
use super::Store;
use crate::domain::ratings::{after_game, band_of, Rating};
use crate::domain::records::RatingChange;
use crate::game::PlayerRef;

/// The ratings kept for a set of (game, player) pairs (those with none are not returned).
pub(super) const RATINGS_OF: SetSql = SetSql {
    columns: "game, player_id",
    statement: "SELECT r.game, r.player_id, r.rating, r.deviation, r.volatility, r.games \
         FROM v JOIN ratings r ON r.game = v.game AND r.player_id = v.player_id",
};

pub(super) const UPSERT_RATINGS: SetSql = SetSql {
    columns: "game, player_id, rating, deviation, volatility, games, conservative, updated_at",
    statement: "INSERT INTO ratings \
         (game, player_id, rating, deviation, volatility, games, conservative, updated_at) \
         SELECT v.game, v.player_id, v.rating, v.deviation, v.volatility, v.games, \
         v.conservative, v.updated_at FROM v WHERE true \
         ON CONFLICT (game, player_id) DO UPDATE SET rating = excluded.rating, \
         deviation = excluded.deviation, volatility = excluded.volatility, \
         games = excluded.games, conservative = excluded.conservative, \
         updated_at = excluded.updated_at",
};

/// The changes, written in the order given (`ord`), which is the order they were made.
pub(super) const INSERT_RATING_CHANGES: SetSql = SetSql {
    columns: "ord, room_id, version, game, player_id, rating_before, deviation_before, \
         volatility_before, rating_after, deviation_after, volatility_after, won",
    statement: "INSERT INTO rating_changes (room_id, version, game, player_id, rating_before, \
         deviation_before, volatility_before, rating_after, deviation_after, volatility_after, \
         won) SELECT v.room_id, v.version, v.game, v.player_id, v.rating_before, \
         v.deviation_before, v.volatility_before, v.rating_after, v.deviation_after, \
         v.volatility_after, v.won FROM v ORDER BY v.ord",
};

/// Players joining (or leaving, a negative count) bands of a game's leaderboard.
pub(super) const ADD_TO_BANDS: SetSql = SetSql {
    columns: "game, band, players",
    statement: "INSERT INTO rating_bands (game, band, players) \
         SELECT v.game, v.band, v.players FROM v WHERE true \
         ON CONFLICT (game, band) DO UPDATE SET players = rating_bands.players + excluded.players",
};

/// Every band, before they are counted again.
pub(super) const CLEAR_BANDS: &str = "DELETE FROM rating_bands";

/// The first page of game `$1`'s leaderboard, `$2` long: players with five rated games or
/// more, by conservative rating, best first.
pub(super) const LEADERBOARD_FIRST: &str = "SELECT r.player_id, p.username, r.rating, \
     r.deviation, r.games, r.conservative FROM ratings r JOIN players p ON p.id = r.player_id \
     WHERE r.game = $1 AND r.games >= 5 \
     ORDER BY r.conservative DESC, r.player_id DESC LIMIT $2";

/// The page after the entry (`$2` conservative rating, `$3` player): one range of the index.
pub(super) const LEADERBOARD_AFTER: &str = "SELECT r.player_id, p.username, r.rating, \
     r.deviation, r.games, r.conservative FROM ratings r JOIN players p ON p.id = r.player_id \
     WHERE r.game = $1 AND r.games >= 5 AND (r.conservative, r.player_id) < ($2, $3) \
     ORDER BY r.conservative DESC, r.player_id DESC LIMIT $4";

/// Every rating change, in the order made.
pub(super) const ALL_CHANGES: &str = "SELECT seq, room_id, version, game, player_id, won, \
     rating_after, deviation_after, volatility_after FROM rating_changes ORDER BY seq";

/// A change as computed again (`$7` its seq).
pub(super) const SET_CHANGE: &str = "UPDATE rating_changes SET rating_before = $1, \
     deviation_before = $2, volatility_before = $3, rating_after = $4, deviation_after = $5, \
     volatility_after = $6 WHERE seq = $7";

/// A player's rating as computed again (its `updated_at` kept).
pub(super) const SET_RATING: &str = "UPDATE ratings SET rating = $3, deviation = $4, \
     volatility = $5, games = $6, conservative = $7 WHERE game = $1 AND player_id = $2";

/// The rating changes of room `$1`'s versions `$2` to `$3`, by version.
pub(super) const CHANGES_IN: &str = "SELECT c.version, c.player_id, p.username, \
     c.rating_before, c.rating_after FROM rating_changes c JOIN players p ON p.id = c.player_id \
     WHERE c.room_id = $1 AND c.version >= $2 AND c.version <= $3 ORDER BY c.version, c.seq";

/// The ratings kept for `keys`, (game, player) pairs; a pair with none is left out.
pub(super) async fn ratings_of<D: Dialect, E: Exec>(
    conn: &mut E,
    keys: &[(&str, &str)],
) -> Result<HashMap<(String, String), Rating>, StoreError> {
    let mut kept = HashMap::new();
    let statements = set_statements::<D, _>(RATINGS_OF, keys, |row, (game, player)| {
        row.put("game", *game);
        row.put("player_id", *player);
    });
    for statement in statements {
        for row in conn.fetch_all(statement).await? {
            let rating = Rating {
                rating: E::real(&row, "rating")?,
                deviation: E::real(&row, "deviation")?,
                volatility: E::real(&row, "volatility")?,
                games: E::int(&row, "games")?,
            };
            kept.insert(
                (E::text(&row, "game")?, E::text(&row, "player_id")?),
                rating,
            );
        }
    }
    Ok(kept)
}

/// Changes the ratings of the games `commits` finish (each carries its result), in the
/// order given, in three statements per wave of games with no player in common: the ratings
/// read (once the dialect has locked them against other servers' batches), then written, then
/// the changes kept. A game that shares a player with an earlier one in the batch starts the
/// next wave, so it sees that game's outcome.
pub(super) async fn rate<D: Dialect>(
    conn: &mut impl Exec,
    commits: &[&RoomCommit],
) -> Result<HashMap<String, Vec<RatingChange>>, StoreError> {
    let mut waves: Vec<Vec<&RoomCommit>> = Vec::new();
    let mut seen: HashSet<(&str, &str)> = HashSet::new();
    for commit in commits {
        let Some(result) = &commit.rated_result else {
            continue;
        };
        let game = commit.room.game.as_str();
        let keys: Vec<(&str, &str)> = result
            .players
            .iter()
            .map(|p| (game, p.id.as_str()))
            .collect();
        if waves.is_empty() || keys.iter().any(|key| seen.contains(key)) {
            waves.push(Vec::new());
            seen.clear();
        }
        seen.extend(keys);
        waves.last_mut().expect("a wave").push(commit);
    }
    let mut told = HashMap::new();
    for wave in waves {
        told.extend(rate_wave::<D>(conn, &wave).await?);
    }
    Ok(told)
}

/// One player's rating changed by one game: the game's commit, the player, their rating
/// before and after, and whether they won.
type Change<'a> = (&'a RoomCommit, &'a PlayerRef, Rating, Rating, bool);

/// One wave of [`rate`]: games with no player in common. What each game did to its players'
/// ratings, by room.
async fn rate_wave<D: Dialect>(
    conn: &mut impl Exec,
    commits: &[&RoomCommit],
) -> Result<HashMap<String, Vec<RatingChange>>, StoreError> {
    let keys: Vec<(&str, &str)> = commits
        .iter()
        .flat_map(|c| {
            let game = c.room.game.as_str();
            let players = c.rated_result.iter().flat_map(|r| &r.players);
            players.map(move |p| (game, p.id.as_str()))
        })
        .collect();
    D::lock_ratings(conn, &keys).await?;
    let kept = ratings_of::<D, _>(conn, &keys).await?;
    let changes: Vec<Change> = commits
        .iter()
        .flat_map(|commit| changes_of(commit, &kept))
        .collect();
    let mut by_room: HashMap<String, Vec<RatingChange>> = HashMap::new();
    for (commit, player, was, now, _) in &changes {
        by_room
            .entry(commit.room.id.to_string())
            .or_default()
            .push(RatingChange {
                player: (*player).clone(),
                before: was.rating.round() as i64,
                after: now.rating.round() as i64,
            });
    }
    upsert_ratings::<D>(conn, &changes).await?;
    add_to_bands::<D>(conn, band_moves(&changes)).await?;
    insert_changes::<D>(conn, changes).await?;
    Ok(by_room)
}

/// What the rated game `commit` finishes does to each of its players' ratings (`kept`, by game
/// and player, before it); nothing for a game that is not rated, or has fewer than two players.
fn changes_of<'a>(
    commit: &'a RoomCommit,
    kept: &HashMap<(String, String), Rating>,
) -> Vec<Change<'a>> {
    let Some(result) = &commit.rated_result else {
        return Vec::new();
    };
    let game = commit.room.game.as_str();
    let before: Vec<(&str, Rating)> = (result.players.iter())
        .map(|p| {
            let key = (game.to_owned(), p.id.to_string());
            (p.id.as_str(), kept.get(&key).copied().unwrap_or_default())
        })
        .collect();
    if before.len() < 2 {
        return Vec::new();
    }
    let after = after_game(&before, &result.winners);
    (result.players.iter().zip(&before).zip(&after))
        .map(|((player, (_, was)), now)| {
            let won = result.winners.contains(&player.id);
            (commit, player, *was, *now, won)
        })
        .collect()
}

/// Keeps each player's new rating.
async fn upsert_ratings<D: Dialect>(
    conn: &mut impl Exec,
    changes: &[Change<'_>],
) -> Result<(), StoreError> {
    execute_set::<D, _>(
        conn,
        UPSERT_RATINGS,
        changes,
        |row, (commit, player, _, now, _)| {
            row.put("game", commit.room.game.as_str());
            row.put("player_id", player.id.as_str());
            row.put("rating", now.rating);
            row.put("deviation", now.deviation);
            row.put("volatility", now.volatility);
            row.put("games", now.games);
            row.put("conservative", now.conservative());
            row.put("updated_at", commit.room.updated_at);
        },
    )
    .await
}

/// How the changes move players between the leaderboards' bands: a count per game and band.
fn band_moves<'a>(changes: &[Change<'a>]) -> HashMap<(&'a str, i64), i64> {
    let mut bands: HashMap<(&str, i64), i64> = HashMap::new();
    for (commit, _, was, now, _) in changes {
        let game = commit.room.game.as_str();
        if was.ranked() {
            *bands
                .entry((game, band_of(was.conservative())))
                .or_default() -= 1;
        }
        if now.ranked() {
            *bands
                .entry((game, band_of(now.conservative())))
                .or_default() += 1;
        }
    }
    bands
}

/// Keeps each change, in order, for the rooms' histories and the profiles.
async fn insert_changes<D: Dialect>(
    conn: &mut impl Exec,
    changes: Vec<Change<'_>>,
) -> Result<(), StoreError> {
    let ordered: Vec<(i64, _)> = changes
        .into_iter()
        .enumerate()
        .map(|(n, c)| (n as i64, c))
        .collect();
    execute_set::<D, _>(
        conn,
        INSERT_RATING_CHANGES,
        &ordered,
        |row, (ord, (commit, player, was, now, won))| {
            let version = commit.rated_result.as_ref().map_or(0, |r| r.version);
            row.put("ord", *ord);
            row.put("room_id", commit.room.id.as_str());
            row.put("version", version);
            row.put("game", commit.room.game.as_str());
            row.put("player_id", player.id.as_str());
            row.put("rating_before", was.rating);
            row.put("deviation_before", was.deviation);
            row.put("volatility_before", was.volatility);
            row.put("rating_after", now.rating);
            row.put("deviation_after", now.deviation);
            row.put("volatility_after", now.volatility);
            row.put("won", *won);
        },
    )
    .await
}

/// Adds `players` (by game and band) to the leaderboards' bands; a count of zero changes nothing.
async fn add_to_bands<D: Dialect>(
    conn: &mut impl Exec,
    players: HashMap<(&str, i64), i64>,
) -> Result<(), StoreError> {
    let mut moved: Vec<((&str, i64), i64)> = players.into_iter().filter(|(_, n)| *n != 0).collect();
    // In one order, so that concurrent writers (PostgreSQL) lock the rows in the same order.
    moved.sort();
    execute_set::<D, _>(conn, ADD_TO_BANDS, &moved, |row, ((game, band), n)| {
        row.put("game", *game);
        row.put("band", *band);
        row.put("players", *n);
    })
    .await
}

/// The rating changes of versions `first` to `last` of the room, each with its version.
pub(super) async fn changes_in<D: Dialect>(
    conn: &mut D::Connection,
    room_id: &str,
    first: i64,
    last: i64,
) -> Result<Vec<(i64, RatingChange)>, StoreError> {
    let statement = Statement::new(CHANGES_IN)
        .bind(room_id)
        .bind(first)
        .bind(last);
    D::fetch_all(conn, statement)
        .await?
        .iter()
        .map(|row| {
            let change = RatingChange {
                player: PlayerRef {
                    id: D::text(row, "player_id")?.into(),
                    username: D::text(row, "username")?,
                },
                before: D::real(row, "rating_before")?.round() as i64,
                after: D::real(row, "rating_after")?.round() as i64,
            };
            Ok((D::int(row, "version")?, change))
        })
        .collect()
}

/// What computing every rating again found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rebuilt {
    /// Rated games replayed.
    pub games: usize,
    /// Ratings (a player in a game) computed.
    pub ratings: usize,
    /// Changes whose numbers came out different from those kept (then rewritten).
    pub differed: usize,
}

/// Computes every rating again from the kept results, game after game in the order they were
/// rated, and writes what differs.
/// Every rating computed again from the kept results.
pub(super) struct RebuildRatings;

impl WriteStep for RebuildRatings {
    type Output = Rebuilt;

    async fn apply<D: Dialect>(&self, conn: &mut D::Connection) -> Result<Rebuilt, StoreError> {
        rebuild::<D>(conn).await
    }
}

async fn rebuild<D: Dialect>(conn: &mut D::Connection) -> Result<Rebuilt, StoreError> {
    let (kept, games) = kept_changes::<D>(conn).await?;
    let mut ratings: std::collections::BTreeMap<(String, String), Rating> = Default::default();
    let mut differed = 0;
    for game in &games {
        let members = &kept[game.clone()];
        let before: Vec<(&str, Rating)> = members
            .iter()
            .map(|m| {
                let key = (m.game.clone(), m.player.clone());
                let was = ratings.get(&key).copied().unwrap_or_default();
                (m.player.as_str(), was)
            })
            .collect();
        let winners: Vec<String> = (members.iter().filter(|m| m.won))
            .map(|m| m.player.clone())
            .collect();
        let after = after_game(&before, &winners);
        for ((member, (_, was)), now) in members.iter().zip(&before).zip(&after) {
            let kept_after = (
                member.after.rating,
                member.after.deviation,
                member.after.volatility,
            );
            if kept_after != (now.rating, now.deviation, now.volatility) {
                differed += 1;
                let statement = Statement::new(SET_CHANGE)
                    .bind(was.rating)
                    .bind(was.deviation)
                    .bind(was.volatility)
                    .bind(now.rating)
                    .bind(now.deviation)
                    .bind(now.volatility)
                    .bind(member.seq);
                D::execute(conn, statement).await?;
            }
            ratings.insert((member.game.clone(), member.player.clone()), *now);
        }
    }
    keep_rebuilt::<D>(conn, &ratings).await?;
    Ok(Rebuilt {
        games: games.len(),
        ratings: ratings.len(),
        differed,
    })
}

/// One kept rating change, as [`rebuild`] replays it.
struct KeptChange {
    seq: i64,
    game: String,
    player: String,
    won: bool,
    after: Rating,
}

/// Every kept rating change in the order made, and the ranges of it that are one game each.
async fn kept_changes<D: Dialect>(
    conn: &mut D::Connection,
) -> Result<(Vec<KeptChange>, Vec<std::ops::Range<usize>>), StoreError> {
    let rows = D::fetch_all(conn, Statement::new(ALL_CHANGES)).await?;
    let mut kept = Vec::with_capacity(rows.len());
    let mut games: Vec<std::ops::Range<usize>> = Vec::new();
    let mut last_key: Option<(String, i64)> = None;
    for (at, row) in rows.iter().enumerate() {
        let key = (D::text(row, "room_id")?, D::int(row, "version")?);
        if last_key.as_ref() != Some(&key) {
            games.push(at..at);
            last_key = Some(key);
        }
        if let Some(game) = games.last_mut() {
            game.end = at + 1;
        }
        kept.push(KeptChange {
            seq: D::int(row, "seq")?,
            game: D::text(row, "game")?,
            player: D::text(row, "player_id")?,
            won: D::flag(row, "won")?,
            after: Rating {
                rating: D::real(row, "rating_after")?,
                deviation: D::real(row, "deviation_after")?,
                volatility: D::real(row, "volatility_after")?,
                games: 0,
            },
        });
    }
    Ok((kept, games))
}

/// Keeps the rebuilt ratings, and the leaderboards' bands counted again from them.
async fn keep_rebuilt<D: Dialect>(
    conn: &mut D::Connection,
    ratings: &std::collections::BTreeMap<(String, String), Rating>,
) -> Result<(), StoreError> {
    D::execute(conn, Statement::new(CLEAR_BANDS)).await?;
    let mut bands: HashMap<(&str, i64), i64> = HashMap::new();
    for ((game, _), rating) in ratings.iter().filter(|(_, r)| r.ranked()) {
        *bands
            .entry((game.as_str(), band_of(rating.conservative())))
            .or_default() += 1;
    }
    add_to_bands::<D>(conn, bands).await?;
    for ((game, player), rating) in ratings {
        let statement = Statement::new(SET_RATING)
            .bind(game.as_str())
            .bind(player.as_str())
            .bind(rating.rating)
            .bind(rating.deviation)
            .bind(rating.volatility)
            .bind(rating.games)
            .bind(rating.conservative());
        D::execute(conn, statement).await?;
    }
    Ok(())
}

/// One place on a game's leaderboard.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    pub player: PlayerRef,
    pub rating: f64,
    pub deviation: f64,
    /// Rated games counted.
    pub games: i64,
    pub conservative: f64,
}

/// Up to `limit` places of `game`'s leaderboard after `after` (a place's conservative rating
/// and player id; the top when `None`).
pub(super) async fn leaderboard<D: Dialect>(
    pool: &sqlx::Pool<D>,
    game: &str,
    after: Option<(f64, String)>,
    limit: i64,
) -> Result<Vec<Standing>, StoreError> {
    let statement = match after {
        None => Statement::new(LEADERBOARD_FIRST).bind(game).bind(limit),
        Some((conservative, player)) => Statement::new(LEADERBOARD_AFTER)
            .bind(game)
            .bind(conservative)
            .bind(player)
            .bind(limit),
    };
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    rows.iter()
        .map(|row| {
            Ok(Standing {
                player: PlayerRef {
                    id: D::text(row, "player_id")?.into(),
                    username: D::text(row, "username")?,
                },
                rating: D::real(row, "rating")?,
                deviation: D::real(row, "deviation")?,
                games: D::int(row, "games")?,
                conservative: D::real(row, "conservative")?,
            })
        })
        .collect()
}

/// The store's ratings.
impl Store {
    /// Up to `limit` places of `game`'s leaderboard after `after` (a place's conservative
    /// rating and player id; the top when `None`).
    pub async fn leaderboard(
        &self,
        game: &str,
        after: Option<(f64, String)>,
        limit: i64,
    ) -> Result<Vec<Standing>, StoreError> {
        read!(self, |pool| leaderboard(pool, game, after, limit))
    }

    /// Computes every rating again from the kept results, in one commit.
    pub async fn rebuild_ratings(&self) -> Result<Rebuilt, StoreError> {
        let (job, reply) = Job::new(RebuildRatings);
        let (_, rebuilt) = self.writer.write(job.into(), reply).await?;
        Ok(rebuilt)
    }
}
