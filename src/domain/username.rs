//! Usernames: chosen (3 to 32 letters, digits, `_` or `-`) or generated `adjective_animal`.

use rand::seq::IndexedRandom;
use rand::Rng;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Username(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a username is 3 to 32 characters, each a letter, a digit, `_` or `-`")]
pub struct InvalidUsername;

impl Username {
    pub fn parse(s: &str) -> Result<Self, InvalidUsername> {
        let ok = (3..=32).contains(&s.chars().count())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if ok {
            Ok(Self(s.to_owned()))
        } else {
            Err(InvalidUsername)
        }
    }

    /// An `adjective_animal` name; `attempt` > 0 adds a number, for when the plain ones collide.
    pub fn generate(attempt: u32) -> Self {
        let mut rng = rand::rng();
        let adjective = ADJECTIVES.choose(&mut rng).expect("non-empty");
        let animal = ANIMALS.choose(&mut rng).expect("non-empty");
        if attempt == 0 {
            Self(format!("{adjective}_{animal}"))
        } else {
            let n: u32 = rng.random_range(2..10_000);
            Self(format!("{adjective}_{animal}_{n}"))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

const ADJECTIVES: &[&str] = &[
    "brave", "calm", "clever", "cosmic", "daring", "eager", "fancy", "gentle", "happy", "jolly",
    "keen", "lucky", "mighty", "nimble", "proud", "quick", "quiet", "rapid", "shiny", "silly",
    "sleepy", "swift", "tidy", "witty", "zesty",
];

const ANIMALS: &[&str] = &[
    "badger", "beaver", "bison", "camel", "cobra", "crane", "dingo", "eagle", "ferret", "gecko",
    "heron", "ibis", "koala", "lemur", "llama", "moose", "otter", "panda", "puffin", "quokka",
    "raven", "seal", "tapir", "walrus", "yak",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_are_valid() {
        for attempt in 0..50 {
            let name = Username::generate(attempt % 3);
            assert_eq!(Username::parse(name.as_str()).unwrap(), name);
        }
    }

    #[test]
    fn bad_names_are_refused() {
        for bad in ["ab", "", "has space", "semi;colon", &"x".repeat(33), "ünï"] {
            assert_eq!(Username::parse(bad), Err(InvalidUsername), "{bad}");
        }
        assert!(Username::parse("alice_42-b").is_ok());
    }
}
