//! Figures a running server exposes at `GET /metrics`, in the Prometheus text format: what
//! the HTTP layer served, what the store committed, and what is held in memory.

pub mod histogram;
mod http;
mod text;
pub mod unreadable;

pub use histogram::Histogram;
pub use http::{HttpMetrics, RecordRequests, RoutePattern};
pub use text::Exposition;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A count of things currently open, such as streams: each holds a [`Held`] while open.
#[derive(Clone, Default)]
pub struct Gauge(Arc<AtomicUsize>);

impl Gauge {
    pub fn hold(&self) -> Held {
        self.0.fetch_add(1, Ordering::Relaxed);
        Held(self.0.clone())
    }

    pub fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

/// One unit of a [`Gauge`], given back when dropped.
pub struct Held(Arc<AtomicUsize>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}
