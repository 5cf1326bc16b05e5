//! Bearer tokens. A token is `<player id>.<session id>.<secret>`, where the secret is 256
//! random bits: one per session, so a player signed in on several devices holds several. Only
//! the SHA-256 of the secret is stored, and it is compared in constant time. A token issued
//! before sessions existed, `<player id>.<secret>`, names its player's first session, whose id
//! is the player's own.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::ids::{hex, is_well_formed, random_hex};

const SECRET_BYTES: usize = 32;

/// A freshly issued token and the hash to store for it.
pub struct IssuedToken {
    pub token: String,
    pub secret_hash: String,
}

/// A token for session `session_id` of player `player_id`.
pub fn issue(player_id: &str, session_id: &str) -> IssuedToken {
    let secret = Secret::new();
    IssuedToken {
        token: secret.token(player_id, session_id),
        secret_hash: secret.hash,
    }
}

/// A session's secret before its player is known (a session opened by a sign-in code).
pub struct Secret {
    secret: String,
    pub hash: String,
}

impl Secret {
    pub fn new() -> Self {
        let secret = random_hex(SECRET_BYTES);
        Self {
            hash: hash_secret(&secret),
            secret,
        }
    }

    pub fn token(&self, player_id: &str, session_id: &str) -> String {
        format!("{player_id}.{session_id}.{}", self.secret)
    }
}

impl Default for Secret {
    fn default() -> Self {
        Self::new()
    }
}

/// A token split into the player and session it claims and its secret.
pub struct PresentedToken<'a> {
    pub player_id: &'a str,
    pub session_id: &'a str,
    secret: &'a str,
}

impl<'a> PresentedToken<'a> {
    pub fn parse(token: &'a str) -> Option<Self> {
        let mut parts = token.split('.');
        let (player_id, second, third) = (parts.next()?, parts.next()?, parts.next());
        if parts.next().is_some() {
            return None;
        }
        let (session_id, secret) = match third {
            Some(secret) => (second, secret),
            // From before sessions: the player's first session.
            None => (player_id, second),
        };
        (is_well_formed(player_id)
            && is_well_formed(session_id)
            && secret.len() == SECRET_BYTES * 2)
            .then_some(Self {
                player_id,
                session_id,
                secret,
            })
    }

    pub fn matches(&self, stored_hash: &str) -> bool {
        hash_secret(self.secret)
            .as_bytes()
            .ct_eq(stored_hash.as_bytes())
            .into()
    }
}

/// The hash kept for a secret (a token's, or a sign-in code's).
pub fn hash_secret(secret: &str) -> String {
    hex(&Sha256::digest(secret.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::new_id;

    #[test]
    fn an_issued_token_matches_its_hash_only() {
        let (player, session) = (new_id(), new_id());
        let issued = issue(&player, &session);
        let presented = PresentedToken::parse(&issued.token).unwrap();
        assert_eq!(presented.player_id, player);
        assert_eq!(presented.session_id, session);
        assert!(presented.matches(&issued.secret_hash));
        assert!(!presented.matches(&issue(&player, &session).secret_hash));
        assert!(!issued.secret_hash.contains(&issued.token[66..]));
    }

    #[test]
    fn a_token_from_before_sessions_names_the_first_session() {
        let player = new_id();
        let token = format!("{player}.{}", "a".repeat(64));
        let presented = PresentedToken::parse(&token).unwrap();
        assert_eq!(presented.session_id, player);
    }

    #[test]
    fn malformed_tokens_do_not_parse() {
        let id = new_id();
        for bad in [
            String::new(),
            "abc".into(),
            "nodot".into(),
            format!("{id}.short"),
            format!("{id}.{id}.{id}.{}", "a".repeat(64)),
            format!("{id}.notanid.{}", "a".repeat(64)),
        ] {
            assert!(PresentedToken::parse(&bad).is_none(), "{bad}");
        }
    }
}
