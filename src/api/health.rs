use actix_web::{web, HttpResponse};
use serde_json::json;

use super::{ApiError, AppContext};

/// Answers 200 while the database can be read, and says whether writes work: `"ok"`, or
/// `"busy"` / `"unavailable"` while the last write failed that way (until one succeeds).
/// Reads go on being served while writes fail, so the service stays up for them.
pub async fn check(context: web::Data<AppContext>) -> Result<HttpResponse, ApiError> {
    context.engine.ping().await?;
    let writes = context
        .engine
        .write_fault()
        .map_or("ok", |fault| fault.as_str());
    Ok(HttpResponse::Ok().json(json!({"status": "ok", "writes": writes})))
}
