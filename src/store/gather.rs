//! Group commit when writes trickle in. The writer commits whatever waits for it, and a
//! commit has a cost of its own whatever it holds: the transaction, the pages the log gets,
//! the sync, a wake-up for each waiter. When the actions under way are slow to reach the writer
//! (an uploaded game's hooks run in the sandbox, two or so at a time), it found one to three
//! writes waiting at each turn, and those commits took more of the machine than the
//! actions' own work (`docs/benchmarks.md`). So when few writes wait but many more are on
//! their way, the writer waits a little for them, as PostgreSQL's `commit_delay` does when
//! `commit_siblings` transactions are active. A write waits at most [`MOST_WAIT`] for it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

/// The batch the writer stops waiting at.
const FULL_ENOUGH: usize = 16;
/// The writer waits only while at least this many writes are on their way.
const SIBLINGS: usize = 4;
/// How long the writer sleeps before looking again; it never wakes for each write.
const SLICE: Duration = Duration::from_micros(200);
/// The most a batch waits for writes on their way.
const MOST_WAIT: Duration = Duration::from_millis(1);

/// How many actions have begun that will hand a write to the writer.
#[derive(Debug, Clone, Default)]
pub(super) struct OnTheirWay(Arc<AtomicUsize>);

/// An action's write on its way to the writer; dropped when it is handed over (or when the
/// action ends without writing).
#[derive(Debug)]
pub struct WriteComing(Arc<AtomicUsize>);

impl OnTheirWay {
    pub(super) fn announce(&self) -> WriteComing {
        self.0.fetch_add(1, Ordering::Relaxed);
        WriteComing(self.0.clone())
    }

    fn count(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    /// Tops `batch` (of writes) up from `queue` while it is small and more writes are on their way, for at
    /// most [`MOST_WAIT`]. It sleeps the thread: only for a writer on a thread of its own.
    pub(super) fn gather<W>(&self, batch: &mut Vec<W>, queue: &mut mpsc::Receiver<W>, most: usize) {
        let until = Instant::now() + MOST_WAIT;
        while batch.len() < FULL_ENOUGH && self.count() >= SIBLINGS && Instant::now() < until {
            std::thread::sleep(SLICE);
            while batch.len() < most {
                match queue.try_recv() {
                    Ok(write) => batch.push(write),
                    Err(_) => break,
                }
            }
        }
    }
}

impl Drop for WriteComing {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_writes_on_their_way_a_small_batch_takes_what_has_arrived_since() {
        let on_their_way = OnTheirWay::default();
        let (send, mut queue) = mpsc::channel(64);
        let coming: Vec<WriteComing> = (0..SIBLINGS).map(|_| on_their_way.announce()).collect();
        for write in 1..=5 {
            send.try_send(write).unwrap();
        }
        let mut batch = vec![0];
        on_their_way.gather(&mut batch, &mut queue, 4);
        assert_eq!(
            batch,
            vec![0, 1, 2, 3],
            "no more than the most a batch holds"
        );
        drop(coming);
        assert_eq!(on_their_way.count(), 0);
    }

    #[test]
    fn with_few_writes_on_their_way_the_batch_goes_as_it_is() {
        let on_their_way = OnTheirWay::default();
        let (send, mut queue) = mpsc::channel(64);
        let _coming: Vec<WriteComing> = (1..SIBLINGS).map(|_| on_their_way.announce()).collect();
        send.try_send(1).unwrap();
        let mut batch = vec![0];
        on_their_way.gather(&mut batch, &mut queue, 256);
        assert_eq!(batch, vec![0], "nothing waited for");
        assert_eq!(queue.try_recv().unwrap(), 1);
    }
}
