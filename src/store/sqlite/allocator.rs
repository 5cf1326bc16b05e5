//! SQLite's own allocations: through jemalloc, the server's allocator, and without SQLite's
//! memory statistics.
//!
//! SQLite calls the C library's `malloc` unless told otherwise, and by default counts every
//! allocation in statistics kept under one mutex, taken twice for each block it allocates and
//! frees. The writer's thread allocates some dozens of blocks per write (records, cursors, the
//! batch statements' temporary tables): in its profile glibc's `malloc` and `free` and that
//! mutex were a few percent of the samples. Nothing here reads the statistics
//! (`sqlite3_memory_used`) or sets a soft heap limit, which needs them.
//!
//! SQLite takes its configuration only before it first initializes, so [`configure`] runs
//! before the first connection is opened; were SQLite already initialized (a test that opened
//! it another way first), it changes nothing and SQLite keeps its defaults.

use std::ffi::{c_int, c_void};
use std::sync::Once;

use libsqlite3_sys as ffi;
use tikv_jemalloc_sys as je;

/// Configures SQLite's allocations, once per process, before its first connection.
pub(super) fn configure() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let methods = ffi::sqlite3_mem_methods {
            xMalloc: Some(malloc),
            xFree: Some(free),
            xRealloc: Some(realloc),
            xSize: Some(size),
            xRoundup: Some(roundup),
            xInit: Some(init),
            xShutdown: Some(shutdown),
            pAppData: std::ptr::null_mut(),
        };
        // SAFETY: called before any connection exists (see the module's comment); SQLite
        // copies `methods`, and each is a function for the life of the process.
        let codes = unsafe {
            [
                ffi::sqlite3_config(ffi::SQLITE_CONFIG_MALLOC, &methods),
                ffi::sqlite3_config(ffi::SQLITE_CONFIG_MEMSTATUS, 0 as c_int),
            ]
        };
        if codes != [ffi::SQLITE_OK; 2] {
            tracing::debug!(
                ?codes,
                "SQLite was initialized already: it keeps its allocator"
            );
        }
    });
}

/// A block of `bytes` (SQLite never asks for none or for a negative size).
unsafe extern "C" fn malloc(bytes: c_int) -> *mut c_void {
    // SAFETY: any size may be asked of jemalloc; it answers null when it has no memory.
    unsafe { je::malloc(usize::try_from(bytes).unwrap_or(0)) }
}

unsafe extern "C" fn free(block: *mut c_void) {
    // SAFETY: `block` came from `malloc` or `realloc` above (or is null).
    unsafe { je::free(block) }
}

unsafe extern "C" fn realloc(block: *mut c_void, bytes: c_int) -> *mut c_void {
    // SAFETY: as for `free`.
    unsafe { je::realloc(block, usize::try_from(bytes).unwrap_or(0)) }
}

/// The usable size of a block, which SQLite uses whole (it may be more than was asked).
unsafe extern "C" fn size(block: *mut c_void) -> c_int {
    // SAFETY: as for `free`.
    let usable = unsafe { je::malloc_usable_size(block) };
    c_int::try_from(usable).unwrap_or(c_int::MAX)
}

/// What an allocation of `bytes` is rounded up to: jemalloc's own size class.
unsafe extern "C" fn roundup(bytes: c_int) -> c_int {
    // SAFETY: a pure function of its argument.
    let rounded = unsafe { je::nallocx(usize::try_from(bytes).unwrap_or(1).max(1), 0) };
    c_int::try_from(rounded).unwrap_or(bytes)
}

unsafe extern "C" fn init(_: *mut c_void) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn shutdown(_: *mut c_void) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Set in the process the test starts to check its own SQLite.
    const FRESH: &str = "TURNHOUSE_TEST_FRESH_PROCESS";

    #[test]
    fn sqlite_allocates_through_jemalloc_and_keeps_no_statistics() {
        if std::env::var_os(FRESH).is_none() {
            // Again in a process of its own: here another test may have started SQLite first,
            // and then it keeps its defaults.
            let name = "store::sqlite::allocator::tests::\
                        sqlite_allocates_through_jemalloc_and_keeps_no_statistics";
            let run = std::process::Command::new(std::env::current_exe().unwrap())
                .args([name, "--exact", "--test-threads=1"])
                .env(FRESH, "1")
                .output()
                .unwrap();
            let out = String::from_utf8_lossy(&run.stdout);
            // A name that matched no test would run none, and succeed.
            assert!(
                run.status.success() && out.contains("test result: ok. 1 passed"),
                "the test failed in a process of its own:\n{out}{}",
                String::from_utf8_lossy(&run.stderr)
            );
            return;
        }
        configure();
        // SAFETY: SQLite's own allocation functions, called as documented.
        unsafe {
            let block = ffi::sqlite3_malloc(1_000);
            assert!(!block.is_null());
            // jemalloc's class for 1,000 bytes is 1,024; C's `malloc` here gives 1,000 or 1,016.
            assert_eq!(je::nallocx(1_000, 0), 1_024);
            assert_eq!(ffi::sqlite3_msize(block), 1_024, "a block of jemalloc's");
            assert_eq!(ffi::sqlite3_memory_used(), 0, "no statistics are kept");
            ffi::sqlite3_free(block);
        }
    }
}
