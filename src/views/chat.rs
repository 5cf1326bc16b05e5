//! A chat message as clients receive it, in a page of history and on a stream.

use bytes::Bytes;
use serde::Serialize;

use crate::domain::chat::ChatMessage;
use crate::domain::time::Timestamp;
use crate::game::PlayerRef;

/// A message as the API shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageView<'a> {
    id: i64,
    room: Option<&'a str>,
    channel: &'static str,
    player: &'a PlayerRef,
    /// Null once an admin deleted it.
    text: Option<&'a str>,
    deleted: bool,
    /// The room's version when it was written.
    version: Option<i64>,
    created_at: Timestamp,
}

impl<'a> From<&'a ChatMessage> for MessageView<'a> {
    fn from(m: &'a ChatMessage) -> Self {
        Self {
            id: m.id,
            room: m.room_id.as_deref(),
            channel: m.channel.as_str(),
            player: &m.author,
            text: m.text.as_deref(),
            deleted: m.deleted_at.is_some(),
            version: m.room_version,
            created_at: m.created_at,
        }
    }
}

/// `event: chat`, the message as JSON, without its `id:` line: a stream puts its own before
/// it (a room's stream names the version it is at too), so one frame serves every watcher.
pub fn chat_frame(message: &ChatMessage) -> Bytes {
    let json = serde_json::to_string(&MessageView::from(message)).expect("messages serialise");
    format!("event: chat\ndata: {json}\n\n").into()
}
