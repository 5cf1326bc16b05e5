//! `turnhouse seed-rooms`: fills a database with finished rooms, to measure the service with
//! many stored. One tic-tac-toe game is played through the engine, exactly as over HTTP, and
//! then copied with its memberships and history under fresh ids, in transactions of
//! [`ROOMS_PER_TRANSACTION`]. Its two players are in every copy, so each has as many rooms as
//! were seeded. Then the planner's statistics are brought up to date, as after any bulk load
//! ([`crate::store::Store::refresh_statistics`]).

use std::time::Instant;

use serde_json::json;

use crate::accounts::AccountError;
use crate::domain::records::Account;
use crate::domain::username::Username;
use crate::engine::{Action, EngineError, Precondition, RoomOptions};
use crate::services::Services;

/// Copies written per transaction: large enough to be quick, small enough that a running
/// server's writes wait a fraction of a second at most.
pub const ROOMS_PER_TRANSACTION: u64 = 10_000;

/// X wins on the top row.
const MOVES: [(u8, u8); 5] = [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)];

#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Account(#[from] AccountError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("could not create the seed players: {0}")]
    Players(String),
}

/// Adds `count` finished rooms; returns the id of the first, which the others copy.
pub async fn seed_rooms(services: &Services, count: u64) -> Result<String, SeedError> {
    let started = Instant::now();
    let x = seed_player(services, "seed_x").await?.player_ref();
    let o = seed_player(services, "seed_o").await?.player_ref();
    let engine = &services.rooms;
    let room = engine
        .create_room(&x, "tictactoe", RoomOptions::default())
        .await?;
    engine
        .act(&room.id, Action::Join(o.clone()), Precondition::Any)
        .await?;
    for (turn, (row, col)) in MOVES.iter().enumerate() {
        let player = if turn % 2 == 0 { &x } else { &o };
        let action = Action::Move(player.clone(), json!({"x": row, "y": col}).into());
        engine.act(&room.id, action, Precondition::Any).await?;
    }
    let mut written = 1;
    while written < count {
        let copies = (count - written).min(ROOMS_PER_TRANSACTION);
        engine.copy_room(&room.id, copies as i64).await?;
        written += copies;
        tracing::info!(
            written,
            count,
            seconds = started.elapsed().as_secs_f64(),
            "seeding rooms"
        );
    }
    services.store.refresh_statistics().await?;
    Ok(room.id.to_string())
}

/// A player named `<prefix>_<n>` for the first free `n`.
async fn seed_player(services: &Services, prefix: &str) -> Result<Account, SeedError> {
    let name = format!("{prefix}_{}", rand::random::<u32>());
    let username = Username::parse(&name).map_err(|e| SeedError::Players(e.to_string()))?;
    let (account, _session, _token) = services
        .accounts
        .register(Some(username), "turnhouse seed")
        .await
        .map_err(|e| SeedError::Players(e.to_string()))?;
    Ok(account)
}
