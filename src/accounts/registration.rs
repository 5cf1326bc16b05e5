//! Registration: a new player, each with a first session (see [`super::sessions`]).
//!
//! One stop in the life of a move: `docs/internals.md`.

use super::{AccountError, Accounts};
use crate::domain::ids::new_id;
use crate::domain::records::{now, Account, Session};
use crate::domain::username::Username;
use crate::game::PlayerRef;
use crate::store::StoreError;

/// How many generated names are tried before giving up (each retry adds a random number).
const GENERATED_NAME_ATTEMPTS: u32 = 8;

impl Accounts {
    /// Creates a player with `username`, or a generated `adjective_animal` name, signed in on
    /// a first session labelled `label`. Returns the account, the session and its bearer
    /// token, which is shown this once and stored only as a hash.
    pub async fn register(
        &self,
        username: Option<Username>,
        label: &str,
    ) -> Result<(Account, Session, String), AccountError> {
        let chosen = username.is_some();
        for attempt in 0..GENERATED_NAME_ATTEMPTS {
            let name = username
                .clone()
                .unwrap_or_else(|| Username::generate(attempt));
            let account = Account {
                id: new_id().into(),
                username: name.as_str().to_owned(),
                created_at: now(),
            };
            let (session, token) = Accounts::first_session(account.player_ref(), label);
            match self.store.create_account(&account, &session).await {
                Ok(()) => return Ok((account, session, token)),
                Err(StoreError::UsernameTaken) if !chosen => continue,
                Err(StoreError::UsernameTaken) => {
                    return Err(AccountError::UsernameTaken(account.username))
                }
                Err(other) => return Err(other.into()),
            }
        }
        Err(AccountError::Contention)
    }

    /// The player named `username`, signed in on a new session: registered if the name is
    /// free (for `turnhouse dev`'s local players, who sign in without a password on the
    /// author's own machine).
    pub async fn local_player(
        &self,
        username: &Username,
    ) -> Result<(PlayerRef, String), AccountError> {
        const LABEL: &str = "turnhouse dev";
        match self.register(Some(username.clone()), LABEL).await {
            Ok((account, _, token)) => Ok((account.player_ref(), token)),
            Err(AccountError::UsernameTaken(_)) => {
                let account = self
                    .store
                    .account_by_name(username.as_str())
                    .await?
                    .ok_or_else(|| {
                        AccountError::Store(StoreError::Corrupt(format!(
                            "the player {} is neither free nor found",
                            username.as_str()
                        )))
                    })?;
                let player = account.player_ref();
                let (_, token) = self.open_session(&player, LABEL).await?;
                Ok((player, token))
            }
            Err(err) => Err(err),
        }
    }
}
