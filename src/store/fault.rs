//! Failures that come from the database's surroundings rather than from a request: another
//! process holding the write lock, a full disk, a file turned read-only, a PostgreSQL server
//! that went away. They are told apart
//! from everything else so that clients get a `503` to retry instead of a `500`, and so that
//! the writer can say in one log line when writes start failing and when they work again.

use std::sync::atomic::{AtomicU8, Ordering};

use super::StoreError;

/// Why the database cannot do what was asked at the moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageFault {
    /// Another connection (another process, or someone in `sqlite3`) held the write lock for
    /// longer than the busy timeout.
    Busy,
    /// The database cannot be written at all: the disk is full, the file or its directory is
    /// read-only, the file cannot be reached, or the PostgreSQL server cannot be.
    Unavailable,
}

impl StorageFault {
    pub fn as_str(self) -> &'static str {
        match self {
            StorageFault::Busy => "busy",
            StorageFault::Unavailable => "unavailable",
        }
    }
}

impl StoreError {
    /// The environmental fault behind this error, if that is what it is.
    pub fn fault(&self) -> Option<StorageFault> {
        match self {
            StoreError::Database(err) => sqlx_fault(err),
            StoreError::Batch(err) => err.fault(),
            StoreError::WriterStopped | StoreError::Io(_) => Some(StorageFault::Unavailable),
            _ => None,
        }
    }

    /// The transaction lost to another server's (a deadlock, a serialisation failure): none
    /// of it happened, and applying it again will most likely work.
    pub fn is_lost_race(&self) -> bool {
        match self {
            StoreError::Database(sqlx::Error::Database(db)) => {
                matches!(postgres_code(db.as_ref()), Some("40001" | "40P01"))
            }
            _ => false,
        }
    }
}

/// PostgreSQL's SQLSTATE, if the error comes from PostgreSQL.
fn postgres_code(db: &dyn sqlx::error::DatabaseError) -> Option<&str> {
    db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>()
        .map(|pg| pg.code())
}

fn sqlx_fault(err: &sqlx::Error) -> Option<StorageFault> {
    match err {
        sqlx::Error::Database(db) if postgres_code(db.as_ref()).is_some() => {
            let code = postgres_code(db.as_ref())?;
            match code {
                // lock_not_available (the lock timeout), query_canceled
                "55P03" | "57014" => Some(StorageFault::Busy),
                // the server is shutting down or starting, is read-only, or is out of disk,
                // memory or connections
                "57P01" | "57P02" | "57P03" | "25006" => Some(StorageFault::Unavailable),
                _ if code.starts_with("08") || code.starts_with("53") => {
                    Some(StorageFault::Unavailable)
                }
                _ => None,
            }
        }
        sqlx::Error::Database(db) => {
            // SQLite reports extended result codes; the primary code is the low byte.
            let code: i64 = db.code()?.parse().ok()?;
            match code & 0xff {
                SQLITE_BUSY | SQLITE_LOCKED => Some(StorageFault::Busy),
                SQLITE_READONLY | SQLITE_IOERR | SQLITE_FULL | SQLITE_CANTOPEN => {
                    Some(StorageFault::Unavailable)
                }
                _ => None,
            }
        }
        sqlx::Error::PoolTimedOut => Some(StorageFault::Busy),
        sqlx::Error::Io(_) | sqlx::Error::PoolClosed | sqlx::Error::WorkerCrashed => {
            Some(StorageFault::Unavailable)
        }
        _ => None,
    }
}

const SQLITE_BUSY: i64 = 5;
const SQLITE_LOCKED: i64 = 6;
const SQLITE_READONLY: i64 = 8;
const SQLITE_IOERR: i64 = 10;
const SQLITE_FULL: i64 = 13;
const SQLITE_CANTOPEN: i64 = 14;

/// Whether the last write worked, as `/healthz` reports it. The writer logs each change of
/// state once, so a full disk is one error line (and its recovery one info line), not one per
/// request.
#[derive(Default)]
pub struct WriteHealth(AtomicU8);

impl WriteHealth {
    const OK: u8 = 0;
    const BUSY: u8 = 1;
    const UNAVAILABLE: u8 = 2;

    /// `None` while writes work.
    pub fn fault(&self) -> Option<StorageFault> {
        match self.0.load(Ordering::Relaxed) {
            Self::BUSY => Some(StorageFault::Busy),
            Self::UNAVAILABLE => Some(StorageFault::Unavailable),
            _ => None,
        }
    }

    pub(super) fn succeeded(&self) {
        if self.0.swap(Self::OK, Ordering::Relaxed) != Self::OK {
            tracing::info!("database writes succeed again");
        }
    }

    /// Records a failed transaction: a fault changes the state, anything else is a bug and
    /// leaves it as it was.
    pub(super) fn failed(&self, err: &StoreError) {
        let Some(fault) = err.fault() else { return };
        let state = match fault {
            StorageFault::Busy => Self::BUSY,
            StorageFault::Unavailable => Self::UNAVAILABLE,
        };
        if self.0.swap(state, Ordering::Relaxed) != state {
            match fault {
                StorageFault::Busy => tracing::warn!(
                    error = %err,
                    "database writes are failing: another connection holds the write lock; \
                     answering 503 storage_busy until it is released"
                ),
                StorageFault::Unavailable => tracing::error!(
                    error = %err,
                    "database writes are failing: the disk is full or the database cannot be \
                     written; answering 503 storage_unavailable until writes succeed again"
                ),
            }
        }
    }
}
