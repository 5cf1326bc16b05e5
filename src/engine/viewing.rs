//! The one decision of what a viewer may see of a room: every route and stream asks here, and
//! builds what it sends from the views this returns ([`crate::views`]).
//!
//! A game without `onPlayerView` shows everyone everything, at no cost. A game with one shows
//! each viewer what the hook makes of the state for them: a player seated now or before sees
//! their own view, anyone else the view for `null`. The hook's answer is never stored; it is
//! kept in memory per room, version and viewer, so a version watched by many people costs one
//! call per distinct viewer (the players, and one for all watchers), not one per watcher. A
//! hook that fails answers the request with its fault, never with the unfiltered state.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::sync::OnceCell;

use super::hook_runner::run_hooks;
use super::transition::guarded;
use super::{Engine, EngineError};
use crate::cache::BoundedCache;
use crate::domain::records::{Room, RoomEvent};
use crate::game::{BoardGame, Game, Hook, HookError, PlayerRef, RoomStartContext};
use crate::live::Framer;
use crate::problem::Problem;
use crate::views::{version_frame, EventView, RoomHeader, RoomView};

/// Views kept in memory.
pub(super) const CACHED_VIEWS: usize = 4096;

/// Views by room, version and viewer (`""` for anyone not seated). Each entry is made once:
/// streams that ask for the same view at the same moment (every watcher of a version that
/// was just committed) wait for one call rather than each making their own. A fault of the
/// game's code is kept too, so a broken view hook runs once per version and viewer, not once
/// per listing (a sandbox that could not be had is not kept: it may pass).
pub(super) type ViewCache =
    BoundedCache<(String, i64, String), Arc<OnceCell<Result<Arc<Value>, HookError>>>>;

impl Engine {
    /// `room` as `viewer` (a player, or `None` for anyone else) may see it.
    pub async fn view_room<'a>(
        &self,
        room: &'a Room,
        viewer: Option<&PlayerRef>,
    ) -> Result<RoomView<'a>, EngineError> {
        let game = self.catalog.game_of(room).await?;
        let state = if game.capabilities().player_view {
            let board = room.board_game(crate::domain::time::Timestamp::now());
            let state = self.viewed(game, board, member(room, viewer)).await?;
            Cow::Owned(Value::clone(&state))
        } else {
            Cow::Borrowed(&*room.state)
        };
        Ok(self.dressed(RoomView::new(room, state), room))
    }

    /// `view` of `room` with what the engine knows beside its record: who has it open, and
    /// its idle times.
    fn dressed<'a>(&self, view: RoomView<'a>, room: &Room) -> RoomView<'a> {
        let online = (self.presence.online(&room.id).into_iter())
            .filter(|id| room.is_player(id))
            .collect();
        view.with_idle_times(self.idle.closes_at(room), self.idle.claimable_at(room))
            .with_online(online)
    }

    /// `room` as `viewer` may see it, for a listing of many rooms: a room whose view hook
    /// fails is shown without its state (and with the fault's code) rather than failing the
    /// whole listing, so one game's broken hook never takes the lobby down for everyone. The
    /// fault is in the game's log for its owner.
    pub async fn view_listed_room<'a>(
        &self,
        room: &'a Room,
        viewer: Option<&PlayerRef>,
    ) -> Result<RoomView<'a>, EngineError> {
        match self.view_room(room, viewer).await {
            Err(err) if err.is_game_fault() => {
                let view = RoomView::new(room, Cow::Owned(Value::Null));
                Ok(self.dressed(view, room).with_view_fault(err.code()))
            }
            other => other,
        }
    }

    /// `events` of `room` as `viewer` may see them, each at its own version. In a game with a
    /// view hook, another player's move is hidden until the room is finished (a game that
    /// wants moves seen keeps them in its state).
    pub async fn view_events<'a>(
        &self,
        room: &Room,
        events: &'a [RoomEvent],
        viewer: Option<&PlayerRef>,
    ) -> Result<Vec<EventView<'a>>, EngineError> {
        let game = self.catalog.game_of(room).await?;
        if !game.capabilities().player_view {
            return Ok(events.iter().map(EventView::whole).collect());
        }
        let viewer = member(room, viewer);
        let mut views = Vec::with_capacity(events.len());
        for event in events {
            let board = event_board(room, event);
            let state = self.viewed(game.clone(), board, viewer.clone()).await?;
            let own = event.player.as_ref().map(|p| &p.id) == viewer.as_ref().map(|v| &v.id);
            let mv = (room.finished || own)
                .then_some(event.mv.as_deref().map(Cow::Borrowed))
                .flatten();
            views.push(EventView::new(
                event,
                Cow::Owned(state.as_ref().clone()),
                mv,
            ));
        }
        Ok(views)
    }

    /// What the view hook makes of `board` for `viewer`, from memory when it was asked before.
    /// Boxed: only games with a view hook ask, and its future is large; unboxed, every view of
    /// every room would carry it.
    fn viewed(
        &self,
        game: Arc<dyn Game>,
        board: BoardGame,
        viewer: Option<PlayerRef>,
    ) -> BoxFuture<'_, Result<Arc<Value>, EngineError>> {
        Box::pin(self.make_view(game, board, viewer))
    }

    async fn make_view(
        &self,
        game: Arc<dyn Game>,
        board: BoardGame,
        viewer: Option<PlayerRef>,
    ) -> Result<Arc<Value>, EngineError> {
        let key = (
            board.room_id.to_string(),
            board.version,
            viewer
                .as_ref()
                .map_or_else(String::new, |v| v.id.to_string()),
        );
        self.views
            .insert_unless(key.clone(), Arc::default, |_| true);
        let cell = self.views.get(&key).unwrap_or_default();
        let view = cell
            .get_or_try_init(|| async {
                self.views_made.fetch_add(1, Ordering::Relaxed);
                let made = run_hooks(&self.sandbox, game, move |game| {
                    Ok(
                        guarded(|| game.on_player_view(viewer.as_ref(), &board)).map_err(|fault| {
                            let fault = view_fault(fault);
                            let error =
                                EngineError::from_hook_fault(Hook::PlayerView, fault.clone());
                            game.log_fault(Hook::PlayerView, &board, &error.to_string());
                            fault
                        }),
                    )
                })
                .await?;
                match made {
                    Err(HookError::Unavailable(why)) => Err(EngineError::SandboxUnavailable(why)),
                    made => Ok(made.map(Arc::new)),
                }
            })
            .await?;
        match view {
            Ok(view) => Ok(view.clone()),
            Err(fault) => Err(EngineError::from_hook_fault(
                Hook::PlayerView,
                fault.clone(),
            )),
        }
    }
}

/// Frames one room's versions for one stream's viewer.
struct ViewerFramer {
    engine: Engine,
    /// The room as the stream found it: who was seated, and what never changes.
    room: Room,
    viewer: Option<PlayerRef>,
    header: RoomHeader,
}

impl Framer for ViewerFramer {
    fn frame<'a>(&'a self, event: &'a RoomEvent) -> BoxFuture<'a, Option<Bytes>> {
        Box::pin(async move {
            // Whoever is seated at this version counts as a player too; a move is shown to
            // others once the room is finished at this version.
            let mut room = self.room.clone();
            room.inactive_players.extend(event.players.iter().cloned());
            room.finished = event.finished;
            let viewer = self.viewer.as_ref();
            match self
                .engine
                .view_events(&room, std::slice::from_ref(event), viewer)
                .await
            {
                Ok(views) => Some(version_frame(&self.header, &views[0])),
                Err(err) => {
                    tracing::warn!(room = %room.id, error = %err, "a version could not be viewed; closing the stream");
                    None
                }
            }
        })
    }
}

impl Engine {
    /// For a game with a view hook, what frames `room`'s versions for `viewer`; `None` when
    /// every watcher sees the same.
    pub(super) async fn framer(
        &self,
        room: &Room,
        viewer: Option<PlayerRef>,
    ) -> Result<Option<Arc<dyn Framer>>, EngineError> {
        if !self.catalog.game_of(room).await?.capabilities().player_view {
            return Ok(None);
        }
        Ok(Some(Arc::new(ViewerFramer {
            engine: self.clone(),
            room: room.clone(),
            viewer,
            header: RoomHeader::from(room),
        })))
    }
}

/// A view hook that fails, throws included (there is no action to refuse), is the game's
/// fault.
fn view_fault(fault: HookError) -> HookError {
    let fault = match fault {
        HookError::Refused(refusal) => HookError::Crashed(format!("threw: {refusal}")),
        other => other,
    };
    tracing::error!(hook = %Hook::PlayerView, error = %fault, "a game's view hook failed");
    fault
}

/// `viewer`, if they are or were seated in `room`; anyone else sees what a watcher does.
fn member(room: &Room, viewer: Option<&PlayerRef>) -> Option<PlayerRef> {
    viewer
        .filter(|v| {
            room.players
                .iter()
                .chain(&room.inactive_players)
                .any(|p| p.id == v.id)
        })
        .cloned()
}

/// The record as it was at `event`'s version.
fn event_board(room: &Room, event: &RoomEvent) -> BoardGame {
    BoardGame {
        room_id: room.id.clone(),
        players: event.players.clone(),
        version: event.version,
        joinable: event.joinable,
        finished: event.finished,
        state: event.state.clone(),
        trigger_timeout_at: event.trigger_timeout_at,
        room_start_context: RoomStartContext {
            private: room.private,
            clock: room.clock,
        },
        now: chrono::Utc::now(),
    }
}
