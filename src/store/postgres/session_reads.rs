//! Requests' sessions, read together.
//!
//! On PostgreSQL a server never trusts a session it remembers (another server may have ended
//! it, or rotated its token), so every request with a token reads its session: most of the
//! statements a server sends. Read one at a time, each also took a pooled connection, which
//! sqlx pings when it hands it out and again when it takes it back, so three round trips a
//! request, each a wake-up of a PostgreSQL process.
//!
//! So the reads are coalesced the way the writer coalesces writes: the first request to need
//! a session starts a read at once, and those that arrive while it is out share the next one,
//! a single statement over all their ids, on a connection the reading task keeps while it has
//! work. Each request is still answered by a read that began
//! after it arrived, so a session ended or re-keyed anywhere stops working at once, as before.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sqlx::pool::PoolConnection;
use sqlx::{PgPool, Postgres};
use tokio::sync::oneshot;

use super::super::sessions::{session, sessions_in};
use super::super::types::StoreError;
use crate::domain::records::Session;

type Answer = Result<Option<Session>, Arc<StoreError>>;

#[derive(Default)]
struct Waiting {
    /// Who waits for which session: two requests of one player share its row.
    readers: HashMap<String, Vec<oneshot::Sender<Answer>>>,
    /// Whether a read is out; the task making it takes the next one when it is back.
    reading: bool,
}

pub(in crate::store) struct SessionReads {
    pool: PgPool,
    waiting: Mutex<Waiting>,
    /// The runtime that opened the store, which outlives every request: a read spawned on a
    /// request's own runtime (an HTTP worker's) would end with that worker when the server
    /// drains, failing the requests of the other workers that shared it.
    runtime: tokio::runtime::Handle,
}

impl SessionReads {
    pub(super) fn new(pool: PgPool) -> Arc<Self> {
        Arc::new(Self {
            pool,
            waiting: Mutex::default(),
            runtime: tokio::runtime::Handle::current(),
        })
    }

    /// Session `id` while it works, with its player.
    pub(in crate::store) async fn read(
        self: &Arc<Self>,
        id: &str,
    ) -> Result<Option<Session>, StoreError> {
        let (sender, answer) = oneshot::channel();
        let first = {
            let mut waiting = self.waiting.lock().expect("never poisoned");
            waiting
                .readers
                .entry(id.to_owned())
                .or_default()
                .push(sender);
            !std::mem::replace(&mut waiting.reading, true)
        };
        // A task of its own, not this request's: a request given up mid-read (its client
        // went away) must not leave the others waiting.
        if first {
            self.runtime.spawn(Arc::clone(self).serve());
        }
        match answer.await {
            Ok(answer) => answer.map_err(StoreError::SharedRead),
            // The task ended without answering (its runtime is stopping): read it alone.
            Err(_) => session::<Postgres>(&self.pool, id).await,
        }
    }

    /// Reads what is waited for, again and again, until nobody waits.
    async fn serve(self: Arc<Self>) {
        let mut serving = Serving {
            waiting: &self.waiting,
            handed_back: false,
        };
        let mut held = None;
        loop {
            let readers = {
                let mut waiting = self.waiting.lock().expect("never poisoned");
                if waiting.readers.is_empty() {
                    waiting.reading = false;
                    serving.handed_back = true;
                    return;
                }
                std::mem::take(&mut waiting.readers)
            };
            let ids: Vec<String> = readers.keys().cloned().collect();
            match self.sessions_in(&mut held, &ids).await {
                Ok(found) => {
                    let mut found: HashMap<String, Session> = found
                        .into_iter()
                        .map(|session| (session.id.to_string(), session))
                        .collect();
                    for (id, senders) in readers {
                        let session = found.remove(&id);
                        for sender in senders {
                            let _ = sender.send(Ok(session.clone()));
                        }
                    }
                }
                Err(err) => {
                    let err = Arc::new(err);
                    for sender in readers.into_values().flatten() {
                        let _ = sender.send(Err(Arc::clone(&err)));
                    }
                }
            }
        }
    }

    /// The working sessions among `ids`, read on the connection `held` from the last read if
    /// there is one. The pool checks a connection (a round trip) when it hands it out and
    /// again when it takes it back; a task reading again and again under load keeps its own
    /// rather than pay both for every read. A read that fails on a connection (one the
    /// database dropped, say) is made once more on a connection the pool checks: it only
    /// reads, so making it twice changes nothing.
    async fn sessions_in(
        &self,
        held: &mut Option<PoolConnection<Postgres>>,
        ids: &[String],
    ) -> Result<Vec<Session>, StoreError> {
        let mut conn = match held.take() {
            Some(conn) => conn,
            None => self.pool.acquire().await?,
        };
        let found = match sessions_in::<Postgres>(&mut conn, ids).await {
            Ok(found) => found,
            Err(_) => {
                conn.close_on_drop();
                drop(conn);
                conn = self.pool.acquire().await?;
                sessions_in::<Postgres>(&mut conn, ids).await?
            }
        };
        *held = Some(conn);
        Ok(found)
    }
}

/// While a task serves the queue: should it stop without handing it back (a panic, or the
/// runtime shutting down), the queue is freed for the next request, and those waiting learn
/// that no answer is coming (each then reads its session alone) rather than wait forever.
struct Serving<'a> {
    waiting: &'a Mutex<Waiting>,
    handed_back: bool,
}

impl Drop for Serving<'_> {
    fn drop(&mut self) {
        if self.handed_back {
            return;
        }
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.reading = false;
            waiting.readers.clear();
        }
    }
}
