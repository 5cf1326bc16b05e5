//! Who is here: this server's streams arrive in and leave the presence book, which tells the
//! room's watchers at once; this task tells the other servers (on PostgreSQL) what changed
//! here, says everything again every [`REFRESH`], forgets what another server stopped saying,
//! and tells the lobby how many are online when that changed. None of it is written.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::Engine;
use crate::live::{PresentWhileOpen, LOBBY_EVERY, REFRESH};

impl Engine {
    /// `player` has a stream of `room` ([`crate::live::LOBBY`]: the lobby's) open until the
    /// returned [`PresentWhileOpen`] is dropped.
    pub fn arrive(&self, room: &str, player: &str) -> PresentWhileOpen {
        self.presence.arrive(room, player)
    }

    /// The players with a stream of `room` open, on any server, sorted.
    pub fn online(&self, room: &str) -> Arc<Vec<String>> {
        Arc::new(self.presence.online(room))
    }

    /// How many players have a stream open, on any server.
    pub fn online_count(&self) -> usize {
        self.presence.count()
    }
}

/// Tells the other servers what changed here as it changes, and everything every [`REFRESH`];
/// and the lobby how many are online, every [`LOBBY_EVERY`] that it changed.
pub(super) async fn tell_others(engine: Engine, mut changed: mpsc::UnboundedReceiver<String>) {
    let mut refresh = tokio::time::interval(REFRESH);
    let mut lobby = tokio::time::interval(LOBBY_EVERY);
    loop {
        let rooms = tokio::select! {
            _ = lobby.tick() => {
                engine.presence.tell_lobby();
                continue;
            }
            room = changed.recv() => {
                let Some(room) = room else { return };
                // Everything that changed meanwhile goes in the same messages.
                let mut rooms = vec![room];
                while let Ok(room) = changed.try_recv() {
                    rooms.push(room);
                }
                rooms.sort();
                rooms.dedup();
                Some(rooms)
            }
            _ = refresh.tick() => {
                engine.presence.forget_stale();
                None
            }
        };
        let said = engine.presence.here(rooms.as_deref());
        if let Err(err) = engine.store.announce_presence(&said).await {
            // The next refresh says it again.
            tracing::warn!(error = %err, "could not tell the other servers who is here");
        }
    }
}
