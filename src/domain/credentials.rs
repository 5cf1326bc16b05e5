//! Bearer tokens. A token is `<player id>.<secret>`, where the secret is 256 random bits. Only
//! the SHA-256 of the secret is stored, and it is compared in constant time.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::ids::{hex, is_well_formed, random_hex};

const SECRET_BYTES: usize = 32;

/// A freshly issued token and the hash to store for it.
pub struct IssuedToken {
    pub token: String,
    pub secret_hash: String,
}

pub fn issue(player_id: &str) -> IssuedToken {
    let secret = random_hex(SECRET_BYTES);
    IssuedToken {
        token: format!("{player_id}.{secret}"),
        secret_hash: hash_secret(&secret),
    }
}

/// A token split into the player it claims to be and its secret.
pub struct PresentedToken<'a> {
    pub player_id: &'a str,
    secret: &'a str,
}

impl<'a> PresentedToken<'a> {
    pub fn parse(token: &'a str) -> Option<Self> {
        let (player_id, secret) = token.split_once('.')?;
        (is_well_formed(player_id) && secret.len() == SECRET_BYTES * 2)
            .then_some(Self { player_id, secret })
    }

    pub fn matches(&self, stored_hash: &str) -> bool {
        hash_secret(self.secret)
            .as_bytes()
            .ct_eq(stored_hash.as_bytes())
            .into()
    }
}

fn hash_secret(secret: &str) -> String {
    hex(&Sha256::digest(secret.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issued_token_matches_its_hash_only() {
        let id = crate::domain::ids::new_id();
        let issued = issue(&id);
        let presented = PresentedToken::parse(&issued.token).unwrap();
        assert_eq!(presented.player_id, id);
        assert!(presented.matches(&issued.secret_hash));
        assert!(!presented.matches(&issue(&id).secret_hash));
        assert!(!issued.secret_hash.contains(&issued.token[33..]));
    }

    #[test]
    fn malformed_tokens_do_not_parse() {
        for bad in [
            "",
            "abc",
            "nodot",
            &format!("{}.short", crate::domain::ids::new_id()),
        ] {
            assert!(PresentedToken::parse(bad).is_none(), "{bad}");
        }
    }
}
