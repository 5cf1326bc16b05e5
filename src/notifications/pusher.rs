//! A web push to one browser (RFC 8030): the payload encrypted for it alone, the VAPID header,
//! `TTL`, `Urgency` and a `Topic` that collapses the pushes of one room into the latest; sent
//! through the client for users' URLs, which reaches only public addresses (push endpoints are
//! URLs a browser, so a user, gives).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::push_crypto::{encrypt, BrowserKeys, Vapid};
use crate::outbound::{Destinations, OutboundClient};
use crate::store::PushSubscription;

/// How long one push may take.
const PUSH_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of a push service's answer is read.
const KEPT_ANSWER: usize = 512;

/// What a push service made of a push.
#[derive(Debug, Clone, PartialEq)]
pub enum Pushed {
    Sent,
    /// 404 or 410: the subscription is gone for good.
    Gone,
    /// Not now (429, 5xx, no answer): try again later.
    Later(String),
    /// Refused for good (another 4xx).
    Refused(String),
}

/// What a push says and how it travels.
pub struct Push<'a> {
    pub payload: &'a [u8],
    /// Pushes with the same topic replace each other while undelivered (at most 32 base64url
    /// characters).
    pub topic: &'a str,
    /// How long the push service keeps it for a browser that is offline, in seconds.
    pub ttl: u64,
    pub urgency: &'static str,
}

pub struct Pusher {
    client: OutboundClient,
    vapid: Vapid,
    /// Who the push services write to about this server's pushes (a `mailto:`).
    subject: String,
    /// The `Authorization` header signed for each push service's origin, and when: a token is
    /// good for 12 hours, so it is signed again after [`SIGNED_FOR`] rather than for every
    /// push (a P-256 signature each).
    signed: Mutex<HashMap<String, (String, Instant)>>,
}

/// How long a signed VAPID token is used: half its life, so none reaches a push service about
/// to expire.
const SIGNED_FOR: Duration = Duration::from_secs(6 * 60 * 60);
/// Push services' origins whose tokens are kept at most (browsers use a handful; any number
/// of endpoints a user gives cannot grow the map past this).
const SIGNED_ORIGINS: usize = 256;

impl Pusher {
    pub fn new(destinations: Destinations, vapid: Vapid, subject: String) -> Self {
        Self {
            client: OutboundClient::new(destinations, PUSH_TIMEOUT, KEPT_ANSWER),
            vapid,
            subject,
            signed: Mutex::default(),
        }
    }

    /// The server's public key, as browsers take it (`applicationServerKey`).
    pub fn public_key(&self) -> &str {
        &self.vapid.public
    }

    pub async fn push(&self, to: &PushSubscription, push: &Push<'_>) -> Pushed {
        let keys = match BrowserKeys::parse(&to.p256dh, &to.auth) {
            Ok(keys) => keys,
            Err(err) => return Pushed::Refused(err.to_string()),
        };
        let url = match reqwest::Url::parse(&to.endpoint) {
            Ok(url) => url,
            Err(err) => return Pushed::Refused(format!("the endpoint is not a URL: {err}")),
        };
        let authorization = match self.authorization(&url) {
            Ok(header) => header,
            Err(err) => return Pushed::Later(format!("the VAPID token cannot be signed: {err}")),
        };
        let headers = [
            ("ttl", push.ttl.to_string()),
            ("urgency", push.urgency.to_owned()),
            ("topic", push.topic.to_owned()),
            ("content-encoding", "aes128gcm".to_owned()),
            ("content-type", "application/octet-stream".to_owned()),
            ("authorization", authorization),
        ];
        let body = match encrypt(&keys, push.payload) {
            Ok(body) => body,
            Err(err) => return Pushed::Later(err.to_string()),
        };
        match self.client.post(&to.endpoint, &headers, body).await {
            Ok(answer) => match answer.status {
                200..=299 => Pushed::Sent,
                404 | 410 => Pushed::Gone,
                429 | 500..=599 => {
                    Pushed::Later(format!("{} {}", answer.status, answer.body_start))
                }
                status => Pushed::Refused(format!("{status} {}", answer.body_start)),
            },
            Err(err) => Pushed::Later(err.to_string()),
        }
    }

    /// The VAPID header for a push to `endpoint`'s origin: the one signed less than
    /// [`SIGNED_FOR`] ago, or a new one.
    fn authorization(&self, endpoint: &reqwest::Url) -> Result<String, String> {
        let origin = endpoint.origin().ascii_serialization();
        let mut signed = self.signed.lock().expect("never poisoned");
        if let Some((header, at)) = signed.get(&origin) {
            if at.elapsed() < SIGNED_FOR {
                return Ok(header.clone());
            }
        }
        let header = self.vapid.authorization(&origin, &self.subject)?;
        if signed.len() >= SIGNED_ORIGINS {
            signed.clear();
        }
        signed.insert(origin, (header.clone(), Instant::now()));
        Ok(header)
    }
}
