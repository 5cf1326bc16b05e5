//! Current rooms kept in memory, so that reading a room, or acting on one, needs no database
//! read while this process is the only one writing the database.
//!
//! Freshness: while this is the only server on its database file ([`Store::alone`]), every
//! commit passes through here, so a cached room is the current one; an entry is replaced only
//! by a higher version (versions only grow), so a read racing a commit never puts an older
//! room back. While another server shares the file, the cache is neither read nor filled, and
//! it is emptied when this server is alone again, since the other may have changed any room.
//! (A room edited by hand in the `sqlite3` shell is not noticed until it is next changed
//! through the server; the version compare-and-set still stops a move on a stale copy.)

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use super::bounded_cache::BoundedCache;
use crate::model::Room;
use crate::store::Store;

pub struct RoomCache {
    rooms: BoundedCache<String, Room>,
    /// Set while another server shares the database.
    shared: AtomicBool,
    /// Bumped whenever the cache is emptied; a room read before then is not remembered.
    epoch: AtomicU64,
    /// Held while emptying, so no room read in the old epoch slips in after the clear.
    clearing: Mutex<()>,
}

/// Where the cache stood when a room was read, to be handed back to [`RoomCache::remember`].
#[derive(Clone, Copy)]
pub struct Epoch(Option<u64>);

impl RoomCache {
    pub fn new(capacity: usize) -> Self {
        Self {
            rooms: BoundedCache::new(capacity),
            shared: AtomicBool::new(false),
            epoch: AtomicU64::new(0),
            clearing: Mutex::new(()),
        }
    }

    /// Call before reading a room from the database or committing one: `None` inside while
    /// the database is shared.
    pub fn epoch(&self, store: &Store) -> Epoch {
        if store.alone() {
            if self.shared.swap(false, Ordering::AcqRel) {
                let _clearing = self.clearing.lock().expect("never poisoned");
                self.epoch.fetch_add(1, Ordering::AcqRel);
                self.rooms.clear();
            }
            Epoch(Some(self.epoch.load(Ordering::Acquire)))
        } else {
            self.shared.store(true, Ordering::Release);
            Epoch(None)
        }
    }

    pub fn get(&self, store: &Store, room_id: &str) -> Option<Room> {
        match self.epoch(store) {
            Epoch(Some(_)) => self.rooms.get(room_id),
            Epoch(None) => None,
        }
    }

    /// Remembers `room`, read or committed in `epoch`, unless the cache was emptied since or
    /// already holds a later version of it.
    pub fn remember(&self, epoch: Epoch, room: &Room) {
        let Epoch(Some(epoch)) = epoch else { return };
        let _clearing = self.clearing.lock().expect("never poisoned");
        if self.epoch.load(Ordering::Acquire) == epoch {
            self.rooms.insert_unless(
                room.id.clone(),
                || room.clone(),
                |held| held.version >= room.version,
            );
        }
    }

    pub fn forget(&self, room_id: &str) {
        self.rooms.remove(room_id);
    }

    pub fn len(&self) -> usize {
        self.rooms.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn room(version: i64) -> Room {
        Room {
            id: "r".into(),
            game: "tictactoe".into(),
            game_version: None,
            private: false,
            version,
            joinable: true,
            finished: false,
            state: serde_json::Value::Null,
            players: vec![],
            inactive_players: vec![],
            created_at: String::new(),
            updated_at: String::new(),
        }
    }

    #[tokio::test]
    async fn it_is_used_only_alone_and_emptied_after_company_leaves() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.db").display().to_string();
        let store = Store::open(&path).await.unwrap();
        let cache = RoomCache::new(16);

        let epoch = cache.epoch(&store);
        cache.remember(epoch, &room(3));
        cache.remember(epoch, &room(2));
        assert_eq!(
            cache.get(&store, "r").map(|r| r.version),
            Some(3),
            "older never wins"
        );

        let other = Store::open(&path).await.unwrap();
        assert_eq!(cache.get(&store, "r"), None, "not while shared");
        let during = cache.epoch(&store);
        cache.remember(during, &room(4));
        drop(other);
        assert_eq!(
            cache.get(&store, "r"),
            None,
            "emptied: the other may have changed it"
        );
        cache.remember(epoch, &room(5));
        assert_eq!(cache.get(&store, "r"), None, "read before it was emptied");
        cache.remember(cache.epoch(&store), &room(6));
        assert_eq!(cache.get(&store, "r").map(|r| r.version), Some(6));
    }
}
