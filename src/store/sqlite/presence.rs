//! Knowing whether this is the only server using a database file.
//!
//! Every store holds a shared (read) POSIX lock on a small file beside the database,
//! `<database>-instances`, for as long as it is open. Asking the kernel whether a write lock
//! could be taken (`F_GETLK`) then says, in one system call and without waiting, whether any
//! other process holds the file open; stores in this process are counted here. A POSIX lock
//! is released when its process closes any descriptor of the file, so each process opens the
//! file once and shares it between its stores.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The lock file a process shares between its stores on one database, and how many they are.
type Shared = (Arc<File>, usize);

/// Open stores of this process, by canonical database path.
static OPEN: Mutex<Option<HashMap<PathBuf, Shared>>> = Mutex::new(None);

pub struct Presence {
    database: PathBuf,
    file: Arc<File>,
}

impl Presence {
    /// Registers a store on `database` (which must exist).
    pub fn join(database: &Path) -> io::Result<Self> {
        let database = database.canonicalize()?;
        let mut open = OPEN.lock().expect("never poisoned");
        let open = open.get_or_insert_with(HashMap::new);
        let file = match open.get_mut(&database) {
            Some((file, count)) => {
                *count += 1;
                file.clone()
            }
            None => {
                let mut name = database.clone().into_os_string();
                name.push("-instances");
                let file = Arc::new(
                    OpenOptions::new()
                        .read(true)
                        .write(true)
                        .create(true)
                        .truncate(false)
                        .open(name)?,
                );
                lock(&file, libc::F_SETLK, libc::F_RDLCK)?;
                open.insert(database.clone(), (file.clone(), 1));
                file
            }
        };
        Ok(Self { database, file })
    }

    /// No other store, in this process or another, has the database open.
    pub fn alone(&self) -> bool {
        let others_here = OPEN
            .lock()
            .expect("never poisoned")
            .as_ref()
            .and_then(|open| open.get(&self.database))
            .is_some_and(|(_, count)| *count > 1);
        // If the kernel cannot answer, assume company: that only costs a database read.
        !others_here
            && lock(&self.file, libc::F_GETLK, libc::F_WRLCK)
                .is_ok_and(|held| held == libc::F_UNLCK)
    }
}

impl Drop for Presence {
    fn drop(&mut self) {
        let mut open = OPEN.lock().expect("never poisoned");
        if let Some(open) = open.as_mut() {
            if let Some((_, count)) = open.get_mut(&self.database) {
                *count -= 1;
                if *count == 0 {
                    // Dropping the last handle closes the file, which releases the lock.
                    open.remove(&self.database);
                }
            }
        }
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

    #[test]
    fn a_second_store_on_the_file_is_company_until_it_closes() {
        let dir = tempfile::tempdir().unwrap();
        let database = dir.path().join("db");
        std::fs::write(&database, b"").unwrap();
        let first = Presence::join(&database).unwrap();
        assert!(first.alone());
        let second = Presence::join(&database).unwrap();
        assert!(!first.alone() && !second.alone());
        drop(second);
        assert!(first.alone());
    }
}
