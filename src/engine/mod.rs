//! The engine: checks an action's preconditions, runs the game's hooks on a copy of the room,
//! and commits the result with a compare-and-set on the room's version, re-reading and
//! re-running on a race a bounded number of times. After every action, seated computer
//! opponents whose turn it is move through the same path, each move a version of its own.

mod accounts;
mod action;
mod bots;
mod bounded_cache;
mod catalog;
mod deadlines;
mod error;
mod follow;
mod hook_runner;
mod precondition;
mod room_cache;
mod room_locks;
mod transition;
mod viewing;
pub use viewing::VIEW_HOOK;

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use serde_json::Value;

use accounts::AccountCache;
pub use accounts::RegisterError;
use action::Action;
use bots::BotRoster;
pub use catalog::{
    Carry, FrontendUpload, GameUpload, Publication, MAX_FRONTEND_BYTES, MAX_SOURCE_BYTES,
};
use catalog::{HostedCache, CACHED_VERSIONS};
use deadlines::Alarm;
pub use error::{EngineError, ErrorKind};
use hook_runner::run_hooks;
pub use precondition::Precondition;
use room_cache::RoomCache;
use room_locks::RoomLocks;
use transition::Transition;

use crate::domain::ids::new_id;
use crate::game::{BotLevel, Clock, GameRegistry, PlayerRef};
use crate::live::{Hub, LobbyFeed, RoomFeed};
use crate::metrics::Exposition;
use crate::model::{now, EventKind, Room, RoomEvent};
use crate::sandbox::SandboxPool;
use crate::store::{RoomQuery, Store, StoreError};
use crate::views::RoomHeader;

/// No room holds more players than this, whatever its game says.
pub const MAX_PLAYERS: usize = 50;

/// Current rooms kept in memory (see [`RoomCache`] for when they are used and how fresh they
/// are).
const CACHED_ROOMS: usize = 4096;
/// Accounts kept in memory for checking tokens (an account never changes once created).
const CACHED_ACCOUNTS: usize = 65_536;

/// How many times an action is re-read and re-run after losing a version race.
const MAX_ATTEMPTS: usize = 20;

/// A computer opponent to seat in a new room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BotSeat {
    pub level: BotLevel,
    /// The bot takes the first seat (and so, in two-seat games, the first move).
    pub plays_first: bool,
}

/// What a new room should be.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoomOptions {
    pub private: bool,
    pub bot: Option<BotSeat>,
    /// How long the player to move has, for games that time their players.
    pub clock: Option<Clock>,
}

/// How quick play placed the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Joined,
    Created,
}

#[derive(Clone)]
pub struct Engine {
    store: Store,
    games: Arc<GameRegistry>,
    sandbox: SandboxPool,
    hosted: Arc<HostedCache>,
    locks: RoomLocks,
    bots: Arc<BotRoster>,
    hub: Arc<Hub>,
    rooms: Arc<RoomCache>,
    accounts: Arc<AccountCache>,
    alarm: Arc<Alarm>,
    views: Arc<viewing::ViewCache>,
    /// View hook calls made (for `GET /metrics`).
    views_made: Arc<AtomicU64>,
}

impl Engine {
    /// Prepares the engine, making sure the bot accounts exist. `games` are the built-in
    /// games; uploaded ones run in `sandbox`. `bot_seed` salts every bot decision (see
    /// [`crate::config::Config::bot_seed`]).
    pub async fn start(
        store: Store,
        games: GameRegistry,
        sandbox: SandboxPool,
        bot_seed: u64,
    ) -> Result<Self, EngineError> {
        let bots = BotRoster::load(&store, bot_seed).await?;
        let engine = Self {
            store,
            games: Arc::new(games),
            sandbox,
            hosted: Arc::new(HostedCache::new(CACHED_VERSIONS)),
            locks: RoomLocks::default(),
            bots: Arc::new(bots),
            hub: Arc::default(),
            rooms: Arc::new(RoomCache::new(CACHED_ROOMS)),
            accounts: Arc::new(AccountCache::new(CACHED_ACCOUNTS)),
            alarm: Arc::default(),
            views: Arc::new(viewing::ViewCache::new(viewing::CACHED_VIEWS)),
            views_made: Arc::default(),
        };
        tokio::spawn(deadlines::run(engine.clone()));
        if let Some(changes) = engine.store.changes().await? {
            tokio::spawn(follow::follow(changes, engine.clone()));
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
    pub async fn room(&self, room_id: &str) -> Result<Room, EngineError> {
        match self.rooms.current(&self.store, room_id) {
            Some(room) => Ok(room),
            None => self.stored_room(room_id).await,
        }
    }

    /// A copy of the room to compute a change from, and whether it is sure to be current: the
    /// room as this server last saw it unless `confirmed` is asked for (the compare-and-set
    /// checks the copy when the change is committed).
    async fn working_copy(
        &self,
        room_id: &str,
        confirmed: bool,
    ) -> Result<(Room, bool), EngineError> {
        if let Some(room) = self.rooms.current(&self.store, room_id) {
            return Ok((room, true));
        }
        if let Some(room) = self.rooms.last_seen(room_id).filter(|_| !confirmed) {
            return Ok((room, false));
        }
        Ok((self.stored_room(room_id).await?, true))
    }

    /// The room as the database has it, remembered for next time.
    async fn stored_room(&self, room_id: &str) -> Result<Room, EngineError> {
        let epoch = self.rooms.epoch(&self.store);
        let room = self
            .store
            .room(room_id)
            .await?
            .ok_or(EngineError::RoomNotFound)?;
        self.rooms.remember(epoch, &room);
        Ok(room)
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
            "turnhouse_accounts_cached",
            "gauge",
            "Accounts held in memory for checking tokens.",
            self.accounts.len(),
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

    pub async fn rooms(&self, query: &RoomQuery) -> Result<Vec<(i64, Room)>, EngineError> {
        Ok(self.store.rooms(query).await?)
    }

    /// A page of a room's history after version `after`, with the room.
    pub async fn events(
        &self,
        room_id: &str,
        after: i64,
        limit: i64,
    ) -> Result<(Room, Vec<RoomEvent>), EngineError> {
        let room = self.room(room_id).await?;
        Ok((room, self.store.events(room_id, after, limit).await?))
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
        Ok(RoomFeed::new(
            self.store.clone(),
            RoomHeader::from(&room),
            subscription,
            after,
            framer,
        ))
    }

    /// Changes to the public rooms of `game` (of every game with `None`) from now on.
    pub async fn lobby_feed(&self, game: Option<String>) -> Result<LobbyFeed, EngineError> {
        if let Some(game) = &game {
            self.require_game(game).await?;
        }
        Ok(LobbyFeed::new(self.hub.subscribe_lobby(), game))
    }

    /// The one way a room changes: the commit, durable once this returns, then its versions
    /// to live subscribers. Callers hold the room's turn, so versions are published in order.
    async fn commit(
        &self,
        step: Transition,
        only_if_no_open_room_for: Option<String>,
    ) -> Result<Room, StoreError> {
        let mut commit = step.into_commit();
        let room_id = commit.room.id.clone();
        commit.only_if_no_open_room_for = only_if_no_open_room_for;
        let epoch = self.rooms.epoch(&self.store);
        let commit = match self.store.commit(commit).await {
            Ok(commit) => commit,
            Err(err) => {
                // Whatever this process remembered of the room may be behind.
                self.rooms.forget(&room_id);
                return Err(err);
            }
        };
        self.rooms.remember(epoch, &commit.room);
        if let Some(at) = &commit.room.trigger_timeout_at {
            self.alarm.armed(at);
        }
        self.hub.publish(&commit.room, &commit.events);
        if let Some(change) = commit.lobby_change {
            self.tell_lobby(&commit.room, change).await;
        }
        Ok(commit.room)
    }

    /// Tells the lobby's streams that a public room was `created` or `updated`, showing what
    /// anyone may see of it. A room that cannot be viewed (its view hook failed) is left out.
    async fn tell_lobby(&self, room: &Room, change: &str) {
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

    /// Creates a room: `onRoomStart`, then the creator joins (and a bot, if asked for, before
    /// or after them): one version per hook, one commit.
    #[tracing::instrument(level = "debug", skip(self, creator), fields(player = %creator.id))]
    pub async fn create_room(
        &self,
        creator: &PlayerRef,
        game_id: &str,
        options: RoomOptions,
    ) -> Result<Room, EngineError> {
        let room = self.insert_room(creator, game_id, options, false).await?;
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
    ) -> Result<(Room, Placement), EngineError> {
        self.require_game(game_id).await?;
        let options = RoomOptions {
            clock,
            ..RoomOptions::default()
        };
        for _ in 0..MAX_ATTEMPTS {
            match self
                .store
                .oldest_open_room(game_id, &player.id, clock)
                .await?
            {
                Some(room_id) => match self.join(&room_id, player, Precondition::Any).await {
                    Ok(room) => return Ok((room, Placement::Joined)),
                    // Filled or closed since it was found: look again.
                    Err(
                        EngineError::RoomNotJoinable
                        | EngineError::RoomFinished
                        | EngineError::RoomFull(_)
                        | EngineError::AlreadyAPlayer,
                    ) => continue,
                    Err(other) => return Err(other),
                },
                None => match self.insert_room(player, game_id, options, true).await {
                    Ok(room) => return Ok((room, Placement::Created)),
                    // Someone opened a room meanwhile: join it instead.
                    Err(EngineError::Store(StoreError::Conflict)) => continue,
                    Err(other) => return Err(other),
                },
            }
        }
        Err(EngineError::Contention)
    }

    async fn insert_room(
        &self,
        creator: &PlayerRef,
        game_id: &str,
        options: RoomOptions,
        only_if_none_open: bool,
    ) -> Result<Room, EngineError> {
        let (game, game_version) = self.game_for_new_room(game_id).await?;
        if options.clock.is_some() && !game.handles_timeouts() {
            return Err(EngineError::ClockUnsupported(game_id.to_owned()));
        }
        let mut seats = vec![creator.clone()];
        if let Some(seat) = options.bot {
            if !game.info().bots {
                return Err(EngineError::BotsUnsupported(game_id.to_owned()));
            }
            let bot = self.bots.account(seat.level).clone();
            if seat.plays_first {
                seats.insert(0, bot);
            } else {
                seats.push(bot);
            }
        }
        let room_id = new_id();
        // Nobody else can know the id yet, but its first versions must be published before
        // anything done to the room once it is found.
        let _turn = self.locks.lock(&room_id).await;
        let room = Room {
            clock: options.clock,
            ..Room::blank(
                room_id.clone(),
                game_id.to_owned(),
                game_version,
                options.private,
                now(),
            )
        };
        let starter = creator.clone();
        let step = run_hooks(game, move |game| {
            let mut step = Transition::new(game, room, None);
            step.run_hook(EventKind::RoomStart, &starter, None)?;
            for player in &seats {
                step.add_player(player);
                step.run_hook(EventKind::Join, player, None)?;
            }
            Ok(step)
        })
        .await?;
        let only_if_none_open_for = only_if_none_open.then(|| creator.id.clone());
        Ok(self.commit(step, only_if_none_open_for).await?)
    }

    #[tracing::instrument(level = "debug", skip(self, player), fields(player = %player.id))]
    pub async fn join(
        &self,
        room_id: &str,
        player: &PlayerRef,
        if_match: Precondition,
    ) -> Result<Room, EngineError> {
        self.act(room_id, Action::Join(player.clone()), if_match)
            .await
    }

    /// A player leaves. In an unfinished game `onPlayerQuit` decides what that means (a forfeit,
    /// usually); from a finished room the player only moves to the inactive players.
    #[tracing::instrument(level = "debug", skip(self, player), fields(player = %player.id))]
    pub async fn quit(
        &self,
        room_id: &str,
        player: &PlayerRef,
        if_match: Precondition,
    ) -> Result<Room, EngineError> {
        self.act(room_id, Action::Quit(player.clone()), if_match)
            .await
    }

    /// A move by a current player of an unfinished room; seated bots answer before this returns.
    #[tracing::instrument(level = "debug", skip(self, player, mv), fields(player = %player.id))]
    pub async fn play(
        &self,
        room_id: &str,
        player: &PlayerRef,
        mv: &Value,
        if_match: Precondition,
    ) -> Result<Room, EngineError> {
        self.act(room_id, Action::Move(player.clone(), mv.clone()), if_match)
            .await
    }

    /// Play again: a player of a finished room starts a fresh game in it. The players become
    /// inactive, `onRoomStart` runs again, the caller joins, then any bots that were seated;
    /// the version keeps counting and the history is kept.
    #[tracing::instrument(level = "debug", skip(self, player), fields(player = %player.id))]
    pub async fn reset(
        &self,
        room_id: &str,
        player: &PlayerRef,
        if_match: Precondition,
    ) -> Result<Room, EngineError> {
        self.act(room_id, Action::Reset(player.clone()), if_match)
            .await
    }

    /// Applies a player's action, then lets seated bots take their turns.
    async fn act(
        &self,
        room_id: &str,
        action: Action,
        if_match: Precondition,
    ) -> Result<Room, EngineError> {
        let room = self.update(room_id, if_match, action).await?;
        self.let_bots_play(room).await
    }

    /// Reads the room, applies `action` to a working copy, and commits it if the room is still
    /// at the version that was read; otherwise reads again. A pinned version (`if_match`) that
    /// is no longer current is answered at once instead. Actions of this process on one room
    /// take turns, so a race is only ever lost to another instance.
    async fn update(
        &self,
        room_id: &str,
        if_match: Precondition,
        action: Action,
    ) -> Result<Room, EngineError> {
        let _turn = self.locks.lock(room_id).await;
        let mut confirmed = false;
        for attempt in 0..MAX_ATTEMPTS {
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
            let game = self.game_of(&room).await?;
            let version = room.version;
            let (action, bots) = (action.clone(), self.bots.clone());
            let step = match run_hooks(game, move |game| {
                let mut step = Transition::new(game, room, Some(version));
                action.apply(&mut step, &bots)?;
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
}
