//! Computer opponents over HTTP: seated as players of their own, moving through ordinary
//! `onPlayerMove` events right after the human's move commits.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_problem, unique, TestApp, TestPlayer};
use crate::players::stored_rows;
use crate::test_games;

fn empty_cells(room: &Value) -> Vec<Value> {
    let board = &room["state"]["board"];
    if room["game"] == "tictactoe" {
        (0..9)
            .filter(|c| board[c / 3][c % 3].is_null())
            .map(|c| json!({"x": c / 3, "y": c % 3}))
            .collect()
    } else {
        (0..27)
            .filter(|&c| board[c].is_null())
            .map(|c| json!({"index": c}))
            .collect()
    }
}

/// The human plays the first empty cell every turn until the game ends; returns the last room.
async fn play_to_the_end(app: &TestApp, human: &TestPlayer, mut room: Value) -> Value {
    let id = room["id"].as_str().unwrap().to_owned();
    while room["finished"] == false {
        let mv = empty_cells(&room)[0].clone();
        room = app.play_ok(human, &id, mv).await;
    }
    room
}

#[tokio::test]
async fn a_bots_reply_is_its_own_version_and_event() {
    let app = TestApp::spawn().await;
    let human = app.register(&unique("human")).await;
    let room = app
        .create_room(&human, json!({"game": "tictactoe", "bot": "easy"}))
        .await;
    assert_eq!(
        room["version"], 3,
        "onRoomStart, the human's join, the bot's join"
    );
    assert_eq!(room["players"][0]["id"], human.id.as_str());
    assert_eq!(room["players"][1]["username"], "easy bot");
    assert_eq!(room["state"]["status"], "inGame");
    assert_eq!(room["joinable"], false);
    let id = room["id"].as_str().unwrap();

    let after = app.play_ok(&human, id, json!({"x": 1, "y": 1})).await;
    assert_eq!(
        after["version"], 5,
        "the response already shows the bot's reply"
    );
    assert_eq!(after["state"]["moveCount"], 2);
    let events = app.events(id).await;
    let last_two: Vec<(&Value, &Value)> = events[3..]
        .iter()
        .map(|e| (&e["kind"], &e["player"]["username"]))
        .collect();
    assert_eq!(
        last_two,
        [
            (&json!("move"), &json!(human.username)),
            (&json!("move"), &json!("easy bot"))
        ]
    );
    assert_eq!(events[4]["version"], 5);
    assert!(
        events[4]["move"]["x"].is_number(),
        "the bot's move is stored like anyone's"
    );

    // In SQL the bot is a player row of its own.
    let bots: Vec<(String, String)> = stored_rows(
        &app,
        "SELECT username, bot FROM players WHERE bot IS NOT NULL ORDER BY bot",
    )
    .await;
    assert_eq!(
        bots,
        [
            ("easy bot".into(), "easy".into()),
            ("hard bot".into(), "hard".into()),
            ("medium bot".into(), "medium".into())
        ]
    );
}

#[tokio::test]
async fn a_bot_seated_first_opens_the_game() {
    let app = TestApp::spawn().await;
    let human = app.register(&unique("human")).await;
    let room = app
        .create_room(
            &human,
            json!({"game": "tictactoe3d", "bot": "hard", "botPlaysFirst": true}),
        )
        .await;
    assert_eq!(room["players"][0]["username"], "hard bot");
    assert_eq!(room["state"]["moveCount"], 1, "the bot has already moved");
    assert_eq!(room["state"]["board"][13], "X", "hard opens in the centre");
    assert_eq!(room["version"], 4);
    let last = play_to_the_end(&app, &human, room).await;
    assert_eq!(last["state"]["winner"]["username"], "hard bot");
}

/// Every level, both games, both seats: played to the end over HTTP.
#[tokio::test]
async fn every_level_plays_whole_games_on_both_boards() {
    let app = TestApp::spawn().await;
    let human = app.register(&unique("human")).await;
    for game in ["tictactoe", "tictactoe3d"] {
        for level in ["easy", "medium", "hard"] {
            for bot_first in [false, true] {
                let body = json!({"game": game, "bot": level, "botPlaysFirst": bot_first});
                let room = app.create_room(&human, body).await;
                let id = room["id"].as_str().unwrap().to_owned();
                let last = play_to_the_end(&app, &human, room).await;
                assert_eq!(last["finished"], true);
                assert_eq!(last["state"]["status"], "endGame");
                let events = app.events(&id).await;
                let versions: Vec<i64> = events
                    .iter()
                    .map(|e| e["version"].as_i64().unwrap())
                    .collect();
                assert_eq!(
                    versions,
                    (1..=last["version"].as_i64().unwrap()).collect::<Vec<_>>()
                );
                let moves = events.iter().filter(|e| e["kind"] == "move").count();
                assert_eq!(
                    moves as i64,
                    last["state"]["moveCount"].as_i64().unwrap(),
                    "one event per move"
                );
                if level == "hard" {
                    assert_ne!(
                        last["state"]["winner"]["id"],
                        human.id.as_str(),
                        "{game}: hard never loses here"
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn bot_requests_are_checked() {
    let app = TestApp::spawn_with(test_games::registry()).await;
    let human = app.register(&unique("human")).await;
    let post = |body: Value| {
        let (app, token) = (&app, human.token.clone());
        async move { app.post("/rooms", Some(&token), Some(&body)).await }
    };
    let problem = assert_problem(
        post(json!({"game": "counter", "bot": "easy"})).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "bots_unsupported",
    )
    .await;
    assert!(problem["detail"].as_str().unwrap().contains("counter"));
    assert_problem(
        post(json!({"game": "tictactoe", "bot": "expert"})).await,
        StatusCode::BAD_REQUEST,
        "invalid_body",
    )
    .await;
    assert_problem(
        post(json!({"game": "tictactoe", "botPlaysFirst": true})).await,
        StatusCode::BAD_REQUEST,
        "invalid_body",
    )
    .await;
    assert_eq!(app.get_json("/rooms").await["rooms"], json!([]));
}
