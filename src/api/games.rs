use actix_web::http::Method;
use actix_web::{web, HttpResponse};
use serde_json::json;

use super::{route, AppContext, RouteDef};

pub fn routes() -> Vec<RouteDef> {
    vec![route(Method::GET, "/games", list)]
}

/// The games this server hosts.
async fn list(context: web::Data<AppContext>) -> HttpResponse {
    HttpResponse::Ok().json(json!({"games": context.engine.games()}))
}
