//! Every error a client can see, rendered as RFC 9457 `application/problem+json` with a stable
//! `code`. Server-side failures are logged with their cause chain; clients get a short message.

use std::fmt::Write as _;

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use serde_json::{json, Map, Value};

use crate::engine::{EngineError, RegisterError};

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
    #[error("this route needs an `Authorization: Bearer <token>` header")]
    MissingToken,
    #[error("the bearer token is not valid")]
    InvalidToken,
    #[error("there is no route {method} {path}")]
    RouteNotFound { method: String, path: String },
    #[error("{method} is not allowed on {path}")]
    MethodNotAllowed { method: String, path: String },
    #[error("the body is larger than the limit of {0} bytes")]
    PayloadTooLarge(usize),
    #[error("could not read the request body: {0}")]
    BadPayload(String),
    #[error("the username `{0}` is taken")]
    UsernameTaken(String),
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
        match self {
            ApiError::MalformedJson(_) => "malformed_json",
            ApiError::InvalidBody(_) => "invalid_body",
            ApiError::InvalidQuery(_) => "invalid_query",
            ApiError::InvalidHeader(_) => "invalid_header",
            ApiError::InvalidUsername(_) => "invalid_username",
            ApiError::MissingToken => "missing_token",
            ApiError::InvalidToken => "invalid_token",
            ApiError::RouteNotFound { .. } => "route_not_found",
            ApiError::MethodNotAllowed { .. } => "method_not_allowed",
            ApiError::PayloadTooLarge(_) => "payload_too_large",
            ApiError::BadPayload(_) => "bad_payload",
            ApiError::UsernameTaken(_) => "username_taken",
            ApiError::Engine(err) => match err {
                EngineError::RoomNotFound => "room_not_found",
                EngineError::GameNotFound(_) => "game_not_found",
                EngineError::GameUnavailable(_) => "game_unavailable",
                EngineError::NotAPlayer => "not_a_player",
                EngineError::RoomNotJoinable => "room_not_joinable",
                EngineError::RoomFinished => "room_finished",
                EngineError::RoomNotFinished => "room_not_finished",
                EngineError::BotsUnsupported(_) => "bots_unsupported",
                EngineError::AlreadyAPlayer => "already_a_player",
                EngineError::RoomFull(_) => "room_full",
                EngineError::VersionMismatch { .. } => "version_mismatch",
                EngineError::GameRefused(_) => "game_refused",
                EngineError::InvalidPatch { .. } => "invalid_patch",
                EngineError::HookPanicked { .. } => "hook_crashed",
                EngineError::Contention => "contention",
                EngineError::Store(_) => "internal",
            },
        }
    }

    /// Members added to the problem object beyond the standard ones.
    fn extensions(&self) -> Map<String, Value> {
        let mut extra = Map::new();
        match self {
            ApiError::Engine(EngineError::VersionMismatch { current }) => {
                extra.insert("currentVersion".into(), json!(current));
            }
            ApiError::Engine(EngineError::GameRefused(refusal)) => {
                extra.insert("reason".into(), json!(refusal.reason));
            }
            _ => {}
        }
        extra
    }

    /// What a client is told; server-side failures are not described beyond their kind.
    fn public_detail(&self) -> String {
        match self {
            ApiError::Engine(EngineError::Store(_)) => {
                "the server could not complete the request".into()
            }
            ApiError::Engine(EngineError::HookPanicked { hook, .. }) => {
                format!("the game's {hook} hook crashed; the room is unchanged")
            }
            other => other.to_string(),
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::MalformedJson(_)
            | ApiError::InvalidBody(_)
            | ApiError::InvalidQuery(_)
            | ApiError::InvalidHeader(_)
            | ApiError::InvalidUsername(_)
            | ApiError::BadPayload(_) => StatusCode::BAD_REQUEST,
            ApiError::MissingToken | ApiError::InvalidToken => StatusCode::UNAUTHORIZED,
            ApiError::RouteNotFound { .. } => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UsernameTaken(_) => StatusCode::CONFLICT,
            ApiError::Engine(err) => match err {
                EngineError::RoomNotFound | EngineError::GameNotFound(_) => StatusCode::NOT_FOUND,
                EngineError::NotAPlayer => StatusCode::FORBIDDEN,
                EngineError::RoomNotJoinable
                | EngineError::RoomFinished
                | EngineError::RoomNotFinished
                | EngineError::AlreadyAPlayer
                | EngineError::RoomFull(_) => StatusCode::CONFLICT,
                EngineError::VersionMismatch { .. } => StatusCode::PRECONDITION_FAILED,
                EngineError::GameRefused(_) | EngineError::BotsUnsupported(_) => {
                    StatusCode::UNPROCESSABLE_ENTITY
                }
                EngineError::InvalidPatch { .. }
                | EngineError::HookPanicked { .. }
                | EngineError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
                EngineError::GameUnavailable(_) | EngineError::Contention => {
                    StatusCode::SERVICE_UNAVAILABLE
                }
            },
        }
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
        if matches!(self, ApiError::Engine(EngineError::Contention)) {
            response.insert_header((header::RETRY_AFTER, "1"));
        }
        response.body(Value::Object(body).to_string())
    }
}

/// `error: cause: cause…`, for logs, with a crashed hook's panic message.
fn error_chain(err: &ApiError) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        let _ = write!(text, ": {cause}");
        source = cause.source();
    }
    if let ApiError::Engine(EngineError::HookPanicked { message, .. }) = err {
        let _ = write!(text, ": {message}");
    }
    text
}
