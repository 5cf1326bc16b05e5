use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};

use super::extract::{Actor, OptionalJson};
use super::{route, ApiError, AppContext, RouteDef};
use crate::domain::username::Username;

pub fn routes() -> Vec<RouteDef> {
    vec![
        route(Method::POST, "/players", create),
        route(Method::POST, "/players/me/token", rotate_token),
    ]
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
    req: HttpRequest,
    context: web::Data<AppContext>,
    body: OptionalJson<NewPlayer>,
) -> Result<HttpResponse, ApiError> {
    // Behind a reverse proxy every sign-up comes from the proxy's address: raise or turn off
    // the limit there, and limit at the proxy instead.
    let address = req
        .peer_addr()
        .map(|a| a.ip().to_string())
        .unwrap_or_default();
    let signups = &context.limits.signups;
    signups.admit(&address, "sign-ups from this address")?;
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

/// Replaces the caller's token with a new one, shown this once; the old one stops working at
/// once, on every server sharing the database.
async fn rotate_token(
    context: web::Data<AppContext>,
    Actor(player): Actor,
) -> Result<HttpResponse, ApiError> {
    let token = context.engine.rotate_token(&player).await?;
    Ok(HttpResponse::Ok().json(CreatedPlayer {
        id: player.id,
        username: player.username,
        token,
    }))
}
