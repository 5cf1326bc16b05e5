//! What only `turnhouse dev` asks of the engine, on the author's own machine: firing a room's
//! deadline before its time, seating a bot anywhere, and the room's stored history whole
//! (every secret included: the author's view of their own game).

use std::sync::Arc;

use super::{Action, Engine, EngineError, Precondition};
use crate::domain::records::{Room, RoomEvent};
use crate::game::{BotLevel, PlayerRef};

impl Engine {
    /// Runs `onTimeout` now on `room_id`, as if its deadline had passed; then seated bots take
    /// their turns. The deadline is used up, so the deadline task finds the room moved on.
    pub async fn fire_deadline_now(&self, room_id: &str) -> Result<Arc<Room>, EngineError> {
        self.act(room_id, Action::TimeoutNow, Precondition::Any)
            .await
    }

    /// The account of the bot of `level`, to seat like any player.
    pub fn bot_player(&self, level: BotLevel) -> PlayerRef {
        self.bots.account(level).clone()
    }

    /// Every version of `room_id` as stored, with the room: no view applied.
    pub async fn stored_history(
        &self,
        room_id: &str,
    ) -> Result<(Arc<Room>, Vec<RoomEvent>), EngineError> {
        let room = self.room(room_id).await?;
        let mut events = Vec::new();
        loop {
            let after = events.last().map_or(0, |e: &RoomEvent| e.version);
            let page = self.store.events(room_id, after, 1000).await?;
            let done = page.len() < 1000;
            events.extend(page);
            if done {
                return Ok((room, events));
            }
        }
    }
}
