//! Requests this server makes to addresses its users gave it (webhook endpoints; later, push
//! services). Every such address is untrusted: it may point inside the operator's network, at
//! the server itself, or at a receiver written to hang.
//!
//! - **Where.** By default only `https://` to public addresses. The address is checked where
//!   the connection is made, on every connection: a name is resolved by this module's resolver,
//!   which drops every address that is not public, so a name that resolves to a public address
//!   when registered and to `127.0.0.1` later (DNS rebinding) reaches nothing. An IP written in
//!   the URL is checked before sending. `--allow-private-destinations` lets loopback and private
//!   addresses through, and plain `http://` with them (for tests, `turnhouse dev`, and an
//!   operator's own network).
//! - **How long, how much.** A whole request has a time limit; a response's body is read up to
//!   a cap and the rest dropped; redirects are not followed (a `3xx` is an answer like another);
//!   no proxy is used.

mod addresses;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

pub use addresses::is_public;

/// Whether requests may reach loopback and private addresses (and plain `http://`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Destinations {
    pub allow_private: bool,
}

/// Why a destination was refused, or a request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutboundError {
    #[error("`{0}` is not an absolute http(s) URL")]
    NotAUrl(String),
    #[error("only https:// URLs are allowed on this server (http:// needs --allow-private-destinations)")]
    NotHttps,
    #[error("`{0}` is a loopback, private or reserved address; this server reaches only public ones (see --allow-private-destinations)")]
    NotPublic(String),
    #[error("the request timed out after {0} ms")]
    Timeout(u64),
    #[error("could not connect: {0}")]
    Connect(String),
    #[error("the request failed: {0}")]
    Failed(String),
}

impl Destinations {
    /// Checks a URL a user gives, before it is kept: its scheme, and its host when it is an IP
    /// address. A name is checked again, address by address, whenever it is connected to.
    pub fn check_url(&self, url: &str) -> Result<reqwest::Url, OutboundError> {
        let parsed =
            reqwest::Url::parse(url).map_err(|_| OutboundError::NotAUrl(url.to_owned()))?;
        match parsed.scheme() {
            "https" => {}
            "http" if self.allow_private => {}
            "http" => return Err(OutboundError::NotHttps),
            _ => return Err(OutboundError::NotAUrl(url.to_owned())),
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(OutboundError::NotAUrl(url.to_owned()));
        }
        match parsed.host() {
            None => Err(OutboundError::NotAUrl(url.to_owned())),
            Some(url::Host::Domain(_)) => Ok(parsed),
            Some(url::Host::Ipv4(ip)) => self.check_ip(IpAddr::V4(ip)).map(|()| parsed),
            Some(url::Host::Ipv6(ip)) => self.check_ip(IpAddr::V6(ip)).map(|()| parsed),
        }
    }

    fn check_ip(&self, ip: IpAddr) -> Result<(), OutboundError> {
        if self.allow_private || is_public(ip) {
            Ok(())
        } else {
            Err(OutboundError::NotPublic(ip.to_string()))
        }
    }
}

/// A response, as much of it as is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    /// From sending to the end of the body read.
    pub latency: Duration,
    /// The body's first bytes, at most the client's cap, as text (invalid UTF-8 replaced).
    pub body_start: String,
}

/// The HTTP client for untrusted destinations.
#[derive(Clone)]
pub struct OutboundClient {
    client: reqwest::Client,
    destinations: Destinations,
    timeout: Duration,
    body_cap: usize,
}

impl OutboundClient {
    /// `timeout` bounds each whole request; at most `body_cap` bytes of an answer are read.
    pub fn new(destinations: Destinations, timeout: Duration, body_cap: usize) -> Self {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("Turnhouse/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(PublicOnly(destinations)))
            .build()
            .expect("the client's settings are valid");
        Self {
            client,
            destinations,
            timeout,
            body_cap,
        }
    }

    /// Posts `body` with `headers` to `url`, which is checked again first.
    pub async fn post(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: Vec<u8>,
    ) -> Result<Answer, OutboundError> {
        let url = self.destinations.check_url(url)?;
        let mut request = self.client.post(url).body(body);
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let started = Instant::now();
        let mut response = request.send().await.map_err(|err| self.failure(err))?;
        let status = response.status().as_u16();
        let mut kept = Vec::new();
        while kept.len() < self.body_cap {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    let room = self.body_cap - kept.len();
                    kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
                }
                Ok(None) => break,
                Err(err) => return Err(self.failure(err)),
            }
        }
        Ok(Answer {
            status,
            latency: started.elapsed(),
            body_start: String::from_utf8_lossy(&kept).into_owned(),
        })
    }

    fn failure(&self, err: reqwest::Error) -> OutboundError {
        if err.is_timeout() {
            return OutboundError::Timeout(self.timeout.as_millis() as u64);
        }
        // The resolver's refusal comes back as the source of a connect error.
        let mut source: Option<&dyn std::error::Error> = Some(&err);
        while let Some(cause) = source {
            if let Some(refused) = cause.downcast_ref::<OutboundError>() {
                return refused.clone();
            }
            source = cause.source();
        }
        match err.is_connect() {
            true => OutboundError::Connect(chain(&err)),
            false => OutboundError::Failed(chain(&err)),
        }
    }
}

/// `error: cause: cause…`.
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Resolves names as the system does, then keeps only the addresses the destinations allow:
/// the check happens on every connection, whatever the name resolved to before.
struct PublicOnly(Destinations);

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let destinations = self.0;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|addr| destinations.check_ip(addr.ip()).is_ok())
                .collect();
            if allowed.is_empty() {
                let first = found.first().map_or(host, |addr| addr.ip().to_string());
                return Err(Box::new(OutboundError::NotPublic(first)) as _);
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests;
