//! Ids of uploaded games: `^[a-z0-9][a-z0-9-]{1,39}$`, readable in URLs and in `sqlite3`.

use super::ids::id_type;

id_type!(
    /// A game's id. One that comes from outside is checked by [`GameId::parse`]; one read back
    /// from the database or from the registry was checked when it was made.
    GameId
);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a game id is 2 to 40 characters, lowercase letters, digits and `-`, not starting with `-`"
)]
pub struct InvalidGameId;

impl GameId {
    pub fn parse(s: &str) -> Result<Self, InvalidGameId> {
        let bytes = s.as_bytes();
        let allowed = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        let ok = (2..=40).contains(&bytes.len())
            && allowed(&bytes[0])
            && bytes[1..].iter().all(|b| allowed(b) || *b == b'-');
        if ok {
            Ok(Self(s.to_owned()))
        } else {
            Err(InvalidGameId)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_pattern() {
        for good in ["c4", "connect-four", "a-", &"x".repeat(40)] {
            assert!(GameId::parse(good).is_ok(), "{good}");
        }
        for bad in ["", "a", "-ab", "Ab", "a_b", "a b", &"x".repeat(41), "é1"] {
            assert_eq!(GameId::parse(bad), Err(InvalidGameId), "{bad}");
        }
    }
}
