//! The web page and the browser client: files compiled into the binary, so the server is all a
//! player needs, and any page on any origin can import the client from it.

use std::sync::OnceLock;

use actix_web::http::{header, Method};
use actix_web::{web, HttpRequest, HttpResponse};
use sha2::{Digest, Sha256};

use super::extract::matches_if_none_match;
use super::{route, ApiError, AppContext, RouteDef};
use crate::domain::ids::hex;

/// The page loads only its own scripts and style, talks only to this server, and frames only
/// its games' own pages (which are sandboxed themselves): injected markup could run nothing.
const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; frame-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// The same, for the page as `turnhouse dev` serves it: its dev page shows one copy of the
/// page per seat, side by side, each in a frame of the same origin.
const DEV_PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; frame-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'self'";

/// The page's policy; with authors' pages on an origin of their own, it frames that origin
/// (and still never loads a script from it).
fn policy(req: &HttpRequest, framed: bool) -> String {
    let policy = if framed { DEV_PAGE_POLICY } else { PAGE_POLICY };
    let front = req.app_data::<web::Data<super::Front>>();
    match front.and_then(|front| front.frontend_origin.as_deref()) {
        Some(origin) => policy.replace("frame-src 'self'", &format!("frame-src 'self' {origin}")),
        None => policy.to_owned(),
    }
}

/// A file served as it is, with an entity tag from its content.
pub(super) struct Asset {
    body: &'static str,
    content_type: &'static str,
    etag: OnceLock<String>,
}

impl Asset {
    pub(super) const fn new(body: &'static str, content_type: &'static str) -> Self {
        Self {
            body,
            content_type,
            etag: OnceLock::new(),
        }
    }

    fn etag(&self) -> &str {
        self.etag.get_or_init(|| {
            let digest = Sha256::digest(self.body.as_bytes());
            format!("\"{}\"", &hex(&digest)[..32])
        })
    }
}

macro_rules! asset {
    ($file:literal, $content_type:literal) => {
        Asset::new(include_str!(concat!("../web/", $file)), $content_type)
    };
}

static INDEX: Asset = asset!("index.html", "text/html; charset=utf-8");
static APP: Asset = asset!("app.js", "text/javascript; charset=utf-8");
static STYLE: Asset = asset!("app.css", "text/css; charset=utf-8");
static CLIENT: Asset = asset!("client.js", "text/javascript; charset=utf-8");
static CLIENT_TYPES: Asset = asset!("client.d.ts", "application/typescript; charset=utf-8");
/// The types of a game's hooks, for authors who write them in TypeScript.
static HOOK_TYPES: Asset = asset!("hooks.d.ts", "application/typescript; charset=utf-8");
/// The page's service worker, at the root so that its scope is the whole page.
static SERVICE_WORKER: Asset = asset!("sw.js", "text/javascript; charset=utf-8");

macro_rules! module {
    ($file:literal) => {
        (
            $file,
            Asset::new(
                include_str!(concat!("../web/page/", $file)),
                "text/javascript; charset=utf-8",
            ),
        )
    };
}

/// The page's modules, by their path under `/page/` (`app.js` imports them; `index.html`
/// preloads them all, so the browser fetches them at once rather than import by import).
static MODULES: [(&str, Asset); 21] = [
    module!("account.js"),
    module!("chat.js"),
    module!("dom.js"),
    module!("frames.js"),
    module!("lobby.js"),
    module!("play.js"),
    module!("replay.js"),
    module!("room.js"),
    module!("router.js"),
    module!("session.js"),
    module!("standing.js"),
    module!("webhooks.js"),
    module!("turns.js"),
    module!("mail.js"),
    module!("push.js"),
    module!("upload.js"),
    module!("boards/battleship.js"),
    module!("boards/cube.js"),
    module!("boards/generic.js"),
    module!("boards/grid.js"),
    module!("boards/index.js"),
];

pub fn routes() -> Vec<RouteDef> {
    vec![
        route(
            Method::GET,
            "/",
            |req: HttpRequest, context: web::Data<AppContext>| async move {
                serve(&req, &INDEX, context.dev.is_some())
            },
        ),
        route(Method::GET, "/app.js", |req: HttpRequest| async move {
            serve(&req, &APP, false)
        }),
        route(Method::GET, "/page/{path:.*}", module),
        route(Method::GET, "/app.css", |req: HttpRequest| async move {
            serve(&req, &STYLE, false)
        }),
        route(Method::GET, "/client.js", |req: HttpRequest| async move {
            serve(&req, &CLIENT, false)
        }),
        route(Method::GET, "/sw.js", |req: HttpRequest| async move {
            serve(&req, &SERVICE_WORKER, false)
        }),
        route(Method::GET, "/client.d.ts", |req: HttpRequest| async move {
            serve(&req, &CLIENT_TYPES, false)
        }),
        route(Method::GET, "/hooks.d.ts", |req: HttpRequest| async move {
            serve(&req, &HOOK_TYPES, false)
        }),
    ]
}

/// `GET /page/{path}`: one of the page's modules.
async fn module(req: HttpRequest, path: web::Path<String>) -> Result<HttpResponse, ApiError> {
    match MODULES.iter().find(|(name, _)| *name == path.as_str()) {
        Some((_, asset)) => Ok(serve(&req, asset, false)),
        None => Err(ApiError::ModuleNotFound(path.into_inner())),
    }
}

/// `asset`, with the page's policy: framed by pages of this origin when `framed` (in `turnhouse
/// dev`), else by none.
pub(super) fn serve(req: &HttpRequest, asset: &Asset, framed: bool) -> HttpResponse {
    let etag = asset.etag();
    let unchanged = matches_if_none_match(req, etag);
    let mut response = if unchanged {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    response
        .content_type(asset.content_type)
        // Revalidated each time, so an upgraded server never runs with a stale script.
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((header::ETAG, etag))
        .insert_header(("Content-Security-Policy", policy(req, framed)))
        .insert_header(("Referrer-Policy", "no-referrer"));
    if unchanged {
        return response.finish();
    }
    response.body(asset.body)
}

#[cfg(test)]
mod tests {
    use super::MODULES;

    /// Every module under `src/web/page/` is served, and preloaded by the page; nothing else.
    #[test]
    fn every_module_of_the_page_is_served_and_preloaded() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/web/page");
        let mut files = Vec::new();
        for folder in [root.clone(), root.join("boards")] {
            for entry in std::fs::read_dir(&folder).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "js") {
                    let name = path
                        .strip_prefix(&root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    files.push(name);
                }
            }
        }
        files.sort();
        let mut served: Vec<String> = MODULES.iter().map(|(n, _)| (*n).to_owned()).collect();
        served.sort();
        assert_eq!(files, served);
        let index = include_str!("../web/index.html");
        for name in &served {
            let link = format!("<link rel=\"modulepreload\" href=\"/page/{name}\">");
            assert!(index.contains(&link), "index.html preloads /page/{name}");
        }
        // No module of the page grows past 500 lines: one that does holds two parts.
        for (name, asset) in &MODULES {
            let lines = asset.body.lines().count();
            assert!(lines <= 500, "src/web/page/{name} has {lines} lines");
        }
    }
}
