//! Admins' actions on players: suspending, lifting a suspension, renaming.

use serde_json::json;

use super::rooms::{Reached, RoomsReached};
use super::{Moderation, ModerationError};
use crate::domain::records::{AuditAction, AuditEntry, Moderator, PlayerRecord};
use crate::domain::username::Username;
use crate::engine::{Action, Precondition};
use crate::game::PlayerRef;
use crate::store::StoreError;

/// A suspension, as done.
#[derive(Debug, Clone)]
pub struct Suspension {
    pub player: PlayerRef,
    pub sessions_ended: usize,
    pub rooms: RoomsReached,
}

impl Moderation {
    /// Suspends the player: their sessions end (their streams close), no session of theirs
    /// opens until they are unsuspended, and they quit every room they hold a seat in
    /// (`onPlayerQuit` runs, as for any quit).
    pub async fn suspend(
        &self,
        admin: &Moderator,
        player_id: &str,
        reason: &str,
    ) -> Result<Suspension, ModerationError> {
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
            .ok_or(ModerationError::PlayerNotFound)?;
        let sessions_ended = ended.len();
        self.accounts.sessions_ended(ended);
        let seats = self.store.seats_of(player_id).await?;
        let closing = format!(
            "{} was suspended, and the game could not go on without them",
            player.username
        );
        let rooms = self
            .in_rooms(seats, |room_id| {
                let (player, admin, closing) = (player.clone(), admin.clone(), closing.clone());
                async move {
                    match self.rooms.act(&room_id, Action::Quit(player), Precondition::Any).await {
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
        admin: &Moderator,
        player_id: &str,
        reason: &str,
    ) -> Result<PlayerRef, ModerationError> {
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
            .ok_or(ModerationError::PlayerNotFound)?;
        self.accounts.sessions_ended(stray);
        Ok(player)
    }

    /// The player named `username`, as an admin sees them (roles, suspension), if any.
    pub async fn find_player(
        &self,
        username: &str,
    ) -> Result<Option<PlayerRecord>, ModerationError> {
        Ok(self.store.player_record(username).await?)
    }

    /// Renames the player: the name they sign in with and are listed by, and in every room
    /// they hold a seat in, a `renamed` version. Finished rooms keep their history as it was.
    /// The player as named before, and the rooms renamed in.
    pub async fn rename(
        &self,
        admin: &Moderator,
        player_id: &str,
        username: &Username,
        reason: &str,
    ) -> Result<(PlayerRef, RoomsReached), ModerationError> {
        let audit = AuditEntry::new(
            Some(admin),
            AuditAction::Rename,
            ("player", player_id),
            reason,
            json!({}),
        );
        let before = match self.store.rename(player_id, username.as_str(), audit).await {
            Ok(Some(before)) => before,
            Ok(None) => return Err(ModerationError::PlayerNotFound),
            Err(StoreError::UsernameTaken) => {
                return Err(ModerationError::UsernameTaken(username.as_str().to_owned()))
            }
            Err(err) => return Err(err.into()),
        };
        // Sessions held in memory carry the old name.
        self.accounts.forget_cached_sessions();
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
                        .rooms
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
}
