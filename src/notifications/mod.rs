//! Notifications: what reaches a player about their turns wherever they are. The turns inbox
//! (every room waiting on their move) is read from the memberships each version writes, so
//! every server answers the same.

mod error;

pub use error::NotificationError;

use crate::domain::ids::PlayerId;
use crate::store::{Store, Turn};

/// The most rooms the inbox lists: more waiting on one player is no inbox anyone reads.
pub const MAX_TURNS: i64 = 500;

/// A player's turns.
#[derive(Clone)]
pub struct Notifications {
    store: Store,
}

impl Notifications {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// The unfinished rooms waiting on `player`'s move, the soonest deadline first, then the
    /// longest waiting.
    pub async fn turns(&self, player: &PlayerId) -> Result<Vec<Turn>, NotificationError> {
        Ok(self.store.turns_of(player, MAX_TURNS).await?)
    }
}
