use actix_web::{web, HttpResponse};
use serde_json::json;

use super::{ApiError, AppContext};

/// Answers 200 when the database does.
pub async fn check(context: web::Data<AppContext>) -> Result<HttpResponse, ApiError> {
    context.engine.ping().await?;
    Ok(HttpResponse::Ok().json(json!({"status": "ok"})))
}
