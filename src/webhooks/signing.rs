//! Signatures as Standard Webhooks specifies (standardwebhooks.com), so that a receiver's
//! existing library verifies what this server sends:
//!
//! - a secret is `whsec_` followed by the base64 of its key (24 random bytes here);
//! - a delivery carries `webhook-id` (the same on every attempt, for deduplication),
//!   `webhook-timestamp` (seconds since 1970, of this attempt) and `webhook-signature`: `v1,`
//!   followed by the base64 of the HMAC-SHA256, under the key, of `id.timestamp.body`;
//! - while a secret is being replaced, both sign, space-separated, so a receiver that still
//!   holds the old one goes on verifying.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

const PREFIX: &str = "whsec_";
const KEY_BYTES: usize = 24;

/// A webhook endpoint's signing secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    key: Vec<u8>,
}

/// Never in logs.
impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

impl Secret {
    /// A new secret, from the thread's cryptographically secure generator.
    pub fn generate() -> Self {
        let mut key = vec![0u8; KEY_BYTES];
        rand::rng().fill_bytes(&mut key);
        Self { key }
    }

    /// A secret as written (`whsec_…`; the prefix may be left out, as receivers' libraries
    /// allow), or `None` if it is not base64.
    pub fn parse(text: &str) -> Option<Self> {
        let encoded = text.strip_prefix(PREFIX).unwrap_or(text);
        let key = STANDARD.decode(encoded).ok()?;
        (!key.is_empty()).then_some(Self { key })
    }

    /// As shown to its owner once, and as stored.
    pub fn text(&self) -> String {
        format!("{PREFIX}{}", STANDARD.encode(&self.key))
    }

    /// `v1,<base64 HMAC-SHA256 of id.timestamp.body>`.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key");
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }

    /// Whether `header` (a `webhook-signature`, one or more space-separated signatures) holds
    /// this secret's signature of the delivery, compared in constant time.
    pub fn verifies(&self, header: &str, id: &str, timestamp: i64, body: &[u8]) -> bool {
        use subtle::ConstantTimeEq;
        let expected = self.sign(id, timestamp, body);
        header
            .split(' ')
            .any(|given| bool::from(given.as_bytes().ct_eq(expected.as_bytes())))
    }
}

/// The `webhook-signature` of a delivery: one signature per secret (the current one first,
/// then the one being replaced, while it lasts).
pub fn signature_header(secrets: &[&Secret], id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets
        .iter()
        .map(|secret| secret.sign(id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector Standard Webhooks' reference libraries test with: a receiver's library
    /// accepts what reproduces it.
    #[test]
    fn signatures_reproduce_the_specifications_test_vector() {
        let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let (id, timestamp, body) = (
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#,
        );
        let expected = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
        assert_eq!(secret.sign(id, timestamp, body), expected);
        assert!(secret.verifies(expected, id, timestamp, body));
        assert!(!secret.verifies(expected, id, timestamp + 1, body));
        let unprefixed = Secret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        assert_eq!(unprefixed, secret);
    }

    #[test]
    fn while_a_secret_is_replaced_both_sign_and_either_verifies() {
        let (new, old) = (Secret::generate(), Secret::generate());
        assert_ne!(new, old);
        let header = signature_header(&[&new, &old], "msg_1", 1_700_000_000, b"{}");
        assert_eq!(header.split(' ').count(), 2);
        assert!(new.verifies(&header, "msg_1", 1_700_000_000, b"{}"));
        assert!(old.verifies(&header, "msg_1", 1_700_000_000, b"{}"));
        assert!(!Secret::generate().verifies(&header, "msg_1", 1_700_000_000, b"{}"));
    }

    #[test]
    fn secrets_are_written_with_their_prefix_and_read_back() {
        let secret = Secret::generate();
        let text = secret.text();
        assert!(text.starts_with("whsec_"), "{text}");
        assert_eq!(Secret::parse(&text), Some(secret));
        assert_eq!(Secret::parse("whsec_not base64!"), None);
        assert_eq!(Secret::parse("whsec_"), None);
        assert_eq!(format!("{:?}", Secret::generate()), "Secret(…)");
    }
}
