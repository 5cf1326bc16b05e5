//! The engine: checks an action's preconditions, runs the game's hooks on a copy of the room,
//! and commits the result with a compare-and-set on the room's version, re-reading and
//! re-running on a race a bounded number of times.

mod accounts;
mod error;
mod room_locks;
mod transition;

use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use serde_json::Value;

pub use accounts::RegisterError;
pub use error::EngineError;
use room_locks::RoomLocks;
use transition::Transition;

use crate::domain::ids::new_id;
use crate::game::{Game, GameInfo, GameRegistry, PlayerRef};
use crate::model::{now, EventKind, Room, RoomEvent};
use crate::store::{RoomQuery, Store, StoreError};

/// No room holds more players than this, whatever its game says.
pub const MAX_PLAYERS: usize = 50;

/// How many times an action is re-read and re-run after losing a version race.
const MAX_ATTEMPTS: usize = 20;

#[derive(Clone)]
pub struct Engine {
    store: Store,
    games: Arc<GameRegistry>,
    locks: RoomLocks,
}

impl Engine {
    pub fn new(store: Store, games: GameRegistry) -> Self {
        Self {
            store,
            games: Arc::new(games),
            locks: RoomLocks::default(),
        }
    }

    pub fn games(&self) -> Vec<GameInfo> {
        self.games.list()
    }

    pub async fn ping(&self) -> Result<(), EngineError> {
        Ok(self.store.ping().await?)
    }

    pub async fn room(&self, room_id: &str) -> Result<Room, EngineError> {
        self.store
            .room(room_id)
            .await?
            .ok_or(EngineError::RoomNotFound)
    }

    pub async fn rooms(&self, query: &RoomQuery) -> Result<Vec<(i64, Room)>, EngineError> {
        Ok(self.store.rooms(query).await?)
    }

    /// A page of a room's history after version `after`.
    pub async fn events(
        &self,
        room_id: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<RoomEvent>, EngineError> {
        self.room(room_id).await?;
        Ok(self.store.events(room_id, after, limit).await?)
    }

    /// Creates a room: `onRoomStart`, then the creator joins; two versions, one commit.
    #[tracing::instrument(level = "debug", skip(self, creator), fields(player = %creator.id))]
    pub async fn create_room(
        &self,
        creator: &PlayerRef,
        game_id: &str,
        private: bool,
    ) -> Result<Room, EngineError> {
        let game = self
            .games
            .get(game_id)
            .ok_or_else(|| EngineError::GameNotFound(game_id.to_owned()))?;
        let room = Room::blank(new_id(), game_id.to_owned(), private, now());
        let mut step = Transition::new(game.as_ref(), room, None);
        step.run_hook(EventKind::RoomStart, creator, None)?;
        step.add_player(creator);
        step.run_hook(EventKind::Join, creator, None)?;
        self.store.commit(step.as_commit()).await?;
        Ok(step.room)
    }

    #[tracing::instrument(level = "debug", skip(self, player), fields(player = %player.id))]
    pub async fn join(
        &self,
        room_id: &str,
        player: &PlayerRef,
        if_match: Option<i64>,
    ) -> Result<Room, EngineError> {
        self.update(room_id, if_match, |step, game| {
            let room = &step.room;
            if room.is_player(&player.id) {
                return Err(EngineError::AlreadyAPlayer);
            }
            if room.finished {
                return Err(EngineError::RoomFinished);
            }
            if !room.joinable {
                return Err(EngineError::RoomNotJoinable);
            }
            let capacity = game.info().max_players.min(MAX_PLAYERS);
            if room.players.len() >= capacity {
                return Err(EngineError::RoomFull(capacity));
            }
            step.add_player(player);
            step.run_hook(EventKind::Join, player, None)
        })
        .await
    }

    /// A player leaves. In an unfinished game `onPlayerQuit` decides what that means (a forfeit,
    /// usually); from a finished room the player only moves to the inactive players.
    #[tracing::instrument(level = "debug", skip(self, player), fields(player = %player.id))]
    pub async fn quit(
        &self,
        room_id: &str,
        player: &PlayerRef,
        if_match: Option<i64>,
    ) -> Result<Room, EngineError> {
        self.update(room_id, if_match, |step, _| {
            if !step.room.is_player(&player.id) {
                return Err(EngineError::NotAPlayer);
            }
            step.remove_player(&player.id);
            if step.room.finished {
                step.record(EventKind::Quit, player, None);
                Ok(())
            } else {
                step.run_hook(EventKind::Quit, player, None)
            }
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip(self, player, mv), fields(player = %player.id))]
    pub async fn play(
        &self,
        room_id: &str,
        player: &PlayerRef,
        mv: &Value,
        if_match: Option<i64>,
    ) -> Result<Room, EngineError> {
        self.update(room_id, if_match, |step, _| {
            if !step.room.is_player(&player.id) {
                return Err(EngineError::NotAPlayer);
            }
            if step.room.finished {
                return Err(EngineError::RoomFinished);
            }
            step.run_hook(EventKind::Move, player, Some(mv))
        })
        .await
    }

    /// Reads the room, lets `apply` change a working copy, and commits it if the room is still
    /// at the version that was read; otherwise reads again. A pinned version (`if_match`) that
    /// is no longer current is answered at once instead. Actions of this process on one room
    /// take turns, so a race is only ever lost to another instance.
    async fn update<F>(
        &self,
        room_id: &str,
        if_match: Option<i64>,
        mut apply: F,
    ) -> Result<Room, EngineError>
    where
        F: FnMut(&mut Transition<'_>, &dyn Game) -> Result<(), EngineError>,
    {
        let _turn = self.locks.lock(room_id).await;
        for attempt in 0..MAX_ATTEMPTS {
            let room = self.room(room_id).await?;
            if let Some(pinned) = if_match {
                if pinned != room.version {
                    return Err(EngineError::VersionMismatch {
                        current: room.version,
                    });
                }
            }
            let game = self
                .games
                .get(&room.game)
                .ok_or_else(|| EngineError::GameUnavailable(room.game.clone()))?;
            let version = room.version;
            let mut step = Transition::new(game.as_ref(), room, Some(version));
            apply(&mut step, game.as_ref())?;
            match self.store.commit(step.as_commit()).await {
                Ok(()) => return Ok(step.room),
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
}
