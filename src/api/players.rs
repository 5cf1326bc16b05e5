use actix_web::http::{header, Method};
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::{json, Value};

use super::extract::{client_address, MaybeCaller, OptionalJson, Signed};
use super::games::shown_rating;
use super::sessions::{device_label, Opened};
use super::{route, ApiError, AppContext, RouteDef};
use crate::domain::ids::is_well_formed;
use crate::domain::username::Username;
use crate::standing::StandingError;

pub fn routes() -> Vec<RouteDef> {
    vec![
        route(Method::POST, "/players", create),
        route(Method::POST, "/players/me/token", rotate_token),
        route(Method::GET, "/players/{id}", profile),
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
    let address = client_address(&req);
    let signups = &context.limits.signups;
    signups.admit(&address)?;
    let username = body
        .0
        .username
        .map(|name| Username::parse(&name).map_err(|e| ApiError::InvalidUsername(e.to_string())))
        .transpose()?;
    let label = device_label(&req, body.0.label)?;
    let (_, session, token) = context.accounts.register(username, &label).await?;
    Ok(HttpResponse::Created().json(Opened::new(&session.player, &session.id, token)))
}

/// Replaces the current session's token with a new one, shown this once; the old one stops
/// working at once, on every server sharing the database. Other sessions keep theirs.
async fn rotate_token(
    context: web::Data<AppContext>,
    Signed(me): Signed,
) -> Result<HttpResponse, ApiError> {
    context.limits.actions.admit(&me.player.id)?;
    let token = context.accounts.rotate_token(&me).await?;
    Ok(HttpResponse::Ok().json(Opened::new(&me.player, &me.session, token)))
}

/// A player's profile (`me`: the caller's): their rating, rank and games in each game they
/// were rated in, and their latest finished rooms (private ones only to themselves), each
/// with what it did to their rating and a link to its replay on the page.
async fn profile(
    context: web::Data<AppContext>,
    path: web::Path<String>,
    MaybeCaller(caller): MaybeCaller,
) -> Result<HttpResponse, ApiError> {
    let id = match (path.into_inner(), &caller) {
        (me, Some(caller)) if me == "me" => caller.id.to_string(),
        (me, None) if me == "me" => return Err(ApiError::MissingToken),
        (id, _) if is_well_formed(&id) => id,
        _ => return Err(StandingError::PlayerNotFound.into()),
    };
    let profile = context.standing.profile(&id, caller.as_ref()).await?;
    let ratings: Vec<Value> = (profile.ratings.iter())
        .map(|s| {
            let beside = json!({"game": s.game, "rank": s.rank});
            shown_rating(s.rating, s.deviation, s.games, beside)
        })
        .collect();
    let mut rooms = Vec::with_capacity(profile.rooms.len());
    for room in &profile.rooms {
        let view = context
            .rooms
            .view_listed_room(room, caller.as_ref())
            .await?;
        let mut entry = json!({"room": view, "replay": format!("/#/room/{}/v/1", room.id)});
        if let Some(change) = profile.changes.get(room.id.as_str()) {
            entry["ratingChange"] = json!({
                "before": change.before.round() as i64,
                "after": change.after.round() as i64,
                "won": change.won,
            });
        }
        rooms.push(entry);
    }
    Ok(HttpResponse::Ok()
        .insert_header((header::VARY, "Authorization"))
        .json(json!({
            "player": profile.account.player_ref(),
            "createdAt": profile.account.created_at,
            "ratings": ratings,
            "recentRooms": rooms,
        })))
}
