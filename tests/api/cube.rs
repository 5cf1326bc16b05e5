//! 3D tic-tac-toe between two people over HTTP.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::{assert_problem, unique, TestApp};

#[tokio::test]
async fn a_space_diagonal_wins_on_the_cube() {
    let app = TestApp::spawn().await;
    let x = app.register(&unique("x")).await;
    let o = app.register(&unique("o")).await;
    let room = app.create_room(&x, json!({"game": "tictactoe3d"})).await;
    let id = room["id"].as_str().unwrap().to_owned();
    assert_eq!(room["state"]["board"].as_array().unwrap().len(), 27);
    app.join(&o, &id).await;

    app.play_ok(&x, &id, json!({"index": 0})).await;
    app.play_ok(&o, &id, json!({"x": 1, "y": 0, "z": 0})).await;
    let refused = app.play(&x, &id, json!({"index": 1})).await;
    let problem = assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "game_refused").await;
    assert_eq!(problem["reason"], "cell_taken");
    let refused = app.play(&x, &id, json!({"index": 30})).await;
    assert_eq!(
        assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "game_refused").await["reason"],
        "off_board"
    );
    app.play_ok(&x, &id, json!({"x": 1, "y": 1, "z": 1})).await;
    app.play_ok(&o, &id, json!({"index": 2})).await;
    let last = app.play_ok(&x, &id, json!({"index": 26})).await;

    assert_eq!(last["finished"], true);
    assert_eq!(last["state"]["winner"]["id"], x.id.as_str());
    assert_eq!(last["state"]["winningLine"], json!([0, 13, 26]));
    assert_eq!(last["state"]["board"][1], "O");
    assert_eq!(last["state"]["moveCount"], 5);
}

#[tokio::test]
async fn the_games_list_both_boards_with_bots() {
    let app = TestApp::spawn().await;
    let games = app.get_json("/games").await;
    let ids: Vec<&str> = games["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["battleship", "tictactoe", "tictactoe3d"]);
    for game in games["games"].as_array().unwrap() {
        assert_eq!(game["bots"], true);
        assert_eq!(
            (game["minPlayers"].as_i64(), game["maxPlayers"].as_i64()),
            (Some(2), Some(2))
        );
    }
}
