use serde_json::{json, Map, Value};

use crate::problem::{ErrorKind, Problem};
use crate::store::StoreError;

/// Why an account or a session was not changed or opened. Whatever the variant, nothing was
/// written.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error("you have no session with that id that is still signed in")]
    SessionNotFound,
    #[error("that sign-in code is not valid: codes work once, for ten minutes")]
    InvalidCode,
    #[error("you have {0} sign-in codes that work already: use one, or wait until one expires (codes work for ten minutes)")]
    TooManyCodes(i64),
    #[error("the name and password do not match a player")]
    InvalidCredentials,
    #[error("{0}")]
    InvalidPassword(String),
    #[error("too many sign-ins are being checked right now; try again in a moment")]
    SignInBusy,
    #[error("this player is suspended: {0}")]
    PlayerSuspended(String),
    #[error("the username `{0}` is taken")]
    UsernameTaken(String),
    #[error("the accounts are changing too fast; try again")]
    Contention,
    #[error("this server sends no mail (it has no SMTP server set)")]
    MailDisabled,
    #[error("{0}")]
    InvalidEmail(String),
    #[error("that link does not work: links work once, and for a while (a day to confirm an address, 30 minutes to reset a password); ask for a new one")]
    InvalidLink,
    #[error("another account has that address")]
    EmailTaken,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Problem for AccountError {
    fn wrapped(&self) -> Option<&dyn Problem> {
        match self {
            AccountError::Store(err) => Some(err),
            _ => None,
        }
    }

    fn classify(&self) -> (ErrorKind, &'static str) {
        use ErrorKind as K;
        match self {
            AccountError::SessionNotFound => (K::NotFound, "session_not_found"),
            AccountError::InvalidCode => (K::Unauthorized, "invalid_code"),
            AccountError::TooManyCodes(_) => (K::Conflict, "too_many_codes"),
            AccountError::InvalidCredentials => (K::Unauthorized, "invalid_credentials"),
            AccountError::InvalidPassword(_) => (K::Unprocessable, "invalid_password"),
            AccountError::SignInBusy => (K::Unavailable, "sign_in_busy"),
            AccountError::PlayerSuspended(_) => (K::Forbidden, "player_suspended"),
            AccountError::UsernameTaken(_) => (K::Conflict, "username_taken"),
            AccountError::Contention => (K::Unavailable, "contention"),
            AccountError::MailDisabled => (K::Conflict, "mail_disabled"),
            AccountError::InvalidEmail(_) => (K::Unprocessable, "invalid_email"),
            AccountError::InvalidLink => (K::Unprocessable, "invalid_link"),
            AccountError::EmailTaken => (K::Conflict, "email_taken"),
            AccountError::Store(err) => err.classify(),
        }
    }

    fn extensions(&self, extra: &mut Map<String, Value>) {
        if let AccountError::PlayerSuspended(reason) = self {
            extra.insert("reason".into(), json!(reason));
        }
    }

    fn retry_after(&self) -> Option<u64> {
        matches!(self, AccountError::SignInBusy | AccountError::Contention).then_some(1)
    }
}
