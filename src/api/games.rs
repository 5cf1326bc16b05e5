//! Games: the lobby's list, and publishing, showing and reading the source of uploaded games.

use actix_web::http::{header, Method};
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use super::extract::{etag, parse_query, Caller};
use super::upload::Upload;
use super::{frontends, route, ApiError, AppContext, RouteDef};
use crate::domain::game_id::GameId;
use crate::engine::Publication;

pub fn routes() -> Vec<RouteDef> {
    vec![
        route(Method::GET, "/games", list),
        route(Method::GET, "/games/{id}", show),
        route(Method::PUT, "/games/{id}", publish),
        route(Method::GET, "/games/{id}/source", source),
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
    Ok(HttpResponse::Ok().json(json!({"games": context.engine.games().await?})))
}

/// One game: an uploaded one at `?version=N` (its latest by default).
async fn show(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let game = context
        .engine
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
    context.engine.may_publish(&author, context.uploads).await?;
    // Counted whether or not the code turns out to be a game: checking it is the costly part.
    context.limits.uploads.admit(&author.id, "uploads")?;
    let (game, publication) = context.engine.publish_game(&author, &id, upload).await?;
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
        .engine
        .game_source(&path.into_inner(), version_param(&req)?)
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/javascript; charset=utf-8"))
        .insert_header((header::ETAG, etag(version)))
        .body(text))
}
