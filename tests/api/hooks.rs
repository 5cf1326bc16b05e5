//! The hook contract, through games that misbehave the way authors' code sometimes does.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_problem, unique, TestApp};
use crate::test_games;

async fn counter_room(app: &TestApp) -> (String, crate::helpers::TestPlayer) {
    let (room, mut players) = app.counter_room(1).await;
    (room, players.remove(0))
}

#[tokio::test]
async fn a_panicking_hook_is_500_and_changes_nothing() {
    let app = TestApp::spawn_with(test_games::registry()).await;
    let (room, player) = counter_room(&app).await;
    let before = app.room(&room).await;
    let response = app.play(&player, &room, json!({"do": "panic"})).await;
    let problem = assert_problem(response, StatusCode::INTERNAL_SERVER_ERROR, "hook_crashed").await;
    assert!(problem["detail"].as_str().unwrap().contains("onPlayerMove"));
    assert_eq!(app.room(&room).await, before, "the room is unchanged");
    assert_eq!(app.events(&room).await.len(), 2);
    // The server keeps serving, and the room keeps working.
    let after = app.play_ok(&player, &room, json!({})).await;
    assert_eq!(after["state"]["count"], 1);
}

#[tokio::test]
async fn a_panicking_room_start_creates_nothing() {
    let app = TestApp::spawn_with(test_games::registry()).await;
    let player = app.register(&unique("author")).await;
    let response = app
        .post(
            "/rooms",
            Some(&player.token),
            Some(&json!({"game": "broken_start"})),
        )
        .await;
    let problem = assert_problem(response, StatusCode::INTERNAL_SERVER_ERROR, "hook_crashed").await;
    assert!(problem["detail"].as_str().unwrap().contains("onRoomStart"));
    assert_eq!(app.get_json("/rooms").await["rooms"], json!([]));
}

#[tokio::test]
async fn a_patch_with_an_unknown_key_is_rejected_by_name() {
    let app = TestApp::spawn_with(test_games::registry()).await;
    let (room, player) = counter_room(&app).await;
    let response = app.play(&player, &room, json!({"do": "extra"})).await;
    let problem =
        assert_problem(response, StatusCode::INTERNAL_SERVER_ERROR, "invalid_patch").await;
    assert!(
        problem["detail"].as_str().unwrap().contains("`score`"),
        "{problem}"
    );
    let room = app.room(&room).await;
    assert_eq!(room["state"]["count"], 0);
    assert_eq!(room["version"], 2);
}

#[tokio::test]
async fn a_hook_error_is_422_with_the_games_message() {
    let app = TestApp::spawn_with(test_games::registry()).await;
    let (room, player) = counter_room(&app).await;
    let response = app.play(&player, &room, json!({"do": "refuse"})).await;
    let problem = assert_problem(response, StatusCode::UNPROCESSABLE_ENTITY, "game_refused").await;
    assert_eq!(problem["detail"], "the counter refuses");
    assert_eq!(problem["reason"], "not_today");
    assert_eq!(app.room(&room).await["version"], 2);
}

#[tokio::test]
async fn an_empty_patch_still_makes_a_version() {
    let app = TestApp::spawn_with(test_games::registry()).await;
    let (room, player) = counter_room(&app).await;
    let after = app.play_ok(&player, &room, json!({"do": "noop"})).await;
    assert_eq!(after["version"], 3);
    assert_eq!(after["state"], json!({"count": 0}));
    let events = app.events(&room).await;
    assert_eq!(events.last().unwrap()["kind"], "move");
    assert_eq!(events.last().unwrap()["move"], json!({"do": "noop"}));
}

#[tokio::test]
async fn finished_forces_joinable_off() {
    let app = TestApp::spawn_with(test_games::registry()).await;
    let (room, player) = counter_room(&app).await;
    let after = app.play_ok(&player, &room, json!({"do": "finish"})).await;
    assert_eq!(after["finished"], true);
    assert_eq!(
        after["joinable"], false,
        "the patch said joinable: true, finished wins"
    );
    // A quit from a finished room runs no hook: the player only becomes inactive.
    let quit: Value = app.quit(&player, &room).await.json().await.unwrap();
    assert_eq!(quit["players"], json!([]));
    assert_eq!(quit["inactivePlayers"][0]["id"], player.id.as_str());
    assert_eq!(quit["version"], 4);
}

#[tokio::test]
async fn a_room_holds_at_most_fifty_players() {
    let app = TestApp::spawn_with(test_games::registry()).await;
    let (room, _) = counter_room(&app).await;
    for _ in 1..50 {
        let player = app.register(&unique("crowd")).await;
        assert_eq!(app.join(&player, &room).await.status(), StatusCode::OK);
    }
    let late = app.register(&unique("late")).await;
    assert_problem(
        app.join(&late, &room).await,
        StatusCode::CONFLICT,
        "room_full",
    )
    .await;
    let room = app.room(&room).await;
    assert_eq!(room["players"].as_array().unwrap().len(), 50);
}
