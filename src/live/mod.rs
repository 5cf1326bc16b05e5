//! Live updates: every committed version of a room, pushed to whoever watches it, and a lobby
//! feed of public rooms opening, filling and finishing.
//!
//! The engine publishes to the [`Hub`] once a commit is durable, holding the room's turn, so
//! versions arrive in order. A [`RoomFeed`] does not trust the channel alone: it subscribes
//! first, replays the history after the client's last version, and from then on drops what it
//! has already sent and re-reads the history whenever the channel skipped (a slow reader that
//! lagged, or a version written elsewhere). The history is the truth; the channel only says
//! "there is more".

mod chat_feed;
mod feed;
mod game_log_feed;
mod hub;
mod presence;

pub use chat_feed::{ChatFollow, ChatSignal, RoomSeat};
pub use feed::{Feed, Framer, LobbyFeed, RoomFeed};
pub use game_log_feed::GameLogFeed;
pub use hub::{Hub, LobbyUpdate, RoomSubscription, RoomUpdate, Shown};
pub use presence::{PresenceBook, PresentWhileOpen, LOBBY, LOBBY_EVERY, REFRESH};
