//! A cache of what the database holds, trusted only while its server is alone on the database
//! ([`LastLook`]), and never filled with what was read before a change this server made.

use std::borrow::Borrow;
use std::hash::Hash;
use std::sync::Mutex;

use super::{BoundedCache, LastLook};
use crate::store::Store;

pub struct WhileAlone<K, V> {
    entries: BoundedCache<K, V>,
    /// Bumped by every change this server makes; a value read before it is not remembered.
    epoch: Mutex<u64>,
    /// Whether the server has been alone on its database since the last look.
    look: LastLook,
}

/// Where the cache stood before a value was read, to hand back to [`WhileAlone::remember`];
/// `None` while the database is shared, when nothing read is remembered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Epoch(Option<u64>);

impl<K: Hash + Eq, V: Clone> WhileAlone<K, V> {
    /// A cache of at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: BoundedCache::new(capacity),
            epoch: Mutex::new(0),
            look: LastLook::default(),
        }
    }

    /// What is held for `key`, if the server is alone and holds it.
    pub fn get<Q>(&self, store: &Store, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        match self.trusted(store) {
            true => self.entries.get(key),
            false => {
                self.entries.clear();
                None
            }
        }
    }

    /// Call before reading a value from the database.
    pub fn epoch(&self, store: &Store) -> Epoch {
        Epoch(
            self.trusted(store)
                .then(|| *self.epoch.lock().expect("never poisoned")),
        )
    }

    /// Whether what is held is current now, forgetting it all first if company came.
    fn trusted(&self, store: &Store) -> bool {
        self.look.trusted(store, || self.forget_all())
    }

    /// Remembers `value`, read in `epoch`, unless the cache changed since.
    pub fn remember(&self, Epoch(epoch): Epoch, key: K, value: V) {
        let current = self.epoch.lock().expect("never poisoned");
        if epoch == Some(*current) {
            self.entries.insert(key, value);
        }
    }

    /// Forgets `key`, and whatever is being read of anything right now.
    pub fn forget<Q>(&self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let mut current = self.epoch.lock().expect("never poisoned");
        *current += 1;
        self.entries.remove(key);
    }

    /// Forgets everything, including what is being read right now.
    pub fn forget_all(&self) {
        let mut current = self.epoch.lock().expect("never poisoned");
        *current += 1;
        self.entries.clear();
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
