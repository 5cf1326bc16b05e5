//! Open connections per client address, capped (`--max-connections-per-address`): one address
//! cannot hold every file descriptor with connections that trickle or sit idle. A connection
//! past the cap is answered `429 too_many_connections` and closed at its first request.
//!
//! A trusted proxy's connections are not counted: they carry many clients. Each client the
//! proxy names is capped instead by the requests it has open through it, streams included,
//! until their responses end ([`HeldOpen`]): what a client holds open through a proxy holds a
//! connection of the proxy's to this server. Past the cap a request is answered `429
//! too_many_connections`, and the proxy's connection stays open for other clients.

use std::collections::HashMap;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::web::Bytes;

/// How many connections each address has open, and how many it may.
#[derive(Debug)]
pub struct ConnectionCounts {
    max: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One open connection, counted for as long as it is (kept in the connection's data).
#[derive(Debug)]
pub struct Counted {
    address: IpAddr,
    counts: Arc<ConnectionCounts>,
    /// The address had the most it may already when this one opened.
    pub over: bool,
}

impl Counted {
    /// The cap its address met.
    pub fn cap(&self) -> usize {
        self.counts.cap()
    }
}

impl ConnectionCounts {
    /// At most `max` connections per address; 0 for no cap.
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            max,
            open: Mutex::default(),
        })
    }

    /// Counts a connection from `address`, open until the result is dropped.
    pub fn open(self: &Arc<Self>, address: IpAddr) -> Counted {
        let mut open = self.open.lock().expect("never poisoned");
        let count = open.entry(address).or_default();
        *count += 1;
        Counted {
            address,
            counts: self.clone(),
            over: self.max > 0 && *count > self.max,
        }
    }

    /// The cap an address meets.
    pub fn cap(&self) -> usize {
        self.max
    }

    /// How many addresses have connections open (for tests).
    pub fn addresses(&self) -> usize {
        self.open.lock().expect("never poisoned").len()
    }
}

/// A response's body that keeps its request counted until it has been sent or dropped (a
/// stream, until the client or the proxy goes away).
pub struct HeldOpen {
    body: BoxBody,
    _counted: Counted,
}

impl HeldOpen {
    pub fn new(body: BoxBody, counted: Counted) -> Self {
        Self {
            body,
            _counted: counted,
        }
    }
}

impl MessageBody for HeldOpen {
    type Error = Box<dyn std::error::Error>;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_next(cx)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut open = self.counts.open.lock().expect("never poisoned");
        if let Some(count) = open.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.address);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_past_its_cap_is_over_until_one_of_its_connections_closes() {
        let counts = ConnectionCounts::new(2);
        let (a, b): (IpAddr, IpAddr) = ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap());
        let first = counts.open(a);
        let second = counts.open(a);
        let third = counts.open(a);
        assert!(!first.over && !second.over && third.over);
        assert!(!counts.open(b).over, "another address has its own");
        drop(first);
        drop(third);
        assert!(!counts.open(a).over);
        drop(second);
        assert_eq!(counts.addresses(), 0, "nothing kept for addresses gone");
        let none = ConnectionCounts::new(0);
        let held: Vec<_> = (0..1000).map(|_| none.open(a)).collect();
        assert!(held.iter().all(|c| !c.over));
    }
}
