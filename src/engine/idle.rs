//! Rooms nobody will play: who is still here, waiting rooms nobody joined, games a player
//! stopped playing, and the seats "Play again" holds for a while.
//!
//! - **Seen.** Every request with a player's token, and every stream they hold open, marks
//!   them seen ([`crate::accounts::Accounts::seen`]).
//! - **Quick play** joins only a room someone is still in: one that changed, or has a player
//!   seen, within the window (the store's [`QuickPlayGuard`](crate::store::QuickPlayGuard)).
//! - **Idle waiting rooms** (joinable, unfinished, no version for
//!   [`IdleRules::waiting_room_idle`]) are closed by every server's sweeper, each close an
//!   action pinned to the version read, so exactly one `closed` version is written whichever
//!   server gets there first, and a join that comes first keeps the room open.
//! - **Claims.** A room in play with no clock and no version for [`IdleRules::claim_after`]
//!   lets a player who is not the one the room waits on claim the game: `onPlayerQuit` runs for
//!   the player the room waits on, as an `abandoned` version.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::sync::Arc;
use std::time::Duration;

use super::action::Action;
use super::{Engine, EngineError, Precondition, MAX_ATTEMPTS};
use crate::domain::records::Room;
use crate::domain::time::Timestamp;
use crate::game::PlayerRef;

/// How long each rule waits; every one is a server setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleRules {
    /// Quick play joins only rooms with someone seen within this.
    pub seen_within: Duration,
    /// A waiting room with no version for this long is closed.
    pub waiting_room_idle: Duration,
    /// A room in play with no clock and no version for this long can be claimed.
    pub claim_after: Duration,
    /// How long "Play again" holds the seats for the other players.
    pub rematch_hold: Duration,
}

impl Default for IdleRules {
    fn default() -> Self {
        Self {
            seen_within: Duration::from_secs(120),
            waiting_room_idle: Duration::from_secs(30 * 60),
            claim_after: Duration::from_secs(24 * 60 * 60),
            rematch_hold: Duration::from_secs(60),
        }
    }
}

impl IdleRules {
    /// How often a player's "seen" is written, and how often an open stream marks it.
    pub fn seen_every(&self) -> Duration {
        self.seen_within / 4
    }

    /// `span` before now.
    fn ago(span: Duration) -> Timestamp {
        Timestamp::now().before(span)
    }

    /// When `room`, waiting for players, is closed if nothing happens before.
    pub fn closes_at(&self, room: &Room) -> Option<Timestamp> {
        (room.joinable && !room.finished).then(|| room.updated_at.after(self.waiting_room_idle))
    }

    /// When `room`, in play, can be claimed if nothing happens before: never for a room with
    /// a clock (its deadline decides) or with fewer than two players.
    pub fn claimable_at(&self, room: &Room) -> Option<Timestamp> {
        let in_play = !room.joinable && !room.finished && room.players.len() >= 2;
        let untimed = room.clock.is_none() && room.trigger_timeout_at.is_none();
        (in_play && untimed).then(|| room.updated_at.after(self.claim_after))
    }
}

/// Rooms one look of the sweeper closes at most, before it looks again.
const CLOSE_BATCH: i64 = 64;

impl Engine {
    /// The rules this engine keeps rooms by.
    pub fn idle_rules(&self) -> &IdleRules {
        &self.idle
    }

    /// Quick play's cut-off: rooms with nobody seen since then are not joined.
    pub(super) fn seen_since(&self) -> Timestamp {
        IdleRules::ago(self.idle.seen_within)
    }

    /// `claimer` claims room `room_id` from the player it waits on (see the module's notes).
    pub async fn claim(
        &self,
        room_id: &str,
        claimer: &PlayerRef,
    ) -> Result<Arc<Room>, EngineError> {
        for _ in 0..MAX_ATTEMPTS {
            match self.claim_at_current_version(room_id, claimer).await {
                // The room moved on while the claim was being worked out: a move settles it
                // (the claim is then too early), a quit may too; look again.
                Err(EngineError::VersionMismatch { .. }) => continue,
                outcome => return outcome,
            }
        }
        Err(EngineError::Contention)
    }

    async fn claim_at_current_version(
        &self,
        room_id: &str,
        claimer: &PlayerRef,
    ) -> Result<Arc<Room>, EngineError> {
        let room = self.stored_room(room_id).await?;
        if !room.is_player(&claimer.id) {
            return Err(EngineError::NotAPlayer);
        }
        let last = self.store.last_actions(room_id).await?;
        let last_action = |player: &PlayerRef| {
            last.iter()
                .find(|(id, _)| *id == player.id)
                .map_or(0, |(_, version)| *version)
        };
        // The room waits on whoever of its people acted least recently: in a game of turns,
        // the one whose turn it is. Bots never keep a room waiting.
        let absent = room
            .players
            .iter()
            .filter(|p| self.bots.level_of(&p.id).is_none())
            .min_by_key(|p| last_action(p))
            .cloned()
            .ok_or(EngineError::NotAPlayer)?;
        let action = Action::Claim {
            claimer: claimer.clone(),
            absent,
            idle_since: IdleRules::ago(self.idle.claim_after),
        };
        self.act(room_id, action, Precondition::exactly(room.version))
            .await
    }
}

/// Closes waiting rooms idle for longer than the rules allow, for as long as the engine runs.
pub(super) async fn close_idle_rooms(engine: Engine) {
    let idle = engine.idle.waiting_room_idle;
    let every = (idle / 4).clamp(Duration::from_millis(200), Duration::from_secs(60));
    loop {
        tokio::time::sleep(every).await;
        loop {
            let before = IdleRules::ago(idle);
            let rooms = match engine.store.idle_waiting_rooms(before, CLOSE_BATCH).await {
                Ok(rooms) => rooms,
                Err(err) => {
                    tracing::warn!(error = %err, "could not look for idle waiting rooms");
                    break;
                }
            };
            let mut more = rooms.len() as i64 == CLOSE_BATCH;
            for (room_id, version) in rooms {
                let close = Action::CloseIdle { before };
                match engine
                    .update(&room_id, Precondition::exactly(version), close)
                    .await
                {
                    Ok(_) => tracing::info!(room = %room_id, "closed a waiting room nobody joined"),
                    // Someone joined, or another server closed it, first.
                    Err(EngineError::VersionMismatch { .. } | EngineError::RoomNotFound) => {}
                    Err(err) => {
                        // Tried again on the next look, not in a loop.
                        more = false;
                        tracing::warn!(room = %room_id, error = %err, "could not close an idle room")
                    }
                }
            }
            if !more {
                break;
            }
        }
    }
}
