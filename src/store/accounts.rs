//! Player accounts.

use sqlx::{Row, SqliteConnection};

use super::writer::{Write, Written};
use super::{on_unique, Store, StoreError};
use crate::game::{BotLevel, PlayerRef};
use crate::model::Account;

pub(super) async fn insert(
    conn: &mut SqliteConnection,
    account: &Account,
) -> Result<(), StoreError> {
    sqlx::query("INSERT INTO players (id, username, token_hash, created_at) VALUES (?, ?, ?, ?)")
        .bind(&account.id)
        .bind(&account.username)
        .bind(&account.token_hash)
        .bind(&account.created_at)
        .execute(conn)
        .await
        .map_err(|e| on_unique(e, StoreError::UsernameTaken))?;
    Ok(())
}

/// The bot account of `level`, created first if it does not exist yet.
pub(super) async fn ensure_bot(
    conn: &mut SqliteConnection,
    level: BotLevel,
    id: &str,
    username: &str,
    created_at: &str,
) -> Result<PlayerRef, StoreError> {
    sqlx::query(
        "INSERT INTO players (id, username, token_hash, created_at, bot) VALUES (?, ?, '', ?, ?) \
         ON CONFLICT DO NOTHING",
    )
    .bind(id)
    .bind(username)
    .bind(created_at)
    .bind(level.as_str())
    .execute(&mut *conn)
    .await?;
    let row = sqlx::query("SELECT id, username FROM players WHERE bot = ?")
        .bind(level.as_str())
        .fetch_one(conn)
        .await?;
    Ok(PlayerRef {
        id: row.try_get("id")?,
        username: row.try_get("username")?,
    })
}

pub(super) async fn set_token_hash(
    conn: &mut SqliteConnection,
    player_id: &str,
    token_hash: &str,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE players SET token_hash = ? WHERE id = ? AND bot IS NULL")
        .bind(token_hash)
        .bind(player_id)
        .execute(conn)
        .await?;
    Ok(())
}

impl Store {
    /// Replaces a player's token hash: the old token is refused from the commit on.
    pub async fn set_token_hash(
        &self,
        player_id: &str,
        token_hash: &str,
    ) -> Result<(), StoreError> {
        let write = Write::TokenHash {
            player_id: player_id.to_owned(),
            token_hash: token_hash.to_owned(),
        };
        self.writer.write(write).await?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(username = %account.username))]
    pub async fn create_account(&self, account: &Account) -> Result<(), StoreError> {
        match self.writer.write(Write::Account(account.clone())).await? {
            Written::Applied => Ok(()),
            _ => unreachable!("an account write answers as one"),
        }
    }

    pub async fn account(&self, id: &str) -> Result<Option<Account>, StoreError> {
        let row =
            sqlx::query("SELECT id, username, token_hash, created_at FROM players WHERE id = ?")
                .bind(id)
                .fetch_optional(&self.read)
                .await?;
        row.map(|row| {
            Ok(Account {
                id: row.try_get("id")?,
                username: row.try_get("username")?,
                token_hash: row.try_get("token_hash")?,
                created_at: row.try_get("created_at")?,
            })
        })
        .transpose()
    }

    /// The account of the bot of `level`, created with `id`, `username` and `created_at` if it
    /// does not exist yet. Bots have no token: their empty hash matches no secret.
    pub async fn bot_account(
        &self,
        level: BotLevel,
        id: &str,
        username: &str,
        created_at: &str,
    ) -> Result<PlayerRef, StoreError> {
        let write = Write::Bot {
            level,
            id: id.to_owned(),
            username: username.to_owned(),
            created_at: created_at.to_owned(),
        };
        match self.writer.write(write).await? {
            Written::Bot(bot) => Ok(bot),
            _ => unreachable!("a bot write answers with the bot"),
        }
    }
}
