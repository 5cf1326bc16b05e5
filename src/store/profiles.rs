//! What a player's standing reads: their rating in each game with their place on its
//! leaderboard, the ratings of the players a page shows, and what their recent rooms did to
//! their ratings.

use std::collections::HashMap;

use super::dialect::{Dialect, SetSql};
use super::ratings::ratings_of;
use super::sets::set_statements;
use super::sql::Statement;
use super::types::StoreError;
use super::Store;
use crate::domain::ratings::{band_of, Rating, BAND_POINTS, RANKED_AFTER_GAMES};

/// Player `$1`'s rating in every game they were rated in, most played first.
pub(super) const PLAYER_RATINGS: &str = "SELECT r.game, r.rating, r.deviation, r.games, \
     r.conservative FROM ratings r WHERE r.player_id = $1 ORDER BY r.games DESC, r.game";

/// How many places of game `$1`'s leaderboard are above the place (`$4` conservative rating,
/// `$5` player) in band `$2` (from `$3` up to `$6`): the players of the bands above, and those
/// above it in its own band (one short range of the leaderboard's index), whatever the number
/// of players.
pub(super) const PLACES_ABOVE: &str = "SELECT CAST(\
     (SELECT coalesce(sum(b.players), 0) FROM rating_bands b WHERE b.game = $1 AND b.band > $2) \
     + (SELECT count(*) FROM ratings o WHERE o.game = $1 AND o.games >= 5 \
     AND o.conservative >= $3 AND o.conservative < $6 \
     AND (o.conservative, o.player_id) > ($4, $5)) AS BIGINT) AS above";

/// The rating changes of a set of (room, player) pairs, in the order made.
pub(super) const CHANGES_OF_PLAYERS_IN: SetSql = SetSql {
    columns: "room_id, player_id",
    statement: "SELECT c.room_id, c.rating_before, c.rating_after, c.won FROM v \
         JOIN rating_changes c ON c.room_id = v.room_id AND c.player_id = v.player_id \
         ORDER BY c.seq",
};

/// A player's rating in one game, and their place on its leaderboard.
#[derive(Debug, Clone, PartialEq)]
pub struct GameStanding {
    pub game: String,
    pub rating: f64,
    pub deviation: f64,
    /// Rated games counted.
    pub games: i64,
    /// The place on the game's leaderboard; `None` before five rated games.
    pub rank: Option<i64>,
}

/// What the last rated game in a room did to one player's rating.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoomRating {
    pub before: f64,
    pub after: f64,
    pub won: bool,
}

async fn player_ratings<D: Dialect>(
    pool: &sqlx::Pool<D>,
    player: &str,
) -> Result<Vec<GameStanding>, StoreError> {
    let mut conn = pool.acquire().await?;
    let statement = Statement::new(PLAYER_RATINGS).bind(player);
    let rows = D::fetch_all(&mut conn, statement).await?;
    let mut standings = Vec::with_capacity(rows.len());
    for row in &rows {
        let (game, games) = (D::text(row, "game")?, D::int(row, "games")?);
        let conservative = D::real(row, "conservative")?;
        let rank = match games >= RANKED_AFTER_GAMES {
            true => {
                let band = band_of(conservative);
                let statement = Statement::new(PLACES_ABOVE)
                    .bind(game.as_str())
                    .bind(band)
                    .bind(band as f64 * BAND_POINTS)
                    .bind(conservative)
                    .bind(player)
                    .bind((band + 1) as f64 * BAND_POINTS);
                let above = D::fetch_optional(&mut conn, statement).await?;
                let above = above.map(|row| D::int(&row, "above")).transpose()?;
                Some(1 + above.unwrap_or(0))
            }
            false => None,
        };
        standings.push(GameStanding {
            game,
            rating: D::real(row, "rating")?,
            deviation: D::real(row, "deviation")?,
            games,
            rank,
        });
    }
    Ok(standings)
}

async fn ratings_in_game<D: Dialect>(
    pool: &sqlx::Pool<D>,
    game: &str,
    players: &[String],
) -> Result<HashMap<String, Rating>, StoreError> {
    let keys: Vec<(&str, &str)> = players.iter().map(|p| (game, p.as_str())).collect();
    let kept = ratings_of::<D, _>(&mut *pool.acquire().await?, &keys).await?;
    Ok(kept
        .into_iter()
        .map(|((_, player), rating)| (player, rating))
        .collect())
}

async fn room_ratings<D: Dialect>(
    pool: &sqlx::Pool<D>,
    player: &str,
    rooms: &[String],
) -> Result<HashMap<String, RoomRating>, StoreError> {
    let mut changes = HashMap::new();
    let statements = set_statements::<D, _>(CHANGES_OF_PLAYERS_IN, rooms, |row, room| {
        row.put("room_id", room.as_str());
        row.put("player_id", player);
    });
    let mut conn = pool.acquire().await?;
    for statement in statements {
        // In the order made: a room played again keeps its last game's.
        for row in D::fetch_all(&mut conn, statement).await? {
            let change = RoomRating {
                before: D::real(&row, "rating_before")?,
                after: D::real(&row, "rating_after")?,
                won: D::flag(&row, "won")?,
            };
            changes.insert(D::text(&row, "room_id")?, change);
        }
    }
    Ok(changes)
}

/// The store's reads of players' standing.
impl Store {
    /// The player's rating in every game they were rated in, most played first.
    pub async fn player_ratings(&self, player: &str) -> Result<Vec<GameStanding>, StoreError> {
        read!(self, |pool| player_ratings(pool, player))
    }

    /// The ratings in `game` of those of `players` who have one, by player id.
    pub async fn ratings_in_game(
        &self,
        game: &str,
        players: &[String],
    ) -> Result<HashMap<String, Rating>, StoreError> {
        read!(self, |pool| ratings_in_game(pool, game, players))
    }

    /// What the last rated game of each of `rooms` did to `player`'s rating, by room id
    /// (rooms with none are left out).
    pub async fn room_ratings(
        &self,
        player: &str,
        rooms: &[String],
    ) -> Result<HashMap<String, RoomRating>, StoreError> {
        read!(self, |pool| room_ratings(pool, player, rooms))
    }
}
