//! Ratings: the step of a batch that changes the ratings of a finished rated game's players, in
//! the transaction that writes the version finishing it, so a rating changes exactly once
//! whatever is retried, killed or raced; and the reads of ratings.

use super::dialect::Dialect;
use super::sql::Statement;
use super::types::{RoomCommit, StoreError};
use crate::domain::ratings::{after_game, Rating};
use crate::game::PlayerRef;
use crate::model::RatingChange;

/// Player `$2`'s rating in game `$1`, if they have one.
pub(super) const RATING_OF: &str = "SELECT rating, deviation, volatility, games FROM ratings \
     WHERE game = $1 AND player_id = $2";

pub(super) const UPSERT_RATING: &str = "INSERT INTO ratings \
     (game, player_id, rating, deviation, volatility, games, conservative, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
     ON CONFLICT (game, player_id) DO UPDATE SET rating = excluded.rating, \
     deviation = excluded.deviation, volatility = excluded.volatility, games = excluded.games, \
     conservative = excluded.conservative, updated_at = excluded.updated_at";

pub(super) const INSERT_RATING_CHANGE: &str = "INSERT INTO rating_changes \
     (room_id, version, game, player_id, rating_before, deviation_before, volatility_before, \
     rating_after, deviation_after, volatility_after, won) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

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
     WHERE c.room_id = $1 AND c.version >= $2 AND c.version <= $3 ORDER BY c.version";

/// Changes the ratings of the game `commit` finishes (it must carry a result), one player
/// after another in this transaction: what it did to each.
pub(super) async fn rate<D: Dialect>(
    conn: &mut D::Connection,
    commit: &RoomCommit,
) -> Result<Vec<RatingChange>, StoreError> {
    let Some(result) = &commit.rated_result else {
        return Ok(Vec::new());
    };
    let game = commit.room.game.as_str();
    let mut before = Vec::with_capacity(result.players.len());
    for player in &result.players {
        let statement = Statement::new(RATING_OF)
            .bind(game)
            .bind(player.id.as_str());
        let rating = match D::fetch_optional(conn, statement).await? {
            Some(row) => Rating {
                rating: D::real(&row, "rating")?,
                deviation: D::real(&row, "deviation")?,
                volatility: D::real(&row, "volatility")?,
                games: D::int(&row, "games")?,
            },
            None => Rating::default(),
        };
        before.push((player.id.as_str(), rating));
    }
    if before.len() < 2 {
        return Ok(Vec::new());
    }
    let after = after_game(&before, &result.winners);
    let mut changes = Vec::with_capacity(after.len());
    for ((player, (_, was)), now) in result.players.iter().zip(&before).zip(&after) {
        let upsert = Statement::new(UPSERT_RATING)
            .bind(game)
            .bind(player.id.as_str())
            .bind(now.rating)
            .bind(now.deviation)
            .bind(now.volatility)
            .bind(now.games)
            .bind(now.conservative())
            .bind(commit.room.updated_at.as_str());
        D::execute(conn, upsert).await?;
        let change = Statement::new(INSERT_RATING_CHANGE)
            .bind(commit.room.id.as_str())
            .bind(result.version)
            .bind(game)
            .bind(player.id.as_str())
            .bind(was.rating)
            .bind(was.deviation)
            .bind(was.volatility)
            .bind(now.rating)
            .bind(now.deviation)
            .bind(now.volatility)
            .bind(result.winners.contains(&player.id));
        D::execute(conn, change).await?;
        changes.push(RatingChange {
            player: player.clone(),
            before: was.rating.round() as i64,
            after: now.rating.round() as i64,
        });
    }
    Ok(changes)
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
                    id: D::text(row, "player_id")?,
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
pub(super) async fn rebuild<D: Dialect>(conn: &mut D::Connection) -> Result<Rebuilt, StoreError> {
    struct Kept {
        seq: i64,
        game: String,
        player: String,
        won: bool,
        after: Rating,
    }
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
        kept.push(Kept {
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
    let mut ratings: std::collections::BTreeMap<(String, String), Rating> = Default::default();
    let mut differed = 0;
    for game in &games {
        let members = &kept[game.clone()];
        let before: Vec<(&str, Rating)> = members
            .iter()
            .map(|m| {
                let key = (m.game.clone(), m.player.clone());
                (
                    m.player.as_str(),
                    ratings.get(&key).copied().unwrap_or_default(),
                )
            })
            .collect();
        let winners: Vec<String> = members
            .iter()
            .filter(|m| m.won)
            .map(|m| m.player.clone())
            .collect();
        let after = after_game(&before, &winners);
        for ((member, (_, was)), now) in members.iter().zip(&before).zip(&after) {
            let same = (
                member.after.rating,
                member.after.deviation,
                member.after.volatility,
            ) == (now.rating, now.deviation, now.volatility);
            if !same {
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
    for ((game, player), rating) in &ratings {
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
    Ok(Rebuilt {
        games: games.len(),
        ratings: ratings.len(),
        differed,
    })
}
