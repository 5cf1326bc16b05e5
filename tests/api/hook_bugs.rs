//! A bug in a game's code is told from the game refusing a move: an error the game throws is a
//! refusal (422), one the engine raises in its code is a fault (500 hook_failed) with the line,
//! in the owner's log. And an upload that fails says where, and how to send the source.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{assert_problem, unique, TestApp};

const CHOOSY: &str = "module.exports = {
  onRoomStart: () => ({ state: { said: [] } }),
  onPlayerJoin: () => ({}),
  onPlayerQuit: () => ({}),
  onPlayerMove(player, move, room) {
    if (move.pass) throw new Error('you cannot pass');
    if (move.range) throw new RangeError('pick 1 to 3');
    const choice = move.choice.toLowerCase();
    return { state: { said: [...room.state.said, choice] } };
  },
};
";

#[tokio::test]
async fn a_bug_in_a_hook_is_a_fault_with_its_line_and_a_throw_is_a_refusal() {
    let app = TestApp::spawn().await;
    let game = unique("choosy").replace('_', "-");
    let owner = app.publish(&game, CHOOSY).await;
    let player = app.new_player().await;
    let room = app.create_room(&player, json!({"game": game})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    let path = format!("/rooms/{room}/moves");

    let response = app.post(&path, Some(&player.token), Some(&json!({}))).await;
    let problem = assert_problem(response, StatusCode::INTERNAL_SERVER_ERROR, "hook_failed").await;
    assert_eq!(problem["line"], 8, "{problem}");
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("TypeError"), "{detail}");
    assert!(detail.contains("(line 8)"), "{detail}");

    for (body, reason) in [
        (json!({"pass": true}), "Error"),
        (json!({"range": 9}), "RangeError"),
    ] {
        let response = app.post(&path, Some(&player.token), Some(&body)).await;
        let problem =
            assert_problem(response, StatusCode::UNPROCESSABLE_ENTITY, "game_refused").await;
        assert_eq!(problem["reason"], reason);
    }
    // The room is unchanged, and the next move works.
    let moved = app.play_ok(&player, &room, json!({"choice": "Rock"})).await;
    assert_eq!(moved["state"]["said"], json!(["rock"]));

    // The owner reads the bug, with its line, in the game's log; the refusals are not there.
    let started = Instant::now();
    let faults = loop {
        let response = app
            .request(
                Method::GET,
                &format!("/games/{game}/logs"),
                Some(&owner.token),
                None,
            )
            .await;
        let page: Value = response.json().await.unwrap();
        let faults: Vec<String> = (page["lines"].as_array().unwrap().iter())
            .filter(|l| l["level"] == "error")
            .map(|l| l["text"].as_str().unwrap().to_owned())
            .collect();
        if !faults.is_empty() || started.elapsed() > Duration::from_secs(5) {
            break faults;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert!(
        faults[0].contains("TypeError") && faults[0].contains("line 8"),
        "{faults:?}"
    );
}

#[tokio::test]
async fn an_upload_that_fails_says_where_and_how_to_send_the_source() {
    let app = TestApp::spawn().await;
    let author = app.new_player().await;
    let game = unique("unclosed").replace('_', "-");
    // The `if` on line 3 is never closed; the parser only notices at the end of the file.
    let unclosed =
        "'use strict';\nfunction score(x) {\n  if (x) {\n    return 1;\n  return 2;\n}\n\
                    module.exports = { onRoomStart() { return {}; }, onPlayerJoin() {},\n  \
                    onPlayerQuit() {}, onPlayerMove() { return { state: score(1) }; } };\n";
    let response = app.upload(&author, &game, unclosed).await;
    let problem = assert_problem(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_game_code",
    )
    .await;
    assert_eq!(problem["line"], 3, "{problem}");
    let detail = problem["detail"].as_str().unwrap();
    assert_eq!(
        detail.matches("line 3").count(),
        1,
        "the line once: {detail}"
    );

    // The source sent as curl's --data-binary sends it, without saying it is JavaScript.
    for content_type in [None, Some("application/x-www-form-urlencoded")] {
        let mut request = app
            .client
            .put(format!("{}/games/{game}", app.address))
            .bearer_auth(&author.token)
            .body(CHOOSY);
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        let response = request.send().await.unwrap();
        let problem = assert_problem(response, StatusCode::BAD_REQUEST, "malformed_json").await;
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.contains("Content-Type: application/javascript"),
            "{detail}"
        );
    }
}
