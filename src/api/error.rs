//! Every error a client can see, rendered as RFC 9457 `application/problem+json` with a stable
//! `code`. Server-side failures are logged with their cause chain; clients get a short message.

use std::fmt::Write as _;

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use serde_json::{json, Map, Value};

use crate::engine::{EngineError, ErrorKind, RegisterError};
use crate::game::Hook;
use crate::store::StorageFault;

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
    #[error("the username `{0}` is taken")]
    UsernameTaken(String),
    #[error("too many {what}; try again in {} s", retry_after_secs(*.retry_after))]
    RateLimited {
        what: &'static str,
        retry_after: std::time::Duration,
    },
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl From<RegisterError> for ApiError {
    fn from(err: RegisterError) -> Self {
        match err {
            RegisterError::UsernameTaken(name) => ApiError::UsernameTaken(name),
            RegisterError::Engine(err) => ApiError::Engine(err),
        }
    }
}

impl ApiError {
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
            ApiError::Engine(err) => (status_of(err.kind()), err.code()),
        }
    }

    /// Members added to the problem object beyond the standard ones.
    fn extensions(&self) -> Map<String, Value> {
        let mut extra = Map::new();
        match self {
            ApiError::Engine(
                EngineError::VersionMismatch { current }
                | EngineError::VersionNotYetCommitted { current },
            ) => {
                extra.insert("currentVersion".into(), json!(current));
            }
            ApiError::Engine(EngineError::GameRefused(refusal)) => {
                extra.insert("reason".into(), json!(refusal.reason));
            }
            ApiError::Engine(EngineError::PlayerSuspended(reason)) => {
                extra.insert("reason".into(), json!(reason));
            }
            ApiError::Engine(
                EngineError::InvalidGameCode {
                    line: Some(line), ..
                }
                | EngineError::HookFailed {
                    line: Some(line), ..
                },
            ) => {
                extra.insert("line".into(), json!(line));
            }
            ApiError::Engine(EngineError::InvalidFrontend(err)) => {
                if let Some(entry) = &err.entry {
                    extra.insert("entry".into(), json!(entry));
                }
            }
            _ => {}
        }
        extra
    }

    /// Seconds a client should wait before trying again, for problems that pass by themselves.
    fn retry_after(&self) -> Option<u64> {
        match self {
            ApiError::RateLimited { retry_after, .. } => Some(retry_after_secs(*retry_after)),
            ApiError::Engine(
                EngineError::Contention
                | EngineError::SandboxUnavailable(_)
                | EngineError::SignInBusy,
            ) => Some(1),
            ApiError::Engine(EngineError::Store(err)) => match err.fault()? {
                StorageFault::Busy => Some(2),
                StorageFault::Unavailable => Some(10),
            },
            _ => None,
        }
    }

    /// What a client is told; server-side failures are not described beyond their kind.
    fn public_detail(&self) -> String {
        match self {
            ApiError::Engine(EngineError::Store(err)) => match err.fault() {
                Some(StorageFault::Busy) => "the database is locked by another connection; \
                                             nothing was changed; try again shortly"
                    .into(),
                Some(StorageFault::Unavailable) => "the database cannot be written right now \
                                                    (disk full or read-only); nothing was \
                                                    changed; try again later"
                    .into(),
                None => "the server could not complete the request".into(),
            },
            ApiError::Engine(EngineError::SandboxUnavailable(_)) => {
                "uploaded games cannot be run right now; try again later".into()
            }
            ApiError::Engine(
                err @ (EngineError::HookCrashed { .. }
                | EngineError::HookTimeout { .. }
                | EngineError::HookOutOfMemory { .. }
                | EngineError::InvalidPatch { .. }),
            ) if err.hook() == Some(Hook::PlayerView) => {
                // The view is made after any action was committed: the action stands.
                format!("{err}; the room cannot be shown, and no state is sent in its place")
            }
            ApiError::Engine(
                err @ (EngineError::HookCrashed { .. }
                | EngineError::HookTimeout { .. }
                | EngineError::HookOutOfMemory { .. }
                | EngineError::InvalidPatch { .. }),
            ) => format!("{err}; the room is unchanged"),
            other => other.to_string(),
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
        response.body(Value::Object(body).to_string())
    }
}

/// The status of each kind of engine error.
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
