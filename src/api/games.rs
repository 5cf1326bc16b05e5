//! Games: the lobby's list, publishing, showing and reading the source of uploaded games, and
//! their standings.

use actix_web::http::{header, Method};
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};

use super::extract::{etag, parse_query, Caller};
use super::pages::{page_of, page_size, rows_for};
use super::upload::Upload;
use super::{frontends, route, ApiError, AppContext, RouteDef};
use crate::catalog::Publication;
use crate::domain::game_id::GameId;
use crate::domain::ids::is_well_formed;

pub fn routes() -> Vec<RouteDef> {
    vec![
        route(Method::GET, "/games", list),
        route(Method::GET, "/games/{id}", show),
        route(Method::PUT, "/games/{id}", publish),
        route(Method::GET, "/games/{id}/source", source),
        route(Method::GET, "/games/{id}/leaderboard", leaderboard),
        route(Method::GET, "/games/{id}/ratings", ratings),
        route(Method::GET, "/games/{id}/frontend", frontends::page),
        route(
            Method::GET,
            "/games/{id}/versions/{version}/frontend",
            frontends::folder,
        ),
        route(
            Method::GET,
            "/games/{id}/versions/{version}/frontend/{path:.*}",
            frontends::file,
        ),
    ]
}

/// Every game: built in, then uploaded.
async fn list(context: web::Data<AppContext>) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(json!({"games": context.catalog.games().await?})))
}

/// One game: an uploaded one at `?version=N` (its latest by default).
async fn show(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let game = context
        .catalog
        .game_listing(&path.into_inner(), version_param(&req)?)
        .await?;
    Ok(HttpResponse::Ok().json(game))
}

/// Uploads a game's code: the first upload creates the game (201, the caller owns it), each
/// later one by its owner publishes the next version (200).
async fn publish(
    context: web::Data<AppContext>,
    path: web::Path<String>,
    Caller(author): Caller,
    Upload(upload): Upload,
) -> Result<HttpResponse, ApiError> {
    let id =
        GameId::parse(&path.into_inner()).map_err(|e| ApiError::InvalidGameId(e.to_string()))?;
    context
        .moderation
        .may_publish(&author, context.uploads)
        .await?;
    // Counted whether or not the code turns out to be a game: checking it is the costly part.
    context.limits.uploads.admit(&author.id)?;
    let (game, publication) = context.catalog.publish_game(&author, &id, upload).await?;
    Ok(match publication {
        Publication::Created => HttpResponse::Created()
            .insert_header((header::LOCATION, format!("/games/{}", id.as_str())))
            .json(game),
        Publication::Updated => HttpResponse::Ok().json(game),
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct VersionParams {
    version: Option<i64>,
}

/// `?version=N` (the latest when absent).
pub(super) fn version_param(req: &HttpRequest) -> Result<Option<i64>, ApiError> {
    let params: VersionParams = parse_query(req)?;
    if params.version.is_some_and(|v| v < 1) {
        return Err(ApiError::InvalidQuery("version starts at 1".into()));
    }
    Ok(params.version)
}

/// The published source of a version (the latest by default), exactly as uploaded.
async fn source(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (version, text) = context
        .catalog
        .game_source(&path.into_inner(), version_param(&req)?)
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/javascript; charset=utf-8"))
        .insert_header((header::ETAG, etag(version)))
        .body(text))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LeaderboardParams {
    limit: Option<i64>,
    cursor: Option<String>,
}

/// A page of the leaderboard's cursor: the rank of the page's last place, its conservative
/// rating (its bits, in hex: exact) and its player.
fn leaderboard_cursor(rank: i64, conservative: f64, player: &str) -> String {
    format!("{rank}.{:016x}.{player}", conservative.to_bits())
}

/// A cursor as [`leaderboard_cursor`] writes it: `(rank, conservative, player)`.
fn parse_leaderboard_cursor(cursor: &str) -> Option<(i64, f64, String)> {
    let mut parts = cursor.split('.');
    let rank = parts.next()?.parse::<i64>().ok().filter(|r| *r > 0)?;
    let bits = parts.next().filter(|b| b.len() == 16)?;
    let conservative = f64::from_bits(u64::from_str_radix(bits, 16).ok()?);
    let player = parts.next().filter(|p| is_well_formed(p))?;
    parts
        .next()
        .is_none()
        .then(|| (rank, conservative, player.to_owned()))
}

/// A game's leaderboard: players with five rated games or more, by conservative rating (the
/// rating less twice its deviation), best first, a page at a time.
async fn leaderboard(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let game = path.into_inner();
    let params: LeaderboardParams = parse_query(&req)?;
    let limit = page_size(params.limit, 20, 100)?;
    let after = match params.cursor.filter(|c| !c.is_empty()) {
        None => None,
        Some(cursor) => Some(parse_leaderboard_cursor(&cursor).ok_or_else(|| {
            ApiError::InvalidQuery("cursor must be a nextCursor this server returned".into())
        })?),
    };
    let first_rank = after.as_ref().map_or(1, |(rank, _, _)| rank + 1);
    let after = after.map(|(_, conservative, player)| (conservative, player));
    let rows = context
        .standing
        .leaderboard(&game, after, rows_for(limit))
        .await?;
    let last = first_rank + rows.len().min(limit as usize) as i64 - 1;
    let (places, next_cursor) = page_of(rows, limit, |p| {
        leaderboard_cursor(last, p.conservative, &p.player.id)
    });
    let entries: Vec<_> = places
        .iter()
        .zip(first_rank..)
        .map(|(place, rank)| {
            let place_of = json!({"rank": rank, "player": place.player});
            shown_rating(place.rating, place.deviation, place.games, place_of)
        })
        .collect();
    Ok(HttpResponse::Ok()
        .json(json!({"game": game, "entries": entries, "nextCursor": next_cursor})))
}

/// A rating as clients see it, `{rating, deviation, games}` in whole points, with the members
/// of `beside` (a place's rank, a profile's game…).
pub(super) fn shown_rating(rating: f64, deviation: f64, games: i64, beside: Value) -> Value {
    let mut shown = json!({
        "rating": rating.round() as i64,
        "deviation": deviation.round() as i64,
        "games": games,
    });
    if let (Value::Object(shown), Value::Object(beside)) = (&mut shown, beside) {
        shown.extend(beside);
    }
    shown
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RatingsParams {
    players: String,
}

/// The most players one `GET /games/{id}/ratings` asks about.
const MAX_RATINGS_ASKED: usize = 100;

/// The ratings in a game of the players named (`?players=id,id,…`), for a page showing them by
/// their names: `{game, ratings: {id: {rating, deviation, games}}}`, those never rated in it
/// left out.
async fn ratings(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let game = path.into_inner();
    let params: RatingsParams = parse_query(&req)?;
    let mut players: Vec<String> = params.players.split(',').map(str::to_owned).collect();
    players.sort();
    players.dedup();
    if players.len() > MAX_RATINGS_ASKED || !players.iter().all(|p| is_well_formed(p)) {
        return Err(ApiError::InvalidQuery(format!(
            "players must be up to {MAX_RATINGS_ASKED} player ids, separated by commas"
        )));
    }
    let ratings = context.standing.ratings_in_game(&game, &players).await?;
    let ratings: serde_json::Map<String, Value> = (ratings.into_iter())
        .map(|(player, r)| {
            (
                player,
                shown_rating(r.rating, r.deviation, r.games, json!({})),
            )
        })
        .collect();
    Ok(HttpResponse::Ok().json(json!({"game": game, "ratings": ratings})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaderboard_cursors_read_back_exactly_and_refuse_anything_else() {
        let player = "0123456789abcdef0123456789abcdef";
        let cursor = leaderboard_cursor(20, 812.345_678_9, player);
        assert_eq!(
            parse_leaderboard_cursor(&cursor),
            Some((20, 812.345_678_9, player.to_owned()))
        );
        for bad in [
            "",
            "0.4000000000000000.x",
            "1.zz.y",
            &format!("{cursor}.more"),
        ] {
            assert_eq!(parse_leaderboard_cursor(bad), None, "{bad}");
        }
    }
}
