//! The engine: checks an action's preconditions, runs the game's hooks on a copy of the room,
//! and commits the result with a compare-and-set on the room's version, re-reading and
//! re-running on a race a bounded number of times. After every action, seated computer
//! opponents whose turn it is move through the same path, each move a version of its own.

mod action;
mod bots;
mod commit;
mod deadlines;
mod dev;
mod error;
mod hook_runner;
mod idle;
mod new_rooms;
mod other_servers;
mod precondition;
mod presence;
mod room_cache;
mod room_locks;
mod transition;
mod viewing;

#[cfg(test)]
mod tests;

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

pub use action::Action;
use bots::BotRoster;
use deadlines::Alarm;
pub use error::EngineError;
pub use idle::IdleRules;

pub use new_rooms::{BotSeat, Placement, RoomOptions};
pub use precondition::Precondition;
use room_cache::RoomCache;
use room_locks::RoomLocks;

use crate::catalog::Catalog;
use crate::domain::records::{Room, RoomEvent};
use crate::game::{Clock, PlayerRef};
use crate::live::{ChatFollow, Hub, LobbyFeed, PresenceBook, RoomFeed};
use crate::metrics::Exposition;
use crate::sandbox::SandboxPool;
use crate::store::{RoomQuery, Store};
use crate::views::{online_count_frame, RoomHeader};

/// Current rooms kept in memory (see [`RoomCache`] for when they are used and how fresh they
/// are).
const CACHED_ROOMS: usize = 4096;

/// How many times an action is re-read and re-run after losing a version race.
const MAX_ATTEMPTS: usize = 20;

#[derive(Clone)]
pub struct Engine {
    store: Store,
    catalog: Catalog,
    sandbox: SandboxPool,
    locks: RoomLocks,
    bots: Arc<BotRoster>,
    hub: Arc<Hub>,
    /// Who has a stream open, here and on the other servers.
    presence: Arc<PresenceBook>,
    rooms: Arc<RoomCache>,
    alarm: Arc<Alarm>,
    views: Arc<viewing::ViewCache>,
    /// View hook calls made (for `GET /metrics`).
    views_made: Arc<AtomicU64>,
    /// How long idle rooms and rematch offers are kept.
    idle: IdleRules,
}

impl Engine {
    /// Prepares the engine, making sure the bot accounts exist. `games` are the built-in
    /// games; uploaded ones run in `sandbox`. `bot_seed` salts every bot decision (see
    /// [`crate::config::Config::bot_seed`]); `idle` how long idle rooms are kept.
    pub async fn start(
        store: Store,
        catalog: Catalog,
        bot_seed: u64,
        idle: IdleRules,
    ) -> Result<Self, EngineError> {
        let bots = BotRoster::load(&store, bot_seed).await?;
        let hub: Arc<Hub> = Arc::default();
        let (presence, presence_changed) = PresenceBook::new(hub.clone());
        let engine = Self {
            store,
            sandbox: catalog.sandbox().clone(),
            catalog,
            locks: RoomLocks::default(),
            bots: Arc::new(bots),
            hub,
            presence,
            rooms: Arc::new(RoomCache::new(CACHED_ROOMS)),
            alarm: Arc::default(),
            views: Arc::new(viewing::ViewCache::new(viewing::CACHED_VIEWS)),
            views_made: Arc::default(),
            idle,
        };
        tokio::spawn(deadlines::run(engine.clone()));
        tokio::spawn(idle::close_idle_rooms(engine.clone()));
        tokio::spawn(presence::tell_others(engine.clone(), presence_changed));
        if let Some(changes) = engine.store.changes().await? {
            tokio::spawn(other_servers::follow(changes, engine.clone()));
        }
        Ok(engine)
    }

    pub async fn ping(&self) -> Result<(), EngineError> {
        Ok(self.store.ping().await?)
    }

    /// Why writes are failing at the moment, if they are.
    pub fn write_fault(&self) -> Option<crate::store::StorageFault> {
        self.store.write_fault()
    }

    /// The room as it is now: from memory when that is sure to be current (see [`RoomCache`]),
    /// else from the database.
    pub async fn room(&self, room_id: &str) -> Result<Arc<Room>, EngineError> {
        match self.rooms.current(&self.store, room_id) {
            Some(room) => Ok(room),
            None => self.stored_room(room_id).await,
        }
    }

    /// Writes `copies` rooms just like `template`, history and all, under fresh ids (for
    /// filling a database to measure; see [`crate::seed`]).
    pub async fn copy_room(&self, template: &str, copies: i64) -> Result<(), EngineError> {
        Ok(self.store.copy_room(template, copies).await?)
    }

    /// Figures for `GET /metrics`: the store's, and what this process holds in memory.
    pub fn render_metrics(&self, out: &mut Exposition) {
        self.store.render_metrics(out);
        out.single(
            "turnhouse_rooms_cached",
            "gauge",
            "Current rooms held in memory.",
            self.rooms.len(),
        );
        out.single(
            "turnhouse_view_hook_calls_total",
            "counter",
            "Calls of games' view hooks (onPlayerView); each room version, viewer pair once.",
            self.views_made.load(std::sync::atomic::Ordering::Relaxed),
        );
        self.bots.render_metrics(out);
        out.single(
            "turnhouse_rooms_watched",
            "gauge",
            "Rooms with at least one open stream.",
            self.hub.watched_rooms(),
        );
    }

    /// Where the streams hear what happens, for the slices that tell them (chat).
    pub fn hub(&self) -> Arc<Hub> {
        self.hub.clone()
    }

    pub async fn rooms(&self, query: &RoomQuery) -> Result<Vec<(i64, Room)>, EngineError> {
        Ok(self.store.rooms(query).await?)
    }

    /// A page of a room's history after version `after`, with the room; the page ends at the
    /// room's version.
    ///
    /// The history is read from storage, where a version is a moment before its commit is
    /// acknowledged (while its log is synced) and before this server's room shows it. Read
    /// after the room, the page leaves such a version out, so that no one finds a version in
    /// the history that the room, read next, does not show yet.
    pub async fn events(
        &self,
        room_id: &str,
        after: i64,
        limit: i64,
    ) -> Result<(Arc<Room>, Vec<RoomEvent>), EngineError> {
        let room = self.room(room_id).await?;
        let mut events = self.store.events(room_id, after, limit).await?;
        events.retain(|event| event.version <= room.version);
        Ok((room, events))
    }

    /// Every version of the room after `after`, then each new one as it is committed; by
    /// default (`None`) from the current version. Each as `viewer` may see it.
    /// `chat`, what the stream shows of the room's chat, if it has one.
    pub async fn room_feed(
        &self,
        room_id: &str,
        after: Option<i64>,
        viewer: Option<PlayerRef>,
        mut chat: Option<ChatFollow>,
    ) -> Result<RoomFeed, EngineError> {
        // Subscribe before reading, so a version (or message) committed in between is not
        // missed.
        let subscription = self.hub.subscribe(room_id);
        if let Some(chat) = &mut chat {
            chat.start().await?;
        }
        let room = self.room(room_id).await?;
        let after = match after {
            None => room.version - 1,
            Some(after) if after > room.version => {
                return Err(EngineError::VersionNotYetCommitted {
                    current: room.version,
                })
            }
            Some(after) => after,
        };
        let framer = self.framer(&room, viewer).await?;
        let players = room.players.iter().map(|p| p.id.to_string()).collect();
        Ok(RoomFeed::new(
            self.store.clone(),
            RoomHeader::from(&*room),
            subscription,
            after,
            framer,
            (players, self.online(room_id)),
            chat,
        ))
    }

    /// Changes to the public rooms of `game` (of every game with `None`) from now on, and
    /// the lobby's `chat`.
    pub async fn lobby_feed(
        &self,
        game: Option<String>,
        mut chat: ChatFollow,
    ) -> Result<LobbyFeed, EngineError> {
        if let Some(game) = &game {
            self.catalog.require_game(game).await?;
        }
        let online = online_count_frame(self.online_count());
        let changes = self.hub.subscribe_lobby();
        chat.start().await?;
        Ok(LobbyFeed::new(changes, game, online, chat))
    }

    /// Creates a room: `onRoomStart`, then the creator joins (and a bot, if asked for, before
    /// or after them): one version per hook, one commit.
    #[tracing::instrument(level = "debug", skip(self, creator), fields(player = %creator.id))]
    pub async fn create_room(
        &self,
        creator: &PlayerRef,
        game_id: &str,
        options: RoomOptions,
    ) -> Result<Arc<Room>, EngineError> {
        let room = self.insert_room(creator, game_id, options, None).await?;
        self.let_bots_play(room).await
    }

    /// Joins the oldest open public room of `game_id` with the same clock the caller is not
    /// already in, or creates one. Two callers at once end up in the same room: a room is only
    /// created if, at the moment of writing, there is still no open room to join.
    #[tracing::instrument(level = "debug", skip(self, player), fields(player = %player.id))]
    pub async fn quickplay(
        &self,
        player: &PlayerRef,
        game_id: &str,
        clock: Option<Clock>,
    ) -> Result<(Arc<Room>, Placement), EngineError> {
        self.quick_play(player, game_id, clock).await
    }

    /// The one door for every change to an existing room: applies `action` if the room is at a
    /// version `if_match` admits (re-reading and re-running after losing a race to another
    /// server), commits it, then lets seated bots take their turns. See `docs/internals.md`.
    #[tracing::instrument(level = "debug", skip(self, action), fields(action = action.name()))]
    pub async fn act(
        &self,
        room_id: &str,
        action: Action,
        if_match: Precondition,
    ) -> Result<Arc<Room>, EngineError> {
        let room = self.update(room_id, if_match, action).await?;
        self.let_bots_play(room).await
    }
}
