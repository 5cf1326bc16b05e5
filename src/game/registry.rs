//! The games compiled into this server, by id. Uploaded games live in the database and are
//! looked up by the engine next to these.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::Game;

#[derive(Clone, Default)]
pub struct GameRegistry {
    games: BTreeMap<String, Arc<dyn Game>>,
}

impl GameRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a game; a later game with the same id replaces the earlier one.
    pub fn register(mut self, game: Arc<dyn Game>) -> Self {
        self.games.insert(game.info().id.into_owned(), game);
        self
    }

    pub fn get(&self, id: &str) -> Option<&Arc<dyn Game>> {
        self.games.get(id)
    }

    /// Every game, ordered by id.
    pub fn all(&self) -> impl Iterator<Item = &Arc<dyn Game>> {
        self.games.values()
    }
}
