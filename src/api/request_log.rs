//! One id per request: taken from the client's `X-Request-Id` when it sends a usable one (so a
//! proxy's or a client's id follows the request through), else made here. It is sent back in
//! the `X-Request-Id` header of every response, put in every problem+json body as
//! `requestId`, and carried by the request's log line and by everything logged while the
//! request is served, so one grep finds a user's report in the log.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::time::Instant;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{web, Error, HttpMessage, ResponseError};
use serde_json::Value;
use tracing::Instrument;

use super::connections::{Counted, HeldOpen};
use super::{ApiError, Client, Front};

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// An id the client sent, if it is one we can repeat safely in headers, logs and JSON.
fn usable(value: &HeaderValue) -> Option<&str> {
    let text = value.to_str().ok()?;
    let fits = (1..=128).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:/+=@".contains(&b));
    fits.then_some(text)
}

fn new_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

pub async fn handle(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    // Who the client is, read once: the limits, the log and every handler use it.
    let peer = req.peer_addr().map(|a| a.ip());
    let front = req.app_data::<web::Data<Front>>().cloned();
    let client = match &front {
        Some(front) => front.proxies.client(peer, front.tls, req.headers()),
        None => Client {
            address: peer,
            https: false,
        },
    };
    req.extensions_mut().insert(client);
    let id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(usable)
        .map_or_else(new_id, str::to_owned);
    let span = tracing::info_span!(
        "request",
        id = %id,
        client = %client.address.map(|a| a.to_string()).unwrap_or_default(),
        method = %req.method(),
        path = %req.path(),
    );
    let started = Instant::now();
    let over = (req.conn_data::<Counted>())
        .filter(|counted| counted.over)
        .map(Counted::cap);
    let proxied = front
        .as_ref()
        .zip(peer.zip(client.address))
        // A request a trusted proxy sent for a client it names (one that names none is the
        // proxy's own, and its connections are not capped).
        .filter(|(front, (peer, address))| peer != address && front.proxies.trusts(*peer))
        .map(|(front, (_, address))| front.proxied_requests.open(address));
    let response = match (over, proxied) {
        (Some(cap), _) => req.into_response(ApiError::TooManyConnections(cap).error_response()),
        (None, Some(held)) if held.over => {
            let cap = held.cap();
            req.into_response(ApiError::TooManyProxiedRequests(cap).error_response())
        }
        (None, held) => {
            let response = next.call(req).instrument(span.clone()).await?;
            let response = response.map_into_boxed_body();
            match held {
                Some(held) => response.map_body(|_, body| BoxBody::new(HeldOpen::new(body, held))),
                None => response,
            }
        }
    };
    let mut response = with_request_id(response, &id);
    let status = response.status().as_u16();
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    span.in_scope(|| tracing::info!(status, elapsed_ms, "served"));
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&id) {
        headers.insert(REQUEST_ID, value);
    }
    // Browsers that reached this server over HTTPS come back only over HTTPS, for a year.
    if front.is_some_and(|front| front.hsts) {
        headers.insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static("max-age=31536000"),
        );
    }
    // No response of ours is ever to be read as another type than the one it declares.
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    Ok(response)
}

/// Adds `requestId` to a problem+json body; other bodies pass through untouched.
fn with_request_id(response: ServiceResponse<BoxBody>, id: &str) -> ServiceResponse<BoxBody> {
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/problem+json"));
    if !is_problem {
        return response;
    }
    let (request, response) = response.into_parts();
    let (response, body) = response.into_parts();
    let body = match body.try_into_bytes() {
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(mut problem)) => {
                problem.insert("requestId".into(), Value::String(id.to_owned()));
                BoxBody::new(Value::Object(problem).to_string())
            }
            _ => BoxBody::new(bytes),
        },
        Err(body) => body,
    };
    ServiceResponse::new(request, response.set_body(body))
}
