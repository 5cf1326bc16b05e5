//! Games: the lobby's list, and publishing, showing and reading the source of uploaded games.

use actix_web::dev::Payload;
use actix_web::http::{header, Method};
use actix_web::{web, FromRequest, HttpRequest, HttpResponse};
use futures_util::future::LocalBoxFuture;
use serde::Deserialize;
use serde_json::json;

use super::extract::{etag, parse_json, parse_query, read_body_within, Caller};
use super::{route, ApiError, AppContext, RouteDef};
use crate::domain::game_id::GameId;
use crate::engine::{
    Carry, EngineError, GameUpload, Publication, MAX_FRONTEND_BYTES, MAX_SOURCE_BYTES,
};

/// The largest move example accepted, as JSON text.
const MAX_MOVE_EXAMPLE_BYTES: usize = 1024;

/// A game's own page runs in an opaque origin with no network at all (not even this API): it
/// can draw and take clicks, and speaks only to the page that frames it, by `postMessage`.
const FRONTEND_POLICY: &str = "sandbox allow-scripts; default-src 'none'; \
     script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; \
     connect-src 'none'";

pub fn routes() -> Vec<RouteDef> {
    vec![
        route(Method::GET, "/games", list),
        route(Method::GET, "/games/{id}", show),
        route(Method::PUT, "/games/{id}", publish),
        route(Method::GET, "/games/{id}/source", source),
        route(Method::GET, "/games/{id}/frontend", frontend),
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
fn version_param(req: &HttpRequest) -> Result<Option<i64>, ApiError> {
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

/// The page a version ships (the latest by default), sandboxed: see [`FRONTEND_POLICY`].
async fn frontend(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (version, page) = context
        .engine
        .game_frontend(&path.into_inner(), version_param(&req)?)
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header(("Content-Security-Policy", FRONTEND_POLICY))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((header::ETAG, etag(version)))
        .body(page))
}

/// What an author may say about a game, in the JSON body or (for a raw upload) the query.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct GameSettings {
    name: Option<String>,
    description: Option<String>,
    #[serde(default, deserialize_with = "super::extract::whole_number")]
    min_players: Option<usize>,
    #[serde(default, deserialize_with = "super::extract::whole_number")]
    max_players: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UploadBody {
    source: Option<String>,
    #[serde(default, deserialize_with = "carried")]
    frontend: Carry<String>,
    #[serde(default, deserialize_with = "carried")]
    move_example: Carry<serde_json::Value>,
    #[serde(flatten)]
    settings: GameSettings,
}

/// A field that is absent keeps the previous version's value (the default), `null` removes
/// it, anything else sets it.
fn carried<'de, D, T>(d: D) -> Result<Carry<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(match Option::<T>::deserialize(d)? {
        Some(value) => Carry::Set(value),
        None => Carry::Remove,
    })
}

/// An upload: the raw source (`Content-Type: application/javascript` or `text/javascript`,
/// settings in the query string) or JSON `{"source"?, "frontend"?, "moveExample"?, "name"?,
/// …}`. At most 1 MiB of source and 1 MiB of frontend.
pub struct Upload(GameUpload);

impl FromRequest for Upload {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let raw = is_javascript(req);
        let query: Result<GameSettings, ApiError> = parse_query(req);
        // JSON escapes can double a source's size (and more, for control characters).
        let limit = if raw {
            MAX_SOURCE_BYTES
        } else {
            (MAX_SOURCE_BYTES + MAX_FRONTEND_BYTES) * 2 + 64 * 1024
        };
        let body = read_body_within(req, payload, limit);
        Box::pin(async move {
            let query = query?;
            let bytes = body.await?;
            let (source, settings, frontend, move_example) = if raw {
                let source = String::from_utf8(bytes.to_vec())
                    .map_err(|_| ApiError::InvalidBody("the source must be UTF-8 text".into()))?;
                (Some(source), query, Carry::Keep, Carry::Keep)
            } else {
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    return Err(ApiError::MalformedJson(
                        "the body is empty: send the source as JSON {\"source\": …} or as \
                         the body with Content-Type: application/javascript"
                            .into(),
                    ));
                }
                let body: UploadBody = parse_json(&bytes)?;
                let settings = GameSettings {
                    name: body.settings.name.or(query.name),
                    description: body.settings.description.or(query.description),
                    min_players: body.settings.min_players.or(query.min_players),
                    max_players: body.settings.max_players.or(query.max_players),
                };
                (body.source, settings, body.frontend, body.move_example)
            };
            if source.as_ref().is_some_and(|s| s.len() > MAX_SOURCE_BYTES) {
                return Err(ApiError::PayloadTooLarge(MAX_SOURCE_BYTES));
            }
            if let Carry::Set(page) = &frontend {
                if page.len() > MAX_FRONTEND_BYTES {
                    return Err(ApiError::PayloadTooLarge(MAX_FRONTEND_BYTES));
                }
                if page.trim().is_empty() {
                    return Err(ApiError::InvalidBody(
                        "frontend is an HTML document; send null to remove it".into(),
                    ));
                }
            }
            if let Carry::Set(example) = &move_example {
                // Any JSON has the right shape: only its size is a matter of the game's settings.
                if example.to_string().len() > MAX_MOVE_EXAMPLE_BYTES {
                    return Err(EngineError::InvalidGameSettings(format!(
                        "moveExample must be at most {MAX_MOVE_EXAMPLE_BYTES} bytes of JSON"
                    ))
                    .into());
                }
            }
            validate_text("name", settings.name.as_deref(), 1, 100)?;
            validate_text("description", settings.description.as_deref(), 0, 2000)?;
            Ok(Upload(GameUpload {
                source,
                name: settings.name,
                description: settings.description,
                min_players: settings.min_players,
                max_players: settings.max_players,
                frontend,
                move_example,
            }))
        })
    }
}

fn is_javascript(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .is_some_and(|v| v == "application/javascript" || v == "text/javascript")
}

fn validate_text(field: &str, value: Option<&str>, min: usize, max: usize) -> Result<(), ApiError> {
    match value {
        Some(text) if !(min..=max).contains(&text.chars().count()) => Err(ApiError::InvalidBody(
            format!("{field} must be {min} to {max} characters"),
        )),
        _ => Ok(()),
    }
}
