//! The actions a player takes on an existing room, as values. Each checks its preconditions
//! against the room and runs its hooks on a working copy; the engine runs every one of them
//! through the same path (read, hooks, compare-and-set commit, retry).
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::sync::Arc;

use serde_json::{json, Value};

use super::bots::BotRoster;
use super::idle::IdleRules;
use super::transition::Transition;
use super::EngineError;
use crate::domain::records::{AuditAction, AuditEntry, EventKind, Moderator};
use crate::domain::time::Timestamp;
use crate::game::PlayerRef;
use crate::game::MAX_PLAYERS;

#[derive(Debug, Clone)]
pub enum Action {
    /// The player takes a seat: `onPlayerJoin`.
    Join(PlayerRef),
    /// The player leaves. In an unfinished game `onPlayerQuit` decides what that means (a
    /// forfeit, usually); from a finished room the player only moves to the inactive players.
    Quit(PlayerRef),
    /// The player sends a move, any JSON: `onPlayerMove`.
    /// The move is shared with the version it records, not copied into it.
    Move(PlayerRef, Arc<Value>),
    /// Play again in a finished room: the players become inactive, `onRoomStart` runs again,
    /// then the player and any seated bots join; the version keeps counting and the history is
    /// kept. The other people who were seated at the end are offered a rematch: their seats
    /// are held for them for [`IdleRules::rematch_hold`].
    Reset(PlayerRef),
    /// A player offered a rematch turns it down: their seat is no longer held.
    Decline(PlayerRef),
    /// `claimer` claims a game in play that had no version since `idle_since` (and has no
    /// clock) from `absent`, the player it waits on: `onPlayerQuit` runs for them.
    Claim {
        claimer: PlayerRef,
        absent: PlayerRef,
        idle_since: Timestamp,
    },
    /// A waiting room with no version since `before` is closed, its state as it was (the
    /// engine's own, from its sweeper).
    CloseIdle { before: Timestamp },
    /// An admin closes the room, its state as it was; the version's move holds the reason.
    /// `audited`: the close is an admin action of its own, kept in the audit log in the same
    /// commit (not when it follows from another, such as unpublishing the room's game).
    Close {
        by: Moderator,
        reason: String,
        audited: bool,
    },
    /// An admin renamed a seated player: the room shows them by their new name.
    Rename(PlayerRef),
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
            Action::Decline(_) => "decline",
            Action::Claim { .. } => "claim",
            Action::CloseIdle { .. } => "close_idle",
            Action::Close { .. } => "close",
            Action::Rename(_) => "rename",
            Action::Timeout => "timeout",
            Action::ClearFailedTimeout => "clear_failed_timeout",
            Action::TimeoutNow => "timeout_now",
        }
    }

    /// Checks the action against the room and applies its hooks to `step`. Pure but for the
    /// hooks themselves: it reads nothing else and writes nothing.
    pub fn apply(
        &self,
        step: &mut Transition,
        bots: &BotRoster,
        rules: &IdleRules,
    ) -> Result<(), EngineError> {
        match self {
            Action::Join(player) => join(step, player),
            Action::Quit(player) => quit(step, player),
            Action::Move(player, mv) => play(step, player, mv),
            Action::Reset(player) => reset(step, player, bots, rules),
            Action::Decline(player) => decline(step, player),
            Action::Claim {
                claimer,
                absent,
                idle_since,
            } => claim(step, claimer, absent, *idle_since, rules),
            Action::CloseIdle { before } => close_idle(step, *before),
            Action::Close {
                by,
                reason,
                audited,
            } => close(step, by, reason, *audited),
            Action::Rename(player) => rename(step, player),
            Action::TimeoutNow => {
                if step.room.finished || step.room.trigger_timeout_at.is_none() {
                    return Err(EngineError::NoDeadline);
                }
                step.run_timeout()
            }
            Action::Timeout => {
                deadline_passed(step)?;
                step.run_timeout()
            }
            Action::ClearFailedTimeout => {
                deadline_passed(step)?;
                step.clear_failed_timeout();
                Ok(())
            }
        }
    }
}

fn join(step: &mut Transition, player: &PlayerRef) -> Result<(), EngineError> {
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
    if let Some(rematch) = step.held_seats() {
        if !rematch.holds_for(&player.id) {
            let names: Vec<&str> = rematch.seats.iter().map(|p| p.username.as_str()).collect();
            return Err(EngineError::SeatHeld {
                players: names.join(", "),
                until: rematch.until,
            });
        }
    }
    let capacity = step.game().info().max_players.min(MAX_PLAYERS);
    if room.players.len() >= capacity {
        return Err(EngineError::RoomFull(capacity));
    }
    step.add_player(player);
    step.release_seat(&player.id);
    step.run_hook(EventKind::Join, player, None)
}

fn quit(step: &mut Transition, player: &PlayerRef) -> Result<(), EngineError> {
    step.require_player(&player.id)?;
    step.remove_player(&player.id);
    if (step.room.rematch.as_ref()).is_some_and(|r| r.by.id == player.id) {
        // Who asked for the rematch left: there is nothing to hold seats for.
        step.room.rematch = None;
    }
    if step.room.finished {
        step.record(EventKind::Quit, Some(player), None);
        Ok(())
    } else {
        step.run_hook(EventKind::Quit, player, None)
    }
}

fn play(step: &mut Transition, player: &PlayerRef, mv: &Arc<Value>) -> Result<(), EngineError> {
    step.require_player(&player.id)?;
    if step.room.finished {
        return Err(EngineError::RoomFinished);
    }
    step.run_hook(EventKind::Move, player, Some(mv))
}

fn reset(
    step: &mut Transition,
    player: &PlayerRef,
    bots: &BotRoster,
    rules: &IdleRules,
) -> Result<(), EngineError> {
    step.require_player(&player.id)?;
    if !step.room.finished {
        return Err(EngineError::RoomNotFinished);
    }
    let (seated_bots, people): (Vec<PlayerRef>, Vec<PlayerRef>) = (step.room.players.iter())
        .cloned()
        .partition(|p| bots.level_of(&p.id).is_some());
    let offered: Vec<PlayerRef> = people.into_iter().filter(|p| p.id != player.id).collect();
    step.restart();
    step.hold_seats(player, offered, rules.rematch_hold);
    step.run_hook(EventKind::Reset, player, None)?;
    for seat in std::iter::once(player).chain(&seated_bots) {
        step.add_player(seat);
        step.run_hook(EventKind::Join, seat, None)?;
    }
    Ok(())
}

fn decline(step: &mut Transition, player: &PlayerRef) -> Result<(), EngineError> {
    if !step.held_seats().is_some_and(|r| r.holds_for(&player.id)) {
        return Err(EngineError::NoRematchOffer);
    }
    step.release_seat(&player.id);
    step.record(EventKind::Declined, Some(player), None);
    Ok(())
}

fn claim(
    step: &mut Transition,
    claimer: &PlayerRef,
    absent: &PlayerRef,
    idle_since: Timestamp,
    rules: &IdleRules,
) -> Result<(), EngineError> {
    step.require_player(&claimer.id)?;
    let room = &step.room;
    if room.finished {
        return Err(EngineError::RoomFinished);
    }
    if room.clock.is_some() || room.trigger_timeout_at.is_some() {
        return Err(EngineError::CannotClaim(
            "the room has a clock, which decides what happens to a player who does not move",
        ));
    }
    if room.joinable {
        return Err(EngineError::CannotClaim(
            "the room is still waiting for players; a waiting room nobody joins is closed",
        ));
    }
    if absent.id == claimer.id {
        return Err(EngineError::CannotClaim(
            "the room is waiting for you: it is your move",
        ));
    }
    if room.updated_at > idle_since {
        let at = (rules.claimable_at(room)).unwrap_or(room.updated_at);
        return Err(EngineError::ClaimTooEarly { at });
    }
    step.require_player(&absent.id)?;
    step.remove_player(&absent.id);
    step.run_hook(EventKind::Abandoned, absent, None)
}

fn close_idle(step: &mut Transition, before: Timestamp) -> Result<(), EngineError> {
    let room = &step.room;
    let waiting = room.joinable && !room.finished;
    if !waiting || room.updated_at >= before {
        return Err(EngineError::VersionMismatch {
            current: room.version,
        });
    }
    step.room.finished = true;
    step.record(EventKind::Closed, None, None);
    Ok(())
}

fn close(
    step: &mut Transition,
    by: &Moderator,
    reason: &str,
    audited: bool,
) -> Result<(), EngineError> {
    if step.room.finished {
        return Err(EngineError::RoomFinished);
    }
    step.room.finished = true;
    let why = Arc::new(json!({ "reason": reason }));
    step.record(EventKind::Closed, None, Some(&why));
    if audited {
        let details = json!({"version": step.room.version, "game": step.room.game});
        let target = ("room", step.room.id.as_str());
        step.audit = Some(AuditEntry::new(
            Some(by),
            AuditAction::CloseRoom,
            target,
            reason,
            details,
        ));
    }
    Ok(())
}

fn rename(step: &mut Transition, player: &PlayerRef) -> Result<(), EngineError> {
    step.require_player(&player.id)?;
    for seat in Arc::make_mut(&mut step.room.players) {
        if seat.id == player.id {
            seat.username.clone_from(&player.username);
        }
    }
    step.record(EventKind::Renamed, Some(player), None);
    Ok(())
}

/// Refuses to fire a deadline that is not this version's (another server's clock ran ahead).
fn deadline_passed(step: &Transition) -> Result<(), EngineError> {
    match step.deadline_passed() {
        true => Ok(()),
        false => Err(EngineError::VersionMismatch {
            current: step.room.version,
        }),
    }
}
