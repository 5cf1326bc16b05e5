use actix_web::{web, HttpResponse};
use serde_json::json;

use super::{ApiError, AppContext};

/// Answers 200 while the database can be read, and says whether writes work: `"ok"`, or
/// `"busy"` / `"unavailable"` while the last write failed that way (until one succeeds).
/// Reads go on being served while writes fail, so the service stays up for them.
pub async fn check(context: web::Data<AppContext>) -> Result<HttpResponse, ApiError> {
    context.rooms.ping().await?;
    let writes = context
        .rooms
        .write_fault()
        .map_or("ok", |fault| fault.as_str());
    Ok(HttpResponse::Ok().json(json!({"status": "ok", "writes": writes})))
}

/// The server's clock, in milliseconds since 1970, for clients that keep an offset to it (a
/// game's page counting down a deadline). Never cached, and nothing else asked of the server.
pub async fn time() -> HttpResponse {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as u64);
    HttpResponse::Ok()
        .insert_header((actix_web::http::header::CACHE_CONTROL, "no-store"))
        .json(json!({"now": now}))
}
