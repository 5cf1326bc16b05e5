//! A game's logs, for its owner: what its hooks log and how they fail, kept per game within a
//! bound, read as a page or followed as a stream; refused to anyone else.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::client::{unique, Api, TestPlayer};
use crate::helpers::{assert_problem, TestApp};
use crate::sse_client::EventStream;

/// A one-seat game that logs on every move: `lines` lines at `console.log`, then one
/// `roomState.logger.warn`; a move `{"bad": true}` returns a patch no record can hold.
fn chatty(lines: usize) -> String {
    format!(
        "module.exports = {{
          onRoomStart: () => ({{ state: {{ moves: 0 }} }}),
          onPlayerJoin: () => ({{}}),
          onPlayerQuit: () => ({{}}),
          onPlayerMove(player, move, room) {{
            if (move.bad) return {{ state: 1, score: 2 }};
            const moves = room.state.moves + 1;
            for (let i = 0; i < {lines}; i++) console.log(`line ${{i}} of move ${{moves}}`);
            room.logger.warn(`${{player.username}} made move ${{moves}}`);
            return {{ state: {{ moves }} }};
          }},
        }};"
    )
}

/// The game's log as its owner reads it, once it holds at least `count` lines (the lines are
/// stored off the path of the move, so a moment after it).
async fn log_of(app: &Api, owner: &TestPlayer, game: &str, count: usize) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let response = app
            .request(
                Method::GET,
                &format!("/games/{game}/logs?limit=1000"),
                Some(&owner.token),
                None,
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        let page: Value = response.json().await.unwrap();
        let lines = page["lines"].as_array().unwrap().clone();
        if lines.len() >= count || started.elapsed() > Duration::from_secs(10) {
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn the_owner_reads_each_line_with_its_room_version_hook_and_level_and_a_failure_too() {
    let app = TestApp::spawn().await;
    let game = unique("chatty").replace('_', "-");
    let owner = app.publish(&game, &chatty(1)).await;
    let player = app.new_player().await;
    let room = app.create_room(&player, json!({"game": game})).await;
    let room = room["id"].as_str().unwrap();
    app.play_ok(&player, room, json!({})).await;
    let response = app.play(&player, room, json!({"bad": true})).await;
    assert_problem(response, StatusCode::INTERNAL_SERVER_ERROR, "invalid_patch").await;

    let lines = log_of(&app, &owner, &game, 3).await;
    assert_eq!(lines.len(), 3, "{lines:#?}");
    // Created at versions 1 (onRoomStart) and 2 (the join): the move made version 3.
    assert_eq!(lines[0]["text"], "line 0 of move 1");
    assert_eq!(lines[0]["level"], "info");
    assert_eq!(lines[1]["text"], format!("{} made move 1", player.username));
    assert_eq!(lines[1]["level"], "warn");
    for line in &lines[..2] {
        assert_eq!(line["room"], room);
        assert_eq!(line["version"], 3);
        assert_eq!(line["hook"], "onPlayerMove");
        assert_eq!(line["gameVersion"], 1);
        assert!(line["at"].as_str().unwrap().ends_with('Z'));
    }
    // The failed move would have made version 4; its players got a 500, its owner the why.
    assert_eq!(lines[2]["level"], "error");
    assert_eq!(lines[2]["version"], 4);
    assert_eq!(lines[2]["hook"], "onPlayerMove");
    let why = lines[2]["text"].as_str().unwrap();
    assert!(why.contains("invalid patch"), "{why}");
    assert!(lines[0]["id"].as_i64() < lines[2]["id"].as_i64());

    // Paging on from a line: only what came after it.
    let after = lines[0]["id"].as_i64().unwrap();
    let path = format!("/games/{game}/logs?after={after}&limit=1");
    let page: Value = app
        .request(Method::GET, &path, Some(&owner.token), None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(page["lines"].as_array().unwrap().len(), 1);
    assert_eq!(page["lines"][0], lines[1]);
    assert_eq!(page["nextAfter"], lines[1]["id"]);
}

#[tokio::test]
async fn only_the_owner_may_read_a_game_s_logs() {
    let app = TestApp::spawn().await;
    let game = unique("chatty").replace('_', "-");
    app.publish(&game, &chatty(1)).await;
    let stranger = app.new_player().await;
    let logs = format!("/games/{game}/logs");
    let as_stranger = |path: String| {
        let (app, token) = (&app, stranger.token.clone());
        async move { app.request(Method::GET, &path, Some(&token), None).await }
    };
    assert_problem(
        app.get(&logs).await,
        StatusCode::UNAUTHORIZED,
        "missing_token",
    )
    .await;
    for path in [logs.clone(), format!("{logs}/stream")] {
        assert_problem(
            as_stranger(path).await,
            StatusCode::FORBIDDEN,
            "not_the_owner",
        )
        .await;
    }
    let response = app
        .get(&format!("{logs}/stream?access_token={}", stranger.token))
        .await;
    assert_problem(response, StatusCode::FORBIDDEN, "not_the_owner").await;
    let response = as_stranger("/games/tictactoe/logs".into()).await;
    assert_problem(response, StatusCode::FORBIDDEN, "not_the_owner").await;
    let response = as_stranger(format!("/games/{}/logs", unique("nothing"))).await;
    assert_problem(response, StatusCode::NOT_FOUND, "game_not_found").await;
    let response = as_stranger(format!("{logs}?limit=1001")).await;
    assert_problem(response, StatusCode::BAD_REQUEST, "invalid_query").await;
}

#[tokio::test]
async fn a_game_s_log_keeps_its_newest_thousand_lines() {
    let app = TestApp::spawn().await;
    let game = unique("chatty").replace('_', "-");
    let owner = app.publish(&game, &chatty(599)).await;
    let player = app.new_player().await;
    let room = app.create_room(&player, json!({"game": game})).await;
    let room = room["id"].as_str().unwrap();
    app.play_ok(&player, room, json!({})).await;
    app.play_ok(&player, room, json!({})).await;
    // 1,200 lines were logged: once the last has landed (they are stored off the moves'
    // path), the first 200 are gone.
    let last = format!("{} made move 2", player.username);
    let started = Instant::now();
    let lines = loop {
        let lines = log_of(&app, &owner, &game, 1000).await;
        if lines
            .last()
            .is_some_and(|line| line["text"] == last.as_str())
            || started.elapsed() > Duration::from_secs(10)
        {
            break lines;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // Read again a little later: still the bound.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let lines_again = log_of(&app, &owner, &game, 1000).await;
    assert_eq!(lines, lines_again);
    assert_eq!(lines.len(), 1000);
    assert_eq!(lines[0]["text"], "line 200 of move 1");
    assert_eq!(lines[999]["text"], last.as_str());
}

#[tokio::test]
async fn the_owner_follows_the_log_live_and_resumes_after_the_last_line_seen() {
    let app = TestApp::spawn().await;
    let game = unique("chatty").replace('_', "-");
    let owner = app.publish(&game, &chatty(1)).await;
    let player = app.new_player().await;
    let room = app.create_room(&player, json!({"game": game})).await;
    let room = room["id"].as_str().unwrap();
    let url = format!(
        "{}/games/{game}/logs/stream?access_token={}",
        app.address, owner.token
    );
    let mut stream = EventStream::open(&app.client, &url, None).await;
    app.play_ok(&player, room, json!({})).await;
    let first = stream.event().await;
    assert_eq!(first.event.as_deref(), Some("log"));
    assert_eq!(first.json()["text"], "line 0 of move 1");
    let second = stream.event().await;
    assert_eq!(second.json()["level"], "warn");
    assert_eq!(second.id, Some(second.json()["id"].to_string()));

    // Reconnecting after the first line gets the second again, then the next move's.
    let first_id = first.json()["id"].as_i64().unwrap();
    let mut resumed = EventStream::open(&app.client, &url, Some(first_id)).await;
    assert_eq!(resumed.event().await.json(), second.json());
    app.play_ok(&player, room, json!({})).await;
    assert_eq!(resumed.event().await.json()["text"], "line 0 of move 2");
}
