//! The engine over a real store, where a test needs a moment no request can hold still.

use std::sync::Arc;

use serde_json::{json, Value};

use super::action::Action;
use super::transition::Transition;
use super::{Engine, IdleRules, Precondition, RoomOptions};
use crate::accounts::Accounts;
use crate::catalog::Catalog;
use crate::domain::records::Room;
use crate::game::PlayerRef;
use crate::sandbox::{Limits, SandboxPool};
use crate::store::Store;

async fn engine(dir: &tempfile::TempDir) -> (Engine, Accounts, Catalog) {
    let path = dir.path().join("engine.db");
    let store = Store::open(path.to_str().unwrap()).await.unwrap();
    let limits = Limits {
        time: std::time::Duration::from_millis(100),
        memory_bytes: 16 << 20,
        stack_bytes: 256 << 10,
    };
    // No uploaded game is played here, so no worker is ever started.
    let sandbox = SandboxPool::new("/nonexistent".into(), limits, 1);
    let catalog = Catalog::start(store.clone(), crate::games::builtin(), sandbox);
    let accounts = Accounts::start(store.clone(), IdleRules::default().seen_every());
    let engine = Engine::start(store, catalog.clone(), 1, IdleRules::default())
        .await
        .unwrap();
    (engine, accounts, catalog)
}

/// A tic-tac-toe room with X (who moves first) and O seated, and the two players.
async fn tictactoe_in_play(
    engine: &Engine,
    accounts: &Accounts,
) -> (PlayerRef, PlayerRef, Arc<Room>) {
    let (x, ..) = accounts.register(None, "test").await.unwrap();
    let (o, ..) = accounts.register(None, "test").await.unwrap();
    let (x, o) = (x.player_ref(), o.player_ref());
    let room = engine
        .create_room(&x, "tictactoe", RoomOptions::default())
        .await
        .unwrap();
    let room = engine
        .act(&room.id, Action::Join(o.clone()), Precondition::default())
        .await
        .unwrap();
    (x, o, room)
}

/// A version committed to storage that this server has not taken in yet, as a commit is while
/// its log is synced, is not in the history until the room shows it.
#[tokio::test]
async fn the_history_never_runs_ahead_of_the_room() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, accounts, catalog) = engine(&dir).await;
    let (x, _, room) = tictactoe_in_play(&engine, &accounts).await;

    let game = catalog.game_of(&room).await.unwrap();
    let mut step = Transition::new(game, Room::clone(&room), Some(room.version));
    Action::Move(x, json!({"x": 0, "y": 0}).into())
        .apply(&mut step, &engine.bots, &engine.idle)
        .unwrap();
    let (written, _) = engine.store.commit(step.into_commit()).await.unwrap();
    assert_eq!(written.room.version, room.version + 1);

    let (shown, events) = engine.events(&room.id, 0, 100).await.unwrap();
    assert_eq!(shown.version, room.version);
    let versions: Vec<i64> = events.iter().map(|e| e.version).collect();
    assert_eq!(versions, (1..=room.version).collect::<Vec<_>>());

    // Once the room shows it (here: read again from storage), so does the history.
    engine.rooms.forget(&room.id);
    let (shown, events) = engine.events(&room.id, 0, 100).await.unwrap();
    assert_eq!(shown.version, room.version + 1);
    assert_eq!(events.last().map(|e| e.version), Some(room.version + 1));
}

/// A hook is shown the working copy's own state and players, shared with the cached room
/// and never copied; whatever the hook does, refusing included, they are not changed in
/// place, so the cached room's stay as they were.
#[tokio::test]
async fn a_hook_shares_the_rooms_state_and_players_and_changes_neither_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, accounts, catalog) = engine(&dir).await;
    let (x, o, room) = tictactoe_in_play(&engine, &accounts).await;
    assert_eq!(room.players.len(), 2);
    assert_ne!(*room.state, serde_json::Value::Null);
    let (state, players) = (Value::clone(&room.state), Vec::clone(&room.players));

    let game = catalog.game_of(&room).await.unwrap();
    let mut step = Transition::new(game, Room::clone(&room), Some(room.version));
    assert!(Arc::ptr_eq(&step.room.players, &room.players));
    let refused = Action::Move(o, json!({"x": 0, "y": 0}).into()).apply(
        &mut step,
        &engine.bots,
        &engine.idle,
    );
    assert!(refused.is_err(), "it is X's turn");
    assert!(Arc::ptr_eq(&step.room.state, &room.state));
    assert!(Arc::ptr_eq(&step.room.players, &room.players));

    // A move the game accepts gives the working copy a new state, and its version's event
    // shares it; the cached room's is untouched.
    Action::Move(x.clone(), json!({"x": 1, "y": 1}).into())
        .apply(&mut step, &engine.bots, &engine.idle)
        .unwrap();
    assert_eq!(step.room.state["board"][1][1], "X", "{}", step.room.state);
    assert_eq!(*room.state, state);

    // Seating changes are made on a copy of the list, never on the shared one.
    step.remove_player(&x.id);
    assert_eq!(step.room.players.len(), 1);
    assert_eq!(*room.players, players);
    let commit = step.into_commit();
    let event = commit.events.last().unwrap();
    assert!(Arc::ptr_eq(&event.state, &commit.room.state));
    assert!(Arc::ptr_eq(&event.players, &room.players));
    assert_eq!(*event.players, players);
}
