use serde_json::{Map, Value};

use crate::domain::time::Timestamp;
use crate::problem::{ErrorKind, Problem};
use crate::store::StoreError;

/// Why chat refused. Whatever the variant, nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    #[error("{0}")]
    InvalidMessage(String),
    #[error("you may not write in chat until {0}")]
    Muted(Timestamp),
    #[error("{0}")]
    NotAllowed(&'static str),
    #[error("chat is off in this game: its author turned it off")]
    ChatOff,
    #[error("the room's opener closed its gallery")]
    GalleryClosed,
    #[error("only the player who opened the room may close its gallery")]
    NotTheOpener,
    #[error("there is no room with that id")]
    RoomNotFound,
    #[error("there is no message with that id")]
    MessageNotFound,
    #[error("there is no player with that id")]
    PlayerNotFound,
    #[error("you cannot block yourself")]
    BlockingYourself,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Problem for ChatError {
    fn wrapped(&self) -> Option<&dyn Problem> {
        match self {
            ChatError::Store(err) => Some(err),
            _ => None,
        }
    }

    fn classify(&self) -> (ErrorKind, &'static str) {
        use ErrorKind as K;
        match self {
            ChatError::InvalidMessage(_) => (K::Unprocessable, "invalid_message"),
            ChatError::Muted(_) => (K::Forbidden, "chat_muted"),
            ChatError::NotAllowed(_) => (K::Forbidden, "chat_not_allowed"),
            ChatError::ChatOff => (K::Conflict, "chat_off"),
            ChatError::GalleryClosed => (K::Conflict, "gallery_closed"),
            ChatError::NotTheOpener => (K::Forbidden, "not_the_opener"),
            ChatError::RoomNotFound => (K::NotFound, "room_not_found"),
            ChatError::MessageNotFound => (K::NotFound, "message_not_found"),
            ChatError::PlayerNotFound => (K::NotFound, "player_not_found"),
            ChatError::BlockingYourself => (K::Unprocessable, "invalid_block"),
            ChatError::Store(err) => err.classify(),
        }
    }

    fn extensions(&self, extra: &mut Map<String, Value>) {
        if let ChatError::Muted(until) = self {
            extra.insert("mutedUntil".into(), Value::String(until.to_string()));
        }
    }
}
