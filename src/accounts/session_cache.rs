//! What the accounts slice keeps in memory: sessions, for checking tokens without a database
//! read, and the sessions ended lately, for the streams they hold open.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::cache::WhileAlone;
use crate::domain::records::Session;
use crate::domain::time::Timestamp;

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
/// since another server may end a session or rotate its token. A change here forgets the
/// session and every read in flight, so a session read before it is never put back afterwards.
pub(super) type SessionCache = WhileAlone<String, Arc<Session>>;
