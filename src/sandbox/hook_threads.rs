//! The threads that run uploaded games' hooks: as many as the pool has worker processes, each
//! taking the next waiting piece of work as soon as it is done with the last.
//!
//! A hook call blocks its thread on a worker's pipe, so it cannot run on the threads that
//! serve requests. Run on tokio's blocking pool, every call paid for a thread to be woken to
//! take it, and (with more calls waiting than workers) for that thread to sleep on the pool's
//! lease and be woken again when a worker came free: under load, dozens of threads took turns
//! at two workers. These threads are only as many as the workers, so under load none of them
//! sleeps between calls: the one that finishes a call takes the next from the queue.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use tokio::sync::oneshot;

use super::pool::PoolError;

type Job = Box<dyn FnOnce() + Send>;

/// A fixed number of threads (started as work first needs them) taking work from one queue.
/// Dropping it lets them finish what is queued and end.
pub(super) struct HookThreads {
    shared: Arc<Shared>,
}

struct Shared {
    most: usize,
    queue: Mutex<Queue>,
    ready: Condvar,
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    /// Threads started and not ended.
    started: usize,
    /// Threads waiting for work.
    idle: usize,
    closed: bool,
}

impl HookThreads {
    /// At most `most` threads (at least one).
    pub(super) fn new(most: usize) -> Self {
        Self {
            shared: Arc::new(Shared {
                most: most.max(1),
                queue: Mutex::default(),
                ready: Condvar::new(),
            }),
        }
    }

    /// Runs `work` on one of the threads, after the work queued before it; its result. A
    /// `work` that panics is answered as a worker that died.
    pub(super) async fn run<T, F>(&self, work: F) -> Result<T, PoolError>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let (done, result) = oneshot::channel();
        self.push(Box::new(move || {
            let _ = done.send(work());
        }))?;
        result
            .await
            .map_err(|_| PoolError::Died("a hook thread stopped in the middle of a call".into()))
    }

    fn push(&self, job: Job) -> Result<(), PoolError> {
        let mut queue = self.shared.lock();
        // A thread notified of work counts as idle until it wakes and takes it: work pushed
        // meanwhile needs another thread, not the same one.
        if queue.jobs.len() >= queue.idle && queue.started < self.shared.most {
            let shared = self.shared.clone();
            let spawned = std::thread::Builder::new()
                .name("turnhouse-hooks".into())
                .spawn(move || serve(&shared));
            match spawned {
                Ok(_) => queue.started += 1,
                // Those already running will take it; with none, nothing can.
                Err(err) if queue.started == 0 => {
                    return Err(PoolError::Unavailable(format!(
                        "no thread could be started for hooks: {err}"
                    )))
                }
                Err(_) => {}
            }
        }
        queue.jobs.push_back(job);
        if queue.idle > 0 {
            self.shared.ready.notify_one();
        }
        Ok(())
    }
}

impl Drop for HookThreads {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.ready.notify_all();
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // Jobs run outside the lock and catch their own panics, so it is never poisoned.
        self.queue.lock().expect("the hook queue is never poisoned")
    }
}

fn serve(shared: &Shared) {
    let mut queue = shared.lock();
    loop {
        if let Some(job) = queue.jobs.pop_front() {
            drop(queue);
            // The job's result goes through its channel; a panic drops the channel, which
            // its caller hears as a failure. This thread goes on either way.
            let _ = catch_unwind(AssertUnwindSafe(job));
            queue = shared.lock();
        } else if queue.closed {
            queue.started -= 1;
            return;
        } else {
            queue.idle += 1;
            queue = shared
                .ready
                .wait(queue)
                .expect("the hook queue is never poisoned");
            queue.idle -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn more_work_than_threads_all_runs_never_more_at_once_than_the_threads() {
        let threads = HookThreads::new(2);
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let calls = (0..12).map(|n| {
            let (running, most) = (running.clone(), most.clone());
            threads.run(move || {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(5));
                running.fetch_sub(1, Ordering::SeqCst);
                n * 10
            })
        });
        let results = futures_util::future::join_all(calls).await;
        let results: Vec<usize> = results.into_iter().map(Result::unwrap).collect();
        assert_eq!(results, (0..12).map(|n| n * 10).collect::<Vec<_>>());
        assert_eq!(most.load(Ordering::SeqCst), 2);
        assert_eq!(threads.shared.lock().started, 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn work_pushed_while_the_one_idle_thread_is_waking_gets_another_thread() {
        let threads = HookThreads::new(2);
        assert_eq!(threads.run(|| 0).await.unwrap(), 0);
        while threads.shared.lock().idle == 0 {
            std::thread::yield_now();
        }
        // One thread, idle. Two pieces of work at once, each waiting for the other to start:
        // on one thread, the first would wait in vain.
        let started = Arc::new(AtomicUsize::new(0));
        let both = |started: Arc<AtomicUsize>| {
            move || {
                started.fetch_add(1, Ordering::SeqCst);
                let waited = std::time::Instant::now();
                while started.load(Ordering::SeqCst) < 2 {
                    if waited.elapsed() > Duration::from_secs(10) {
                        return false;
                    }
                    std::thread::yield_now();
                }
                true
            }
        };
        let (first, second) = tokio::join!(
            threads.run(both(started.clone())),
            threads.run(both(started.clone()))
        );
        assert_eq!((first.unwrap(), second.unwrap()), (true, true));
        assert_eq!(threads.shared.lock().started, 2);
    }

    #[tokio::test]
    async fn work_that_panics_fails_alone_and_the_threads_go_on() {
        let threads = HookThreads::new(1);
        let failed = threads.run(|| -> usize { panic!("a bug in a hook") }).await;
        assert!(matches!(failed, Err(PoolError::Died(_))), "{failed:?}");
        assert_eq!(threads.run(|| 7).await.unwrap(), 7);
        assert_eq!(threads.shared.lock().started, 1);
    }

    #[tokio::test]
    async fn dropped_they_end_once_the_queue_is_empty() {
        let threads = HookThreads::new(3);
        for n in 0..3 {
            assert_eq!(threads.run(move || n).await.unwrap(), n);
        }
        let shared = threads.shared.clone();
        drop(threads);
        for _ in 0..200 {
            if shared.lock().started == 0 {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("{} hook threads still running", shared.lock().started);
    }
}
