use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use super::extract::{OptionalJson, Signed};
use super::sessions::{device_label, Opened};
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
    /// What this device is called in the player's list of sessions.
    label: Option<String>,
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
    let label = device_label(&req, body.0.label)?;
    let (_, session, token) = context.engine.register(username, &label).await?;
    Ok(HttpResponse::Created().json(Opened::new(&session.player, &session.id, token)))
}

/// Replaces the current session's token with a new one, shown this once; the old one stops
/// working at once, on every server sharing the database. Other sessions keep theirs.
async fn rotate_token(
    context: web::Data<AppContext>,
    Signed(me): Signed,
) -> Result<HttpResponse, ApiError> {
    context.limits.actions.admit(&me.player.id, "actions")?;
    let token = context.engine.rotate_token(&me).await?;
    Ok(HttpResponse::Ok().json(Opened::new(&me.player, &me.session, token)))
}
