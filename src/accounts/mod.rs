//! Accounts: players, their sessions (a token per device), passwords, sign-in codes, and when
//! each player was last seen. Ending a session or replacing its token refuses it at once and
//! closes the streams it holds open, on every server sharing the database.
//!
//! One stop in the life of a move: `docs/internals.md`.

mod email;
mod error;
mod last_seen;
mod passwords;
mod registration;
mod session_cache;
mod sessions;

use std::sync::Arc;
use std::time::Duration;

pub use email::{parse_address, AccountMail, EmailView, MAX_ADDRESS, RESET_LIFETIME};
pub use error::AccountError;
pub use sessions::{SignedIn, CODE_LIFETIME};

use crate::metrics::Exposition;
use crate::store::Store;

/// Sessions kept in memory for checking tokens (and players' last "seen" marks).
const CACHED_SESSIONS: usize = 65_536;

/// How many times a write that lost a race (a code or a name drawn twice) is tried again.
const MAX_ATTEMPTS: usize = 20;

/// Players and their sessions.
#[derive(Clone)]
pub struct Accounts {
    store: Store,
    sessions: Arc<session_cache::SessionCache>,
    /// Sessions ended lately, for the streams they hold open.
    ended: Arc<session_cache::EndedSessions>,
    /// Turns at hashing passwords.
    hashing: Arc<passwords::Hashing>,
    /// When this server last wrote that each player was seen.
    seen: Arc<last_seen::SeenMarks>,
    /// How often a player's "seen" is written at most.
    seen_every: Duration,
    /// Where mailed links point, and whether mail goes.
    mail: Arc<AccountMail>,
}

impl Accounts {
    /// The accounts in `store`; a player's "seen" is written at most every `seen_every`.
    /// Starts the task that learns of sessions other servers end.
    pub fn start(store: Store, seen_every: Duration) -> Self {
        let accounts = Self {
            store,
            sessions: Arc::new(session_cache::SessionCache::new(CACHED_SESSIONS)),
            ended: Arc::default(),
            hashing: Arc::default(),
            seen: Arc::new(last_seen::SeenMarks::new(CACHED_SESSIONS)),
            seen_every,
            mail: Arc::default(),
        };
        tokio::spawn(sessions::follow_ended_sessions(accounts.clone()));
        accounts
    }

    /// Mails links as `mail` says (by default, none).
    pub fn with_mail(mut self, mail: AccountMail) -> Self {
        self.mail = Arc::new(mail);
        self
    }

    /// Figures for `GET /metrics`.
    pub fn render_metrics(&self, out: &mut Exposition) {
        out.single(
            "turnhouse_sessions_cached",
            "gauge",
            "Sessions held in memory for checking tokens.",
            self.sessions.len(),
        );
        out.single(
            "turnhouse_password_hashes_total",
            "counter",
            "Argon2 hashes made or checked: one per password set or sign-in with a password, known name or not.",
            self.hashing.done.load(std::sync::atomic::Ordering::Relaxed),
        );
    }
}
