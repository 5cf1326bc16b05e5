use actix_web::http::Method;
use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};

use super::extract::OptionalJson;
use super::{route, ApiError, AppContext, RouteDef};
use crate::domain::username::Username;

pub fn routes() -> Vec<RouteDef> {
    vec![route(Method::POST, "/players", create)]
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewPlayer {
    username: Option<String>,
}

#[derive(Serialize)]
struct CreatedPlayer {
    id: String,
    username: String,
    token: String,
}

/// Registers a player; the token in the answer is the only time it is shown.
async fn create(
    context: web::Data<AppContext>,
    body: OptionalJson<NewPlayer>,
) -> Result<HttpResponse, ApiError> {
    let username = body
        .0
        .username
        .map(|name| Username::parse(&name).map_err(|e| ApiError::InvalidUsername(e.to_string())))
        .transpose()?;
    let (account, token) = context.engine.register(username).await?;
    Ok(HttpResponse::Created().json(CreatedPlayer {
        id: account.id,
        username: account.username,
        token,
    }))
}
