//! The HTTP edge: each resource's routes live in their own module; this one only composes them
//! into one table, which both registers the routes and tells the OpenAPI test what is served.
//!
//! One stop in the life of a move: `docs/internals.md`.

mod admin;
mod chat;
pub mod compress;
pub mod connections;
pub mod cors;
pub mod dev;
mod email;
mod error;
mod extract;
mod forwarded;
mod frontends;
mod game_logs;
mod games;
mod health;
mod json_body;
pub mod limits;
mod metrics;
mod notifications;
pub mod origins;
mod page;
mod pages;
mod players;
pub mod request_log;
mod rooms;
mod sessions;
mod spec;
mod streams;
mod upload;
mod webhooks;

use actix_web::guard;
use actix_web::http::Method;
use actix_web::web::{self, ServiceConfig};
use actix_web::{FromRequest, Handler, HttpRequest, HttpResponse, Responder, Route};

pub use cors::CorsOrigins;
pub use error::ApiError;
pub use extract::BODY_LIMIT;
pub use forwarded::{plain_host, Client, Front, TrustedProxies};
pub use streams::StreamsShutdown;

use crate::accounts::Accounts;
use crate::catalog::Catalog;
use crate::engine::Engine;
use crate::metrics::RoutePattern;
use crate::moderation::Moderation;
use crate::standing::Standings;

/// What every handler shares.
pub struct AppContext {
    /// The rooms' core: opening rooms, acting on them, watching them.
    pub rooms: Engine,
    pub accounts: Accounts,
    pub catalog: Catalog,
    pub moderation: Moderation,
    pub chat: crate::chat::Chat,
    pub standing: Standings,
    pub webhooks: crate::webhooks::Webhooks,
    pub notifications: crate::notifications::Notifications,
    /// How long a stream may stay silent before a keep-alive comment.
    pub stream_keepalive: std::time::Duration,
    /// Turns true when the server begins to stop; every open stream then ends.
    pub streams_shutdown: StreamsShutdown,
    /// Streams open now, for `GET /metrics`.
    pub open_streams: crate::metrics::Gauge,
    /// Sign-ups, actions and uploads allowed per client.
    pub limits: limits::Limits,
    /// Which origins a browser may call the API from.
    pub cors: CorsOrigins,
    /// Who may publish games.
    pub uploads: crate::domain::roles::UploadPolicy,
    /// The session of `turnhouse dev`, when it started this server (its routes exist only
    /// then).
    pub dev: Option<std::sync::Arc<dev::DevSession>>,
}

/// One served route.
pub struct RouteDef {
    pub method: Method,
    pub path: &'static str,
    route: Route,
}

fn route<F, Args>(method: Method, path: &'static str, handler: F) -> RouteDef
where
    F: Handler<Args>,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    // Every GET also answers HEAD (RFC 9110 asks it of every general-purpose server). A
    // function, not actix's `guard::Method`: that one also records each method it is asked
    // about in the request's extensions (two allocations a route tried), for an `Allow`
    // header the resources here write themselves (`allowed_methods`).
    let also_head = method == Method::GET;
    let served = method.clone();
    let guard = guard::fn_guard(move |ctx| {
        let asked = &ctx.head().method;
        *asked == served || (also_head && *asked == Method::HEAD)
    });
    RouteDef {
        route: web::route().guard(guard).to(handler),
        method,
        path,
    }
}

/// Every route, in matching order (a literal segment before a `{parameter}` in its place),
/// and `OPTIONS` on every path (CORS preflights, and `Allow`). `turnhouse dev`'s routes are
/// added only to the server it starts (`dev`): nowhere else do they exist.
pub fn routes(dev: bool) -> Vec<RouteDef> {
    let mut all = vec![
        route(Method::GET, "/healthz", health::check),
        route(Method::GET, "/metrics", metrics::show),
        route(Method::GET, "/time", health::time),
        route(Method::GET, "/openapi.yaml", spec::show),
    ];
    all.extend(page::routes());
    if dev {
        all.extend(dev::routes());
    }
    all.extend(notifications::routes());
    all.extend(email::routes());
    all.extend(players::routes());
    all.extend(sessions::routes());
    all.extend(games::routes());
    all.extend(game_logs::routes());
    all.extend(rooms::routes());
    all.extend(admin::routes());
    all.extend(webhooks::routes());
    all.extend(chat::routes());
    for path in paths(&all) {
        let allow = allowed_methods(&all, path);
        all.push(route(
            Method::OPTIONS,
            path,
            move |req: HttpRequest, context: web::Data<AppContext>| {
                let allow = allow.clone();
                async move { cors::options(req, context, &allow).await }
            },
        ));
    }
    all
}

/// The distinct paths of `routes`, in order.
fn paths(routes: &[RouteDef]) -> Vec<&'static str> {
    let mut paths: Vec<&'static str> = Vec::new();
    for def in routes {
        if !paths.contains(&def.path) {
            paths.push(def.path);
        }
    }
    paths
}

/// What `path` serves, as an `Allow` header says it: every GET also answers HEAD, and every
/// path answers OPTIONS.
fn allowed_methods(routes: &[RouteDef], path: &str) -> String {
    let mut allowed: Vec<&str> = routes
        .iter()
        .filter(|def| def.path == path && def.method != Method::OPTIONS)
        .map(|def| def.method.as_str())
        .collect();
    if allowed.contains(&"GET") {
        allowed.push("HEAD");
    }
    allowed.push("OPTIONS");
    allowed.join(", ")
}

/// `(method, path)` of every route a server serves (but `turnhouse dev`'s own).
pub fn route_table() -> Vec<(Method, String)> {
    routes(false)
        .into_iter()
        .map(|r| (r.method, without_patterns(r.path)))
        .collect()
}

/// A route's path as OpenAPI writes it: `{path:.*}` is `{path}`.
fn without_patterns(path: &str) -> String {
    let mut plain = String::with_capacity(path.len());
    let mut skipping = false;
    for c in path.chars() {
        match c {
            ':' if plain.rfind('{') > plain.rfind('}') => skipping = true,
            '}' => {
                skipping = false;
                plain.push(c);
            }
            _ if skipping => {}
            _ => plain.push(c),
        }
    }
    plain
}

/// Registers every route (with `turnhouse dev`'s when `dev`).
pub fn configure(cfg: &mut ServiceConfig, dev: bool) {
    let mut routes = routes(dev);
    let mut scoped: Vec<(&'static str, Vec<actix_web::Resource>)> = Vec::new();
    for path in paths(&routes) {
        let allow = allowed_methods(&routes, path);
        let served: Vec<RouteDef> = routes.extract_if(.., |def| def.path == path).collect();
        let prefix = parameter_prefix(path);
        let mut resource = web::resource(&path[prefix.map_or(0, str::len)..])
            .app_data(RoutePattern(path))
            .default_service(web::to(move |req: HttpRequest| {
                let allow = allow.clone();
                async move {
                    Err::<HttpResponse, _>(ApiError::MethodNotAllowed {
                        method: req.method().to_string(),
                        path: req.path().to_owned(),
                        allow,
                    })
                }
            }));
        for def in served {
            resource = resource.route(def.route);
        }
        match prefix {
            None => {
                cfg.service(resource);
            }
            Some(prefix) => match scoped.iter_mut().find(|(p, _)| *p == prefix) {
                Some((_, resources)) => resources.push(resource),
                None => scoped.push((prefix, vec![resource])),
            },
        }
    }
    // After every literal path, so `/rooms/quickplay` is never read as a room id; and a scope
    // matches every path it begins, so of two with the same first segment the one with more
    // literal segments goes first (`/players/me/sessions/{id}` before `/players/{id}`, which
    // would take `me`). Scopes of different first segments never match the same path, and
    // each one tried is a regex search (and an allocation): the rooms' scope, which every
    // join and move goes to, is tried first.
    scoped.sort_by_key(|(prefix, _)| {
        let first = prefix.split('/').nth(1).unwrap_or_default();
        (
            first != "rooms",
            first,
            std::cmp::Reverse(prefix.matches('/').count()),
        )
    });
    for (prefix, resources) in scoped {
        let scope = resources
            .into_iter()
            .fold(web::scope(prefix), |scope, resource| {
                scope.service(resource)
            });
        cfg.service(scope);
    }
    cfg.default_service(web::to(route_not_found));
}

/// The part of `path` up to and including its first `{parameter}` segment, if it has one.
fn parameter_prefix(path: &'static str) -> Option<&'static str> {
    let start = path.find('{')?;
    let end = path[start..].find('}')? + start + 1;
    Some(&path[..end])
}

async fn route_not_found(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::RouteNotFound {
        method: req.method().to_string(),
        path: req.path().to_owned(),
    })
}
