//! The address people reach this server at, which every absolute link it writes starts with
//! (mail's links): `--public-url`, or else `http://` and the address the server is bound to,
//! known once it has bound (a port 0 picks one).

use std::sync::{Arc, RwLock};

#[derive(Debug, Clone, Default)]
pub struct PublicUrl {
    url: Arc<RwLock<String>>,
    /// Given by the operator: never replaced by the bound address.
    given: bool,
}

impl PublicUrl {
    /// The address `url` (no trailing `/`), given by the operator.
    pub fn given(url: &str) -> Self {
        Self {
            url: Arc::new(RwLock::new(url.trim_end_matches('/').to_owned())),
            given: true,
        }
    }

    /// The address, without a trailing `/`.
    pub fn get(&self) -> String {
        self.url.read().expect("never poisoned").clone()
    }

    /// The server is bound to `address`: the public address, unless the operator gave one.
    pub fn bound(&self, address: std::net::SocketAddr) {
        if !self.given {
            *self.url.write().expect("never poisoned") = format!("http://{address}");
        }
    }
}
