//! A game's logs, for its owner: what its hooks logged in its rooms and how they failed, as a
//! page or as a stream.

use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};

use super::extract::{parse_query, MaybeCaller, MaybeSigned};
use super::streams::{event_stream_response, resume_after, stream_viewer};
use super::{route, ApiError, AppContext, RouteDef};
use crate::domain::records::GameLogLine;
use crate::store::GAME_LOG_LINES;

pub fn routes() -> Vec<RouteDef> {
    vec![
        route(Method::GET, "/games/{id}/logs", page),
        route(Method::GET, "/games/{id}/logs/stream", stream),
    ]
}

const DEFAULT_LINES: i64 = 100;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PageParams {
    after: Option<i64>,
    limit: Option<i64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LogPage {
    lines: Vec<GameLogLine>,
    /// Pass as `after` for the lines logged since: the last line's id (or the `after` given,
    /// when there is none yet).
    next_after: i64,
}

/// `GET /games/{id}/logs`: the newest lines, oldest first; or with `?after=`, the lines after
/// that one.
async fn page(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
    MaybeCaller(caller): MaybeCaller,
) -> Result<HttpResponse, ApiError> {
    let params: PageParams = parse_query(&req)?;
    let limit = params.limit.unwrap_or(DEFAULT_LINES);
    if params.after.is_some_and(|after| after < 0) || !(1..=GAME_LOG_LINES).contains(&limit) {
        return Err(ApiError::InvalidQuery(format!(
            "after must be a line's id (0 or more) and limit from 1 to {GAME_LOG_LINES}"
        )));
    }
    let caller = caller.ok_or(ApiError::MissingToken)?;
    let lines = context
        .catalog
        .game_log(&caller, &path.into_inner(), params.after, limit)
        .await?;
    let next_after = lines
        .last()
        .map_or(params.after.unwrap_or(0), |line| line.id);
    Ok(HttpResponse::Ok().json(LogPage { lines, next_after }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StreamParams {
    after: Option<i64>,
    /// For a browser's `EventSource`, which cannot set headers (RFC 6750 §2.3).
    access_token: Option<String>,
}

/// `GET /games/{id}/logs/stream`: each line as it is stored (after `Last-Event-ID` or
/// `?after=`, when given).
async fn stream(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
    MaybeSigned(caller): MaybeSigned,
) -> Result<HttpResponse, ApiError> {
    let params: StreamParams = parse_query(&req)?;
    let after = resume_after(&req, params.after, "a line's id")?;
    let caller = stream_viewer(&context, caller, params.access_token)
        .await?
        .ok_or(ApiError::MissingToken)?;
    let feed = context
        .catalog
        .game_log_feed(&caller.player, &path.into_inner(), after)
        .await?;
    Ok(event_stream_response(feed, &context, Some(caller), None))
}
