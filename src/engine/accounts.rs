//! Player accounts: registration, each with its first session (see [`super::sessions`]).
//!
//! One stop in the life of a move: `docs/internals.md`.

use super::{Engine, EngineError};
use crate::domain::ids::new_id;
use crate::domain::username::Username;
use crate::game::PlayerRef;
use crate::model::{now, Account, Session};
use crate::store::StoreError;

/// How many generated names are tried before giving up (each retry adds a random number).
const GENERATED_NAME_ATTEMPTS: u32 = 8;

#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    #[error("the username `{0}` is taken")]
    UsernameTaken(String),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl Engine {
    /// Creates a player with `username`, or a generated `adjective_animal` name, signed in on
    /// a first session labelled `label`. Returns the account, the session and its bearer
    /// token, which is shown this once and stored only as a hash.
    pub async fn register(
        &self,
        username: Option<Username>,
        label: &str,
    ) -> Result<(Account, Session, String), RegisterError> {
        let chosen = username.is_some();
        for attempt in 0..GENERATED_NAME_ATTEMPTS {
            let name = username
                .clone()
                .unwrap_or_else(|| Username::generate(attempt));
            let account = Account {
                id: new_id(),
                username: name.as_str().to_owned(),
                created_at: now(),
            };
            let (session, token) = Engine::first_session(account.player_ref(), label);
            match self.store.create_account(&account, &session).await {
                Ok(()) => return Ok((account, session, token)),
                Err(StoreError::UsernameTaken) if !chosen => continue,
                Err(StoreError::UsernameTaken) => {
                    return Err(RegisterError::UsernameTaken(account.username))
                }
                Err(other) => return Err(EngineError::from(other).into()),
            }
        }
        Err(EngineError::Contention.into())
    }

    /// The player named `username`, signed in on a new session: registered if the name is
    /// free (for `turnhouse dev`'s local players, who sign in without a password on the
    /// author's own machine).
    pub async fn local_player(
        &self,
        username: &Username,
    ) -> Result<(PlayerRef, String), EngineError> {
        const LABEL: &str = "turnhouse dev";
        match self.register(Some(username.clone()), LABEL).await {
            Ok((account, _, token)) => Ok((account.player_ref(), token)),
            Err(RegisterError::UsernameTaken(_)) => {
                let account = self
                    .store
                    .account_by_name(username.as_str())
                    .await?
                    .ok_or_else(|| {
                        EngineError::Store(StoreError::Corrupt(format!(
                            "the player {} is neither free nor found",
                            username.as_str()
                        )))
                    })?;
                let player = account.player_ref();
                let (_, token) = self.open_session(&player, LABEL).await?;
                Ok((player, token))
            }
            Err(RegisterError::Engine(err)) => Err(err),
        }
    }
}
