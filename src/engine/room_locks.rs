//! One queue per room inside this process, so concurrent actions on a room take turns instead
//! of racing. The version compare-and-set still guards the database (other instances may write
//! the same room); this only spares one instance from racing itself.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// Prune forgotten rooms' entries whenever the map reaches a multiple of this size.
const PRUNE_EVERY: usize = 1024;

#[derive(Clone, Default)]
pub struct RoomLocks {
    rooms: Arc<Mutex<HashMap<String, Weak<AsyncMutex<()>>>>>,
}

impl RoomLocks {
    /// Waits (first come, first served) until no other action of this process holds the room.
    pub async fn lock(&self, room_id: &str) -> OwnedMutexGuard<()> {
        let mutex = {
            let mut rooms = self
                .rooms
                .lock()
                .expect("the room lock map is never poisoned");
            // A room's lock lives while an action holds or waits for it, so most actions
            // find their room's entry with its lock gone: it is given a new one in place,
            // keeping the key rather than allocating it again.
            match rooms.get_mut(room_id) {
                Some(weak) => weak.upgrade().unwrap_or_else(|| {
                    let mutex = Arc::new(AsyncMutex::new(()));
                    *weak = Arc::downgrade(&mutex);
                    mutex
                }),
                None => {
                    if rooms.len() % PRUNE_EVERY == PRUNE_EVERY - 1 {
                        rooms.retain(|_, weak| weak.strong_count() > 0);
                    }
                    let mutex = Arc::new(AsyncMutex::new(()));
                    rooms.insert(room_id.to_owned(), Arc::downgrade(&mutex));
                    mutex
                }
            }
        };
        mutex.lock_owned().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_holder_per_room_and_rooms_are_independent() {
        let locks = RoomLocks::default();
        let held = locks.lock("a").await;
        assert!(
            tokio::time::timeout(std::time::Duration::from_millis(20), locks.lock("a"))
                .await
                .is_err()
        );
        let _other = locks.lock("b").await;
        drop(held);
        let _again = locks.lock("a").await;
    }
}
