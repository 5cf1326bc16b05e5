//! One-click unsubscribe links (RFC 8058): a link names a player and a kind of mail, signed
//! with a key every server shares, so it works without a session and cannot be made for
//! anyone else.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::domain::ids::PlayerId;

/// The kinds of mail a link stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailKind {
    /// The digest of the player's turns.
    Turns,
    /// Warnings of a clock running out.
    Clock,
}

impl MailKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MailKind::Turns => "turns",
            MailKind::Clock => "clock",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "turns" => Some(MailKind::Turns),
            "clock" => Some(MailKind::Clock),
            _ => None,
        }
    }
}

/// Signs and checks unsubscribe tokens with the servers' shared key.
#[derive(Clone)]
pub struct Unsubscribe {
    key: Vec<u8>,
}

impl Unsubscribe {
    pub fn new(key: &str) -> Self {
        Self {
            key: key.as_bytes().to_vec(),
        }
    }

    fn mac(&self, player: &str, kind: MailKind) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("any key length");
        mac.update(format!("unsubscribe:{player}:{}", kind.as_str()).as_bytes());
        mac
    }

    /// The token that stops `kind` of mail to `player`.
    pub fn token(&self, player: &str, kind: MailKind) -> String {
        let signature = self.mac(player, kind).finalize().into_bytes();
        format!(
            "{player}.{}.{}",
            kind.as_str(),
            URL_SAFE_NO_PAD.encode(signature)
        )
    }

    /// The player and kind a token stops, if this server signed it.
    pub fn check(&self, token: &str) -> Option<(PlayerId, MailKind)> {
        let mut parts = token.splitn(3, '.');
        let (player, kind, signature) = (parts.next()?, parts.next()?, parts.next()?);
        let kind = MailKind::parse(kind)?;
        let signature = URL_SAFE_NO_PAD.decode(signature).ok()?;
        self.mac(player, kind).verify_slice(&signature).ok()?;
        Some((player.into(), kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_works_for_its_player_and_kind_alone() {
        let links = Unsubscribe::new("a key");
        let token = links.token("p1", MailKind::Turns);
        assert_eq!(links.check(&token), Some(("p1".into(), MailKind::Turns)));
        let forged = token.replacen("p1", "p2", 1);
        assert_eq!(links.check(&forged), None);
        let other_kind = token.replacen("turns", "clock", 1);
        assert_eq!(links.check(&other_kind), None);
        assert_eq!(Unsubscribe::new("another key").check(&token), None);
        assert_eq!(links.check("nonsense"), None);
    }
}
