//! What the accounts slice keeps in memory: sessions, for checking tokens without a database
//! read, and the sessions ended lately, for the streams they hold open.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::cache::{BoundedCache, LastLook};
use crate::domain::records::Session;
use crate::domain::time::Timestamp;
use crate::store::Store;

/// How long an ended session is remembered for streams to notice.
const ENDED_KEPT: Duration = Duration::from_secs(60);

/// Sessions ended or re-keyed lately, published to every open stream whenever more are.
pub(super) struct EndedSessions {
    /// Each change by session and time, so a session re-keyed twice wakes streams twice,
    /// while one change heard of again (the looks overlap) wakes none.
    recent: Mutex<HashMap<(String, Timestamp), Instant>>,
    published: watch::Sender<Arc<Vec<String>>>,
}

impl Default for EndedSessions {
    fn default() -> Self {
        Self {
            recent: Mutex::default(),
            published: watch::Sender::new(Arc::default()),
        }
    }
}

impl EndedSessions {
    pub(super) fn add(&self, changes: Vec<(String, Timestamp)>) {
        if changes.is_empty() {
            return;
        }
        let mut recent = self.recent.lock().expect("never poisoned");
        let now = Instant::now();
        recent.retain(|_, at| now.duration_since(*at) < ENDED_KEPT);
        let mut news = false;
        for change in changes {
            news |= recent.insert(change, now).is_none();
        }
        if news {
            let mut ids: Vec<String> = recent.keys().map(|(id, _)| id.clone()).collect();
            ids.sort_unstable();
            ids.dedup();
            self.published.send_replace(Arc::new(ids));
        }
    }

    pub(super) fn subscribe(&self) -> watch::Receiver<Arc<Vec<String>>> {
        self.published.subscribe()
    }
}

/// Sessions kept in memory so that a request's token is checked without a database read.
///
/// Freshness, as for rooms: the cache is read and filled only while this server is alone on
/// its database, and emptied whenever it is not or another server came since the last look,
/// since another server may end a session or rotate its token. A change here bumps the epoch,
/// so a session read before it is never put back afterwards.
pub(super) struct SessionCache {
    /// Shared, so that a request's check copies no more of its session than the caller needs.
    sessions: BoundedCache<String, Arc<Session>>,
    epoch: Mutex<u64>,
    /// Whether the server has been alone on its database since the last look.
    look: LastLook,
}

impl SessionCache {
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            sessions: BoundedCache::new(capacity),
            epoch: Mutex::new(0),
            look: LastLook::default(),
        }
    }

    pub(super) fn get(&self, store: &Store, id: &str) -> Option<Arc<Session>> {
        match self.trusted(store) {
            true => self.sessions.get(id),
            false => {
                self.sessions.clear();
                None
            }
        }
    }

    /// Call before reading a session from the database: `None` while the database is shared.
    pub(super) fn epoch(&self, store: &Store) -> Option<u64> {
        self.trusted(store)
            .then(|| *self.epoch.lock().expect("never poisoned"))
    }

    /// Whether what is held is current now, forgetting it all first if company came.
    pub(super) fn trusted(&self, store: &Store) -> bool {
        self.look.trusted(store, || self.forget_all())
    }

    pub(super) fn remember(&self, epoch: Option<u64>, session: &Arc<Session>) {
        let current = self.epoch.lock().expect("never poisoned");
        if epoch == Some(*current) {
            self.sessions
                .insert(session.id.to_string(), Arc::clone(session));
        }
    }

    pub(super) fn forget(&self, id: &str) {
        let mut current = self.epoch.lock().expect("never poisoned");
        *current += 1;
        self.sessions.remove(id);
    }

    /// Forgets every session (a player was renamed: the sessions held carry their old name).
    pub(super) fn forget_all(&self) {
        let mut current = self.epoch.lock().expect("never poisoned");
        *current += 1;
        self.sessions.clear();
    }

    pub(super) fn len(&self) -> usize {
        self.sessions.len()
    }
}
