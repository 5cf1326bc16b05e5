//! Request extractors that validate at the edge: the caller's identity, JSON bodies (with a
//! size limit and problem+json errors whatever the content type), and version preconditions.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::future::{ready, Ready};
use std::time::Duration;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::web::{BytesMut, Data};
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use futures_util::StreamExt;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use super::{ApiError, AppContext};
use crate::accounts::SignedIn;
use crate::engine::Precondition;
use crate::game::PlayerRef;

/// The largest request body accepted.
pub const BODY_LIMIT: usize = 64 * 1024;

/// The authenticated player making the request (`Authorization: Bearer <token>`), and the
/// session they made it through.
pub struct Signed(pub SignedIn);

impl FromRequest for Signed {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let context = req.app_data::<Data<AppContext>>().cloned();
        let token = bearer_token(req);
        Box::pin(async move {
            let token = token?;
            let context = context.expect("the app context is registered");
            let signed = context.accounts.authenticate(&token).await?;
            signed.map(Signed).ok_or(ApiError::InvalidToken)
        })
    }
}

/// The authenticated player making the request.
pub struct Caller(pub PlayerRef);

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let signed = Signed::from_request(req, payload);
        Box::pin(async move { Ok(Caller(signed.await?.0.player)) })
    }
}

/// The caller of a route that changes a room: a [`Caller`], counted against the player's
/// action limit (`429 rate_limited` beyond it).
pub struct Actor(pub PlayerRef);

impl FromRequest for Actor {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let context = req.app_data::<Data<AppContext>>().cloned();
        let caller = Caller::from_request(req, payload);
        Box::pin(async move {
            let Caller(player) = caller.await?;
            let context = context.expect("the app context is registered");
            context.limits.actions.admit(&player.id)?;
            Ok(Actor(player))
        })
    }
}

/// Like [`Signed`], for routes where signing in is optional: a token, if given, must be valid.
pub struct MaybeSigned(pub Option<SignedIn>);

impl FromRequest for MaybeSigned {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        if req.headers().contains_key(header::AUTHORIZATION) {
            let signed = Signed::from_request(req, payload);
            Box::pin(async move { Ok(MaybeSigned(Some(signed.await?.0))) })
        } else {
            Box::pin(async { Ok(MaybeSigned(None)) })
        }
    }
}

/// Like [`Caller`], for routes where signing in is optional.
pub struct MaybeCaller(pub Option<PlayerRef>);

impl FromRequest for MaybeCaller {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let signed = MaybeSigned::from_request(req, payload);
        Box::pin(async move { Ok(MaybeCaller(signed.await?.0.map(|s| s.player))) })
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

/// A count, written as JSON Schema's `integer` allows: `13` or `13.0`, not `13.5` or `-1`.
pub(super) fn whole_number<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<usize>, D::Error> {
    let Some(number) = Option::<f64>::deserialize(d)? else {
        return Ok(None);
    };
    if number.fract() != 0.0 || !(0.0..=u32::MAX as f64).contains(&number) {
        return Err(serde::de::Error::custom(format!(
            "expected a whole number, got {number}"
        )));
    }
    Ok(Some(number as usize))
}

/// A JSON object as the request body, as `T`. Content type is not checked, so `curl -d` works
/// as is.
pub struct Json<T>(pub T);

/// Like [`Json`], but the body may be left out, meaning `T::default()`.
pub struct OptionalJson<T>(pub T);

/// Any JSON value as the request body (a move: whatever the game understands).
pub struct AnyJson(pub Value);

/// The body's bytes, or `malformed_json` when there are none.
async fn required(
    body: LocalBoxFuture<'static, Result<BytesMut, ApiError>>,
) -> Result<BytesMut, ApiError> {
    let bytes = body.await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::MalformedJson("the body is empty".into()));
    }
    Ok(bytes)
}

impl<T: DeserializeOwned + 'static> FromRequest for Json<T> {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = read_body(req, payload);
        Box::pin(async move { parse_json(&required(body).await?).map(Json) })
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

impl FromRequest for AnyJson {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = read_body(req, payload);
        Box::pin(async move {
            let bytes = required(body).await?;
            serde_json::from_slice(&bytes)
                .map(AnyJson)
                .map_err(|e| ApiError::MalformedJson(e.to_string()))
        })
    }
}

/// A JSON object as `T`. Anything else is refused, even where serde would read a struct from
/// an array (`[null]`), so that what is accepted is exactly what the schema says.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| ApiError::MalformedJson(e.to_string()))?;
    if !value.is_object() {
        return Err(ApiError::InvalidBody(
            "the body does not fit this route: it must be a JSON object".into(),
        ));
    }
    serde_json::from_value(value)
        .map_err(|e| ApiError::InvalidBody(format!("the body does not fit this route: {e}")))
}

/// Reads the whole body, refusing it as soon as it passes [`BODY_LIMIT`].
fn read_body(
    req: &HttpRequest,
    payload: &mut Payload,
) -> LocalBoxFuture<'static, Result<BytesMut, ApiError>> {
    read_body_within(req, payload, BODY_LIMIT)
}

/// How long a body may take to arrive (`--body-timeout-secs`), from when its handler starts
/// reading it: a client that sends a byte now and then holds no connection and no task for
/// ever.
pub fn body_time(req: &HttpRequest) -> Duration {
    let front = req.app_data::<actix_web::web::Data<super::Front>>();
    front.map_or(Duration::from_secs(10), |front| front.body_time)
}

/// How long an upload's body may take: the body time, and the body limit at 64 KiB a second.
pub fn upload_time(req: &HttpRequest, limit: usize) -> Duration {
    body_time(req) + Duration::from_secs((limit / (64 << 10)) as u64)
}

/// Reads the whole body, refusing it as soon as it passes `limit` bytes or takes longer than
/// [`body_time`] (or [`upload_time`] for a limit larger than a JSON body's).
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
    let time = match limit > BODY_LIMIT {
        true => upload_time(req, limit),
        false => body_time(req),
    };
    let deadline = tokio::time::Instant::now() + time;
    Box::pin(async move {
        if declared.is_some_and(|len| len > limit) {
            return Err(ApiError::PayloadTooLarge(limit));
        }
        let mut body = BytesMut::new();
        loop {
            let chunk = match tokio::time::timeout_at(deadline, payload.next()).await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(_) => return Err(ApiError::BodyTimeout(time.as_secs())),
            };
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

/// A page cursor as the listings give it (`nextCursor`: a positive whole number, as
/// openapi.yaml's pattern allows, so the two never disagree); none when empty.
pub fn parse_cursor(cursor: Option<String>) -> Result<Option<i64>, ApiError> {
    cursor
        .filter(|c| !c.is_empty())
        .map(|c| {
            let digits = c.len() <= 18 && c.bytes().all(|b| b.is_ascii_digit());
            let position = c
                .parse::<i64>()
                .ok()
                .filter(|_| digits && !c.starts_with('0'));
            position.ok_or_else(|| {
                ApiError::InvalidQuery("cursor must be a nextCursor this server returned".into())
            })
        })
        .transpose()
}

/// `If-Match`, read as RFC 9110 defines it (see [`Precondition`]); a header that is not `*`
/// or a list of entity tags is `400 invalid_header`.
pub struct IfMatch(pub Precondition);

impl FromRequest for IfMatch {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(match req.headers().get(header::IF_MATCH) {
            None => Ok(IfMatch(Precondition::Any)),
            Some(value) => parse_if_match(value.as_bytes()).map(IfMatch),
        })
    }
}

fn parse_if_match(value: &[u8]) -> Result<Precondition, ApiError> {
    let refused = || {
        ApiError::InvalidHeader(format!(
            "If-Match must be `*` or a list of entity tags, like \"3\" or \"3\", \"4\"; got `{}`",
            String::from_utf8_lossy(value)
        ))
    };
    let value = value.trim_ascii();
    if value == b"*" {
        return Ok(Precondition::Any);
    }
    let mut versions = Vec::new();
    let mut rest = value;
    // An empty list is allowed by the grammar, and matches nothing.
    if rest.is_empty() {
        return Ok(Precondition::OneOf(versions));
    }
    loop {
        let (weak, tagged) = match rest.strip_prefix(b"W/") {
            Some(tagged) => (true, tagged),
            None => (false, rest),
        };
        let quoted = tagged.strip_prefix(b"\"").ok_or_else(refused)?;
        let end = quoted.iter().position(|&b| b == b'"').ok_or_else(refused)?;
        let opaque = &quoted[..end];
        // Visible ASCII only (RFC 9110's etagc without obs-text), as openapi.yaml's pattern.
        if opaque.iter().any(|&b| !(0x21..=0x7e).contains(&b)) {
            return Err(refused());
        }
        // A weak tag, or one that names no version, can never match strongly.
        if !weak {
            // Strong comparison is character for character: "03" is not "3".
            if let Some(version) = std::str::from_utf8(opaque)
                .ok()
                .and_then(|text| text.parse::<i64>().ok().filter(|v| v.to_string() == text))
            {
                versions.push(version);
            }
        }
        rest = quoted[end + 1..].trim_ascii_start();
        if rest.is_empty() {
            return Ok(Precondition::OneOf(versions));
        }
        rest = rest
            .strip_prefix(b",")
            .ok_or_else(refused)?
            .trim_ascii_start();
    }
}

/// The entity tag of a room version.
pub fn etag(version: i64) -> String {
    format!("\"{version}\"")
}

/// Whether `If-None-Match` already names this version.
pub fn not_modified(req: &HttpRequest, version: i64) -> bool {
    matches_if_none_match(req, &etag(version))
}

/// Whether `If-None-Match` names `current` (weakly or strongly) or is `*`.
pub fn matches_if_none_match(req: &HttpRequest, current: &str) -> bool {
    let Some(value) = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    value
        .split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag == current || tag.strip_prefix("W/") == Some(current))
}

/// The address of the client the request came from (behind trusted proxies, the one they
/// name: `api/forwarded.rs`), for per-client limits; empty when unknown.
pub fn client_address(req: &HttpRequest) -> String {
    let address = match actix_web::HttpMessage::extensions(req).get::<super::Client>() {
        Some(client) => client.address,
        None => req.peer_addr().map(|a| a.ip()),
    };
    address.map(|a| a.to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_match_is_read_as_rfc_9110_says() {
        let parse = |value: &str| parse_if_match(value.as_bytes());
        let one_of = |versions: &[i64]| Precondition::OneOf(versions.to_vec());
        assert_eq!(parse("\"3\"").unwrap(), one_of(&[3]));
        assert_eq!(
            parse(" \"3\" , \"12\",\"4\" ").unwrap(),
            one_of(&[3, 12, 4])
        );
        assert_eq!(parse("*").unwrap(), Precondition::Any);
        // Weak tags and tags that are not versions never match: a 412, not a 400.
        assert_eq!(parse("W/\"12\"").unwrap(), one_of(&[]));
        assert_eq!(parse("\"\"").unwrap(), one_of(&[]));
        assert_eq!(
            parse("\"abc\", W/\"x\", \"+5\", \"07\", \"7\"").unwrap(),
            one_of(&[7])
        );
        assert_eq!(parse("").unwrap(), one_of(&[]));
        for malformed in [
            "7",
            "abc",
            "\"3",
            "\"3\" \"4\"",
            "\"3\",",
            "W/3",
            "*, \"3\"",
            "\"é\"",
        ] {
            assert!(parse(malformed).is_err(), "{malformed}");
        }
    }
}
