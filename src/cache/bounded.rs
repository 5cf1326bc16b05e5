//! A cache that never holds more than a fixed number of entries, whatever the number of keys
//! (rooms, players) it sees: two generations, the older dropped whole when the newer fills up.
//! Every operation is O(1); an entry read from the older generation moves to the newer, so what
//! is in use survives and what is not ages out.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

pub struct BoundedCache<K, V> {
    generations: Mutex<Generations<K, V>>,
    /// Entries per generation: the cache holds at most twice this.
    per_generation: usize,
}

struct Generations<K, V> {
    young: HashMap<K, V>,
    old: HashMap<K, V>,
}

impl<K: Hash + Eq, V: Clone> BoundedCache<K, V> {
    /// A cache of at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        Self {
            generations: Mutex::new(Generations {
                young: HashMap::new(),
                old: HashMap::new(),
            }),
            per_generation: (capacity / 2).max(1),
        }
    }

    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let mut generations = self.generations.lock().expect("never poisoned");
        if let Some(value) = generations.young.get(key) {
            return Some(value.clone());
        }
        let (key, value) = generations.old.remove_entry(key)?;
        let found = value.clone();
        let retired = generations.put(key, value, self.per_generation);
        drop(generations);
        drop(retired);
        Some(found)
    }

    pub fn insert(&self, key: K, value: V) {
        self.insert_unless(key, || value, |_| false);
    }

    /// Inserts `value()` unless the entry already held for `key` is one `keep` prefers,
    /// atomically; `value` is only called when it is inserted.
    pub fn insert_unless(&self, key: K, value: impl FnOnce() -> V, keep: impl FnOnce(&V) -> bool) {
        let mut generations = self.generations.lock().expect("never poisoned");
        let held = match generations.young.get(&key) {
            Some(held) => Some(held),
            None => generations.old.get(&key),
        };
        if held.is_some_and(keep) {
            return;
        }
        generations.old.remove(&key);
        let retired = generations.put(key, value(), self.per_generation);
        drop(generations);
        drop(retired);
    }

    pub fn clear(&self) {
        let mut generations = self.generations.lock().expect("never poisoned");
        generations.young.clear();
        generations.old.clear();
    }

    pub fn len(&self) -> usize {
        let generations = self.generations.lock().expect("never poisoned");
        generations.young.len() + generations.old.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn remove<Q>(&self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let mut generations = self.generations.lock().expect("never poisoned");
        generations.young.remove(key);
        generations.old.remove(key);
    }
}

impl<K: Hash + Eq, V> Generations<K, V> {
    /// Inserts, and hands back the old generation when the young one took its place, for the
    /// caller to drop once the lock is released: dropping thousands of entries (rooms, say)
    /// would otherwise keep every other caller waiting.
    #[must_use]
    fn put(&mut self, key: K, value: V, per_generation: usize) -> Option<HashMap<K, V>> {
        self.young.insert(key, value);
        if self.young.len() >= per_generation {
            let young = std::mem::take(&mut self.young);
            return Some(std::mem::replace(&mut self.old, young));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_stays_within_its_capacity_and_keeps_what_is_in_use() {
        let cache = BoundedCache::new(100);
        cache.insert(0, 0);
        for key in 1..100_000 {
            cache.insert(key, key);
            // Key 0 is read all the time: it never ages out.
            assert_eq!(cache.get(&0), Some(0));
            assert!(cache.len() <= 100);
        }
        assert_eq!(cache.get(&1), None, "long unused");
        assert_eq!(cache.get(&99_999), Some(99_999));
        cache.remove(&0);
        assert_eq!(cache.get(&0), None);
        cache.insert_unless(1, || 5, |_| true);
        cache.insert_unless(1, || 3, |held| *held > 3);
        assert_eq!(cache.get(&1), Some(5), "the held entry is preferred");
        cache.insert_unless(1, || 7, |held| *held > 7);
        assert_eq!(cache.get(&1), Some(7));
        cache.clear();
        assert_eq!(cache.len(), 0);
    }
}
