//! Rooms kept in memory, so that reading a room, or acting on one, needs no database read.
//!
//! What an entry is worth depends on whether this server is alone on its database:
//! - Alone ([`Store::alone`]: the only server on a SQLite file), every commit passes through
//!   here, so an entry is the current room, and reads (`GET`, `If-None-Match`, where a stream
//!   starts) are answered from it.
//! - Sharing (another server on the SQLite file, or PostgreSQL, which is always taken to be
//!   shared), an entry is only the room as this server last saw it. Reads go to the database,
//!   so they are as fresh as a read of the database. Actions still start from the entry: the
//!   version compare-and-set refuses a change computed from an old copy, which is then read
//!   again, and a refusal (not your turn, room full) computed from a copy is confirmed against
//!   the database before it is answered. On PostgreSQL, other servers' commits evict what they
//!   change (see `follow`), so such retries are rare.
//!
//! An entry is replaced only by a higher version (versions only grow), so a read racing a
//! commit never puts an older room back. When the server is alone again after sharing, or
//! finds that another server came and went since it last looked, the cache is emptied, since
//! the other server may have changed any room. (A room edited by hand in the `sqlite3` shell
//! is not noticed until it is next changed through the server; the compare-and-set still
//! stops a move on a stale copy.)
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::{Engine, EngineError};
use crate::cache::BoundedCache;
use crate::cache::LastLook;
use crate::domain::records::Room;
use crate::store::Store;

pub struct RoomCache {
    /// Shared with whoever answered or published the version: a read or a commit copies no room.
    rooms: BoundedCache<String, Arc<Room>>,
    /// Whether the server has been alone on its database since the last look.
    look: LastLook,
    /// Bumped whenever the cache is emptied; a room read before then is not remembered.
    epoch: AtomicU64,
    /// Held while emptying, so no room read in the old epoch slips in after the clear.
    clearing: Mutex<()>,
}

/// Where the cache stood when a room was read, to be handed back to [`RoomCache::remember`].
#[derive(Clone, Copy)]
pub struct Epoch(u64);

impl RoomCache {
    pub fn new(capacity: usize) -> Self {
        Self {
            rooms: BoundedCache::new(capacity),
            look: LastLook::default(),
            epoch: AtomicU64::new(0),
            clearing: Mutex::new(()),
        }
    }

    /// Call before reading a room from the database or committing one.
    pub fn epoch(&self, store: &Store) -> Epoch {
        self.trusted(store);
        Epoch(self.epoch.load(Ordering::Acquire))
    }

    /// The current room, if this server is alone and has it.
    pub fn current(&self, store: &Store, room_id: &str) -> Option<Arc<Room>> {
        match self.trusted(store) {
            true => self.rooms.get(room_id),
            false => None,
        }
    }

    /// Whether entries are current rooms now, emptying the cache first if company came.
    fn trusted(&self, store: &Store) -> bool {
        self.look.trusted(store, || self.clear())
    }

    /// The room as this server last saw it, which may be behind when the database is shared:
    /// a starting point for a change that the compare-and-set will check.
    pub fn last_seen(&self, room_id: &str) -> Option<Arc<Room>> {
        self.rooms.get(room_id)
    }

    /// Remembers `room`, read or committed in `epoch`, unless the cache was emptied since or
    /// already holds a later version of it.
    pub fn remember(&self, Epoch(epoch): Epoch, room: &Arc<Room>) {
        let _clearing = self.clearing.lock().expect("never poisoned");
        if self.epoch.load(Ordering::Acquire) == epoch {
            self.rooms.insert_unless(
                room.id.to_string(),
                || Arc::clone(room),
                |held| held.version >= room.version,
            );
        }
    }

    /// Another server committed `version` of the room: what is held of it is behind.
    pub fn saw_version(&self, room_id: &str, version: i64) {
        if self
            .rooms
            .get(room_id)
            .is_some_and(|held| held.version < version)
        {
            self.rooms.remove(room_id);
        }
    }

    pub fn forget(&self, room_id: &str) {
        self.rooms.remove(room_id);
    }

    /// Forgets everything, including rooms being read right now.
    pub fn clear(&self) {
        let _clearing = self.clearing.lock().expect("never poisoned");
        self.epoch.fetch_add(1, Ordering::AcqRel);
        self.rooms.clear();
    }

    pub fn len(&self) -> usize {
        self.rooms.len()
    }
}

impl Engine {
    /// The room to compute a change from, and whether it is sure to be current: the room as
    /// this server last saw it unless `confirmed` is asked for (the compare-and-set checks it
    /// when the change is committed).
    pub(super) async fn working_copy(
        &self,
        room_id: &str,
        confirmed: bool,
    ) -> Result<(Arc<Room>, bool), EngineError> {
        if let Some(room) = self.rooms.current(&self.store, room_id) {
            return Ok((room, true));
        }
        if let Some(room) = self.rooms.last_seen(room_id).filter(|_| !confirmed) {
            return Ok((room, false));
        }
        Ok((self.stored_room(room_id).await?, true))
    }

    /// The room as the database has it, remembered for next time.
    pub(super) async fn stored_room(&self, room_id: &str) -> Result<Arc<Room>, EngineError> {
        let epoch = self.rooms.epoch(&self.store);
        let room = self
            .store
            .room(room_id)
            .await?
            .ok_or(EngineError::RoomNotFound)?;
        let room = Arc::new(room);
        self.rooms.remember(epoch, &room);
        Ok(room)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn room(version: i64) -> Room {
        Room {
            trigger_timeout_at: None,
            to_move: None,
            turns: Default::default(),
            clock: None,
            rematch: None,
            score: Default::default(),
            id: "r".into(),
            game: "tictactoe".into(),
            game_version: None,
            private: false,
            rated: false,
            version,
            joinable: true,
            finished: false,
            state: serde_json::Value::Null.into(),
            players: vec![].into(),
            inactive_players: vec![],
            created_at: crate::domain::time::Timestamp::now(),
            updated_at: crate::domain::time::Timestamp::now(),
        }
    }

    #[tokio::test]
    async fn it_is_trusted_only_alone_and_emptied_after_company_leaves() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.db").display().to_string();
        let store = Store::open(&path).await.unwrap();
        let cache = RoomCache::new(16);

        let epoch = cache.epoch(&store);
        cache.remember(epoch, &Arc::new(room(3)));
        cache.remember(epoch, &Arc::new(room(2)));
        assert_eq!(
            cache.current(&store, "r").map(|r| r.version),
            Some(3),
            "older never wins"
        );

        let other = Store::open(&path).await.unwrap();
        assert_eq!(cache.current(&store, "r"), None, "not current while shared");
        let during = cache.epoch(&store);
        cache.remember(during, &Arc::new(room(4)));
        assert_eq!(
            cache.last_seen("r").map(|r| r.version),
            Some(4),
            "but a starting point for a change"
        );
        cache.saw_version("r", 4);
        assert_eq!(cache.last_seen("r").map(|r| r.version), Some(4));
        cache.saw_version("r", 5);
        assert_eq!(cache.last_seen("r"), None, "another server moved it on");
        cache.remember(during, &Arc::new(room(4)));
        drop(other);
        assert_eq!(
            cache.current(&store, "r"),
            None,
            "emptied: the other may have changed it"
        );
        cache.remember(during, &Arc::new(room(5)));
        assert_eq!(
            cache.current(&store, "r"),
            None,
            "read before it was emptied"
        );
        cache.remember(cache.epoch(&store), &Arc::new(room(6)));
        assert_eq!(cache.current(&store, "r").map(|r| r.version), Some(6));

        // Another server opens the database and closes it again between two looks.
        drop(Store::open(&path).await.unwrap());
        assert_eq!(
            cache.current(&store, "r"),
            None,
            "emptied: company came and went unseen"
        );
    }
}
