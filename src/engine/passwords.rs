//! Passwords: setting one, and signing in with a name and one.
//!
//! Hashing is slow on purpose (see [`crate::domain::passwords`]), so it runs on the blocking
//! pool, at most [`Hashing::permits`] at a time: one fewer than the cores, so that however many
//! sign-ins arrive, a core is left for the rooms. A sign-in that waits longer than
//! [`QUEUE_WAIT`] for its turn is answered `503` (try again shortly) rather than queued
//! without end. An unknown name is checked against a dummy hash, so it takes as long to refuse
//! as a wrong password, and both are the same `401 invalid_credentials`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use super::sessions::SignedIn;
use super::{Engine, EngineError};
use crate::domain::passwords;
use crate::model::Session;

/// The longest a sign-in waits for a turn to hash.
const QUEUE_WAIT: Duration = Duration::from_secs(2);

/// Turns at hashing.
pub(super) struct Hashing {
    permits: Arc<Semaphore>,
    /// Hashes made or checked (for `GET /metrics`): one per sign-in with a password, whether
    /// the name is known or not.
    pub(super) done: AtomicU64,
}

impl Default for Hashing {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            permits: Arc::new(Semaphore::new(cores.saturating_sub(1).max(1))),
            done: AtomicU64::new(0),
        }
    }
}

impl Hashing {
    /// Runs `work` (a hash or a verification) on the blocking pool when a turn is free.
    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, EngineError> {
        let permit = tokio::time::timeout(QUEUE_WAIT, self.permits.clone().acquire_owned())
            .await
            .map_err(|_| EngineError::SignInBusy)?
            .expect("never closed");
        let outcome = tokio::task::spawn_blocking(move || {
            let outcome = work();
            drop(permit);
            outcome
        })
        .await
        .map_err(|_| EngineError::SignInBusy)?;
        self.done.fetch_add(1, Ordering::Relaxed);
        Ok(outcome)
    }
}

impl Engine {
    /// Sets the caller's password. A player who has one must give it as `current`.
    pub async fn set_password(
        &self,
        me: &SignedIn,
        password: &str,
        current: Option<&str>,
    ) -> Result<(), EngineError> {
        passwords::check(password).map_err(EngineError::InvalidPassword)?;
        if let Some(stored) = self.store.password_of(&me.player.id).await? {
            let current = current.ok_or(EngineError::InvalidCredentials)?.to_owned();
            let matches = self
                .hashing
                .run(move || passwords::verify(&current, &stored))
                .await?;
            if !matches {
                return Err(EngineError::InvalidCredentials);
            }
        }
        let password = password.to_owned();
        let hash = self.hashing.run(move || passwords::hash(&password)).await?;
        Ok(self.store.set_password(&me.player.id, &hash).await?)
    }

    /// Opens a session for the player named `username` if `password` is theirs: the session
    /// and its token. Anything else is [`EngineError::InvalidCredentials`], in the same time.
    pub async fn sign_in_with_password(
        &self,
        username: &str,
        password: &str,
        label: &str,
    ) -> Result<(Session, String), EngineError> {
        let (player, stored) = match self.store.password_by_name(username).await? {
            Some((player, Some(stored))) => (Some(player), Some(stored)),
            _ => (None, None),
        };
        let password = password.to_owned();
        let matches = self
            .hashing
            .run(move || match stored {
                Some(stored) => passwords::verify(&password, &stored),
                None => {
                    passwords::verify(&password, passwords::dummy_hash());
                    false
                }
            })
            .await?;
        match player {
            Some(player) if matches => self.open_session(&player, label).await,
            _ => Err(EngineError::InvalidCredentials),
        }
    }
}
