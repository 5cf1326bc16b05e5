//! The web page: three files compiled into the binary, so the server is all a player needs.

use actix_web::http::{header, Method};
use actix_web::HttpResponse;

use super::{route, RouteDef};

const INDEX: &str = include_str!("../web/index.html");
const SCRIPT: &str = include_str!("../web/app.js");
const STYLE: &str = include_str!("../web/app.css");

/// The page loads only its own script and style, and talks only to this server: injected
/// markup could run nothing.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

pub fn routes() -> Vec<RouteDef> {
    vec![
        route(Method::GET, "/", || async {
            asset(INDEX, "text/html; charset=utf-8")
        }),
        route(Method::GET, "/app.js", || async {
            asset(SCRIPT, "text/javascript; charset=utf-8")
        }),
        route(Method::GET, "/app.css", || async {
            asset(STYLE, "text/css; charset=utf-8")
        }),
    ]
}

fn asset(body: &'static str, content_type: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        // Revalidated each time, so an upgraded server never runs with a stale script.
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header(("Content-Security-Policy", CONTENT_SECURITY_POLICY))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .insert_header(("Referrer-Policy", "no-referrer"))
        .body(body)
}
