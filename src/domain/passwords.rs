//! Passwords: Argon2id at OWASP's recommended parameters (19 MiB of memory, two passes, one
//! lane), by RustCrypto's `argon2`. Only the hash is kept, in the PHC string format, which
//! carries its parameters and salt, so a later change of parameters still verifies old hashes.
//!
//! Hashing takes tens of milliseconds of one core on purpose: callers run it off the async
//! workers, a bounded number at a time (see `engine::passwords`).

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};

/// The shortest and longest passwords accepted, in characters.
pub const MIN_LENGTH: usize = 8;
pub const MAX_LENGTH: usize = 1024;

fn argon2() -> Argon2<'static> {
    // OWASP's first choice for Argon2id: m = 19 MiB, t = 2, p = 1.
    let params = Params::new(19 * 1024, 2, 1, None).expect("valid Argon2 parameters");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// Why a password is not accepted.
pub fn check(password: &str) -> Result<(), String> {
    let length = password.chars().count();
    if length < MIN_LENGTH {
        return Err(format!(
            "a password has at least {MIN_LENGTH} characters; this one has {length}"
        ));
    }
    if length > MAX_LENGTH {
        return Err(format!("a password has at most {MAX_LENGTH} characters"));
    }
    Ok(())
}

/// The hash to keep for `password`, with a fresh salt.
pub fn hash(password: &str) -> String {
    let salt = SaltString::generate(&mut OsRng);
    argon2()
        .hash_password(password.as_bytes(), &salt)
        .expect("hashing a password of bounded length cannot fail")
        .to_string()
}

/// Whether `password` is the one `stored` was made from. A stored value that is not a hash
/// (a damaged row) matches nothing.
pub fn verify(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored)
        .map(|parsed| {
            argon2()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        })
        .unwrap_or(false)
}

/// A hash of no one's password, verified against when a name is unknown, so that an unknown
/// name takes as long to refuse as a wrong password.
pub fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| hash("no player has this password"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only_and_says_how_it_was_made() {
        let stored = hash("correct horse");
        assert!(
            stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{stored}"
        );
        assert!(verify("correct horse", &stored));
        assert!(!verify("correct horsE", &stored));
        assert!(!verify("correct horse", "not a hash"));
        assert_ne!(stored, hash("correct horse"), "each hash has its own salt");
    }

    #[test]
    fn lengths_are_checked_in_characters() {
        assert!(check("seven77").is_err());
        assert!(check("eight888").is_ok());
        assert!(check(&"é".repeat(1024)).is_ok());
        assert!(check(&"x".repeat(1025)).is_err());
    }
}
