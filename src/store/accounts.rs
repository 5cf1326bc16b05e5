//! Player accounts.

use sqlx::Row;

use super::{on_unique, Store, StoreError};
use crate::model::Account;

impl Store {
    #[tracing::instrument(level = "debug", skip_all, fields(username = %account.username))]
    pub async fn create_account(&self, account: &Account) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO players (id, username, token_hash, created_at) VALUES (?, ?, ?, ?)",
        )
        .bind(&account.id)
        .bind(&account.username)
        .bind(&account.token_hash)
        .bind(&account.created_at)
        .execute(&self.write)
        .await
        .map_err(|e| on_unique(e, StoreError::UsernameTaken))?;
        Ok(())
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
}
