//! What a stream shows of chat: the messages of a room (or of the lobby) its viewer may read,
//! each exactly once and in order, and deletions as they happen.
//!
//! A message is never a room version: a stream counts messages with a cursor of its own, the
//! id of the last message of its place (room or lobby) it has accounted for, shown or not.
//! Each message written on this server arrives with the id of the one written before it in
//! the same place, so a stream knows when it missed one (it lagged, or the message was
//! written on another server) and reads what it missed from the history instead, as
//! [`super::RoomFeed`] does with versions.

use std::collections::HashSet;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};

use crate::domain::chat::{Channel, ChatMessage};
use crate::domain::ids::PlayerId;
use crate::domain::records::RoomEvent;
use crate::store::{Store, StoreError};
use crate::views::chat_frame;

/// Messages read from the history at a time while catching up.
const CHAT_PAGE: i64 = 100;

/// What the chat of a room (or of the lobby) says to its streams.
#[derive(Debug)]
pub enum ChatSignal {
    /// A message written on this server, framed once without its id, and the id of the
    /// message written before it in the same place (0 if none).
    Written {
        message: Arc<ChatMessage>,
        prev: i64,
        frame: Bytes,
    },
    /// Messages were written in the place on another server: the history has them.
    Reached,
    /// An admin deleted a message: it as it is now (no text), framed.
    Deleted {
        message: Arc<ChatMessage>,
        frame: Bytes,
    },
    /// The player blocked or unblocked someone: their streams read whom they block again.
    Blocks(PlayerId),
}

impl ChatSignal {
    pub fn written(message: ChatMessage, prev: i64) -> Self {
        ChatSignal::Written {
            frame: chat_frame(&message),
            message: Arc::new(message),
            prev,
        }
    }

    pub fn deleted(message: ChatMessage) -> Self {
        ChatSignal::Deleted {
            frame: chat_frame(&message),
            message: Arc::new(message),
        }
    }
}

/// Who reads a room's chat: its players the table (and the gallery once it is finished), anyone
/// else the gallery.
#[derive(Debug, Clone, Copy)]
pub struct RoomSeat {
    /// Whether the viewer is or was one of the room's players.
    pub seated: bool,
    pub finished: bool,
}

/// A message to send: its id for the stream's `id:` line (`None` for a deletion, which is
/// not a new message), and its frame without that line.
pub type ChatOut = (Option<i64>, Bytes);

/// One stream's view of a place's chat.
pub struct ChatFollow {
    store: Store,
    /// The room; `None` for the lobby.
    room: Option<String>,
    /// `None` in the lobby.
    seat: Option<RoomSeat>,
    viewer: Option<PlayerId>,
    blocked: HashSet<PlayerId>,
    /// The last message of the place accounted for; `None` until the stream starts, when it
    /// is the place's last message then (or where the client resumes).
    cursor: Option<i64>,
    /// Whether the client resumes after a message, which the history may have more after.
    resumes: bool,
}

impl ChatFollow {
    /// A room's chat (`seat` set) or the lobby's, for `viewer`, who blocked `blocked`; after
    /// message `after`, or from when the stream starts.
    pub fn new(
        store: Store,
        room: Option<(String, RoomSeat)>,
        viewer: Option<PlayerId>,
        blocked: HashSet<PlayerId>,
        after: Option<i64>,
    ) -> Self {
        let (room, seat) = room.unzip();
        Self {
            store,
            room,
            seat,
            viewer,
            blocked,
            cursor: after,
            resumes: after.is_some(),
        }
    }

    /// Whether the stream resumes after a message its client saw: it catches up from the
    /// history before anything else is said.
    pub fn resumes(&self) -> bool {
        self.resumes
    }

    /// The last message accounted for (0 before the stream starts).
    pub fn cursor(&self) -> i64 {
        self.cursor.unwrap_or(0)
    }

    /// Whether the viewer may read `message` here.
    fn reads(&self, message: &ChatMessage) -> bool {
        let channel_open = match (message.channel, self.seat) {
            (Channel::Lobby, None) => true,
            (Channel::Table, Some(seat)) => seat.seated,
            (Channel::Gallery, Some(seat)) => !seat.seated || seat.finished,
            _ => false,
        };
        channel_open && !self.blocked.contains(&message.author.id)
    }

    /// The stream moved on to `event`: the viewer may have taken a seat, the room finished.
    pub fn seen_version(&mut self, event: &RoomEvent) {
        if let Some(seat) = &mut self.seat {
            seat.finished = event.finished;
            let viewer = self.viewer.as_ref();
            seat.seated |= viewer.is_some_and(|v| event.players.iter().any(|p| p.id == *v));
        }
    }

    /// Reads where the place is at now, unless the stream resumes after a message. Called
    /// once the stream is subscribed to the place's signals and before its client hears of
    /// it, so that every message written after the stream opened is told.
    pub async fn start(&mut self) -> Result<(), StoreError> {
        if self.cursor.is_none() {
            self.cursor = Some(self.store.last_chat_message(self.room.as_deref()).await?);
        }
        Ok(())
    }

    /// Reads again whom the viewer blocks (nobody, for a stream with no viewer).
    async fn read_blocks(&mut self) -> Result<(), StoreError> {
        if let Some(viewer) = &self.viewer {
            let blocked = self.store.blocks_of(viewer).await?;
            self.blocked = blocked.into_iter().map(|p| p.id).collect();
        }
        Ok(())
    }

    /// The messages after the cursor the viewer may read, from the history.
    ///
    /// The history is read as it is now, so whom the viewer blocks is read again first, as it
    /// is now too. The signals queued for this stream say it only later: a stream behind its
    /// signals (or told by another server that messages were written) would otherwise read a
    /// message written after a block it has not heard of yet, and show it.
    pub async fn catch_up(&mut self) -> Result<Vec<ChatOut>, StoreError> {
        self.start().await?;
        self.read_blocks().await?;
        let mut cursor = self.cursor();
        let mut out = Vec::new();
        loop {
            let page = match &self.room {
                Some(room) => self.store.room_chat_stream(room, cursor, CHAT_PAGE).await?,
                None => {
                    (self.store)
                        .lobby_chat(Some(cursor), None, None, CHAT_PAGE)
                        .await?
                }
            };
            let full = page.len() as i64 == CHAT_PAGE;
            for message in page {
                cursor = message.id;
                if self.reads(&message) {
                    out.push((Some(message.id), chat_frame(&message)));
                }
            }
            self.cursor = Some(cursor);
            if !full {
                return Ok(out);
            }
        }
    }

    /// What `signal` shows this stream.
    pub async fn take(&mut self, signal: &ChatSignal) -> Result<Vec<ChatOut>, StoreError> {
        match signal {
            ChatSignal::Written { message, .. } if message.id <= self.cursor() => Ok(Vec::new()),
            ChatSignal::Written {
                message,
                prev,
                frame,
            } if self.cursor == Some(*prev) => {
                self.cursor = Some(message.id);
                Ok(match self.reads(message) {
                    true => vec![(Some(message.id), frame.clone())],
                    false => Vec::new(),
                })
            }
            ChatSignal::Written { .. } | ChatSignal::Reached => self.catch_up().await,
            ChatSignal::Deleted { message, frame } => Ok(match self.reads(message) {
                true => vec![(None, frame.clone())],
                false => Vec::new(),
            }),
            ChatSignal::Blocks(player) if self.viewer.as_ref() == Some(player) => {
                self.read_blocks().await?;
                Ok(Vec::new())
            }
            ChatSignal::Blocks(_) => Ok(Vec::new()),
        }
    }
}

/// `frame` with `id: <id>` before it, as one chunk: an event written in two could leave in two
/// packets, the second held back until the first is acknowledged.
pub fn with_id(id: String, frame: Bytes) -> Bytes {
    let mut event = BytesMut::with_capacity(id.len() + 5 + frame.len());
    event.extend_from_slice(b"id: ");
    event.extend_from_slice(id.as_bytes());
    event.extend_from_slice(b"\n");
    event.extend_from_slice(&frame);
    event.freeze()
}

/// A version's frame without its `id:` line, for a stream to put its own.
pub fn without_id(frame: Bytes) -> Bytes {
    match frame.starts_with(b"id: ") {
        true => match frame.iter().position(|b| *b == b'\n') {
            Some(end) => frame.slice(end + 1..),
            None => frame,
        },
        false => frame,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_loses_its_id_line_only_and_gets_the_streams_own() {
        let frame = Bytes::from_static(b"id: 7\nevent: version\ndata: {}\n\n");
        let body = without_id(frame);
        assert_eq!(&body[..], b"event: version\ndata: {}\n\n");
        let unmarked = Bytes::from_static(b"event: chat\ndata: {}\n\n");
        assert_eq!(
            without_id(unmarked.clone()),
            unmarked,
            "no id line: as it is"
        );
        let event = with_id("7:12".into(), body);
        assert_eq!(&event[..], b"id: 7:12\nevent: version\ndata: {}\n\n");
    }
}
