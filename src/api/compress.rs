//! Compressing answers for clients that accept it (`Accept-Encoding: gzip`, as every browser
//! and most HTTP libraries send), except those too small to gain from it.
//!
//! Most answers are a room or a player: a few hundred bytes of JSON, one packet either way.
//! Gzip made such an answer about 200 bytes shorter and cost the server tens of microseconds
//! of CPU each (a whole compressor set up and torn down per answer). A body known to be under
//! [`MIN_COMPRESSED_BYTES`] goes as it is; larger ones (a history page, a listing, a game's
//! page or scripts) and streams are compressed as before. The rest is what actix-web's
//! `Compress` does: the encoding negotiated from `Accept-Encoding` (`406` when nothing this
//! server can send is acceptable), `Vary: Accept-Encoding`, images other than SVG and videos
//! never compressed.
//!
//! One stop in the life of a move: `docs/internals.md`.

use actix_http::encoding::Encoder;
use actix_web::body::{BodySize, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, AcceptEncoding, ContentEncoding, Encoding, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::middleware::Next;
use actix_web::mime::{self, Mime};
use actix_web::{Error, HttpMessage, HttpResponse};

/// Bodies shorter than this are sent as they are (the threshold Express's `compression`
/// uses by default).
pub const MIN_COMPRESSED_BYTES: u64 = 1024;

const SUPPORTED: &[Encoding] = &[Encoding::identity(), Encoding::gzip(), Encoding::deflate()];

pub async fn handle(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let (encoding, negotiated) = match req.get_header::<AcceptEncoding>() {
        None => (ContentEncoding::Identity, false),
        Some(accepted) => match accepted.negotiate(SUPPORTED.iter()) {
            Some(Encoding::Known(encoding)) => (encoding, true),
            _ => {
                let refusal = HttpResponse::build(StatusCode::NOT_ACCEPTABLE)
                    .insert_header((header::VARY, "Accept-Encoding"))
                    .body("gzip, deflate");
                return Ok(req.into_response(refusal).map_into_right_body());
            }
        },
    };
    let res = next.call(req).await?;
    Ok(res
        .map_body(|head, body| {
            let encoding = match worth_compressing(head.headers.get(header::CONTENT_TYPE), &body) {
                true => encoding,
                false => {
                    // Had it been larger it would have been compressed, so it varies with
                    // what the client takes; a handler that chose its own encoding says its
                    // own `Vary`.
                    if negotiated && !head.headers.contains_key(header::CONTENT_ENCODING) {
                        head.headers
                            .append(header::VARY, HeaderValue::from_static("accept-encoding"));
                    }
                    ContentEncoding::Identity
                }
            };
            Encoder::response(encoding, head, body)
        })
        .map_into_left_body())
}

/// Whether a body of this type and size gains from compression: not one known to be small,
/// nor an image (SVG aside) or a video, which are compressed already.
fn worth_compressing(content_type: Option<&HeaderValue>, body: &impl MessageBody) -> bool {
    if matches!(body.size(), BodySize::Sized(n) if n < MIN_COMPRESSED_BYTES) {
        return false;
    }
    let Some(mime) = content_type
        .and_then(|value| value.to_str().ok())
        .and_then(|text| text.parse::<Mime>().ok())
    else {
        return true;
    };
    match mime.type_() {
        mime::IMAGE => mime.subtype() == mime::SVG,
        mime::VIDEO => false,
        _ => true,
    }
}
