//! Standing: a game's leaderboard, players' ratings and a player's profile. Ratings are made
//! in the store, in the transaction of the version that finishes a rated game; this slice
//! reads them.

use std::collections::HashMap;

use crate::catalog::{Catalog, CatalogError};
use crate::domain::ratings::Rating;
use crate::domain::records::{Account, Room};
use crate::game::PlayerRef;
use crate::problem::{ErrorKind, Problem};
use crate::store::{GameStanding, RoomQuery, RoomRating, Standing, Store, StoreError};

/// How many of a player's finished rooms their profile shows.
pub const RECENT_ROOMS: i64 = 10;

/// What a player's profile shows.
pub struct Profile {
    pub account: Account,
    /// Their rating in each game they were rated in, most played first.
    pub ratings: Vec<GameStanding>,
    /// Their latest finished rooms, newest first (private ones only to themselves).
    pub rooms: Vec<Room>,
    /// What the last rated game of each of those rooms did to their rating, by room.
    pub changes: HashMap<String, RoomRating>,
}

/// Why a standing could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StandingError {
    #[error("there is no player with that id")]
    PlayerNotFound,
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Problem for StandingError {
    fn wrapped(&self) -> Option<&dyn Problem> {
        match self {
            StandingError::PlayerNotFound => None,
            StandingError::Catalog(err) => Some(err),
            StandingError::Store(err) => Some(err),
        }
    }

    fn classify(&self) -> (ErrorKind, &'static str) {
        match self {
            StandingError::PlayerNotFound => (ErrorKind::NotFound, "player_not_found"),
            StandingError::Catalog(err) => err.classify(),
            StandingError::Store(err) => err.classify(),
        }
    }
}

/// Ratings, leaderboards and profiles.
#[derive(Clone)]
pub struct Standings {
    store: Store,
    catalog: Catalog,
}

impl Standings {
    pub fn new(store: Store, catalog: Catalog) -> Self {
        Self { store, catalog }
    }

    /// Up to `limit` places of `game`'s leaderboard after `after` (a place's conservative
    /// rating and player id; the top when `None`); [`CatalogError::GameNotFound`] for no game.
    pub async fn leaderboard(
        &self,
        game: &str,
        after: Option<(f64, String)>,
        limit: i64,
    ) -> Result<Vec<Standing>, StandingError> {
        self.catalog.require_game(game).await?;
        Ok(self.store.leaderboard(game, after, limit).await?)
    }

    /// The profile of player `id`, as `viewer` may see it; [`StandingError::PlayerNotFound`]
    /// for no such player.
    pub async fn profile(
        &self,
        id: &str,
        viewer: Option<&PlayerRef>,
    ) -> Result<Profile, StandingError> {
        let account = (self.store.account(id).await?).ok_or(StandingError::PlayerNotFound)?;
        let ratings = self.store.player_ratings(id).await?;
        let query = RoomQuery {
            game: None,
            joinable: None,
            finished: Some(true),
            player: Some(id.into()),
            include_private: viewer.is_some_and(|v| v.id == id),
            before_seq: None,
            limit: RECENT_ROOMS,
        };
        let rooms: Vec<Room> = (self.store.rooms(&query).await?)
            .into_iter()
            .map(|(_, room)| room)
            .collect();
        let rated: Vec<String> = (rooms.iter().filter(|r| r.rated))
            .map(|r| r.id.to_string())
            .collect();
        let changes = match rated.is_empty() {
            true => HashMap::new(),
            false => self.store.room_ratings(id, &rated).await?,
        };
        Ok(Profile {
            account,
            ratings,
            rooms,
            changes,
        })
    }

    /// The ratings in `game` of those of `players` who have one, by player id.
    pub async fn ratings_in_game(
        &self,
        game: &str,
        players: &[String],
    ) -> Result<HashMap<String, Rating>, StandingError> {
        self.catalog.require_game(game).await?;
        Ok(self.store.ratings_in_game(game, players).await?)
    }
}
