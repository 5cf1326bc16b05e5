//! Every error a client can see, rendered as RFC 9457 `application/problem+json` with a stable
//! `code`. Server-side failures are logged with their cause chain; clients get a short message.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::fmt::Write as _;

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use serde_json::{json, Map, Value};

use crate::accounts::AccountError;
use crate::catalog::CatalogError;
use crate::engine::EngineError;
use crate::moderation::ModerationError;
use crate::notifications::NotificationError;
use crate::problem::{innermost, ErrorKind, Problem};
use crate::standing::StandingError;
use crate::webhooks::WebhookError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("the body is not valid JSON: {0}")]
    MalformedJson(String),
    #[error("{0}")]
    InvalidBody(String),
    #[error("{0}")]
    InvalidQuery(String),
    #[error("{0}")]
    InvalidHeader(String),
    #[error("{0}")]
    InvalidUsername(String),
    #[error("{0}")]
    InvalidGameId(String),
    #[error("this route needs an `Authorization: Bearer <token>` header")]
    MissingToken,
    #[error("the bearer token is not valid")]
    InvalidToken,
    #[error("there is no route {method} {path}")]
    RouteNotFound { method: String, path: String },
    #[error("the page has no module `{0}`")]
    ModuleNotFound(String),
    #[error("the origin {0} may not call this API from a browser (see --cors-origins)")]
    OriginNotAllowed(String),
    #[error("the dev routes answer only requests addressed to this machine (localhost, 127.0.0.1 or [::1]), not to `{0}`")]
    HostNotLoopback(String),
    #[error("{method} is not allowed on {path}")]
    MethodNotAllowed {
        method: String,
        path: String,
        /// The methods the path serves, for the `Allow` header.
        allow: String,
    },
    #[error("the body is larger than the limit of {0} bytes")]
    PayloadTooLarge(usize),
    #[error("could not read the request body: {0}")]
    BadPayload(String),
    #[error("the body did not arrive within {0} s")]
    BodyTimeout(u64),
    #[error("this address has {0} connections open already; close some")]
    TooManyConnections(usize),
    #[error("this client has {0} requests open already through the proxy (streams included); close some")]
    TooManyProxiedRequests(usize),
    #[error("the username `{0}` is taken")]
    UsernameTaken(String),
    #[error("too many {what}; try again in {} s", retry_after_secs(*.retry_after))]
    RateLimited {
        what: &'static str,
        retry_after: std::time::Duration,
    },
    #[error(transparent)]
    Rooms(#[from] EngineError),
    #[error(transparent)]
    Accounts(#[from] AccountError),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error(transparent)]
    Moderation(#[from] ModerationError),
    #[error(transparent)]
    Chat(#[from] crate::chat::ChatError),
    #[error(transparent)]
    Standing(#[from] StandingError),
    #[error(transparent)]
    Webhooks(#[from] WebhookError),
    #[error(transparent)]
    Notifications(#[from] NotificationError),
}

impl ApiError {
    /// A slice's error, as the problem that says everything about it.
    fn problem(&self) -> Option<&dyn Problem> {
        let problem: &dyn Problem = match self {
            ApiError::Rooms(err) => err,
            ApiError::Accounts(err) => err,
            ApiError::Catalog(err) => err,
            ApiError::Moderation(err) => err,
            ApiError::Chat(err) => err,
            ApiError::Standing(err) => err,
            ApiError::Webhooks(err) => err,
            ApiError::Notifications(err) => err,
            _ => return None,
        };
        Some(innermost(problem))
    }

    /// The stable, documented name of the problem.
    pub fn code(&self) -> &'static str {
        self.classify().1
    }

    /// The status and code of every problem, in one match so the two never drift apart.
    fn classify(&self) -> (StatusCode, &'static str) {
        use StatusCode as S;
        match self {
            ApiError::MalformedJson(_) => (S::BAD_REQUEST, "malformed_json"),
            ApiError::InvalidBody(_) => (S::BAD_REQUEST, "invalid_body"),
            ApiError::InvalidQuery(_) => (S::BAD_REQUEST, "invalid_query"),
            ApiError::InvalidHeader(_) => (S::BAD_REQUEST, "invalid_header"),
            ApiError::InvalidUsername(_) => (S::BAD_REQUEST, "invalid_username"),
            ApiError::InvalidGameId(_) => (S::BAD_REQUEST, "invalid_game_id"),
            ApiError::BadPayload(_) => (S::BAD_REQUEST, "bad_payload"),
            ApiError::BodyTimeout(_) => (S::REQUEST_TIMEOUT, "body_timeout"),
            ApiError::TooManyConnections(_) | ApiError::TooManyProxiedRequests(_) => {
                (S::TOO_MANY_REQUESTS, "too_many_connections")
            }
            ApiError::MissingToken => (S::UNAUTHORIZED, "missing_token"),
            ApiError::InvalidToken => (S::UNAUTHORIZED, "invalid_token"),
            ApiError::RouteNotFound { .. } => (S::NOT_FOUND, "route_not_found"),
            ApiError::ModuleNotFound(_) => (S::NOT_FOUND, "module_not_found"),
            ApiError::MethodNotAllowed { .. } => (S::METHOD_NOT_ALLOWED, "method_not_allowed"),
            ApiError::OriginNotAllowed(_) => (S::FORBIDDEN, "origin_not_allowed"),
            ApiError::HostNotLoopback(_) => (S::FORBIDDEN, "host_not_loopback"),
            ApiError::PayloadTooLarge(_) => (S::PAYLOAD_TOO_LARGE, "payload_too_large"),
            ApiError::UsernameTaken(_) => (S::CONFLICT, "username_taken"),
            ApiError::RateLimited { .. } => (S::TOO_MANY_REQUESTS, "rate_limited"),
            ApiError::Rooms(err) => slice_problem(err),
            ApiError::Accounts(err) => slice_problem(err),
            ApiError::Catalog(err) => slice_problem(err),
            ApiError::Moderation(err) => slice_problem(err),
            ApiError::Chat(err) => slice_problem(err),
            ApiError::Standing(err) => slice_problem(err),
            ApiError::Webhooks(err) => slice_problem(err),
            ApiError::Notifications(err) => slice_problem(err),
        }
    }

    /// Members added to the problem object beyond the standard ones.
    fn extensions(&self) -> Map<String, Value> {
        let mut extra = Map::new();
        if let Some(problem) = self.problem() {
            problem.extensions(&mut extra);
        }
        extra
    }

    /// Seconds a client should wait before trying again, for problems that pass by themselves.
    fn retry_after(&self) -> Option<u64> {
        match self {
            ApiError::RateLimited { retry_after, .. } => Some(retry_after_secs(*retry_after)),
            _ => self.problem()?.retry_after(),
        }
    }

    /// What a client is told; server-side failures are not described beyond their kind.
    fn public_detail(&self) -> String {
        match self.problem() {
            Some(problem) => problem
                .public_detail()
                .unwrap_or_else(|| problem.to_string()),
            None => self.to_string(),
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.classify().0
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        if status.is_server_error() {
            tracing::error!(code = self.code(), error = %error_chain(self), "request failed");
        }
        let mut body = Map::new();
        body.insert("type".into(), json!("about:blank"));
        body.insert(
            "title".into(),
            json!(status.canonical_reason().unwrap_or("Error")),
        );
        body.insert("status".into(), json!(status.as_u16()));
        body.insert("code".into(), json!(self.code()));
        body.insert("detail".into(), json!(self.public_detail()));
        body.extend(self.extensions());
        let mut response = HttpResponse::build(status);
        response.insert_header((header::CONTENT_TYPE, "application/problem+json"));
        if let ApiError::MethodNotAllowed { allow, .. } = self {
            response.insert_header((header::ALLOW, allow.as_str()));
        }
        if let Some(seconds) = self.retry_after() {
            response.insert_header((header::RETRY_AFTER, seconds.to_string()));
        }
        // A client too slow to send its body does not keep the connection either.
        if let ApiError::BodyTimeout(_) | ApiError::TooManyConnections(_) = self {
            response.force_close();
        }
        response.body(Value::Object(body).to_string())
    }
}

/// The status and code of a slice's error: those of the problem that says everything about it.
fn slice_problem(err: &dyn Problem) -> (StatusCode, &'static str) {
    let (kind, code) = innermost(err).classify();
    (status_of(kind), code)
}

/// The status of each kind of a slice's error.
fn status_of(kind: ErrorKind) -> StatusCode {
    use StatusCode as S;
    match kind {
        ErrorKind::NotFound => S::NOT_FOUND,
        ErrorKind::Unauthorized => S::UNAUTHORIZED,
        ErrorKind::Forbidden => S::FORBIDDEN,
        ErrorKind::Conflict => S::CONFLICT,
        ErrorKind::Unprocessable => S::UNPROCESSABLE_ENTITY,
        ErrorKind::PreconditionFailed => S::PRECONDITION_FAILED,
        ErrorKind::Unavailable => S::SERVICE_UNAVAILABLE,
        ErrorKind::GameFault | ErrorKind::Internal => S::INTERNAL_SERVER_ERROR,
    }
}

/// Whole seconds to wait, rounded up, and at least one.
fn retry_after_secs(wait: std::time::Duration) -> u64 {
    wait.as_secs_f64().ceil().max(1.0) as u64
}

/// `error: cause: cause…`, for logs.
fn error_chain(err: &ApiError) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        let _ = write!(text, ": {cause}");
        source = cause.source();
    }
    text
}
