//! Identifiers: 128 random bits written as 32 lowercase hex digits, so room ids are unguessable.

use rand::RngCore;

const ID_BYTES: usize = 16;

/// Random bytes from the thread-local cryptographically secure generator (seeded by the
/// operating system), as lowercase hex.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    hex(&buf)
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn new_id() -> String {
    random_hex(ID_BYTES)
}

/// Whether `s` could be an id this server issued; anything else can be answered "not found"
/// without a database round trip.
pub fn is_well_formed(s: &str) -> bool {
    s.len() == ID_BYTES * 2 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_ids_are_well_formed_and_distinct() {
        let a = new_id();
        assert!(is_well_formed(&a));
        assert_ne!(a, new_id());
        assert!(!is_well_formed("ABC"));
        assert!(!is_well_formed(&a.to_uppercase()));
    }
}
