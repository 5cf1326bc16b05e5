//! Player accounts: registration and bearer-token authentication.

use super::{Engine, EngineError};
use crate::domain::credentials::{self, PresentedToken};
use crate::domain::ids::new_id;
use crate::domain::username::Username;
use crate::game::PlayerRef;
use crate::model::{now, Account};
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
    /// Creates a player with `username`, or a generated `adjective_animal` name. Returns the
    /// account and its bearer token, which is shown this once and stored only as a hash.
    pub async fn register(
        &self,
        username: Option<Username>,
    ) -> Result<(Account, String), RegisterError> {
        let chosen = username.is_some();
        for attempt in 0..GENERATED_NAME_ATTEMPTS {
            let name = username
                .clone()
                .unwrap_or_else(|| Username::generate(attempt));
            let id = new_id();
            let issued = credentials::issue(&id);
            let account = Account {
                id,
                username: name.as_str().to_owned(),
                token_hash: issued.secret_hash,
                created_at: now(),
            };
            match self.store.create_account(&account).await {
                Ok(()) => return Ok((account, issued.token)),
                Err(StoreError::UsernameTaken) if !chosen => continue,
                Err(StoreError::UsernameTaken) => {
                    return Err(RegisterError::UsernameTaken(account.username))
                }
                Err(other) => return Err(EngineError::from(other).into()),
            }
        }
        Err(EngineError::Contention.into())
    }

    /// The player a bearer token belongs to, if it is genuine.
    pub async fn authenticate(&self, token: &str) -> Result<Option<PlayerRef>, EngineError> {
        let Some(presented) = PresentedToken::parse(token) else {
            return Ok(None);
        };
        let account = match self.accounts.get(presented.player_id) {
            Some(account) => Some(account),
            None => {
                let stored = self.store.account(presented.player_id).await?;
                if let Some(account) = &stored {
                    self.accounts.insert(account.id.clone(), account.clone());
                }
                stored
            }
        };
        Ok(account
            .filter(|a| presented.matches(&a.token_hash))
            .map(|a| a.player_ref()))
    }
}
