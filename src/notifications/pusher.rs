//! A web push to one browser (RFC 8030): the payload encrypted for it alone, the VAPID header,
//! `TTL`, `Urgency` and a `Topic` that collapses the pushes of one room into the latest; sent
//! through the client for users' URLs, which reaches only public addresses (push endpoints are
//! URLs a browser, so a user, gives).

use std::time::Duration;

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
}

impl Pusher {
    pub fn new(destinations: Destinations, vapid: Vapid, subject: String) -> Self {
        Self {
            client: OutboundClient::new(destinations, PUSH_TIMEOUT, KEPT_ANSWER),
            vapid,
            subject,
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
        let authorization = match self.vapid.authorization(&url, &self.subject) {
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
        let body = encrypt(&keys, push.payload);
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
}
