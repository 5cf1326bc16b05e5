//! A game version's own page: its files, served so that nothing they hold can run outside
//! their sandbox. Every response carries a policy that makes it an opaque origin (`sandbox
//! allow-scripts`, even when opened on its own) with no network at all (`connect-src 'none'`),
//! and that loads scripts, styles, images, fonts and media only from that version's folder
//! (and inline, as builds do). A version never changes, so its files are cached for good.

use actix_web::http::header::{self, ContentEncoding};
use actix_web::{web, HttpRequest, HttpResponse};

use super::extract::{etag, matches_if_none_match};
use super::forwarded::request_origin;
use super::games::version_param;
use super::origins::{game_page_notice, wants_document};
use super::{ApiError, AppContext, Front};
use crate::catalog::CatalogError;
use crate::domain::ids::is_well_formed;
use crate::frontend::INDEX;
use crate::store::{FileKey, StoredFile};

/// The single-page route's policy: one document, everything inline, nothing loaded.
const PAGE_POLICY: &str = "sandbox allow-scripts; default-src 'none'; \
     script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; \
     connect-src 'none'";

/// A version's files never change: a browser keeps them as long as it likes.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// `GET /games/{id}/frontend[?version=N]`: a version's page (the latest by default) when it is
/// one document, as before build folders; a folder is redirected to, so that its relative
/// links resolve.
pub(super) async fn page(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let game = path.into_inner();
    let (version, page) = context
        .catalog
        .game_frontend(&game, version_param(&req)?)
        .await?;
    let Some(page) = page else {
        return Ok(HttpResponse::TemporaryRedirect()
            .insert_header((header::LOCATION, folder_path(&game, version)))
            .finish());
    };
    if wants_document(&req) && page.content_type.starts_with("text/html") {
        return Ok(notice(&req, &game));
    }
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, page.content_type))
        .insert_header(("Content-Security-Policy", PAGE_POLICY))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((header::ETAG, etag(version)))
        .body(page.body))
}

/// `GET /games/{id}/versions/{n}/frontend`: the folder is at `…/frontend/`, where relative
/// links resolve inside it.
pub(super) async fn folder(
    context: web::Data<AppContext>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (game, version) = path.into_inner();
    let version = version_in_path(&game, &version)?;
    // Only to a version that exists: anything else is answered here, by what is missing.
    context.catalog.game_listing(&game, Some(version)).await?;
    Ok(HttpResponse::PermanentRedirect()
        .insert_header((header::LOCATION, folder_path(&game, version)))
        .finish())
}

/// `GET /games/{id}/versions/{n}/frontend/{path}`: one file of a version's frontend
/// (`index.html` for the folder itself), gzipped when the client takes it and a copy is kept.
pub(super) async fn file(
    req: HttpRequest,
    context: web::Data<AppContext>,
    path: web::Path<(String, String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (game, version, mut file) = path.into_inner();
    let version = version_in_path(&game, &version)?;
    if file.is_empty() || file.ends_with('/') {
        file.push_str(INDEX);
    }
    let key = FileKey {
        game_id: &game,
        version,
        path: &file,
    };
    let stored = context
        .catalog
        .frontend_file(key, accepts_gzip(&req))
        .await?;
    if wants_document(&req) && stored.content_type.starts_with("text/html") {
        return Ok(notice(&req, &game));
    }
    // A page is answered differently when opened on its own; its other files never are.
    let vary = match stored.content_type.starts_with("text/html") {
        true => "Accept-Encoding, Sec-Fetch-Dest",
        false => "Accept-Encoding",
    };
    let tag = if stored.gzipped {
        gzip_tag(&stored.etag)
    } else {
        stored.etag.clone()
    };
    let unchanged = matches_if_none_match(&req, &tag)
        || matches_if_none_match(&req, &stored.etag)
        || matches_if_none_match(&req, &gzip_tag(&stored.etag));
    let mut response = if unchanged {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    response
        .insert_header((header::ETAG, tag))
        .insert_header((header::CACHE_CONTROL, IMMUTABLE))
        .insert_header((header::VARY, vary))
        .insert_header((
            "Content-Security-Policy",
            folder_policy(&req, &game, version),
        ))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        // The frame's origin is opaque, so a module script or a font it loads (requests in
        // CORS mode) comes from another origin: every origin may read these public files.
        .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"));
    if unchanged {
        return Ok(response.finish());
    }
    let StoredFile {
        content_type,
        body,
        gzipped,
        ..
    } = stored;
    response.insert_header((header::CONTENT_TYPE, content_type));
    // Either way the body goes as it is: gzipped once at upload, or not worth compressing.
    response.insert_header(if gzipped {
        ContentEncoding::Gzip
    } else {
        ContentEncoding::Identity
    });
    Ok(response.body(body))
}

/// What a game's HTML opened on its own shows instead (see `api/origins.rs`), with a link to
/// the page people play on: the public URL, or this origin when authors' pages share it. The
/// page frames a game with its room's id in the query (`?room=`), so the link leads to that
/// room's view when it is there.
fn notice(req: &HttpRequest, game: &str) -> HttpResponse {
    let front = req.app_data::<web::Data<Front>>();
    let main = match front {
        Some(front) => match (&front.public_url, &front.frontend_origin) {
            (Some(url), _) => Some(url.as_str()),
            (None, None) => Some(""),
            (None, Some(_)) => None,
        },
        None => Some(""),
    };
    let room = web::Query::<RoomQuery>::from_query(req.query_string())
        .ok()
        .and_then(|query| query.into_inner().room)
        .filter(|room| is_well_formed(room));
    game_page_notice(game, main, room.as_deref())
}

#[derive(serde::Deserialize)]
struct RoomQuery {
    room: Option<String>,
}

/// The version number in a path; one that is not a version is not found.
fn version_in_path(game: &str, text: &str) -> Result<i64, ApiError> {
    match text.parse::<i64>() {
        Ok(version) if version >= 1 => Ok(version),
        _ => Err(CatalogError::GameVersionNotFound {
            game: game.to_owned(),
            version: text.parse().unwrap_or(0),
        }
        .into()),
    }
}

fn folder_path(game: &str, version: i64) -> String {
    format!("/games/{game}/versions/{version}/frontend/")
}

/// The entity tag of a file's gzipped copy: a different representation, a different tag.
fn gzip_tag(tag: &str) -> String {
    format!("{}-gzip\"", tag.trim_end_matches('"'))
}

/// Whether `Accept-Encoding` takes gzip (by name or `*`, with a weight above zero).
fn accepts_gzip(req: &HttpRequest) -> bool {
    let Some(value) = req
        .headers()
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    value.split(',').any(|item| {
        let mut parts = item.split(';');
        let coding = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let weight = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .filter_map(|q| q.trim().parse::<f32>().ok())
            .next()
            .unwrap_or(1.0);
        ["gzip", "x-gzip", "*"].contains(&coding.as_str()) && weight > 0.0
    })
}

/// The policy of a version's files: an opaque origin with no network, loading code, styles and
/// media only from this version's folder (and inline). Paths in a policy need an origin: the
/// public URL's, or the request's own scheme and `Host` (`Front::origin_for`); an `http:`
/// source also matches the same folder over `https:`.
fn folder_policy(req: &HttpRequest, game: &str, version: i64) -> String {
    let folder = match request_origin(req) {
        Some(origin) => format!("{origin}{}", folder_path(game, version)),
        None => "'self'".to_owned(),
    };
    format!(
        "sandbox allow-scripts; default-src 'none'; \
         script-src {folder} 'unsafe-inline' 'unsafe-eval'; style-src {folder} 'unsafe-inline'; \
         img-src {folder} data: blob:; font-src {folder} data:; media-src {folder} data: blob:; \
         manifest-src {folder}; connect-src 'none'; form-action 'none'; base-uri 'none'"
    )
}
