//! The one decision of what a viewer may see of a room: every route and stream asks here, and
//! builds what it sends from the views this returns ([`crate::views`]).

use std::borrow::Cow;

use super::{Engine, EngineError};
use crate::game::PlayerRef;
use crate::model::{Room, RoomEvent};
use crate::views::{EventView, RoomView};

impl Engine {
    /// `room` as `viewer` (a player, or `None` for anyone else) may see it.
    pub async fn view_room<'a>(
        &self,
        room: &'a Room,
        viewer: Option<&PlayerRef>,
    ) -> Result<RoomView<'a>, EngineError> {
        let _ = viewer;
        Ok(RoomView::new(room, Cow::Borrowed(&room.state)))
    }

    /// `events` of `room` as `viewer` may see them, each at its own version.
    pub async fn view_events<'a>(
        &self,
        room: &Room,
        events: &'a [RoomEvent],
        viewer: Option<&PlayerRef>,
    ) -> Result<Vec<EventView<'a>>, EngineError> {
        let _ = (room, viewer);
        Ok(events.iter().map(EventView::whole).collect())
    }
}
