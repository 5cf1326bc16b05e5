//! Admins' actions on rooms: closing one, and unpublishing a game with its rooms. What an
//! action does in the rooms it reaches is counted.

use std::sync::Arc;

use futures_util::stream::{self, StreamExt};
use serde_json::json;

use super::{Moderation, ModerationError};
use crate::catalog::CatalogError;
use crate::domain::records::{AuditAction, AuditEntry, Moderator, Room};
use crate::engine::{Action, EngineError, Precondition};

/// Rooms changed at once when one admin action reaches many.
const ROOMS_AT_ONCE: usize = 16;

/// What becomes of an unpublished game's rooms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnpublishedRooms {
    /// Games in play are played to their end; rooms still waiting for players are closed.
    Finish,
    /// Every unfinished room is closed, as it is.
    Close,
}

impl UnpublishedRooms {
    pub fn as_str(self) -> &'static str {
        match self {
            UnpublishedRooms::Finish => "finish",
            UnpublishedRooms::Close => "close",
        }
    }
}

/// What an action did in the rooms it reached.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoomsReached {
    /// Rooms changed as the action asks (the player quit, or was renamed).
    pub changed: usize,
    /// Rooms closed: those the action closes, and those where a suspended player's quit
    /// failed in the game's own code (so the player could not otherwise leave).
    pub closed: usize,
    /// Rooms left as they were: the game in play goes on.
    pub left: usize,
}

impl Moderation {
    /// Unpublishes an uploaded game: it opens no new rooms, quick play and "Play again"
    /// included (`409 game_unpublished`), and the games listed leave it out. Its rooms still
    /// waiting for players are closed; those in play finish their games or are closed, as
    /// `rooms` says.
    pub async fn unpublish(
        &self,
        admin: &Moderator,
        game_id: &str,
        reason: &str,
        rooms: UnpublishedRooms,
    ) -> Result<RoomsReached, ModerationError> {
        if self.catalog.builtin().get(game_id).is_some() {
            return Err(CatalogError::GameIsBuiltin(game_id.to_owned()).into());
        }
        let details = json!({"rooms": rooms.as_str()});
        let audit = AuditEntry::new(
            Some(admin),
            AuditAction::Unpublish,
            ("game", game_id),
            reason,
            details,
        );
        let unpublished = self.store.unpublish(game_id, audit).await;
        self.catalog.versions_changed(game_id);
        if !unpublished? {
            return Err(CatalogError::GameNotFound(game_id.to_owned()).into());
        }
        let closing = format!("the game was unpublished: {reason}");
        let (to_close, in_play): (Vec<_>, Vec<_>) = self
            .store
            .unfinished_rooms_of_game(game_id)
            .await?
            .into_iter()
            .partition(|(_, waiting)| *waiting || rooms == UnpublishedRooms::Close);
        let mut reached = self
            .in_rooms(
                to_close.into_iter().map(|(id, _)| id).collect(),
                |room_id| {
                    let (admin, closing) = (admin.clone(), closing.clone());
                    async move { self.close_quietly(&room_id, &admin, closing).await }
                },
            )
            .await;
        reached.left += in_play.len();
        Ok(reached)
    }

    /// Closes a room as it is, on the record: a version of kind `closed` whose move holds the
    /// reason.
    pub async fn close_room(
        &self,
        admin: &Moderator,
        room_id: &str,
        reason: &str,
    ) -> Result<Arc<Room>, ModerationError> {
        let close = Action::Close {
            by: admin.clone(),
            reason: reason.to_owned(),
            audited: true,
        };
        Ok(self.rooms.act(room_id, close, Precondition::Any).await?)
    }

    /// Closes a room because of another admin action (which is on the record itself).
    pub(super) async fn close_quietly(
        &self,
        room_id: &str,
        admin: &Moderator,
        reason: String,
    ) -> Reached {
        let close = Action::Close {
            by: admin.clone(),
            reason,
            audited: false,
        };
        match self.rooms.act(room_id, close, Precondition::Any).await {
            Ok(_) => Reached::Closed,
            Err(err) => Reached::from_error(room_id, err),
        }
    }

    /// Runs `each` on every room, a few at a time, and counts what came of it.
    pub(super) async fn in_rooms<'a, F, Fut>(&'a self, rooms: Vec<String>, each: F) -> RoomsReached
    where
        F: Fn(String) -> Fut,
        Fut: std::future::Future<Output = Reached> + 'a,
    {
        let outcomes: Vec<Reached> = stream::iter(rooms)
            .map(each)
            .buffer_unordered(ROOMS_AT_ONCE)
            .collect()
            .await;
        let mut reached = RoomsReached::default();
        for outcome in outcomes {
            match outcome {
                Reached::Changed => reached.changed += 1,
                Reached::Closed => reached.closed += 1,
                Reached::Left => reached.left += 1,
            }
        }
        reached
    }
}

/// What an admin action came to in one room.
pub(super) enum Reached {
    Changed,
    Closed,
    Left,
}

impl Reached {
    /// A room the action could not change: it finished, or the player left it, meanwhile (so
    /// there is nothing to do), or it failed, which is logged; running the action again
    /// tries it again.
    pub(super) fn from_error(room_id: &str, err: EngineError) -> Self {
        if !matches!(err, EngineError::RoomFinished | EngineError::NotAPlayer) {
            tracing::warn!(room = %room_id, error = %err, "an admin action could not change a room");
        }
        Reached::Left
    }
}
