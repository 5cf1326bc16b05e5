//! Cross-origin requests, as the Fetch standard defines them, so a game's frontend on any
//! origin (a dev server, a static host) can call the API and open its streams.
//!
//! Tokens travel only in the `Authorization` header, never in cookies, so a browser never
//! attaches a credential on its own: allowing every origin (`*`, the default) lets a page use
//! only the tokens it already holds. A list of exact origins narrows that for operators who
//! want it. `Access-Control-Allow-Credentials` is never sent.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::str::FromStr;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{web, Error, HttpRequest, HttpResponse};

use super::{ApiError, AppContext};

/// Request headers a page may send (the preflight's `Access-Control-Allow-Headers`).
const ALLOW_HEADERS: &str =
    "Authorization, Content-Type, If-Match, If-None-Match, Last-Event-ID, X-Request-Id";

/// Response headers a page may read besides the CORS-safelisted ones.
const EXPOSE_HEADERS: &str = "ETag, Location, Retry-After, X-Request-Id, Allow";

/// How long a browser may reuse a preflight's answer, in seconds (Chromium caps it at 7,200).
const MAX_AGE: &str = "7200";

/// Which origins may call the API from a browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CorsOrigins {
    /// Every origin (`*`).
    Any,
    /// Exactly these serialized origins (`https://games.example`, `http://localhost:5173`).
    List(Vec<String>),
}

impl FromStr for CorsOrigins {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if text.trim() == "*" {
            return Ok(CorsOrigins::Any);
        }
        let origins = text
            .split(',')
            .map(str::trim)
            .filter(|origin| !origin.is_empty())
            .map(origin)
            .collect::<Result<Vec<_>, _>>()?;
        if origins.is_empty() {
            return Err("name at least one origin, or * for every origin".into());
        }
        Ok(CorsOrigins::List(origins))
    }
}

/// One origin as a browser serializes it: `scheme://host[:port]`, lowercase, nothing after.
fn origin(text: &str) -> Result<String, String> {
    let bad = |why: &str| {
        format!("`{text}` is not an origin ({why}): write scheme://host[:port], e.g. http://localhost:5173")
    };
    let (scheme, host) = text.split_once("://").ok_or_else(|| bad("no scheme"))?;
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !scheme_ok {
        return Err(bad("a scheme is letters, digits, +, - and ."));
    }
    if host.is_empty() || host.contains(['/', '?', '#', '@', ' ']) {
        return Err(bad("no path, query, user or spaces after the host"));
    }
    if let Some((_, port)) = host.rsplit_once(':').filter(|_| !host.ends_with(']')) {
        if port.parse::<u16>().is_err() {
            return Err(bad("the port is not a number"));
        }
    }
    Ok(text.to_ascii_lowercase())
}

impl CorsOrigins {
    /// The `Access-Control-Allow-Origin` value for a request from `origin`, if it is allowed.
    fn allow(&self, origin: Option<&HeaderValue>) -> Option<HeaderValue> {
        match self {
            CorsOrigins::Any => Some(HeaderValue::from_static("*")),
            CorsOrigins::List(allowed) => {
                let origin = origin?;
                let text = origin.to_str().ok()?;
                allowed.iter().any(|a| a == text).then(|| origin.clone())
            }
        }
    }

    /// Whether the answer to a request depends on its `Origin` (so caches must key on it).
    fn varies(&self) -> bool {
        matches!(self, CorsOrigins::List(_))
    }
}

/// Adds the CORS headers to every response the API gives an allowed origin.
pub async fn handle(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let origins = req
        .app_data::<web::Data<AppContext>>()
        .map(|context| context.cors.clone())
        .unwrap_or(CorsOrigins::Any);
    // The dev routes (which hand out the local players' tokens) are for the dev page on the
    // same origin only: no other page may read them.
    let path = req.path();
    let dev = path == "/dev.js" || path.starts_with("/dev/");
    let allowed = (!dev)
        .then(|| origins.allow(req.headers().get(header::ORIGIN)))
        .flatten();
    let mut response = next.call(req).await?;
    decorate(response.headers_mut(), &origins, allowed);
    Ok(response)
}

fn decorate(headers: &mut HeaderMap, origins: &CorsOrigins, allowed: Option<HeaderValue>) {
    if origins.varies() {
        headers.append(header::VARY, HeaderValue::from_static("Origin"));
    }
    if let Some(allowed) = allowed {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, allowed);
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(EXPOSE_HEADERS),
        );
    }
}

/// `OPTIONS` on a route: a CORS preflight when it carries `Origin` and
/// `Access-Control-Request-Method` (204 with what the route allows, or 403 for an origin not
/// on the list), else a plain `204` with `Allow`.
pub async fn options(
    req: HttpRequest,
    context: web::Data<AppContext>,
    allow: &str,
) -> Result<HttpResponse, ApiError> {
    let headers = req.headers();
    let mut response = HttpResponse::NoContent();
    response.insert_header((header::ALLOW, allow));
    let origin = headers.get(header::ORIGIN);
    let preflight = origin.is_some() && headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    if !preflight {
        return Ok(response.finish());
    }
    if context.cors.allow(origin).is_none() {
        let origin = origin.and_then(|o| o.to_str().ok()).unwrap_or("?");
        return Err(ApiError::OriginNotAllowed(origin.to_owned()));
    }
    Ok(response
        .insert_header((header::ACCESS_CONTROL_ALLOW_METHODS, allow))
        .insert_header((header::ACCESS_CONTROL_ALLOW_HEADERS, ALLOW_HEADERS))
        .insert_header((header::ACCESS_CONTROL_MAX_AGE, MAX_AGE))
        .finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_read_as_a_browser_serializes_them() {
        assert_eq!("*".parse(), Ok(CorsOrigins::Any));
        assert_eq!(
            " http://localhost:5173 , https://Games.Example ".parse(),
            Ok(CorsOrigins::List(vec![
                "http://localhost:5173".into(),
                "https://games.example".into()
            ]))
        );
        assert_eq!(
            "http://[::1]:8000".parse(),
            Ok(CorsOrigins::List(vec!["http://[::1]:8000".into()]))
        );
        for bad in [
            "",
            "localhost:5173",
            "https://games.example/",
            "https://games.example/play",
            "http://localhost:port",
            "https://user@games.example",
            "://x",
        ] {
            assert!(bad.parse::<CorsOrigins>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn only_listed_origins_are_allowed_and_the_answer_then_varies() {
        let listed: CorsOrigins = "http://localhost:5173".parse().unwrap();
        let from = |o: &'static str| listed.allow(Some(&HeaderValue::from_static(o)));
        assert_eq!(
            from("http://localhost:5173"),
            Some(HeaderValue::from_static("http://localhost:5173"))
        );
        assert_eq!(from("http://localhost:5174"), None);
        assert_eq!(from("null"), None);
        assert_eq!(listed.allow(None), None);
        assert!(listed.varies());
        assert_eq!(
            CorsOrigins::Any.allow(None),
            Some(HeaderValue::from_static("*"))
        );
        assert!(!CorsOrigins::Any.varies());
    }
}
