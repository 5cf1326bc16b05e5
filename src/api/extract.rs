//! Request extractors that validate at the edge: the caller's identity, JSON bodies (with a
//! size limit and problem+json errors whatever the content type), and version preconditions.

use std::future::{ready, Ready};

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::web::{BytesMut, Data};
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use super::{ApiError, AppContext};
use crate::game::PlayerRef;

/// The largest request body accepted.
pub const BODY_LIMIT: usize = 64 * 1024;

/// The authenticated player making the request (`Authorization: Bearer <token>`).
pub struct Caller(pub PlayerRef);

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let context = req.app_data::<Data<AppContext>>().cloned();
        let token = bearer_token(req);
        Box::pin(async move {
            let token = token?;
            let context = context.expect("the app context is registered");
            let player = context.engine.authenticate(&token).await?;
            player.map(Caller).ok_or(ApiError::InvalidToken)
        })
    }
}

/// Like [`Caller`], for routes where signing in is optional: a token, if given, must be valid.
pub struct MaybeCaller(pub Option<PlayerRef>);

impl FromRequest for MaybeCaller {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        if req.headers().contains_key(header::AUTHORIZATION) {
            let caller = Caller::from_request(req, payload);
            Box::pin(async move { Ok(MaybeCaller(Some(caller.await?.0))) })
        } else {
            Box::pin(async { Ok(MaybeCaller(None)) })
        }
    }
}

fn bearer_token(req: &HttpRequest) -> Result<String, ApiError> {
    let value = req
        .headers()
        .get(header::AUTHORIZATION)
        .ok_or(ApiError::MissingToken)?;
    let value = value.to_str().map_err(|_| ApiError::InvalidToken)?;
    match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => {
            Ok(token.trim().to_owned())
        }
        _ => Err(ApiError::InvalidToken),
    }
}

/// A JSON request body. Content type is not checked, so `curl -d` works as is.
pub struct Json<T>(pub T);

/// A JSON request body that may be left out, meaning `T::default()`.
pub struct OptionalJson<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for Json<T> {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = read_body(req, payload);
        Box::pin(async move {
            let bytes = body.await?;
            if bytes.iter().all(u8::is_ascii_whitespace) {
                return Err(ApiError::MalformedJson("the body is empty".into()));
            }
            parse_json(&bytes).map(Json)
        })
    }
}

impl<T: DeserializeOwned + Default + 'static> FromRequest for OptionalJson<T> {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = read_body(req, payload);
        Box::pin(async move {
            let bytes = body.await?;
            if bytes.iter().all(u8::is_ascii_whitespace) {
                return Ok(OptionalJson(T::default()));
            }
            parse_json(&bytes).map(OptionalJson)
        })
    }
}

pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => {
            ApiError::InvalidBody(format!("the body does not fit this route: {e}"))
        }
        _ => ApiError::MalformedJson(e.to_string()),
    })
}

/// Reads the whole body, refusing it as soon as it passes [`BODY_LIMIT`].
fn read_body(
    req: &HttpRequest,
    payload: &mut Payload,
) -> LocalBoxFuture<'static, Result<BytesMut, ApiError>> {
    read_body_within(req, payload, BODY_LIMIT)
}

/// Reads the whole body, refusing it as soon as it passes `limit` bytes.
pub fn read_body_within(
    req: &HttpRequest,
    payload: &mut Payload,
    limit: usize,
) -> LocalBoxFuture<'static, Result<BytesMut, ApiError>> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let mut payload = payload.take();
    Box::pin(async move {
        if declared.is_some_and(|len| len > limit) {
            return Err(ApiError::PayloadTooLarge(limit));
        }
        let mut body = BytesMut::new();
        while let Some(chunk) = payload.next().await {
            let chunk = chunk.map_err(|e| ApiError::BadPayload(e.to_string()))?;
            if body.len() + chunk.len() > limit {
                return Err(ApiError::PayloadTooLarge(limit));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    })
}

/// The query string as `T`, or `invalid_query`.
pub fn parse_query<T: DeserializeOwned>(req: &HttpRequest) -> Result<T, ApiError> {
    actix_web::web::Query::<T>::from_query(req.query_string())
        .map(actix_web::web::Query::into_inner)
        .map_err(|e| ApiError::InvalidQuery(e.to_string()))
}

/// `If-Match: "<version>"`: the version the client saw. `*` or no header pins nothing.
pub struct IfMatch(pub Option<i64>);

impl FromRequest for IfMatch {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(match req.headers().get(header::IF_MATCH) {
            None => Ok(IfMatch(None)),
            Some(value) => parse_if_match(value.to_str().unwrap_or("")).map(IfMatch),
        })
    }
}

fn parse_if_match(value: &str) -> Result<Option<i64>, ApiError> {
    let value = value.trim();
    if value == "*" {
        return Ok(None);
    }
    let tag = value.strip_prefix("W/").unwrap_or(value);
    let tag = tag
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(tag);
    tag.parse::<i64>().map(Some).map_err(|_| {
        ApiError::InvalidHeader(format!(
            "If-Match must be a room version as an entity tag, like \"3\"; got `{value}`"
        ))
    })
}

/// The entity tag of a room version.
pub fn etag(version: i64) -> String {
    format!("\"{version}\"")
}

/// Whether `If-None-Match` already names this version.
pub fn not_modified(req: &HttpRequest, version: i64) -> bool {
    let Some(value) = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let current = etag(version);
    value
        .split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag == current || tag.strip_prefix("W/") == Some(current.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_match_forms() {
        assert_eq!(parse_if_match("\"3\"").unwrap(), Some(3));
        assert_eq!(parse_if_match("W/\"12\"").unwrap(), Some(12));
        assert_eq!(parse_if_match("7").unwrap(), Some(7));
        assert_eq!(parse_if_match("*").unwrap(), None);
        assert!(parse_if_match("\"abc\"").is_err());
    }
}
