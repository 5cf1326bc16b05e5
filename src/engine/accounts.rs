//! Player accounts: registration and bearer-token authentication.
//!
//! One stop in the life of a move: `docs/internals.md`.

use super::{Engine, EngineError};
use crate::domain::credentials::{self, PresentedToken};
use crate::domain::ids::new_id;
use crate::domain::username::Username;
use crate::game::PlayerRef;
use crate::model::{now, Account};
use std::sync::Mutex;

use super::bounded_cache::BoundedCache;
use crate::store::{Store, StoreError};

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
        let account = match self.accounts.get(&self.store, presented.player_id) {
            Some(account) => Some(account),
            None => {
                let epoch = self.accounts.epoch(&self.store);
                let stored = self.store.account(presented.player_id).await?;
                if let Some(account) = &stored {
                    self.accounts.remember(epoch, account);
                }
                stored
            }
        };
        let player = account
            .filter(|a| presented.matches(&a.token_hash))
            .map(|a| a.player_ref());
        if let Some(player) = &player {
            self.seen(player);
        }
        Ok(player)
    }

    /// The player named `username`, signed in with a new token: registered if the name is
    /// free, else that account with its token replaced (for `turnhouse dev`'s local players,
    /// who sign in without a password on the author's own machine).
    pub async fn local_player(
        &self,
        username: &Username,
    ) -> Result<(PlayerRef, String), EngineError> {
        match self.register(Some(username.clone())).await {
            Ok((account, token)) => Ok((account.player_ref(), token)),
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
                let token = self.rotate_token(&player).await?;
                Ok((player, token))
            }
            Err(RegisterError::Engine(err)) => Err(err),
        }
    }

    /// Issues `player` a new token, shown this once; the old one stops working at once.
    pub async fn rotate_token(&self, player: &PlayerRef) -> Result<String, EngineError> {
        let issued = credentials::issue(&player.id);
        self.store
            .set_token_hash(&player.id, &issued.secret_hash)
            .await?;
        self.accounts.forget(&player.id);
        Ok(issued.token)
    }
}

/// Accounts kept in memory so that a request's token is checked without a database read.
///
/// Freshness, as for rooms: the cache is read and filled only while this server is alone on
/// its database, and emptied whenever it is not, since another server may rotate a token. A
/// rotation here bumps the epoch, so an account read before it is never put back afterwards.
pub(super) struct AccountCache {
    accounts: BoundedCache<String, Account>,
    epoch: Mutex<u64>,
}

impl AccountCache {
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            accounts: BoundedCache::new(capacity),
            epoch: Mutex::new(0),
        }
    }

    fn get(&self, store: &Store, id: &str) -> Option<Account> {
        if store.alone() {
            self.accounts.get(id)
        } else {
            self.accounts.clear();
            None
        }
    }

    /// Call before reading an account from the database: `None` while the database is shared.
    fn epoch(&self, store: &Store) -> Option<u64> {
        store
            .alone()
            .then(|| *self.epoch.lock().expect("never poisoned"))
    }

    fn remember(&self, epoch: Option<u64>, account: &Account) {
        let current = self.epoch.lock().expect("never poisoned");
        if epoch == Some(*current) {
            self.accounts.insert(account.id.clone(), account.clone());
        }
    }

    fn forget(&self, id: &str) {
        let mut current = self.epoch.lock().expect("never poisoned");
        *current += 1;
        self.accounts.remove(id);
    }

    pub(super) fn len(&self) -> usize {
        self.accounts.len()
    }
}
