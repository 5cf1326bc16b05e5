//! The actions a player takes on an existing room, as values. Each checks its preconditions
//! against the room and runs its hooks on a working copy; the engine runs every one of them
//! through the same path (read, hooks, compare-and-set commit, retry).
//!
//! One stop in the life of a move: `docs/internals.md`.

use serde_json::Value;

use super::bots::BotRoster;
use super::transition::Transition;
use super::{EngineError, MAX_PLAYERS};
use crate::game::PlayerRef;
use crate::model::EventKind;

#[derive(Debug, Clone)]
pub enum Action {
    /// The player takes a seat: `onPlayerJoin`.
    Join(PlayerRef),
    /// The player leaves. In an unfinished game `onPlayerQuit` decides what that means (a
    /// forfeit, usually); from a finished room the player only moves to the inactive players.
    Quit(PlayerRef),
    /// The player sends a move, any JSON: `onPlayerMove`.
    Move(PlayerRef, Value),
    /// Play again in a finished room: the players become inactive, `onRoomStart` runs again,
    /// then the player and any seated bots join; the version keeps counting and the history is
    /// kept.
    Reset(PlayerRef),
    /// The room's deadline has passed: `onTimeout`. (This and the next are the engine's own,
    /// from its deadline task.)
    Timeout,
    /// The room's deadline passed and `onTimeout` failed: the deadline is cleared.
    ClearFailedTimeout,
    /// The room's deadline, fired before its time by the author (`turnhouse dev`): `onTimeout`.
    TimeoutNow,
}

impl Action {
    /// What the action is called, for logs.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Join(_) => "join",
            Action::Quit(_) => "quit",
            Action::Move(..) => "move",
            Action::Reset(_) => "reset",
            Action::Timeout => "timeout",
            Action::ClearFailedTimeout => "clear_failed_timeout",
            Action::TimeoutNow => "timeout_now",
        }
    }

    /// Checks the action against the room and applies its hooks to `step`. Pure but for the
    /// hooks themselves: it reads nothing else and writes nothing.
    pub fn apply(&self, step: &mut Transition, bots: &BotRoster) -> Result<(), EngineError> {
        match self {
            Action::Join(player) => {
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
                let capacity = step.game().info().max_players.min(MAX_PLAYERS);
                if room.players.len() >= capacity {
                    return Err(EngineError::RoomFull(capacity));
                }
                step.add_player(player);
                step.run_hook(EventKind::Join, player, None)
            }
            Action::Quit(player) => {
                step.require_player(&player.id)?;
                step.remove_player(&player.id);
                if step.room.finished {
                    step.record(EventKind::Quit, Some(player), None);
                    Ok(())
                } else {
                    step.run_hook(EventKind::Quit, player, None)
                }
            }
            Action::Move(player, mv) => {
                step.require_player(&player.id)?;
                if step.room.finished {
                    return Err(EngineError::RoomFinished);
                }
                step.run_hook(EventKind::Move, player, Some(mv))
            }
            Action::Reset(player) => {
                step.require_player(&player.id)?;
                if !step.room.finished {
                    return Err(EngineError::RoomNotFinished);
                }
                let seated_bots: Vec<PlayerRef> = step
                    .room
                    .players
                    .iter()
                    .filter(|p| bots.level_of(&p.id).is_some())
                    .cloned()
                    .collect();
                step.restart();
                step.run_hook(EventKind::Reset, player, None)?;
                for seat in std::iter::once(player).chain(&seated_bots) {
                    step.add_player(seat);
                    step.run_hook(EventKind::Join, seat, None)?;
                }
                Ok(())
            }
            Action::TimeoutNow => {
                if step.room.finished || step.room.trigger_timeout_at.is_none() {
                    return Err(EngineError::NoDeadline);
                }
                step.run_timeout()
            }
            Action::Timeout | Action::ClearFailedTimeout => {
                // Not this version's deadline to fire (another server's clock ran ahead).
                if !step.deadline_passed() {
                    return Err(EngineError::VersionMismatch {
                        current: step.room.version,
                    });
                }
                match self {
                    Action::Timeout => step.run_timeout(),
                    _ => {
                        step.clear_failed_timeout();
                        Ok(())
                    }
                }
            }
        }
    }
}
