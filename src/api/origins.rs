//! Authors' files on an origin of their own (`--frontend-origin`): a game's page is served only
//! at that origin, so that nothing an author uploads shares an origin with the page people sign
//! in on (whose `script-src 'self'` would otherwise admit every author's scripts, and where a
//! game's page opened on its own could pose as a sign-in form). A request for a game's page at
//! the main origin is redirected there; any other request at that origin is refused.
//!
//! And at any origin, a game's HTML asked for as a top-level document (`Sec-Fetch-Dest:
//! document`, not as a frame) gets a short page of ours saying what it is instead.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::{web, Error, HttpRequest, HttpResponse, ResponseError};

use super::{ApiError, Front};
use crate::domain::letters::escape;

/// Whether `path` is one of a game's page's routes: `/games/{id}/frontend`, or a version's
/// folder and files, `/games/{id}/versions/{n}/frontend[/…]`.
pub fn is_game_page(path: &str) -> bool {
    let mut parts = path.trim_start_matches('/').split('/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some("games"), Some(id), Some("frontend")) if !id.is_empty() => parts.next().is_none(),
        (Some("games"), Some(id), Some("versions")) if !id.is_empty() => {
            parts.next().is_some_and(|n| !n.is_empty()) && parts.next() == Some("frontend")
        }
        _ => false,
    }
}

/// The authority of an origin (`https://play.example.org` → `play.example.org:443`), or of a
/// `Host` header seen over `scheme`, with its port always written.
fn authority(host: &str, scheme: &str) -> String {
    let default = if scheme == "https" { 443 } else { 80 };
    let has_port = host.rsplit_once(':').is_some_and(|(name, port)| {
        !port.is_empty()
            && port.bytes().all(|b| b.is_ascii_digit())
            && (!name.contains(':') || name.ends_with(']'))
    });
    match has_port {
        true => host.to_ascii_lowercase(),
        false => format!("{}:{default}", host.to_ascii_lowercase()),
    }
}

/// Keeps authors' pages at their own origin, when there is one.
pub async fn handle(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let front = req.app_data::<web::Data<Front>>().cloned();
    let Some(origin) = front
        .as_ref()
        .and_then(|front| front.frontend_origin.clone())
    else {
        return Ok(next.call(req).await?.map_into_boxed_body());
    };
    let (scheme, rest) = origin
        .split_once("://")
        .unwrap_or(("http", origin.as_str()));
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let at_frontend = authority(host, scheme) == authority(rest, scheme);
    let path = req.path().to_owned();
    match (is_game_page(&path), at_frontend) {
        (true, true) | (false, false) => Ok(next.call(req).await?.map_into_boxed_body()),
        (true, false) => {
            let query = match req.query_string() {
                "" => String::new(),
                query => format!("?{query}"),
            };
            let response = HttpResponse::PermanentRedirect()
                .insert_header((header::LOCATION, format!("{origin}{path}{query}")))
                .finish();
            Ok(req.into_response(response))
        }
        (false, true) => {
            let refused = ApiError::RouteNotFound {
                method: req.method().to_string(),
                path,
            };
            Ok(req.into_response(refused.error_response()))
        }
    }
}

/// The policy of the page shown instead of a game's own document.
const NOTICE_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// Whether `req` asks for a document to show on its own (a link followed, an address typed),
/// not for a frame's.
pub fn wants_document(req: &HttpRequest) -> bool {
    req.headers()
        .get("sec-fetch-dest")
        .is_some_and(|dest| dest.as_bytes().eq_ignore_ascii_case(b"document"))
}

/// What is shown instead of game `game`'s page opened on its own: what it is, and where to play
/// it (`main`, the page people sign in on, when known): the view of `room`, if it was framed
/// for one, else the lobby.
pub fn game_page_notice(game: &str, main: Option<&str>, room: Option<&str>) -> HttpResponse {
    let game = escape(game);
    let link = match (main, room) {
        (Some(main), Some(room)) => format!(
            "<p><a href=\"{}/#/room/{}\">Open its room</a> in Turnhouse to play it.</p>",
            escape(main),
            escape(room)
        ),
        (Some(main), None) => format!(
            "<p><a href=\"{}/\">Open Turnhouse</a> to play it.</p>",
            escape(main)
        ),
        (None, _) => String::new(),
    };
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\"><title>A game's page</title>\
         <style>body{{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}}</style>\
         </head><body><h1>This is a game's page</h1>\
         <p>It is the board of the game <code>{game}</code>, written by its author and shown \
         inside Turnhouse's room view, never on its own. Nothing here asks for your name or \
         password.</p>{link}</body></html>"
    );
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header(("Content-Security-Policy", NOTICE_POLICY))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::VARY, "Sec-Fetch-Dest"))
        .body(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_games_page_routes_are_known_from_the_others() {
        for path in [
            "/games/chess/frontend",
            "/games/chess/versions/3/frontend",
            "/games/chess/versions/3/frontend/",
            "/games/chess/versions/3/frontend/assets/app.js",
        ] {
            assert!(is_game_page(path), "{path}");
        }
        for path in [
            "/games/chess",
            "/games/chess/source",
            "/games/chess/versions/3",
            "/games/chess/frontend/x",
            "/games//frontend",
            "/rooms",
            "/",
        ] {
            assert!(!is_game_page(path), "{path}");
        }
    }

    #[test]
    fn hosts_are_compared_with_their_ports() {
        assert_eq!(
            authority("Play.Example.org", "https"),
            "play.example.org:443"
        );
        assert_eq!(
            authority("play.example.org:443", "https"),
            "play.example.org:443"
        );
        assert_eq!(authority("127.0.0.1:8081", "http"), "127.0.0.1:8081");
        assert_eq!(authority("[::1]", "http"), "[::1]:80");
        assert_eq!(authority("[::1]:8081", "http"), "[::1]:8081");
    }
}
