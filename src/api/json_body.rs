//! JSON answers written into a buffer sized for a room from the start.
//!
//! `HttpResponseBuilder::json` lets serde_json grow its buffer from 128 bytes, doubling: a
//! room's answer (about 600 bytes for tic-tac-toe) took three `realloc`s. glibc serves
//! `realloc` from its arena's slow path, never the thread's cache, and a 1 KiB chunk made that
//! way also sweeps the arena's fast bins first: the doublings were 1.6% of the server's samples
//! at 64 games in flight (`perf record --call-graph dwarf`), nearly all of its `realloc`s.
//! One allocation of [`ROOM_SIZED`] comes from the thread's cache instead.

use actix_web::http::header::ContentType;
use actix_web::{HttpResponse, HttpResponseBuilder};
use serde::Serialize;

/// The buffer an answer starts with: a room's answer fits, and glibc's per-thread cache still
/// holds a chunk this big (up to 1,032 bytes).
const ROOM_SIZED: usize = 1024;

/// `builder`'s answer with `value` as its JSON body.
pub(super) fn json_body<T: Serialize>(
    builder: &mut HttpResponseBuilder,
    value: &T,
) -> HttpResponse {
    let mut body = Vec::with_capacity(ROOM_SIZED);
    serde_json::to_writer(&mut body, value).expect("views always serialise");
    builder.content_type(ContentType::json()).body(body)
}
