//! Who is here: which players have a live stream open, on this server and on the others
//! sharing the database. PreparedStatements in memory only, never written: a stream's viewer arrives when it
//! opens and leaves when it ends (its [`PresentWhileOpen`] is dropped). Each server tells the others what
//! its own streams show, room by room, as it changes and again every [`REFRESH`]; what another
//! server said and did not say again within [`FORGET_AFTER`] is forgotten, so a server that
//! died takes its players with it.
//!
//! A change of a room's players online goes to the room's watchers through the hub, as an
//! update of its own (not a version: presence is not history); how many players are online
//! goes to the lobby at most once a [`LOBBY_EVERY`], when it changed, since every arrival
//! anywhere would otherwise be a frame to every lobby stream.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::hub::Hub;
use crate::store::RoomPresence;

/// How often each server says again what its streams show.
pub const REFRESH: Duration = Duration::from_secs(10);
/// How long what another server said holds without being said again.
pub const FORGET_AFTER: Duration = Duration::from_secs(30);

/// How often, at most, the lobby is told how many players are online.
pub const LOBBY_EVERY: Duration = Duration::from_secs(1);

/// What stands for the lobby among rooms: its streams count players online, in no room.
pub const LOBBY: &str = "";

#[derive(Default)]
struct State {
    /// This server's streams: room, player, how many streams.
    local: HashMap<String, HashMap<String, usize>>,
    /// What other servers said: room, server, its players there and when it said so.
    remote: HashMap<String, HashMap<String, (Vec<String>, Instant)>>,
    /// Every player online, with how many of the entries above name them: how many players
    /// are online is its length, whatever the number of streams.
    everyone: HashMap<String, usize>,
}

impl State {
    /// The players online in `room`, sorted.
    fn online(&self, room: &str) -> Vec<String> {
        let mut players: HashSet<&str> = HashSet::new();
        if let Some(local) = self.local.get(room) {
            players.extend(local.keys().map(String::as_str));
        }
        for (said, _) in self.remote.get(room).into_iter().flat_map(HashMap::values) {
            players.extend(said.iter().map(String::as_str));
        }
        let mut players: Vec<String> = players.into_iter().map(str::to_owned).collect();
        players.sort();
        players
    }

    /// `player` is named by one more entry.
    fn enter(&mut self, player: &str) {
        *self.everyone.entry(player.to_owned()).or_default() += 1;
    }

    /// `player` is named by one entry fewer.
    fn exit(&mut self, player: &str) {
        if let Some(entries) = self.everyone.get_mut(player) {
            *entries -= 1;
            if *entries == 0 {
                self.everyone.remove(player);
            }
        }
    }
}

pub struct PresenceBook {
    state: Mutex<State>,
    hub: Arc<Hub>,
    /// How many players the lobby was last told are online.
    told_lobby: AtomicUsize,
    /// Rooms whose players online here changed, for the other servers to hear.
    changed: mpsc::UnboundedSender<String>,
}

/// A stream's viewer, here until it is dropped.
pub struct PresentWhileOpen {
    book: Arc<PresenceBook>,
    room: String,
    player: String,
}

impl Drop for PresentWhileOpen {
    fn drop(&mut self) {
        self.book.leave(&self.room, &self.player);
    }
}

impl PresenceBook {
    /// A book that tells the hub's watchers of each change, and sends the rooms whose players
    /// online here changed on the receiver (to be told to the other servers).
    pub fn new(hub: Arc<Hub>) -> (Arc<Self>, mpsc::UnboundedReceiver<String>) {
        let (changed, receiver) = mpsc::unbounded_channel();
        let book = Self {
            state: Mutex::default(),
            hub,
            told_lobby: AtomicUsize::new(usize::MAX),
            changed,
        };
        (Arc::new(book), receiver)
    }

    /// `player` opened a stream of `room` ([`LOBBY`]: the lobby's).
    pub fn arrive(self: &Arc<Self>, room: &str, player: &str) -> PresentWhileOpen {
        let first = {
            let mut state = self.state.lock().expect("presence lock");
            let streams = state.local.entry(room.to_owned()).or_default();
            let count = streams.entry(player.to_owned()).or_default();
            *count += 1;
            let first = *count == 1;
            if first {
                state.enter(player);
            }
            first
        };
        if first {
            self.changed_here(room);
        }
        PresentWhileOpen {
            book: self.clone(),
            room: room.to_owned(),
            player: player.to_owned(),
        }
    }

    fn leave(&self, room: &str, player: &str) {
        let last = {
            let mut state = self.state.lock().expect("presence lock");
            let Some(streams) = state.local.get_mut(room) else {
                return;
            };
            let last = match streams.get_mut(player) {
                Some(count) if *count > 1 => {
                    *count -= 1;
                    false
                }
                Some(_) => {
                    streams.remove(player);
                    true
                }
                None => false,
            };
            if streams.is_empty() {
                state.local.remove(room);
            }
            if last {
                state.exit(player);
            }
            last
        };
        if last {
            self.changed_here(room);
        }
    }

    /// The players online in `room`, on any server, sorted.
    pub fn online(&self, room: &str) -> Vec<String> {
        self.state.lock().expect("presence lock").online(room)
    }

    /// How many players are online, on any server.
    pub fn count(&self) -> usize {
        self.state.lock().expect("presence lock").everyone.len()
    }

    /// Tells the lobby how many players are online, if that changed since it was last told.
    pub fn tell_lobby(&self) {
        let count = self.count();
        if self.told_lobby.swap(count, Ordering::Relaxed) != count {
            self.hub.publish_online_count(count);
        }
    }

    /// What this server's streams show in `rooms` (every room it shows anyone in when
    /// `None`), for the other servers.
    pub fn here(&self, rooms: Option<&[String]>) -> Vec<RoomPresence> {
        let state = self.state.lock().expect("presence lock");
        let players = |room: &str| -> Vec<String> {
            let mut players: Vec<String> = (state.local.get(room).into_iter())
                .flat_map(|streams| streams.keys().cloned())
                .collect();
            players.sort();
            players
        };
        match rooms {
            Some(rooms) => rooms.iter().map(|r| (r.clone(), players(r))).collect(),
            None => (state.local.keys())
                .map(|r| (r.clone(), players(r)))
                .collect(),
        }
    }

    /// Another server, `server`, says who its streams show in these rooms (none: nobody).
    pub fn heard(&self, server: &str, rooms: Vec<RoomPresence>) {
        let now = Instant::now();
        let mut changed = Vec::new();
        {
            let mut state = self.state.lock().expect("presence lock");
            for (room, players) in rooms {
                let before = state.online(&room);
                let servers = state.remote.entry(room.clone()).or_default();
                let said = match players.is_empty() {
                    true => servers.remove(server),
                    false => servers.insert(server.to_owned(), (players.clone(), now)),
                };
                if servers.is_empty() {
                    state.remote.remove(&room);
                }
                for player in said.map(|(said, _)| said).unwrap_or_default() {
                    state.exit(&player);
                }
                for player in &players {
                    state.enter(player);
                }
                if state.online(&room) != before {
                    changed.push(room);
                }
            }
        }
        self.tell_watchers(&changed);
    }

    /// Forgets what other servers said and did not say again within [`FORGET_AFTER`].
    pub fn forget_stale(&self) {
        let mut changed = Vec::new();
        {
            let mut state = self.state.lock().expect("presence lock");
            let rooms: Vec<String> = state.remote.keys().cloned().collect();
            for room in rooms {
                let before = state.online(&room);
                let servers = state.remote.get_mut(&room).expect("listed");
                let mut forgotten = Vec::new();
                servers.retain(|_, (said, at)| {
                    let fresh = at.elapsed() < FORGET_AFTER;
                    if !fresh {
                        forgotten.append(said);
                    }
                    fresh
                });
                if servers.is_empty() {
                    state.remote.remove(&room);
                }
                for player in &forgotten {
                    state.exit(player);
                }
                if state.online(&room) != before {
                    changed.push(room);
                }
            }
        }
        self.tell_watchers(&changed);
    }

    fn changed_here(&self, room: &str) {
        let _ = self.changed.send(room.to_owned());
        self.tell_watchers(std::slice::from_ref(&room.to_owned()));
    }

    /// Tells the watchers of `rooms` who is online there now.
    fn tell_watchers(&self, rooms: &[String]) {
        for room in rooms.iter().filter(|room| *room != LOBBY) {
            self.hub.publish_presence(room, Arc::new(self.online(room)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_player_is_online_while_any_of_their_streams_is_on_any_server() {
        let (book, mut changed) = PresenceBook::new(Arc::default());
        let first = book.arrive("r", "bob");
        let second = book.arrive("r", "bob");
        let _alice = book.arrive(LOBBY, "alice");
        assert_eq!(book.online("r"), ["bob"]);
        assert_eq!(book.count(), 2);
        drop(first);
        assert_eq!(book.online("r"), ["bob"], "one stream is left");
        drop(second);
        assert!(book.online("r").is_empty());
        // Told to the others when bob came, when alice came and when bob went.
        let told: Vec<String> = std::iter::from_fn(|| changed.try_recv().ok()).collect();
        assert_eq!(told, ["r", LOBBY, "r"]);

        book.heard("other", vec![("r".into(), vec!["carol".into()])]);
        assert_eq!(book.online("r"), ["carol"]);
        assert_eq!(book.count(), 2);
        book.heard(
            "other",
            vec![("r".into(), vec!["carol".into(), "alice".into()])],
        );
        assert_eq!(book.count(), 2, "alice is counted once");
        book.heard("other", vec![("r".into(), vec![])]);
        assert!(book.online("r").is_empty());
        assert_eq!(book.count(), 1);
        assert_eq!(
            book.here(None),
            [(LOBBY.to_owned(), vec!["alice".to_owned()])]
        );
    }
}
