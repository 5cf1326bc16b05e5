//! Whether the database's writes work, as `/healthz` reports it.

use std::sync::atomic::{AtomicU8, Ordering};

use super::types::{StorageFault, StoreError};

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
