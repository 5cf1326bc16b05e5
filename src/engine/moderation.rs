//! Moderation: roles, suspending and renaming players, unpublishing games and closing rooms.
//!
//! Each admin action is one write of the store, the change and its row of the audit log in
//! one commit; what follows from it in rooms (a suspended player quitting, a renamed player
//! shown by the new name, an unpublished game's rooms closed) is then one ordinary version per
//! room, through [`Engine::act`], so every server, cache and stream hears of it as of any
//! other. Should the server stop between the two, the action stands and running it again
//! does what remains: every one of them may be repeated.

use std::sync::Arc;

use futures_util::stream::{self, StreamExt};
use serde_json::json;

use super::{Action, Engine, EngineError, Precondition};
use crate::domain::roles::{Role, UploadPolicy};
use crate::domain::username::Username;
use crate::game::PlayerRef;
use crate::model::{AuditAction, AuditEntry, PlayerRecord, Room};
use crate::store::StoreError;

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

/// A suspension, as done.
#[derive(Debug, Clone)]
pub struct Suspension {
    pub player: PlayerRef,
    pub sessions_ended: usize,
    pub rooms: RoomsReached,
}

impl Engine {
    /// [`EngineError::NotAdmin`] unless the player holds the admin role (read from the
    /// database each time, so a grant or a revoke counts at once on every server).
    pub async fn require_admin(&self, player: &PlayerRef) -> Result<(), EngineError> {
        match self
            .store
            .roles_of(&player.id)
            .await?
            .contains(&Role::Admin)
        {
            true => Ok(()),
            false => Err(EngineError::NotAdmin),
        }
    }

    /// [`EngineError::UploadsRestricted`] unless `policy` lets the player publish.
    pub async fn may_publish(
        &self,
        player: &PlayerRef,
        policy: UploadPolicy,
    ) -> Result<(), EngineError> {
        if policy == UploadPolicy::Anyone {
            return Ok(());
        }
        match policy.allows(&self.store.roles_of(&player.id).await?) {
            true => Ok(()),
            false => Err(EngineError::UploadsRestricted(policy.who())),
        }
    }

    /// Suspends the player: their sessions end (their streams close), no session of theirs
    /// opens until they are unsuspended, and they quit every room they hold a seat in
    /// (`onPlayerQuit` runs, as for any quit).
    pub async fn suspend(
        &self,
        admin: &PlayerRef,
        player_id: &str,
        reason: &str,
    ) -> Result<Suspension, EngineError> {
        let audit = AuditEntry::new(
            Some(admin),
            AuditAction::Suspend,
            ("player", player_id),
            reason,
            json!({}),
        );
        let (player, ended) = self
            .store
            .suspend(player_id, audit)
            .await?
            .ok_or(EngineError::PlayerNotFound)?;
        let sessions_ended = ended.len();
        self.sessions_ended(ended);
        let seats = self.store.seats_of(player_id).await?;
        let closing = format!(
            "{} was suspended, and the game could not go on without them",
            player.username
        );
        let rooms = self
            .in_rooms(seats, |room_id| {
                let (player, admin, closing) = (player.clone(), admin.clone(), closing.clone());
                async move {
                    match self.act(&room_id, Action::Quit(player), Precondition::Any).await {
                        Ok(_) => Reached::Changed,
                        Err(err) if err.is_game_fault() => {
                            tracing::warn!(room = %room_id, error = %err, "a suspended player's quit failed; closing the room");
                            self.close_quietly(&room_id, &admin, closing).await
                        }
                        Err(err) => Reached::from_error(&room_id, err),
                    }
                }
            })
            .await;
        Ok(Suspension {
            player,
            sessions_ended,
            rooms,
        })
    }

    /// Lifts a suspension: the player may sign in again (with a password, or a code issued
    /// before; sessions ended stay ended).
    pub async fn unsuspend(
        &self,
        admin: &PlayerRef,
        player_id: &str,
        reason: &str,
    ) -> Result<PlayerRef, EngineError> {
        let audit = AuditEntry::new(
            Some(admin),
            AuditAction::Unsuspend,
            ("player", player_id),
            reason,
            json!({}),
        );
        let (player, stray) = self
            .store
            .unsuspend(player_id, audit)
            .await?
            .ok_or(EngineError::PlayerNotFound)?;
        self.sessions_ended(stray);
        Ok(player)
    }

    /// The player named `username`, as an admin sees them (roles, suspension), if any.
    pub async fn find_player(&self, username: &str) -> Result<Option<PlayerRecord>, EngineError> {
        Ok(self.store.player_record(username).await?)
    }

    /// Renames the player: the name they sign in with and are listed by, and in every room
    /// they hold a seat in, a `renamed` version. Finished rooms keep their history as it was.
    /// The player as named before, and the rooms renamed in.
    pub async fn rename(
        &self,
        admin: &PlayerRef,
        player_id: &str,
        username: &Username,
        reason: &str,
    ) -> Result<(PlayerRef, RoomsReached), EngineError> {
        let audit = AuditEntry::new(
            Some(admin),
            AuditAction::Rename,
            ("player", player_id),
            reason,
            json!({}),
        );
        let before = match self.store.rename(player_id, username.as_str(), audit).await {
            Ok(Some(before)) => before,
            Ok(None) => return Err(EngineError::PlayerNotFound),
            Err(StoreError::UsernameTaken) => {
                return Err(EngineError::UsernameTaken(username.as_str().to_owned()))
            }
            Err(err) => return Err(err.into()),
        };
        // Sessions held in memory carry the old name.
        self.sessions.forget_all();
        let renamed = PlayerRef {
            id: before.id.clone(),
            username: username.as_str().to_owned(),
        };
        let seats = self.store.seats_of(player_id).await?;
        let rooms = self
            .in_rooms(seats, |room_id| {
                let renamed = renamed.clone();
                async move {
                    match self
                        .act(&room_id, Action::Rename(renamed), Precondition::Any)
                        .await
                    {
                        Ok(_) => Reached::Changed,
                        Err(err) => Reached::from_error(&room_id, err),
                    }
                }
            })
            .await;
        Ok((before, rooms))
    }

    /// Unpublishes an uploaded game: it opens no new rooms, quick play and "Play again"
    /// included (`409 game_unpublished`), and the games listed leave it out. Its rooms still
    /// waiting for players are closed; those in play finish their games or are closed, as
    /// `rooms` says.
    pub async fn unpublish(
        &self,
        admin: &PlayerRef,
        game_id: &str,
        reason: &str,
        rooms: UnpublishedRooms,
    ) -> Result<RoomsReached, EngineError> {
        if self.games.get(game_id).is_some() {
            return Err(EngineError::GameIsBuiltin(game_id.to_owned()));
        }
        let details = json!({"rooms": rooms.as_str()});
        let audit = AuditEntry::new(
            Some(admin),
            AuditAction::Unpublish,
            ("game", game_id),
            reason,
            details,
        );
        if !self.store.unpublish(game_id, audit).await? {
            return Err(EngineError::GameNotFound(game_id.to_owned()));
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
        admin: &PlayerRef,
        room_id: &str,
        reason: &str,
    ) -> Result<Arc<Room>, EngineError> {
        let close = Action::Close {
            by: admin.clone(),
            reason: reason.to_owned(),
            audited: true,
        };
        self.act(room_id, close, Precondition::Any).await
    }

    /// Up to `limit` entries of the audit log before id `before`, newest first.
    pub async fn audit_log(
        &self,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, EngineError> {
        Ok(self.store.audit_log(before, limit).await?)
    }

    /// [`EngineError::GameUnpublished`] if `game_id` is an uploaded game an admin unpublished,
    /// [`EngineError::GameNotFound`] if there is no such game.
    pub(super) async fn require_published(&self, game_id: &str) -> Result<(), EngineError> {
        if self.games.get(game_id).is_some() {
            return Ok(());
        }
        match self.store.game_version(game_id, None).await? {
            None => Err(EngineError::GameNotFound(game_id.to_owned())),
            Some(record) if record.unpublished_at.is_some() => {
                Err(EngineError::GameUnpublished(game_id.to_owned()))
            }
            Some(_) => Ok(()),
        }
    }

    /// Closes a room because of another admin action (which is on the record itself).
    async fn close_quietly(&self, room_id: &str, admin: &PlayerRef, reason: String) -> Reached {
        let close = Action::Close {
            by: admin.clone(),
            reason,
            audited: false,
        };
        match self.act(room_id, close, Precondition::Any).await {
            Ok(_) => Reached::Closed,
            Err(err) => Reached::from_error(room_id, err),
        }
    }

    /// Runs `each` on every room, a few at a time, and counts what came of it.
    async fn in_rooms<'a, F, Fut>(&'a self, rooms: Vec<String>, each: F) -> RoomsReached
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
enum Reached {
    Changed,
    Closed,
    Left,
}

impl Reached {
    /// A room the action could not change: it finished, or the player left it, meanwhile (so
    /// there is nothing to do), or it failed, which is logged; running the action again
    /// tries it again.
    fn from_error(room_id: &str, err: EngineError) -> Self {
        if !matches!(err, EngineError::RoomFinished | EngineError::NotAPlayer) {
            tracing::warn!(room = %room_id, error = %err, "an admin action could not change a room");
        }
        Reached::Left
    }
}
