//! The broadcast hub: one channel per watched room, one for the lobby.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::broadcast;

use super::chat_feed::ChatSignal;
use crate::domain::ids::PlayerId;
use crate::domain::records::{LobbyChange, Room, RoomEvent};
use crate::views::{
    lobby_frame, online_count_frame, version_frame, EventView, RoomHeader, RoomView,
};

/// How many versions a room's channel holds for a reader that has not caught up; one further
/// behind is told it lagged and re-reads the history instead.
const ROOM_BACKLOG: usize = 64;
/// The same for the lobby, where a lagging reader is told to list the rooms again.
const LOBBY_BACKLOG: usize = 1024;

/// What a room's streams are told.
#[derive(Debug)]
pub enum RoomUpdate {
    /// A version committed by this server: framed once for every subscriber, or (in a game
    /// with a view hook, `None`) for each stream to frame for its viewer from the version.
    Version {
        frame: Option<Bytes>,
        event: Arc<RoomEvent>,
    },
    /// The room reached this version on another server: each stream reads what it has not
    /// sent yet from the history.
    Reached(i64),
    /// Changes may have gone unheard: each stream reads the history again.
    Resync,
    /// Not a version: who has a stream of the room open now, on any server (each stream shows
    /// those of them who play in it).
    Online(Arc<Vec<String>>),
    /// Not a version: the room's chat.
    Chat(Arc<ChatSignal>),
}

/// Who a room's versions are shown to as they are: everyone alike, or each viewer as the game's
/// view hook says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    ToEveryone,
    PerViewer,
}

/// What the lobby's streams are told.
#[derive(Debug)]
pub enum LobbyUpdate {
    /// A public room of `game` opened, filled, emptied or finished; with no game, what every
    /// lobby stream is told (how many are online, or to list the rooms again).
    Rooms { game: String, frame: Bytes },
    /// Changes may have gone unheard: list the rooms again (and read the chat's history).
    Resync,
    /// The lobby's chat.
    Chat(Arc<ChatSignal>),
}

pub struct Hub {
    /// Only rooms somebody watches have a channel: an entry goes when its last reader does, so
    /// the map is as big as the set of watched rooms, not of all rooms.
    rooms: Mutex<HashMap<String, broadcast::Sender<Arc<RoomUpdate>>>>,
    lobby: broadcast::Sender<Arc<LobbyUpdate>>,
}

impl Default for Hub {
    fn default() -> Self {
        Self {
            rooms: Mutex::default(),
            lobby: broadcast::channel(LOBBY_BACKLOG).0,
        }
    }
}

impl Hub {
    /// Sends the new versions of `room` to its watchers. Called after the commit is durable,
    /// in version order. `Shown::ToEveryone` frames each version once, for every watcher;
    /// `Shown::PerViewer` (a game with a view hook) sends the versions unframed, for each
    /// stream to frame for its viewer. The events are the commit's own, handed over rather
    /// than copied: each holds a whole state.
    pub fn publish(&self, room: &Room, events: Vec<RoomEvent>, shown: Shown) {
        let sender = self
            .rooms
            .lock()
            .expect("hub lock")
            .get(room.id.as_str())
            .cloned();
        if let Some(sender) = sender {
            let header = RoomHeader::from(room);
            for event in events {
                let frame = match shown {
                    Shown::ToEveryone => Some(version_frame(&header, &EventView::whole(&event))),
                    Shown::PerViewer => None,
                };
                let update = RoomUpdate::Version {
                    frame,
                    event: Arc::new(event),
                };
                // An error only means every reader left meanwhile.
                let _ = sender.send(Arc::new(update));
            }
        }
    }

    /// Tells the lobby that a public room of `game` was `created` or `updated`; `room` is
    /// what anyone may see of it.
    pub fn publish_lobby(&self, game: &str, change: LobbyChange, room: &RoomView) {
        if self.lobby_watched() {
            let update = LobbyUpdate::Rooms {
                game: game.to_owned(),
                frame: lobby_frame(change, room),
            };
            let _ = self.lobby.send(Arc::new(update));
        }
    }

    /// Tells the watchers of `room_id` who has a stream of it open now.
    pub fn publish_presence(&self, room_id: &str, online: Arc<Vec<String>>) {
        let sender = self.rooms.lock().expect("hub lock").get(room_id).cloned();
        if let Some(sender) = sender {
            let _ = sender.send(Arc::new(RoomUpdate::Online(online)));
        }
    }

    /// Tells the lobby how many players are online now.
    pub fn publish_online_count(&self, players: usize) {
        if self.lobby_watched() {
            let _ = self.lobby.send(Arc::new(LobbyUpdate::Rooms {
                game: String::new(),
                frame: online_count_frame(players),
            }));
        }
    }

    pub fn lobby_watched(&self) -> bool {
        self.lobby.receiver_count() > 0
    }

    /// Tells the streams of a room's chat (the lobby's with `None`) what happened in it.
    pub fn publish_chat(&self, room_id: Option<&str>, signal: ChatSignal) {
        let signal = Arc::new(signal);
        match room_id {
            Some(room_id) => {
                let sender = self.rooms.lock().expect("hub lock").get(room_id).cloned();
                if let Some(sender) = sender {
                    let _ = sender.send(Arc::new(RoomUpdate::Chat(signal)));
                }
            }
            None if self.lobby_watched() => {
                let _ = self.lobby.send(Arc::new(LobbyUpdate::Chat(signal)));
            }
            None => {}
        }
    }

    /// `player` blocked or unblocked someone: each of their streams, in any room or the
    /// lobby, reads whom they block again (a block is rare; every stream is asked).
    pub fn chat_blocks_changed(&self, player: &PlayerId) {
        let signal = Arc::new(ChatSignal::Blocks(player.clone()));
        let senders: Vec<_> = (self.rooms.lock().expect("hub lock").values())
            .cloned()
            .collect();
        for sender in senders {
            let _ = sender.send(Arc::new(RoomUpdate::Chat(signal.clone())));
        }
        if self.lobby_watched() {
            let _ = self.lobby.send(Arc::new(LobbyUpdate::Chat(signal)));
        }
    }

    /// Tells the watchers of `room_id` that it reached `version` on another server: each reads
    /// what it has not sent yet from the history.
    pub fn poke(&self, room_id: &str, version: i64) {
        let sender = self.rooms.lock().expect("hub lock").get(room_id).cloned();
        if let Some(sender) = sender {
            let _ = sender.send(Arc::new(RoomUpdate::Reached(version)));
        }
    }

    /// Some changes may have gone unheard: every room stream re-reads the history, and every
    /// lobby stream is told to list the rooms again.
    pub fn resync(&self) {
        let senders: Vec<_> = self
            .rooms
            .lock()
            .expect("hub lock")
            .values()
            .cloned()
            .collect();
        for sender in senders {
            let _ = sender.send(Arc::new(RoomUpdate::Resync));
        }
        if self.lobby_watched() {
            let _ = self.lobby.send(Arc::new(LobbyUpdate::Resync));
        }
    }

    /// Starts receiving the versions of `room_id` published from now on.
    pub fn subscribe(self: &Arc<Self>, room_id: &str) -> RoomSubscription {
        let mut rooms = self.rooms.lock().expect("hub lock");
        let receiver = match rooms.get(room_id) {
            Some(sender) => sender.subscribe(),
            None => {
                let (sender, receiver) = broadcast::channel(ROOM_BACKLOG);
                rooms.insert(room_id.to_owned(), sender);
                receiver
            }
        };
        RoomSubscription {
            hub: self.clone(),
            room_id: room_id.to_owned(),
            receiver: Some(receiver),
        }
    }

    pub fn subscribe_lobby(&self) -> broadcast::Receiver<Arc<LobbyUpdate>> {
        self.lobby.subscribe()
    }

    /// How many rooms have a channel (that is, at least one watcher).
    pub fn watched_rooms(&self) -> usize {
        self.rooms.lock().expect("hub lock").len()
    }
}

/// A reader of one room's channel; dropping the last one removes the channel.
pub struct RoomSubscription {
    hub: Arc<Hub>,
    room_id: String,
    receiver: Option<broadcast::Receiver<Arc<RoomUpdate>>>,
}

impl RoomSubscription {
    pub async fn recv(&mut self) -> Result<Arc<RoomUpdate>, broadcast::error::RecvError> {
        self.receiver
            .as_mut()
            .expect("present until dropped")
            .recv()
            .await
    }
}

impl Drop for RoomSubscription {
    fn drop(&mut self) {
        let mut rooms = self.hub.rooms.lock().expect("hub lock");
        // Under the lock, so a subscriber arriving now either sees the entry gone or counts.
        drop(self.receiver.take());
        if rooms
            .get(&self.room_id)
            .is_some_and(|sender| sender.receiver_count() == 0)
        {
            rooms.remove(&self.room_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_room_channel_lives_exactly_as_long_as_its_watchers() {
        let hub = Arc::new(Hub::default());
        let first = hub.subscribe("a");
        let second = hub.subscribe("a");
        let other = hub.subscribe("b");
        assert_eq!(hub.watched_rooms(), 2);
        drop(first);
        assert_eq!(hub.watched_rooms(), 2);
        drop(second);
        assert_eq!(hub.watched_rooms(), 1);
        drop(other);
        assert_eq!(hub.watched_rooms(), 0);
    }

    #[tokio::test]
    async fn a_room_shown_per_viewer_is_never_framed_whole() {
        let hub = Arc::new(Hub::default());
        let mut watcher = hub.subscribe("r");
        let room = Room::blank(
            "r".into(),
            "g".into(),
            None,
            false,
            crate::domain::time::Timestamp::parse("2026-01-01T00:00:00.000Z").unwrap(),
        );
        let event = RoomEvent {
            trigger_timeout_at: None,
            version: 1,
            kind: crate::domain::records::EventKind::RoomStart,
            player: None,
            mv: None,
            state: serde_json::json!({"secret": 1}).into(),
            joinable: true,
            finished: false,
            players: Vec::new().into(),
            created_at: room.created_at,
            rating_changes: Vec::new(),
            to_move: None,
        };
        hub.publish(&room, vec![event.clone()], Shown::PerViewer);
        let update = watcher.recv().await.unwrap();
        let RoomUpdate::Version { frame, event: sent } = &*update else {
            panic!("a version: {update:?}");
        };
        assert!(frame.is_none(), "no frame of the whole state");
        assert_eq!(**sent, event);
        hub.publish(&room, vec![event], Shown::ToEveryone);
        let update = watcher.recv().await.unwrap();
        let RoomUpdate::Version {
            frame: Some(frame), ..
        } = &*update
        else {
            panic!("a framed version: {update:?}");
        };
        let frame = String::from_utf8(frame.to_vec()).unwrap();
        assert!(frame.contains("\"secret\":1"), "{frame}");
    }
}
