//! Moderation: roles, suspending and renaming players, unpublishing games and closing rooms.
//!
//! Each admin action is one write of the store, the change and its row of the audit log in
//! one commit; what follows from it in rooms (a suspended player quitting, a renamed player
//! shown by the new name, an unpublished game's rooms closed) is then one ordinary version per
//! room, through [`Engine::act`](crate::engine::Engine::act), so every server, cache and stream hears of it as of any
//! other. Should the server stop between the two, the action stands and running it again
//! does what remains: every one of them may be repeated.

mod error;
mod players;
mod rooms;

pub use error::ModerationError;
pub use players::Suspension;
pub use rooms::{RoomsReached, UnpublishedRooms};

use crate::accounts::Accounts;
use crate::catalog::Catalog;
use crate::domain::records::AuditEntry;
use crate::domain::roles::{Role, UploadPolicy};
use crate::engine::Engine;
use crate::game::PlayerRef;
use crate::store::Store;

/// Admins' actions, and who may take them.
#[derive(Clone)]
pub struct Moderation {
    store: Store,
    rooms: Engine,
    accounts: Accounts,
    catalog: Catalog,
}

impl Moderation {
    pub fn new(store: Store, rooms: Engine, accounts: Accounts, catalog: Catalog) -> Self {
        Self {
            store,
            rooms,
            accounts,
            catalog,
        }
    }

    /// [`ModerationError::NotAdmin`] unless the player holds the admin role (read from the
    /// database each time, so a grant or a revoke counts at once on every server).
    pub async fn require_admin(&self, player: &PlayerRef) -> Result<(), ModerationError> {
        match self
            .store
            .roles_of(&player.id)
            .await?
            .contains(&Role::Admin)
        {
            true => Ok(()),
            false => Err(ModerationError::NotAdmin),
        }
    }

    /// [`ModerationError::UploadsRestricted`] unless `policy` lets the player publish.
    pub async fn may_publish(
        &self,
        player: &PlayerRef,
        policy: UploadPolicy,
    ) -> Result<(), ModerationError> {
        if policy == UploadPolicy::Anyone {
            return Ok(());
        }
        match policy.allows(&self.store.roles_of(&player.id).await?) {
            true => Ok(()),
            false => Err(ModerationError::UploadsRestricted(policy.who())),
        }
    }

    /// Up to `limit` entries of the audit log before id `before`, newest first.
    pub async fn audit_log(
        &self,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, ModerationError> {
        Ok(self.store.audit_log(before, limit).await?)
    }
}
