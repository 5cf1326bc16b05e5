//! Sessions: a player signed in on several devices, each with a token of its own (see
//! [`crate::domain::credentials`]); sign-in codes, which open a session on another device; and
//! ending sessions, which refuses their tokens at once and closes their open streams, on every
//! server sharing the database.
//!
//! A server hears of sessions it ends itself at once. While it shares its database, it also
//! asks the store once a second which sessions ended since it last asked (one range of an
//! index, whatever the number of sessions or streams), so a session ended elsewhere closes its
//! streams here within a second.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use tokio::sync::watch;

use super::{AccountError, Accounts, MAX_ATTEMPTS};
use crate::domain::credentials::{self, hash_secret, PresentedToken};
use crate::domain::ids::new_id;
use crate::domain::ids::SessionId;
use crate::domain::records::{now, Session};
use crate::domain::time::Timestamp;
use crate::game::PlayerRef;
use crate::store::{Ending, StoreError, MAX_LIVE_CODES};

/// Who made a request: a player, through one of their sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    pub player: PlayerRef,
    pub session: SessionId,
    /// The hash of the token's secret, which a stream opened with it holds on to: once the
    /// session's token is replaced, the stream no longer signs anyone in.
    token_hash: String,
}

/// How long a sign-in code works.
pub const CODE_LIFETIME: Duration = Duration::from_secs(10 * 60);
/// A code's characters: no 0/O, 1/I/L, so it reads and types unambiguously.
const CODE_ALPHABET: &[u8] = b"23456789ABCDEFGHJKMNPQRSTUVWXYZ";
const CODE_LENGTH: usize = 8;
/// How often a server that shares its database asks which sessions ended elsewhere.
const ENDED_POLL: Duration = Duration::from_secs(1);
/// How far each look for sessions ended elsewhere reaches back before the previous look.
const ENDED_OVERLAP: Duration = Duration::from_secs(5);

/// A new session's token, and the session as stored (its secret only as a hash).
fn open(player: PlayerRef, label: &str) -> (Session, String) {
    let id = new_id();
    let issued = credentials::issue(&player.id, &id);
    let at = now();
    let session = Session {
        id: id.into(),
        player,
        label: label_of(label),
        token_hash: issued.secret_hash,
        last_used_at: at.to_the_minute(),
        created_at: at,
    };
    (session, issued.token)
}

/// A label as kept: trimmed, at most 64 characters, "A device" when there is none.
fn label_of(label: &str) -> String {
    let label: String = label
        .trim()
        .chars()
        .filter(|c| !c.is_control())
        .take(64)
        .collect();
    if label.is_empty() {
        "A device".to_owned()
    } else {
        label
    }
}

/// A code as a person types it, in the form kept: capitals, no spaces or dashes.
fn normalise_code(code: &str) -> String {
    code.chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .flat_map(char::to_uppercase)
        .collect()
}

/// A session refused because its player is suspended is [`AccountError::PlayerSuspended`].
fn unless_suspended(err: StoreError) -> AccountError {
    match err {
        StoreError::Suspended(reason) => AccountError::PlayerSuspended(reason),
        err => err.into(),
    }
}

fn new_code() -> String {
    let mut rng = rand::rng();
    (0..CODE_LENGTH)
        .map(|_| CODE_ALPHABET[rng.random_range(0..CODE_ALPHABET.len())] as char)
        .collect()
}

impl Accounts {
    /// The player and session a bearer token belongs to, if it is genuine and the session
    /// works.
    pub async fn authenticate(&self, token: &str) -> Result<Option<SignedIn>, AccountError> {
        let Some(presented) = PresentedToken::parse(token) else {
            return Ok(None);
        };
        let session = self.working_session(presented.session_id).await?;
        let Some(session) = session
            .filter(|s| s.player.id == presented.player_id && presented.matches(&s.token_hash))
        else {
            return Ok(None);
        };
        self.seen(&session.player, Some(&session.id));
        Ok(Some(SignedIn {
            player: session.player.clone(),
            session: session.id.clone(),
            token_hash: session.token_hash.clone(),
        }))
    }

    /// Whether the token `me` signed in with still works: its session has not ended, its
    /// player is not suspended, and its token was not replaced. A store that cannot answer
    /// leaves it so (the next change of sessions asks again).
    pub async fn still_signed_in(&self, me: &SignedIn) -> bool {
        match self.working_session(&me.session).await {
            Ok(session) => session.is_some_and(|s| s.token_hash == me.token_hash),
            Err(_) => true,
        }
    }

    /// Session `id` while it works: from the cache when it may be trusted, else from the store
    /// (and then remembered).
    async fn working_session(&self, id: &str) -> Result<Option<Arc<Session>>, StoreError> {
        if let Some(session) = self.sessions.get(&self.store, id) {
            return Ok(Some(session));
        }
        let epoch = self.sessions.epoch(&self.store);
        let stored = self.store.session(id).await?.map(Arc::new);
        if let Some(session) = &stored {
            self.sessions
                .remember(epoch, session.id.to_string(), Arc::clone(session));
        }
        Ok(stored)
    }

    /// Opens another session for `player`; its token, shown this once.
    pub(super) async fn open_session(
        &self,
        player: &PlayerRef,
        label: &str,
    ) -> Result<(Session, String), AccountError> {
        let (session, token) = open(player.clone(), label);
        self.store
            .open_session(&session)
            .await
            .map_err(unless_suspended)?;
        Ok((session, token))
    }

    /// The first session of a player about to be created, and its token.
    pub(super) fn first_session(player: PlayerRef, label: &str) -> (Session, String) {
        open(player, label)
    }

    /// The caller's working sessions, oldest first.
    pub async fn sessions_of(&self, me: &SignedIn) -> Result<Vec<Session>, AccountError> {
        Ok(self.store.sessions_of(&me.player.id).await?)
    }

    /// Ends one of the caller's sessions (the current one too, which signs out).
    pub async fn end_session(&self, me: &SignedIn, id: &str) -> Result<(), AccountError> {
        let ended = self
            .store
            .end_sessions(&me.player.id, Ending::One(id.into()))
            .await?;
        if ended.is_empty() {
            return Err(AccountError::SessionNotFound);
        }
        self.sessions_ended(ended);
        Ok(())
    }

    /// Ends every session of the caller's but the current one; how many.
    pub async fn end_other_sessions(&self, me: &SignedIn) -> Result<usize, AccountError> {
        let ended = self
            .store
            .end_sessions(&me.player.id, Ending::AllBut(me.session.clone()))
            .await?;
        let count = ended.len();
        self.sessions_ended(ended);
        Ok(count)
    }

    /// Gives the current session a new token, shown this once; the old one stops working at
    /// once, on every server sharing the database.
    pub async fn rotate_token(&self, me: &SignedIn) -> Result<String, AccountError> {
        let issued = credentials::issue(&me.player.id, &me.session);
        let rotated = self
            .store
            .set_session_token(&me.session, &me.player.id, &issued.secret_hash)
            .await?;
        self.sessions.forget(&*me.session);
        match rotated {
            true => {
                // Streams opened with the old token close, as if its session had ended.
                self.sessions_changed(vec![(me.session.to_string(), now())]);
                Ok(issued.token)
            }
            // Ended meanwhile, from another device.
            false => Err(AccountError::SessionNotFound),
        }
    }

    /// A code that signs the caller in on another device, once, within [`CODE_LIFETIME`]:
    /// the code and when it expires.
    pub async fn issue_sign_in_code(
        &self,
        me: &SignedIn,
    ) -> Result<(String, Timestamp), AccountError> {
        let created = now();
        let expires_at = created.after(CODE_LIFETIME);
        for _ in 0..MAX_ATTEMPTS {
            let code = new_code();
            match self
                .store
                .issue_code(&hash_secret(&code), &me.player.id, created, expires_at)
                .await
            {
                Ok(true) => return Ok((code, expires_at)),
                Ok(false) => return Err(AccountError::TooManyCodes(MAX_LIVE_CODES)),
                Err(StoreError::Conflict) => continue,
                Err(err) => return Err(err.into()),
            }
        }
        Err(AccountError::Contention)
    }

    /// Opens a session with a sign-in code: the player, the session and its token. A code
    /// works once: [`AccountError::InvalidCode`] for one that is unknown, used or expired.
    pub async fn sign_in_with_code(
        &self,
        code: &str,
        label: &str,
    ) -> Result<(Session, String), AccountError> {
        let code = normalise_code(code);
        let secret = credentials::Secret::new();
        let at = now();
        let session = Session {
            id: new_id().into(),
            // The code's player, once the store has found it.
            player: PlayerRef {
                id: Default::default(),
                username: String::new(),
            },
            label: label_of(label),
            token_hash: secret.hash.clone(),
            last_used_at: at.to_the_minute(),
            created_at: at,
        };
        let player = self
            .store
            .redeem_code(&hash_secret(&code), session.clone())
            .await
            .map_err(unless_suspended)?
            .ok_or(AccountError::InvalidCode)?;
        let token = secret.token(&player.id, &session.id);
        Ok((Session { player, ..session }, token))
    }

    /// These sessions ended, here: refused from now on here, and their streams closed.
    pub fn sessions_ended(&self, ids: Vec<String>) {
        let at = now();
        self.sessions_changed(ids.into_iter().map(|id| (id, at)).collect());
    }

    /// These sessions ended or had their token replaced, each at its time: refused from now
    /// on here (unless with their new token), and streams opened with what no longer works
    /// closed.
    fn sessions_changed(&self, changes: Vec<(String, Timestamp)>) {
        for (id, _) in &changes {
            self.sessions.forget(id);
        }
        self.ended.add(changes);
    }

    /// Forgets every session held in memory (their players' names changed).
    pub fn forget_cached_sessions(&self) {
        self.sessions.forget_all();
    }

    /// Sessions that ended or changed token lately, for streams to check theirs.
    pub fn ended_sessions(&self) -> watch::Receiver<Arc<Vec<String>>> {
        self.ended.subscribe()
    }
}

/// While the database is shared, and once after another server came and went, learns once a
/// second of sessions other servers ended. Each look reaches back [`ENDED_OVERLAP`] before the
/// previous one began: a session another server stamped just before that look but committed
/// just after it (or whose clock runs a little behind) is still found; one found twice changes
/// nothing.
pub(super) async fn follow_ended_sessions(accounts: Accounts) {
    let mut since = now();
    let mut last = accounts.store.solitude();
    loop {
        tokio::time::sleep(ENDED_POLL).await;
        let look = now();
        // Alone all along: nobody else could end a session.
        let alone = accounts.store.solitude();
        if alone.is_some() && alone == last {
            since = look;
            continue;
        }
        match accounts
            .store
            .ended_sessions_since(since.before(ENDED_OVERLAP))
            .await
        {
            Ok(ended) => {
                since = look;
                last = alone;
                accounts.sessions_changed(ended);
            }
            Err(err) => tracing::warn!(error = %err, "could not learn which sessions ended"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_eight_unambiguous_characters_and_read_back_however_typed() {
        let code = new_code();
        assert_eq!(code.len(), CODE_LENGTH);
        assert!(code.bytes().all(|b| CODE_ALPHABET.contains(&b)));
        assert_eq!(normalise_code("ab2c-d3ef 45"), "AB2CD3EF45");
    }

    #[test]
    fn labels_are_kept_short_and_printable() {
        assert_eq!(label_of("  "), "A device");
        assert_eq!(label_of("Firefox\non Linux"), "Firefoxon Linux");
        assert_eq!(label_of(&"x".repeat(100)).len(), 64);
    }
}
