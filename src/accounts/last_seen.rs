//! Who is still here: every request with a player's token, and every stream they hold open,
//! marks them seen. This server writes the time at most once per a quarter of quick play's
//! window per player (see [`crate::engine::IdleRules::seen_every`]), through the store's writer
//! and off the request's path, so it costs a write a few times a minute per active player, and
//! other servers on the database read it too.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::time::Duration;

use tokio::time::Instant;

use super::Accounts;
use crate::cache::BoundedCache;
use crate::game::PlayerRef;

/// When this server last wrote that a player was seen.
pub(super) type SeenMarks = BoundedCache<String, Instant>;

impl Accounts {
    /// `player` made a request or holds a stream open, through `session` if it names one:
    /// written unless this server wrote it for that session less than
    /// [`IdleRules::seen_every`] (and at most a minute) ago.
    pub fn seen(&self, player: &PlayerRef, session: Option<&str>) {
        let now = Instant::now();
        let every = self.seen_every.min(Duration::from_secs(60));
        let key = session.unwrap_or(&player.id);
        if self
            .seen
            .get(key)
            .is_some_and(|last| now.duration_since(last) < every)
        {
            return;
        }
        self.seen.insert(key.to_owned(), now);
        let (store, id) = (self.store.clone(), player.id.clone());
        let session = session.map(str::to_owned);
        // The time of the request, not of the write: the write may wait behind others, and a
        // turn begun meanwhile must not count as seen.
        let at = crate::domain::records::now();
        tokio::spawn(async move {
            if let Err(err) = store.mark_seen(&id, session.as_deref(), at).await {
                tracing::warn!(error = %err, "could not record that a player was seen");
            }
        });
    }
}
