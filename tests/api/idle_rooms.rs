//! Rooms nobody will play, and rematches: quick play passes over rooms whose players are gone,
//! waiting rooms nobody joins close with a version of their own, a game that stood still can
//! be claimed through `onPlayerQuit`, and "Play again" holds the seats for the same players
//! (accepted, declined, or left to lapse), with a running score. Every period is set down to
//! seconds here; the defaults are in `docs/operations.md`.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_problem, TestApp, TestPlayer};
use crate::sse_client::EventStream;

/// A server whose idle periods are `seconds` each, and whose rematches are held for `hold`.
async fn app_with_periods(seconds: u64, hold: u64) -> TestApp {
    TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        let idle = &mut config.idle_rooms;
        idle.quickplay_seen_within_secs = seconds;
        idle.waiting_room_idle_secs = seconds;
        idle.claim_after_secs = seconds;
        idle.rematch_hold_secs = hold;
    })
    .await
}

async fn quickplay(app: &TestApp, player: &TestPlayer) -> (StatusCode, Value) {
    app.post_value(
        "/rooms/quickplay",
        Some(&player.token),
        json!({"game": "tictactoe"}),
    )
    .await
}

fn id(room: &Value) -> String {
    room["id"].as_str().unwrap().to_owned()
}

/// Waits (a tenth of a second at a time, for at most `limit`) until `room` satisfies `done`;
/// reads it without a token, so the reading does not count as anyone being here.
async fn room_once(
    app: &TestApp,
    room: &str,
    limit: Duration,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let start = std::time::Instant::now();
    loop {
        let current = app.room(room).await;
        if done(&current) {
            return current;
        }
        assert!(start.elapsed() < limit, "the room never changed: {current}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn quick_play_passes_over_a_room_whose_creator_is_gone_and_joins_one_whose_creator_watches() {
    // The sweeper must not close the rooms while this runs: only quick play's window is short.
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.idle_rooms.quickplay_seen_within_secs = 2;
    })
    .await;
    let gone = app.new_player().await;
    let (status, abandoned) = quickplay(&app, &gone).await;
    assert_eq!(status, StatusCode::CREATED);
    tokio::time::sleep(Duration::from_millis(2_500)).await;

    // Nobody was seen in the room since it was opened: a newcomer gets a room of their own.
    let watcher = app.new_player().await;
    let (status, own) = quickplay(&app, &watcher).await;
    assert_eq!(status, StatusCode::CREATED, "{own}");
    assert_ne!(id(&own), id(&abandoned));
    assert_eq!(
        app.room(&id(&abandoned)).await["players"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // The second room's creator keeps its stream open, which keeps them seen.
    let url = format!(
        "{}/rooms/{}/stream?access_token={}",
        app.address,
        id(&own),
        watcher.token
    );
    let mut stream = EventStream::open(&app.client, &url, None).await;
    stream.event().await;
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    // Asked of another server on the same database, which learns who was seen from it.
    let beside = app
        .spawn_beside_configured(turnhouse::games::builtin(), |config| {
            config.idle_rooms.quickplay_seen_within_secs = 2;
        })
        .await;
    let newcomer = beside.new_player().await;
    let (status, joined) = quickplay(&beside, &newcomer).await;
    assert_eq!(status, StatusCode::OK, "{joined}");
    assert_eq!(
        id(&joined),
        id(&own),
        "the room with someone in it is joined"
    );
}

#[tokio::test]
async fn a_waiting_room_nobody_joins_is_closed_once_by_one_of_two_servers() {
    let app = app_with_periods(2, 60).await;
    // A second server sweeps the same rooms: between them, one `closed` version.
    let _beside = app
        .spawn_beside_configured(turnhouse::games::builtin(), |config| {
            config.idle_rooms.waiting_room_idle_secs = 2;
        })
        .await;
    let alice = app.new_player().await;
    let room = app.create_room(&alice, json!({"game": "tictactoe"})).await;
    assert!(room["closesAt"].as_str().unwrap() > room["updatedAt"].as_str().unwrap());
    let played = app.create_room(&alice, json!({"game": "tictactoe"})).await;
    let bob = app.new_player().await;
    assert_eq!(app.join(&bob, &id(&played)).await.status(), StatusCode::OK);

    let closed = room_once(&app, &id(&room), Duration::from_secs(15), |r| {
        r["finished"] == true
    })
    .await;
    assert_eq!(closed["version"], room["version"].as_i64().unwrap() + 1);
    assert_eq!(closed["joinable"], false);
    assert_eq!(
        closed["state"], room["state"],
        "the state is left as it was"
    );
    assert!(
        closed.get("score").is_none(),
        "a room closed unplayed is no game"
    );
    let events = app.events(&id(&room)).await;
    let last = events.last().unwrap();
    assert_eq!(last["kind"], "closed");
    assert_eq!(last["player"], Value::Null);
    assert_eq!(events.iter().filter(|e| e["kind"] == "closed").count(), 1);

    // Closed is closed; and the room in play was left alone.
    let late = app.new_player().await;
    assert_problem(
        app.join(&late, &id(&room)).await,
        StatusCode::CONFLICT,
        "room_finished",
    )
    .await;
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let still = app.room(&id(&played)).await;
    assert_eq!(still["finished"], false);
    assert_eq!(still["version"], 3);
    assert_eq!(
        app.events(&id(&room)).await.len(),
        events.len(),
        "closed once"
    );
}

#[tokio::test]
async fn the_player_still_there_claims_a_game_that_stood_still_through_on_player_quit() {
    let app = app_with_periods(2, 60).await;
    let (room, x, o) = app.started_tictactoe().await;
    let moved = app.play_ok(&x, &room, json!({"x": 1, "y": 1})).await;
    let claimable_at = moved["claimableAt"].as_str().unwrap().to_owned();
    assert!(claimable_at.as_str() > moved["updatedAt"].as_str().unwrap());

    let claim = |player: &TestPlayer| {
        let path = format!("/rooms/{room}/claim");
        let token = player.token.clone();
        let app = &app;
        async move { app.post(&path, Some(&token), None).await }
    };
    // Too early for anyone; and never for the player the room is waiting on.
    assert_problem(claim(&x).await, StatusCode::CONFLICT, "claim_too_early").await;
    let waiting_on_you =
        assert_problem(claim(&o).await, StatusCode::CONFLICT, "cannot_claim").await;
    assert!(waiting_on_you["detail"]
        .as_str()
        .unwrap()
        .contains("your move"));
    let stranger = app.new_player().await;
    assert_problem(
        claim(&stranger).await,
        StatusCode::FORBIDDEN,
        "not_a_player",
    )
    .await;

    tokio::time::sleep(Duration::from_millis(2_200)).await;
    let response = claim(&x).await;
    assert_eq!(response.status(), StatusCode::OK);
    let claimed: Value = response.json().await.unwrap();
    assert_eq!(claimed["finished"], true);
    assert_eq!(
        claimed["state"]["winner"]["id"],
        x.id.as_str(),
        "the game's own quit decides"
    );
    assert_eq!(claimed["inactivePlayers"][0]["id"], o.id.as_str());
    assert_eq!(
        claimed["score"],
        json!({"games": 1, "draws": 0, "wins": {(x.id.clone()): 1}})
    );
    let events = app.events(&room).await;
    let last = events.last().unwrap();
    assert_eq!(last["kind"], "abandoned");
    assert_eq!(last["player"]["id"], o.id.as_str());
    assert_problem(claim(&x).await, StatusCode::CONFLICT, "room_finished").await;
}

#[tokio::test]
async fn a_room_with_a_clock_is_never_claimed_its_clock_decides() {
    let app = app_with_periods(1, 60).await;
    let x = app.new_player().await;
    let o = app.new_player().await;
    let room = app
        .create_room(
            &x,
            json!({"game": "tictactoe", "clock": {"moveSeconds": 3600}}),
        )
        .await;
    assert_eq!(app.join(&o, &id(&room)).await.status(), StatusCode::OK);
    let moved = app.play_ok(&x, &id(&room), json!({"x": 0, "y": 0})).await;
    assert!(moved.get("claimableAt").is_none());
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let response = app
        .post(&format!("/rooms/{}/claim", id(&room)), Some(&x.token), None)
        .await;
    let problem = assert_problem(response, StatusCode::CONFLICT, "cannot_claim").await;
    assert!(problem["detail"].as_str().unwrap().contains("clock"));
}

/// X wins a game of tic-tac-toe in `room` against O.
async fn x_wins(app: &TestApp, room: &str, x: &TestPlayer, o: &TestPlayer) -> Value {
    let moves = [(0, 0), (1, 1), (0, 1), (2, 2), (0, 2)];
    let mut last = Value::Null;
    for (turn, (row, col)) in moves.iter().enumerate() {
        let player = if turn % 2 == 0 { x } else { o };
        last = app.play_ok(player, room, json!({"x": row, "y": col})).await;
    }
    assert_eq!(last["finished"], true);
    last
}

async fn play_again(app: &TestApp, room: &str, player: &TestPlayer) -> Value {
    let response = app
        .post(&format!("/rooms/{room}/reset"), Some(&player.token), None)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

#[tokio::test]
async fn a_rematch_accepted_holds_the_seat_for_the_same_player_and_keeps_the_score() {
    let app = app_with_periods(60, 60).await;
    let (room, x, o) = app.started_tictactoe().await;
    let over = x_wins(&app, &room, &x, &o).await;
    assert_eq!(
        over["score"],
        json!({"games": 1, "draws": 0, "wins": {(x.id.clone()): 1}})
    );

    let offered = play_again(&app, &room, &x).await;
    let rematch = &offered["rematch"];
    assert_eq!(rematch["by"]["id"], x.id.as_str());
    assert_eq!(
        rematch["seats"],
        json!([{"id": o.id, "username": o.username}])
    );
    assert!(rematch["until"].as_str().unwrap() > offered["updatedAt"].as_str().unwrap());
    assert_eq!(offered["joinable"], true);
    assert_eq!(offered["score"]["games"], 1, "the score outlives the game");

    // A stranger can neither take the seat nor be matched into the room by quick play.
    let stranger = app.new_player().await;
    let held = assert_problem(
        app.join(&stranger, &room).await,
        StatusCode::CONFLICT,
        "seat_held",
    )
    .await;
    assert!(held["detail"].as_str().unwrap().contains(&o.username));
    let (status, elsewhere) = quickplay(&app, &stranger).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_ne!(id(&elsewhere), room);

    // O accepts by joining; the offer is spent and the second game is counted.
    let accepted: Value = app.join(&o, &room).await.json().await.unwrap();
    assert!(accepted.get("rematch").is_none(), "{accepted}");
    assert_eq!(accepted["joinable"], false);
    let again = x_wins(&app, &room, &x, &o).await;
    assert_eq!(
        again["score"],
        json!({"games": 2, "draws": 0, "wins": {(x.id.clone()): 2}})
    );
}

#[tokio::test]
async fn a_rematch_declined_opens_the_seat_to_anyone() {
    let app = app_with_periods(60, 60).await;
    let (room, x, o) = app.started_tictactoe().await;
    x_wins(&app, &room, &x, &o).await;
    let decline = |player: &TestPlayer| {
        let (path, token, app) = (format!("/rooms/{room}/decline"), player.token.clone(), &app);
        async move { app.post(&path, Some(&token), None).await }
    };
    assert_problem(decline(&o).await, StatusCode::CONFLICT, "no_rematch_offer").await;
    let offered = play_again(&app, &room, &x).await;

    assert_problem(decline(&x).await, StatusCode::CONFLICT, "no_rematch_offer").await;
    let response = decline(&o).await;
    assert_eq!(response.status(), StatusCode::OK);
    let declined: Value = response.json().await.unwrap();
    assert_eq!(
        declined["version"],
        offered["version"].as_i64().unwrap() + 1
    );
    assert!(declined.get("rematch").is_none());
    let events = app.events(&room).await;
    let last = events.last().unwrap();
    assert_eq!(last["kind"], "declined");
    assert_eq!(last["player"]["id"], o.id.as_str());

    let stranger = app.new_player().await;
    assert_eq!(app.join(&stranger, &room).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_rematch_nobody_answers_lapses_and_the_room_opens_to_others() {
    let app = app_with_periods(60, 1).await;
    let (room, x, o) = app.started_tictactoe().await;
    x_wins(&app, &room, &x, &o).await;
    play_again(&app, &room, &x).await;
    let stranger = app.new_player().await;
    assert_problem(
        app.join(&stranger, &room).await,
        StatusCode::CONFLICT,
        "seat_held",
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    let response = app.join(&stranger, &room).await;
    assert_eq!(response.status(), StatusCode::OK);
    let joined: Value = response.json().await.unwrap();
    assert!(joined.get("rematch").is_none());
    assert_problem(
        app.post(&format!("/rooms/{room}/decline"), Some(&o.token), None)
            .await,
        StatusCode::CONFLICT,
        "no_rematch_offer",
    )
    .await;
}
