//! Knowing whether this is the only server using a database file, and whether another came
//! (and perhaps went) since a cache last looked.
//!
//! Every store holds a shared (read) POSIX lock on a small file beside the database,
//! `<database>-instances`, for as long as it is open. Asking the kernel whether a write lock
//! could be taken (`F_GETLK`) then says, in one system call and without waiting, whether any
//! other process holds the file open; stores in this process are counted here. A POSIX lock
//! is released when its process closes any descriptor of the file, so each process opens the
//! file once and shares it between its stores.
//!
//! The file's first eight bytes count every store that ever joined, in any process: each
//! joins by taking its lock and then adding one, through a shared mapping of the file. A
//! store that found itself alone at one count is still alone while the count stands, so most
//! checks are one read of memory, not a system call; and a cache that last looked at another
//! count knows that company came since, even if it has already gone.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What a process shares between its stores on one database: the lock file, its count of
/// joins, and how many of its stores are open.
struct Shared {
    file: File,
    joins: Option<Joins>,
    here: AtomicUsize,
}

/// Open stores of this process, by canonical database path.
static OPEN: Mutex<Option<HashMap<PathBuf, Arc<Shared>>>> = Mutex::new(None);

/// A value no count of joins takes: not yet found alone.
const UNCHECKED: u64 = u64::MAX;

pub struct ServersOnFile {
    database: PathBuf,
    shared: Arc<Shared>,
    /// The count of joins at which this store last found itself alone.
    alone_at: AtomicU64,
}

impl ServersOnFile {
    /// Registers a store on `database` (which must exist).
    pub fn join(database: &Path) -> io::Result<Self> {
        let database = database.canonicalize()?;
        let mut open = OPEN.lock().expect("never poisoned");
        let open = open.get_or_insert_with(HashMap::new);
        let shared = match open.get(&database) {
            Some(shared) => {
                shared.here.fetch_add(1, Ordering::AcqRel);
                shared.clone()
            }
            None => {
                let mut name = database.clone().into_os_string();
                name.push("-instances");
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(name)?;
                lock(&file, libc::F_SETLK, libc::F_RDLCK)?;
                // Without a mapping (a file system that cannot share one), every check asks
                // the kernel, and only company present at a check is seen.
                let joins = Joins::map(&file).ok();
                let shared = Arc::new(Shared {
                    file,
                    joins,
                    here: AtomicUsize::new(1),
                });
                open.insert(database.clone(), shared.clone());
                shared
            }
        };
        // After the lock is held: a store that finds no lock at one count sees another count
        // once this one is here.
        if let Some(joins) = &shared.joins {
            joins.counter().fetch_add(1, Ordering::SeqCst);
        }
        Ok(Self {
            database,
            shared,
            alone_at: AtomicU64::new(UNCHECKED),
        })
    }

    /// `Some(joins)` when no other store, in this process or another, has the database open;
    /// `joins` counts the stores that ever opened it, so a caller that saw another count
    /// before knows that another store came since. `None` while it is shared.
    pub fn solitude(&self) -> Option<u64> {
        // Read before asking the kernel: a store that joins after the answer adds to it.
        let joins = self
            .shared
            .joins
            .as_ref()
            .map_or(0, |j| j.counter().load(Ordering::SeqCst));
        if self.shared.here.load(Ordering::Acquire) > 1 {
            return None;
        }
        if self.shared.joins.is_some() && self.alone_at.load(Ordering::Acquire) == joins {
            return Some(joins);
        }
        // If the kernel cannot answer, assume company: that only costs a database read.
        let alone = lock(&self.shared.file, libc::F_GETLK, libc::F_WRLCK)
            .is_ok_and(|held| held == libc::F_UNLCK);
        if !alone {
            return None;
        }
        self.alone_at.store(joins, Ordering::Release);
        Some(joins)
    }
}

impl Drop for ServersOnFile {
    fn drop(&mut self) {
        let mut open = OPEN.lock().expect("never poisoned");
        if self.shared.here.fetch_sub(1, Ordering::AcqRel) == 1 {
            // Dropping the last handle closes the file, which releases the lock.
            if let Some(open) = open.as_mut() {
                open.remove(&self.database);
            }
        }
    }
}

/// The lock file's first eight bytes, mapped shared: the count of joins.
struct Joins(NonNull<AtomicU64>);

// SAFETY: the mapping is only reached through atomic operations, from any thread.
unsafe impl Send for Joins {}
// SAFETY: as above.
unsafe impl Sync for Joins {}

impl Joins {
    fn map(file: &File) -> io::Result<Self> {
        let size = std::mem::size_of::<u64>();
        if file.metadata()?.len() < size as u64 {
            // Two processes doing this at once both leave eight zeros (or a count already
            // added): growing a file to a length it has changes nothing.
            file.set_len(size as u64)?;
        }
        // SAFETY: a fresh shared mapping of the file's first bytes, which exist; nothing else
        // in this process maps it, and it is unmapped only when dropped.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if at == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // A mapping starts on a page boundary, so the counter is aligned.
        NonNull::new(at.cast::<AtomicU64>())
            .map(Self)
            .ok_or_else(|| io::Error::other("mapped at null"))
    }

    fn counter(&self) -> &AtomicU64 {
        // SAFETY: the mapping lives as long as `self`, and is aligned and eight bytes long.
        unsafe { self.0.as_ref() }
    }
}

impl Drop for Joins {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, of this size, unmapped once.
        unsafe { libc::munmap(self.0.as_ptr().cast(), std::mem::size_of::<u64>()) };
    }
}

/// `fcntl(command)` with a lock of `kind` over the whole file; the lock type it reports.
fn lock(file: &File, command: libc::c_int, kind: libc::c_int) -> io::Result<libc::c_int> {
    // SAFETY: `flock` is plain data; zeroed is a valid value, filled in below.
    let mut request: libc::flock = unsafe { std::mem::zeroed() };
    request.l_type = kind as libc::c_short;
    request.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: the descriptor is open for the life of `file`, and `request` outlives the call.
    let done = unsafe { libc::fcntl(file.as_raw_fd(), command, &mut request) };
    if done == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(request.l_type as libc::c_int)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty database file in a directory of its own, which must outlive the test.
    fn database() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let database = dir.path().join("db");
        std::fs::write(&database, b"").unwrap();
        (dir, database)
    }

    #[test]
    fn a_second_store_on_the_file_is_company_until_it_closes() {
        let (_dir, database) = database();
        let first = ServersOnFile::join(&database).unwrap();
        let before = first.solitude().expect("alone");
        assert_eq!(first.solitude(), Some(before), "nobody came");
        let second = ServersOnFile::join(&database).unwrap();
        assert!(first.solitude().is_none() && second.solitude().is_none());
        drop(second);
        let after = first.solitude().expect("alone again");
        assert_ne!(after, before, "company came since");
    }

    #[test]
    fn company_that_came_and_went_between_two_looks_is_seen() {
        let (_dir, database) = database();
        let first = ServersOnFile::join(&database).unwrap();
        let before = first.solitude().expect("alone");
        drop(ServersOnFile::join(&database).unwrap());
        assert_ne!(first.solitude(), Some(before));
    }
}
