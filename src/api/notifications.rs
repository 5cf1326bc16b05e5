//! A player's turns: the inbox of rooms waiting on their move.

use actix_web::http::Method;
use actix_web::{web, HttpResponse};
use serde::Serialize;

use super::extract::Caller;
use super::{route, ApiError, AppContext, RouteDef};
use crate::domain::time::Timestamp;
use crate::game::{Clock, PlayerRef};
use crate::store::Turn;

pub fn routes() -> Vec<RouteDef> {
    vec![route(Method::GET, "/players/me/turns", turns)]
}

/// One room of the inbox.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TurnView<'a> {
    id: &'a str,
    game: &'a str,
    version: i64,
    players: &'a [PlayerRef],
    /// When the room's deadline passes (its clock, or the game's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    deadline: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    clock: Option<Clock>,
    /// Since when it has been the player's move.
    since: Timestamp,
}

impl<'a> From<&'a Turn> for TurnView<'a> {
    fn from(turn: &'a Turn) -> Self {
        Self {
            id: &turn.room,
            game: &turn.game,
            version: turn.version,
            players: &turn.players,
            deadline: turn.deadline,
            clock: turn.clock,
            since: turn.since,
        }
    }
}

/// Every unfinished room where it is the caller's move, the soonest deadline first, then the
/// longest waiting.
async fn turns(
    context: web::Data<AppContext>,
    Caller(me): Caller,
) -> Result<HttpResponse, ApiError> {
    let turns = context.notifications.turns(&me.id).await?;
    let rooms: Vec<TurnView> = turns.iter().map(TurnView::from).collect();
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(serde_json::json!({ "rooms": rooms })))
}
