//! Whole tic-tac-toe games over HTTP, each played twice: on the built-in game and on
//! `examples/tictactoe.js` uploaded as a hosted game. The two must behave identically.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_problem, unique, TestApp, TestPlayer};

/// Runs each named test once per implementation of tic-tac-toe.
macro_rules! on_both_games {
    ($($name:ident),* $(,)?) => {
        mod builtin {
            $(
                #[tokio::test]
                async fn $name() {
                    let app = crate::helpers::TestApp::spawn().await;
                    super::$name(&app, "tictactoe").await;
                }
            )*
        }
        mod javascript {
            $(
                #[tokio::test]
                async fn $name() {
                    let app = crate::helpers::TestApp::spawn().await;
                    let game = app.publish_example("tictactoe.js", "js-tictactoe").await;
                    super::$name(&app, &game).await;
                }
            )*
        }
    };
}

on_both_games!(
    the_second_join_starts_the_game_and_closes_the_room,
    x_wins,
    o_wins,
    a_full_board_is_a_draw,
    quitting_mid_game_hands_the_win_to_the_other_player,
    quitting_before_the_game_starts_reopens_the_seat,
    refusals_name_their_reason,
);

async fn play_out(
    app: &TestApp,
    room: &str,
    x: &TestPlayer,
    o: &TestPlayer,
    moves: &[(u8, u8)],
) -> Value {
    let mut last = Value::Null;
    for (turn, (row, col)) in moves.iter().enumerate() {
        let player = if turn % 2 == 0 { x } else { o };
        last = app.play_ok(player, room, json!({"x": row, "y": col})).await;
    }
    last
}

async fn the_second_join_starts_the_game_and_closes_the_room(app: &TestApp, game: &str) {
    let x = app.register(&unique("x")).await;
    let room = app.create_room(&x, json!({"game": game})).await;
    assert_eq!(room["version"], 2, "onRoomStart and the creator's join");
    assert_eq!(room["joinable"], true);
    assert_eq!(room["state"]["status"], "preGame");
    assert_eq!(
        room["players"],
        json!([{"id": x.id, "username": x.username}])
    );
    assert_eq!(room["private"], false);
    assert_eq!(room["inactivePlayers"], json!([]));
    assert!(room["createdAt"].as_str().unwrap().ends_with('Z'));

    let o = app.register(&unique("o")).await;
    let response = app.join(&o, room["id"].as_str().unwrap()).await;
    assert_eq!(response.status(), StatusCode::OK);
    let room: Value = response.json().await.unwrap();
    assert_eq!(room["version"], 3);
    assert_eq!(room["joinable"], false);
    assert_eq!(room["state"]["status"], "inGame");
    assert_eq!(room["state"]["plrToMoveIndex"], 0);
    assert_eq!(room["players"][1]["id"], o.id.as_str());
}

async fn x_wins(app: &TestApp, game: &str) {
    let (room, x, o) = app.started_game(game).await;
    let last = play_out(
        app,
        &room,
        &x,
        &o,
        &[(0, 0), (1, 1), (0, 1), (2, 2), (0, 2)],
    )
    .await;
    assert_eq!(last["finished"], true);
    assert_eq!(last["joinable"], false);
    assert_eq!(last["state"]["status"], "endGame");
    assert_eq!(
        last["state"]["winner"],
        json!({"id": x.id, "username": x.username})
    );
    assert_eq!(
        last["state"]["winningLine"],
        json!([[0, 0], [0, 1], [0, 2]])
    );
    assert_eq!(last["state"]["moveCount"], 5);
    assert_eq!(last["version"], 8);

    let events = app.events(&room).await;
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "room_start",
            "join",
            "join",
            "move",
            "move",
            "move",
            "move",
            "move"
        ]
    );
    let versions: Vec<i64> = events
        .iter()
        .map(|e| e["version"].as_i64().unwrap())
        .collect();
    assert_eq!(versions, (1..=8).collect::<Vec<_>>());
    assert_eq!(events[3]["move"], json!({"x": 0, "y": 0}));
    assert_eq!(events[3]["player"]["id"], x.id.as_str());
    assert_eq!(events[7]["state"], last["state"]);
    assert_eq!(events[7]["finished"], true);
}

async fn o_wins(app: &TestApp, game: &str) {
    let (room, x, o) = app.started_game(game).await;
    let last = play_out(
        app,
        &room,
        &x,
        &o,
        &[(0, 0), (0, 2), (1, 0), (1, 1), (2, 2), (2, 0)],
    )
    .await;
    assert_eq!(last["finished"], true);
    assert_eq!(last["state"]["winner"]["id"], o.id.as_str());
    assert_eq!(
        last["state"]["winningLine"],
        json!([[0, 2], [1, 1], [2, 0]])
    );
}

async fn a_full_board_is_a_draw(app: &TestApp, game: &str) {
    let (room, x, o) = app.started_game(game).await;
    let moves = [
        (0, 0),
        (0, 1),
        (0, 2),
        (1, 1),
        (1, 0),
        (1, 2),
        (2, 1),
        (2, 0),
        (2, 2),
    ];
    let last = play_out(app, &room, &x, &o, &moves).await;
    assert_eq!(last["finished"], true);
    assert_eq!(last["state"]["status"], "endGame");
    assert_eq!(last["state"]["winner"], Value::Null);
    assert_eq!(last["state"]["winningLine"], Value::Null);
    assert_eq!(last["state"]["moveCount"], 9);
}

async fn quitting_mid_game_hands_the_win_to_the_other_player(app: &TestApp, game: &str) {
    let (room, x, o) = app.started_game(game).await;
    play_out(app, &room, &x, &o, &[(1, 1), (0, 0)]).await;
    let response = app.quit(&x, &room).await;
    assert_eq!(response.status(), StatusCode::OK);
    let after: Value = response.json().await.unwrap();
    assert_eq!(after["finished"], true);
    assert_eq!(after["state"]["winner"]["id"], o.id.as_str());
    assert_eq!(
        after["players"],
        json!([{"id": o.id, "username": o.username}])
    );
    assert_eq!(
        after["inactivePlayers"],
        json!([{"id": x.id, "username": x.username}])
    );
    let events = app.events(&room).await;
    assert_eq!(events.last().unwrap()["kind"], "quit");
    assert_eq!(events.last().unwrap()["player"]["id"], x.id.as_str());
}

async fn quitting_before_the_game_starts_reopens_the_seat(app: &TestApp, game: &str) {
    let x = app.register(&unique("x")).await;
    let room = app.create_room(&x, json!({"game": game})).await;
    let id = room["id"].as_str().unwrap();
    let after: Value = app.quit(&x, id).await.json().await.unwrap();
    assert_eq!(after["finished"], false);
    assert_eq!(after["joinable"], true);
    assert_eq!(after["players"], json!([]));

    let y = app.register(&unique("y")).await;
    let joined: Value = app.join(&y, id).await.json().await.unwrap();
    assert_eq!(
        joined["players"][0]["id"],
        y.id.as_str(),
        "the newcomer now plays X"
    );
}

async fn refusals_name_their_reason(app: &TestApp, game: &str) {
    let x = app.register(&unique("x")).await;
    let room = app.create_room(&x, json!({"game": game})).await;
    let id = room["id"].as_str().unwrap().to_owned();
    let refused =
        |response| assert_problem(response, StatusCode::UNPROCESSABLE_ENTITY, "game_refused");
    let early = refused(app.play(&x, &id, json!({"x": 0, "y": 0})).await).await;
    assert_eq!(early["reason"], "game_not_started");

    let o = app.register(&unique("o")).await;
    assert_eq!(app.join(&o, &id).await.status(), StatusCode::OK);
    let cases = [
        (&o, json!({"x": 0, "y": 0}), "not_your_turn"),
        (&x, json!({"x": 3, "y": 0}), "off_board"),
        (&x, json!({"x": "0", "y": 0}), "invalid_move"),
        (&x, json!([0, 0]), "invalid_move"),
        (&x, json!({"x": 1}), "invalid_move"),
    ];
    for (player, mv, reason) in cases {
        let problem = refused(app.play(player, &id, mv.clone()).await).await;
        assert_eq!(problem["reason"], reason, "{mv}: {problem}");
    }
    let turn = refused(app.play(&o, &id, json!({"x": 0, "y": 0})).await).await;
    assert_eq!(turn["detail"], format!("it is {}'s turn", x.username));
    app.play_ok(&x, &id, json!({"x": 1, "y": 1})).await;
    let taken = refused(app.play(&o, &id, json!({"x": 1, "y": 1})).await).await;
    assert_eq!(taken["reason"], "cell_taken");
    assert_eq!(taken["detail"], "that cell is already taken");
    // Nothing refused made a version: two starts and joins, one move.
    assert_eq!(app.room(&id).await["version"], 4);
}
