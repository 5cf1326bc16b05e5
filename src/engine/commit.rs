//! How a room changes: an action is applied to a working copy of the room and committed with a
//! compare-and-set on its version, re-read and re-run after a lost race; the commit, once
//! durable, is remembered, arms the room's deadline and is published to live subscribers. The
//! life of a move through here is told in `docs/internals.md`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rand::Rng;

use super::action::Action;
use super::hook_runner::run_hooks;
use super::transition::Transition;
use super::{Engine, EngineError, Precondition, MAX_ATTEMPTS};
use crate::domain::records::{LobbyChange, Room};
use crate::live::Shown;
use crate::store::{QuickPlayGuard, RoomCommit, StoreError};

impl Engine {
    /// Reads the room, applies `action` to a working copy, and commits it if the room is still
    /// at the version that was read; otherwise reads again. A pinned version (`if_match`) that
    /// is no longer current is answered at once instead. Actions of this process on one room
    /// take turns, so a race is only ever lost to another instance.
    pub(super) async fn update(
        &self,
        room_id: &str,
        if_match: Precondition,
        action: Action,
    ) -> Result<Arc<Room>, EngineError> {
        let _turn = self.locks.lock(room_id).await;
        let mut confirmed = false;
        for attempt in 0..MAX_ATTEMPTS {
            let coming = self.store.write_coming();
            let (mut room, current) = self.working_copy(room_id, confirmed).await?;
            if !if_match.admits(room.version) {
                // Only the database can say the pinned version is not current.
                room = self.stored_room(room_id).await?;
                if !if_match.admits(room.version) {
                    return Err(EngineError::VersionMismatch {
                        current: room.version,
                    });
                }
            }
            if matches!(action, Action::Reset(_)) {
                // Playing again is a new game: not of one an admin unpublished.
                self.catalog.require_published(&room.game).await?;
            }
            let game = self.catalog.game_of(&room).await?;
            let version = room.version;
            let (action, bots, rules) = (action.clone(), self.bots.clone(), self.idle);
            let step = match run_hooks(&self.sandbox, game, move |game| {
                // The change is made to a copy: the cache's room stays as it was until the
                // commit replaces it.
                let room = Arc::unwrap_or_clone(room);
                let mut step = Transition::new(game, room, Some(version));
                action.apply(&mut step, &bots, &rules)?;
                Ok(step)
            })
            .await
            {
                Ok(step) => step,
                // Refused by a copy that may be behind (another server may have made it this
                // player's turn): only the current room can refuse.
                Err(err) if !current && err.depends_on_the_room() => {
                    confirmed = true;
                    continue;
                }
                Err(err) => return Err(err),
            };
            drop(coming);
            match self.commit(step, None).await {
                Ok(room) => return Ok(room),
                Err(StoreError::Conflict) => {
                    tracing::debug!(
                        attempt,
                        room = room_id,
                        "lost a version race; reading again"
                    );
                    // A little jitter so the losers of one race do not all collide again.
                    let pause = rand::rng().random_range(0..=(attempt as u64 + 1) * 2);
                    tokio::time::sleep(Duration::from_millis(pause)).await;
                }
                Err(other) => return Err(other.into()),
            }
        }
        Err(EngineError::Contention)
    }

    /// The one way a room changes: the commit, durable once this returns, then its versions
    /// to live subscribers. Callers hold the room's turn, so versions are published in order.
    ///
    /// The step becomes a boxed commit before anything is awaited: the future then carries a
    /// pointer, not the step and the commit (about 800 bytes each) copied into every future
    /// that awaits it, as far up as the HTTP handler's.
    pub(super) fn commit(
        &self,
        step: Transition,
        quick_play: Option<QuickPlayGuard>,
    ) -> impl Future<Output = Result<Arc<Room>, StoreError>> + '_ {
        // A game with a view hook frames each version per viewer, in each stream.
        let shown = match step.game().capabilities().player_view {
            true => Shown::PerViewer,
            false => Shown::ToEveryone,
        };
        let mut commit = step.into_commit();
        commit.quick_play = quick_play;
        self.write_commit(commit, shown)
    }

    async fn write_commit(
        &self,
        commit: Box<RoomCommit>,
        shown: Shown,
    ) -> Result<Arc<Room>, StoreError> {
        let room_id = commit.room.id.clone();
        let epoch = self.rooms.epoch(&self.store);
        let (commit, written) = match self.store.commit(commit).await {
            Ok(done) => done,
            Err(err) => {
                // Whatever this process remembered of the room may be behind.
                self.rooms.forget(&room_id);
                return Err(err);
            }
        };
        let RoomCommit {
            room,
            mut events,
            rated_result,
            lobby_change,
            ..
        } = *commit;
        // One room from here on, shared by the cache, the caller's answer and the streams.
        let room = Arc::new(room);
        self.rooms.remember(epoch, &room);
        // The version that finished a rated game carries what it did to the ratings.
        if let Some(result) = &rated_result {
            if let Some(event) = events.iter_mut().find(|e| e.version == result.version) {
                event.rating_changes = written.rating_changes;
            }
        }
        if let Some(at) = room.trigger_timeout_at {
            self.alarm.armed(at);
        }
        self.hub.publish(&room, events, shown);
        if let Some(change) = lobby_change {
            self.tell_lobby(&room, change).await;
        }
        Ok(room)
    }

    /// Tells the lobby's streams that a public room was `created` or `updated`, showing what
    /// anyone may see of it. A room that cannot be viewed (its view hook failed) is left out.
    pub(super) async fn tell_lobby(&self, room: &Room, change: LobbyChange) {
        if room.private || !self.hub.lobby_watched() {
            return;
        }
        match self.view_room(room, None).await {
            Ok(view) => self.hub.publish_lobby(&room.game, change, &view),
            Err(err) => {
                tracing::warn!(room = %room.id, error = %err, "a room could not be shown to the lobby")
            }
        }
    }
}
