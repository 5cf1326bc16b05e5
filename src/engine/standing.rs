//! Standing: a game's leaderboard.

use super::{Engine, EngineError};
use crate::store::Standing;

impl Engine {
    /// Up to `limit` places of `game`'s leaderboard after `after` (a place's conservative
    /// rating and player id; the top when `None`); [`EngineError::GameNotFound`] for no game.
    pub async fn leaderboard(
        &self,
        game: &str,
        after: Option<(f64, String)>,
        limit: i64,
    ) -> Result<Vec<Standing>, EngineError> {
        self.require_game(game).await?;
        Ok(self.store.leaderboard(game, after, limit).await?)
    }
}
