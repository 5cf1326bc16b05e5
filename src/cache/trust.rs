//! Whether what a cache kept may still be trusted: only while its server has been alone on
//! its database ([`Store::solitude`]) since the cache last looked. Another server that came
//! in between, even one gone again by now, may have changed anything.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::store::Store;

/// Not a count of joins: the database was shared at the last look (or there was none yet).
const SHARED: u64 = u64::MAX;

/// What one cache saw at its last look.
pub struct LastLook(AtomicU64);

impl Default for LastLook {
    fn default() -> Self {
        Self(AtomicU64::new(SHARED))
    }
}

impl LastLook {
    /// Looks again: whether the cache may be trusted now. When the server is alone but was not
    /// (or not with the same count) at the last look, `empty` runs before the cache is trusted
    /// again, so no caller trusts it before it is emptied.
    pub fn trusted(&self, store: &Store, empty: impl FnOnce()) -> bool {
        match store.solitude() {
            Some(joins) => {
                if self.0.load(Ordering::Acquire) != joins {
                    empty();
                    self.0.store(joins, Ordering::Release);
                }
                true
            }
            None => {
                self.0.store(SHARED, Ordering::Release);
                false
            }
        }
    }
}
