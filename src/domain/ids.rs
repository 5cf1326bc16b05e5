//! Identifiers: 32 lowercase hex digits. Most are 128 random bits. A room's id is the time it
//! was made followed by 80 random bits ([`new_room_id`]), which keep it unguessable.

use rand::RngCore;

const ID_BYTES: usize = 16;

/// Random bytes from the thread-local cryptographically secure generator (seeded by the
/// operating system), as lowercase hex.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    hex(&buf)
}

/// `bytes` as lowercase hex, two digits each. Written digit by digit into one allocation: it
/// runs on every request that presents a token (the token's hash), where a `format!` per byte
/// was most of the token check's time.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

pub fn new_id() -> String {
    random_hex(ID_BYTES)
}

/// A new room's id: the milliseconds since 1970 (48 bits), then 80 random bits.
///
/// The rooms in play at any moment are nearly all recent ones. With ids that sort by time,
/// the rows keyed by room (history, memberships) that one write batch touches sit together
/// at the end of their indexes. With random ids, each room's rows sit on a page of their
/// own, and every batch writes a whole page of log for each room.
pub fn new_room_id() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as u64);
    format!(
        "{:012x}{}",
        millis & 0xffff_ffff_ffff,
        random_hex(ID_BYTES - 6)
    )
}

/// Whether `s` could be an id this server issued; anything else can be answered "not found"
/// without a database round trip.
pub fn is_well_formed(s: &str) -> bool {
    s.len() == ID_BYTES * 2 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// An id type: text as it is stored and sent, of one kind only, so a room's id is never passed
/// where a player's is meant. Reads as `&str` wherever one is asked for.
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize,
            serde::Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                Self(id)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                Self(id.to_owned())
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == other.0
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }
    };
}

pub(crate) use id_type;

id_type!(
    /// A room's id (see [`new_room_id`]).
    RoomId
);
id_type!(
    /// A player's id, a person's or a bot's.
    PlayerId
);
id_type!(
    /// A session's id: the middle part of its token.
    SessionId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_two_lowercase_digits_a_byte() {
        assert_eq!(hex(&[]), "");
        assert_eq!(hex(&[0x00, 0x0f, 0xa0, 0xff, 0x5c]), "000fa0ff5c");
        let every: Vec<u8> = (0..=255).collect();
        let expected: String = every.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex(&every), expected);
    }

    #[test]
    fn new_ids_are_well_formed_and_distinct() {
        let a = new_id();
        assert!(is_well_formed(&a));
        assert_ne!(a, new_id());
        assert!(!is_well_formed("ABC"));
        assert!(!is_well_formed(&a.to_uppercase()));
    }

    #[test]
    fn room_ids_are_well_formed_distinct_and_sort_by_time() {
        let millis = || {
            let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            since.unwrap().as_millis() as u64
        };
        let before = millis();
        let first = new_room_id();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let (a, b) = (new_room_id(), new_room_id());
        let after = millis();
        assert!(is_well_formed(&a) && is_well_formed(&b), "{a} {b}");
        assert_ne!(a, b);
        assert!(first < a && first < b, "{first} sorts before {a} and {b}");
        let made = u64::from_str_radix(&first[..12], 16).unwrap();
        assert!(
            (before..=after).contains(&made),
            "{before} <= {made} <= {after}"
        );
    }
}
