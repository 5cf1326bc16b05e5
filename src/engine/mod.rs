//! The engine: checks an action's preconditions, runs the game's hooks on a copy of the room,
//! and commits the result with a compare-and-set on the room's version, re-reading and
//! re-running on a race a bounded number of times. After every action, seated computer
//! opponents whose turn it is move through the same path, each move a version of its own.

mod accounts;
mod action;
mod bots;
mod bounded_cache;
mod cache_trust;
mod catalog;
mod commit;
mod deadlines;
mod dev;
mod error;
mod game_logs;
mod hook_runner;
mod idle;
mod moderation;
mod new_rooms;
mod other_servers;
mod passwords;
mod precondition;
mod presence;
mod room_cache;
mod room_locks;
mod sessions;
mod standing;
mod transition;
mod viewing;

#[cfg(test)]
mod tests;

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use tokio::sync::watch;

pub use accounts::RegisterError;
pub use action::Action;
use bots::BotRoster;
pub use catalog::{
    FieldUpdate, FrontendUpload, GameUpload, Publication, MAX_DESCRIPTION_CHARS,
    MAX_FRONTEND_BYTES, MAX_NAME_CHARS, MAX_SOURCE_BYTES,
};
use catalog::{HostedCache, CACHED_VERSIONS};
use deadlines::Alarm;
pub use error::{EngineError, ErrorKind};
pub use idle::IdleRules;
pub use moderation::{RoomsReached, Suspension, UnpublishedRooms};
pub use new_rooms::{BotSeat, Placement, RoomOptions};
pub use precondition::Precondition;
use room_cache::RoomCache;
use room_locks::RoomLocks;
use sessions::{EndedSessions, SessionCache};
pub use sessions::{SignedIn, CODE_LIFETIME};
pub use standing::Profile;

use crate::game::{Clock, GameRegistry, PlayerRef};
use crate::live::{Hub, LobbyFeed, PresenceBook, RoomFeed};
use crate::metrics::Exposition;
use crate::model::{Room, RoomEvent};
use crate::sandbox::{GameLogSink, SandboxPool};
use crate::store::{RoomQuery, Store};
use crate::views::{online_count_frame, RoomHeader};

/// No room holds more players than this, whatever its game says.
pub const MAX_PLAYERS: usize = 50;

/// Current rooms kept in memory (see [`RoomCache`] for when they are used and how fresh they
/// are).
const CACHED_ROOMS: usize = 4096;
/// Sessions kept in memory for checking tokens.
const CACHED_SESSIONS: usize = 65_536;

/// How many times an action is re-read and re-run after losing a version race.
const MAX_ATTEMPTS: usize = 20;

#[derive(Clone)]
pub struct Engine {
    store: Store,
    games: Arc<GameRegistry>,
    sandbox: SandboxPool,
    hosted: Arc<HostedCache>,
    locks: RoomLocks,
    bots: Arc<BotRoster>,
    hub: Arc<Hub>,
    /// Who has a stream open, here and on the other servers.
    presence: Arc<PresenceBook>,
    rooms: Arc<RoomCache>,
    sessions: Arc<SessionCache>,
    /// Turns at hashing passwords.
    hashing: Arc<passwords::Hashing>,
    /// Sessions ended lately, for the streams they hold open.
    ended: Arc<EndedSessions>,
    alarm: Arc<Alarm>,
    views: Arc<viewing::ViewCache>,
    /// View hook calls made (for `GET /metrics`).
    views_made: Arc<AtomicU64>,
    /// Where uploaded games' log lines go, for their owners.
    logs: GameLogSink,
    /// Moves on whenever log lines have been stored.
    log_stored: Arc<watch::Sender<u64>>,
    /// How long idle rooms and rematch offers are kept.
    idle: IdleRules,
    /// When this server last wrote that each player was seen.
    seen: Arc<idle::SeenMarks>,
}

impl Engine {
    /// Prepares the engine, making sure the bot accounts exist. `games` are the built-in
    /// games; uploaded ones run in `sandbox`. `bot_seed` salts every bot decision (see
    /// [`crate::config::Config::bot_seed`]); `idle` how long idle rooms are kept.
    pub async fn start(
        store: Store,
        games: GameRegistry,
        sandbox: SandboxPool,
        bot_seed: u64,
        idle: IdleRules,
    ) -> Result<Self, EngineError> {
        let bots = BotRoster::load(&store, bot_seed).await?;
        let (logs, lines) = GameLogSink::new();
        let log_stored = Arc::new(watch::Sender::new(0));
        tokio::spawn(game_logs::keep(store.clone(), lines, (*log_stored).clone()));
        let hub: Arc<Hub> = Arc::default();
        let (presence, presence_changed) = PresenceBook::new(hub.clone());
        let engine = Self {
            store,
            games: Arc::new(games),
            sandbox,
            hosted: Arc::new(HostedCache::new(CACHED_VERSIONS)),
            locks: RoomLocks::default(),
            bots: Arc::new(bots),
            hub,
            presence,
            rooms: Arc::new(RoomCache::new(CACHED_ROOMS)),
            sessions: Arc::new(SessionCache::new(CACHED_SESSIONS)),
            hashing: Arc::default(),
            ended: Arc::default(),
            alarm: Arc::default(),
            views: Arc::new(viewing::ViewCache::new(viewing::CACHED_VIEWS)),
            views_made: Arc::default(),
            logs,
            log_stored,
            idle,
            seen: Arc::new(idle::SeenMarks::new(CACHED_SESSIONS)),
        };
        tokio::spawn(deadlines::run(engine.clone()));
        tokio::spawn(idle::close_idle_rooms(engine.clone()));
        tokio::spawn(sessions::follow_ended_sessions(engine.clone()));
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
            "turnhouse_sessions_cached",
            "gauge",
            "Sessions held in memory for checking tokens.",
            self.sessions.len(),
        );
        out.single(
            "turnhouse_view_hook_calls_total",
            "counter",
            "Calls of games' view hooks (onPlayerView); each room version, viewer pair once.",
            self.views_made.load(std::sync::atomic::Ordering::Relaxed),
        );
        out.single(
            "turnhouse_game_log_lines_dropped_total",
            "counter",
            "Lines of games' logs dropped because the queue to store them was full.",
            self.logs.dropped(),
        );
        out.single(
            "turnhouse_password_hashes_total",
            "counter",
            "Argon2 hashes made or checked: one per password set or sign-in with a password, known name or not.",
            self.hashing.done.load(std::sync::atomic::Ordering::Relaxed),
        );
        self.bots.render_metrics(out);
        out.single(
            "turnhouse_rooms_watched",
            "gauge",
            "Rooms with at least one open stream.",
            self.hub.watched_rooms(),
        );
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
    pub async fn room_feed(
        &self,
        room_id: &str,
        after: Option<i64>,
        viewer: Option<PlayerRef>,
    ) -> Result<RoomFeed, EngineError> {
        // Subscribe before reading, so a version committed in between is not missed.
        let subscription = self.hub.subscribe(room_id);
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
        let players = room.players.iter().map(|p| p.id.clone()).collect();
        Ok(RoomFeed::new(
            self.store.clone(),
            RoomHeader::from(&*room),
            subscription,
            after,
            framer,
            (players, self.online(room_id)),
        ))
    }

    /// Changes to the public rooms of `game` (of every game with `None`) from now on.
    pub async fn lobby_feed(&self, game: Option<String>) -> Result<LobbyFeed, EngineError> {
        if let Some(game) = &game {
            self.require_game(game).await?;
        }
        let online = online_count_frame(self.online_count());
        Ok(LobbyFeed::new(self.hub.subscribe_lobby(), game, online))
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
