//! A stop that drains (SIGTERM): the server stops taking requests and work, finishes what it
//! has in hand, and hands back to the other servers what it cannot finish, all within the
//! shutdown timeout (`--shutdown-timeout`).
//!
//! The background services that take work from the database (the webhooks' and the notices'
//! dispatchers) run as tasks of a [`Drain`]. When the stop begins each sees it through its
//! [`Draining`], takes nothing more, waits for the deliveries it started until the deadline,
//! keeps what came of them, and lets go of the rows it still holds so that another server
//! takes them at once rather than after their lease. The HTTP server finishes the requests in
//! flight meanwhile, and the writer's queue is committed last (`Store::flush`).

use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// What is kept back from the deadline for the last writes: keeping outcomes and letting
/// rows go, then committing the writer's queue.
pub const LAST_WRITES: Duration = Duration::from_millis(500);

/// The stop as a background service sees it.
#[derive(Clone)]
pub struct Draining {
    stop: watch::Receiver<Option<Instant>>,
}

impl Draining {
    /// Waits until the stop begins; then, the time by which the service must be done.
    pub async fn begun(&mut self) -> Instant {
        // Copied out, so that the channel's guard is not held while waiting below.
        let deadline = self
            .stop
            .wait_for(Option::is_some)
            .await
            .map(|deadline| *deadline);
        match deadline {
            Ok(Some(deadline)) => deadline,
            // The drain is gone: nobody will ask this service to stop, so it never does.
            _ => std::future::pending().await,
        }
    }

    /// The time by which the service must be done, once the stop has begun.
    pub fn deadline(&self) -> Option<Instant> {
        *self.stop.borrow()
    }
}

/// The server's background services that hold work from the database, and their stop.
pub struct Drain {
    stop: watch::Sender<Option<Instant>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl Default for Drain {
    fn default() -> Self {
        Self {
            stop: watch::channel(None).0,
            tasks: Mutex::default(),
        }
    }
}

impl Drain {
    /// How a service started on this drain learns of the stop.
    pub fn watch(&self) -> Draining {
        Draining {
            stop: self.stop.subscribe(),
        }
    }

    /// Runs `service` until it ends, which it does once the stop begins and its work is
    /// finished or handed back.
    pub fn spawn(&self, service: impl std::future::Future<Output = ()> + Send + 'static) {
        let task = tokio::spawn(service);
        self.tasks.lock().expect("never poisoned").push(task);
    }

    /// Begins the stop: every service is to be done by `deadline`, and is waited for until
    /// then. Whether all of them were.
    pub async fn drain(&self, deadline: Instant) -> bool {
        self.stop.send_replace(Some(deadline.max(Instant::now())));
        let tasks = std::mem::take(&mut *self.tasks.lock().expect("never poisoned"));
        let mut all = true;
        for task in tasks {
            all &= tokio::time::timeout_at(deadline, task).await.is_ok();
        }
        all
    }
}
