//! Chat's records: a message at a room's table, in its gallery or in the lobby; a report of
//! one; and what decides who may read and write a room's chat.

use super::ids::PlayerId;
use super::time::Timestamp;
use crate::game::PlayerRef;

/// The longest message, in characters.
pub const MAX_MESSAGE_CHARS: usize = 500;

/// Where a message is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// A room's players, who read and write it.
    Table,
    /// A room's watchers; its players read it once the room is finished.
    Gallery,
    /// The server's lobby: anyone reads it, players write it.
    Lobby,
}

impl Channel {
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Table => "table",
            Channel::Gallery => "gallery",
            Channel::Lobby => "lobby",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "table" => Some(Channel::Table),
            "gallery" => Some(Channel::Gallery),
            "lobby" => Some(Channel::Lobby),
            _ => None,
        }
    }
}

/// A message as kept.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatMessage {
    /// Its place among all messages, growing: what pages and streams resume after.
    pub id: i64,
    /// The room it was written in; `None` in the lobby.
    pub room_id: Option<String>,
    pub channel: Channel,
    pub author: PlayerRef,
    /// `None` once an admin deleted it.
    pub text: Option<String>,
    /// The room's version when it was written (a replay shows it there).
    pub room_version: Option<i64>,
    pub created_at: Timestamp,
    pub deleted_at: Option<Timestamp>,
}

/// A player's report of a message.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatReport {
    pub message: ChatMessage,
    pub reporter: PlayerRef,
    pub reason: String,
    pub created_at: Timestamp,
}

/// What decides who may read and write a room's chat, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RoomChat {
    pub finished: bool,
    /// The room's current version.
    pub version: i64,
    /// Whether the game's author left chat on (built-in games have it).
    pub chat: bool,
    /// Whether the asking player is or was seated in the room.
    pub seated: bool,
    /// Whether its opener closed the gallery.
    pub gallery_closed: bool,
    /// Who opened the room.
    pub opener: Option<PlayerId>,
}
