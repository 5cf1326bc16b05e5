//! Passwords: setting one, and signing in with a name and one.
//!
//! Hashing is slow on purpose (see [`crate::domain::passwords`]), so it runs on threads of its
//! own, one fewer than the cores, each at the lowest scheduling priority (nice 19): however
//! many sign-ins arrive, the rooms' threads are served first and hashes take what CPU is left,
//! so a flood of sign-ins slows the sign-ins, not the games (measured in
//! `docs/benchmarks.md`). A sign-in that waits longer than
//! [`QUEUE_WAIT`] for its turn is answered `503` (try again shortly) rather than queued
//! without end. An unknown name is checked against a dummy hash, so it takes as long to refuse
//! as a wrong password, and both are the same `401 invalid_credentials`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::{oneshot, Semaphore};

use super::sessions::SignedIn;
use super::{AccountError, Accounts};
use crate::domain::passwords;
use crate::domain::records::Session;
use crate::store::Ending;

/// The longest a sign-in waits for a turn to hash.
const QUEUE_WAIT: Duration = Duration::from_secs(2);

/// A hash to make or check, on one of the hashing threads.
type Job = Box<dyn FnOnce() + Send>;

/// Turns at hashing, and the threads that hash.
pub(super) struct Hashing {
    permits: Arc<Semaphore>,
    threads: usize,
    /// Started at the first hash: most servers never see a password.
    jobs: OnceLock<Mutex<mpsc::Sender<Job>>>,
    /// Hashes made or checked (for `GET /metrics`): one per sign-in with a password, whether
    /// the name is known or not.
    pub(super) done: AtomicU64,
}

impl Default for Hashing {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = cores.saturating_sub(1).max(1);
        Self {
            permits: Arc::new(Semaphore::new(threads)),
            threads,
            jobs: OnceLock::new(),
            done: AtomicU64::new(0),
        }
    }
}

/// Starts `count` hashing threads at the lowest priority, taking jobs from one queue; they end
/// when the queue's sender (the engine's [`Hashing`]) is dropped.
fn start_threads(count: usize) -> mpsc::Sender<Job> {
    let (sender, receiver) = mpsc::channel::<Job>();
    let receiver = Arc::new(Mutex::new(receiver));
    for n in 0..count {
        let receiver = receiver.clone();
        let started = std::thread::Builder::new()
            .name(format!("password-hash-{n}"))
            .spawn(move || {
                lowest_priority();
                loop {
                    let job = receiver.lock().expect("never poisoned").recv();
                    match job {
                        Ok(job) => job(),
                        Err(_) => return,
                    }
                }
            });
        if let Err(err) = started {
            tracing::warn!(error = %err, "could not start a password-hashing thread");
        }
    }
    sender
}

/// Lowers the calling thread (alone: Linux keeps a nice value per thread) to nice 19, so the
/// scheduler serves every other thread of the server first.
fn lowest_priority() {
    // SAFETY: gettid and setpriority take and return plain integers and touch no memory.
    let outcome = unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 19)
    };
    if outcome != 0 {
        tracing::warn!(
            error = %std::io::Error::last_os_error(),
            "could not lower a password-hashing thread's priority"
        );
    }
}

impl Hashing {
    /// Runs `work` (a hash or a verification) on a hashing thread when a turn is free.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, AccountError> {
        let permit = tokio::time::timeout(QUEUE_WAIT, self.permits.clone().acquire_owned())
            .await
            .map_err(|_| AccountError::SignInBusy)?
            .expect("never closed");
        let (answer, outcome) = oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = answer.send(work());
            drop(permit);
        });
        let jobs = self
            .jobs
            .get_or_init(|| Mutex::new(start_threads(self.threads)));
        jobs.lock()
            .expect("never poisoned")
            .send(job)
            .map_err(|_| AccountError::SignInBusy)?;
        // No answer: the hashing threads could not be started.
        let outcome = outcome.await.map_err(|_| AccountError::SignInBusy)?;
        self.done.fetch_add(1, Ordering::Relaxed);
        Ok(outcome)
    }
}

impl Accounts {
    /// Sets the caller's password. A player who has one must give it as `current`. Every other
    /// session of the account ends with it (its streams too): whoever else held a token, a
    /// stolen one say, is signed out, and can no longer sign in with a password of their own.
    pub async fn set_password(
        &self,
        me: &SignedIn,
        password: &str,
        current: Option<&str>,
    ) -> Result<(), AccountError> {
        passwords::check(password).map_err(AccountError::InvalidPassword)?;
        if let Some(stored) = self.store.password_of(&me.player.id).await? {
            let current = current.ok_or(AccountError::InvalidCredentials)?.to_owned();
            let matches = self
                .hashing
                .run(move || passwords::verify(&current, &stored))
                .await?;
            if !matches {
                return Err(AccountError::InvalidCredentials);
            }
        }
        let password = password.to_owned();
        let hash = self.hashing.run(move || passwords::hash(&password)).await?;
        let others = Ending::AllBut(me.session.clone());
        let told = self.password_changed_letter("on a device signed in to the account");
        let ended = (self.store)
            .set_password(&me.player.id, &hash, others, told)
            .await?;
        self.sessions_ended(ended);
        Ok(())
    }

    /// Opens a session for the player named `username` if `password` is theirs: the session
    /// and its token. Anything else is [`AccountError::InvalidCredentials`], in the same time.
    pub async fn sign_in_with_password(
        &self,
        username: &str,
        password: &str,
        label: &str,
    ) -> Result<(Session, String), AccountError> {
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
            _ => Err(AccountError::InvalidCredentials),
        }
    }
}
