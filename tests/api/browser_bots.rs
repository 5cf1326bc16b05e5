//! Whole games against the computer in a real browser: the cube against the hard bot, and
//! Battleship against the medium bot, from the lobby to the end.

use serde_json::{json, Value};

use crate::browser::{count, room_in_view, sign_up};
use crate::helpers::TestApp;
use crate::webdriver::Driver;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_cube_game_against_the_hard_bot() {
    let app = TestApp::spawn().await;
    let driver = Driver::start().await;
    let player = driver.browser("cube-vs-hard-bot").await;
    sign_up(&player, &app, "cuber").await;
    let card = "[data-game=\"tictactoe3d\"]";
    player.select(&format!("{card} .bot-level"), "hard").await;
    player.check(&format!("{card} .bot-first")).await;
    player.click(&format!("{card} .play-bot")).await;
    let room = room_in_view(&player).await;
    // The bot moved first: one mark on the cube before the player's first turn.
    player.wait_for_text("#status", "Your turn").await;
    assert_eq!(count(&player, ".layer").await, 3, "three layers shown");
    assert_eq!(count(&player, ".cell").await, 27);
    assert_eq!(
        count(&player, ".cell:disabled").await,
        1,
        "{}",
        app.room(&room).await
    );
    player.screenshot("cube-start").await;

    let mut turns = 0;
    loop {
        let state = player
            .wait_for(
                "the player's turn or the end",
                "const s = document.getElementById('status').textContent; \
                 return s.includes('Your turn') || s.includes('win') || s.includes('draw') ? s : null;",
                json!([]),
            )
            .await;
        if !state.as_str().unwrap().contains("Your turn") {
            break;
        }
        let before = count(&player, ".cell:disabled").await;
        player.click(".cell:not(:disabled)").await;
        // The answer carries the player's move and the bot's reply.
        player
            .wait_for(
                "the board to change",
                "return document.querySelectorAll('.cell:disabled').length > arguments[0] \
                 && !document.getElementById('status').textContent.includes('In play');",
                json!([before]),
            )
            .await;
        turns += 1;
        assert!(turns <= 14, "a cube game has at most 27 moves");
    }
    player.screenshot("cube-end").await;

    let stored: Value = app.room(&room).await;
    assert_eq!(stored["finished"], true);
    let status = player.text("#status").await;
    match stored["state"]["winner"]["username"].as_str() {
        Some("hard bot") => assert_eq!(status, "Game over: hard bot wins!"),
        Some(_) => assert_eq!(status, "You win!"),
        None => assert!(status.contains("draw"), "{status}"),
    }
    if !stored["state"]["winner"].is_null() {
        assert_eq!(count(&player, ".cell.win").await, 3);
    }
    player.close().await;
}

/// Battleship against the medium bot, from the lobby to the end: the fleet placed at random,
/// then a shot at each cell of the bot's waters in turn until one side has no ship left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_battleship_game_against_the_medium_bot() {
    let app = TestApp::spawn().await;
    let driver = Driver::start().await;
    let player = driver.browser("battleship-vs-medium-bot").await;
    sign_up(&player, &app, "admiral").await;
    let card = "[data-game=\"battleship\"]";
    player.select(&format!("{card} .bot-level"), "medium").await;
    player.click(&format!("{card} .play-bot")).await;
    let room = room_in_view(&player).await;
    player
        .wait_for_text("#status", "The fleets are being placed.")
        .await;
    assert_eq!(
        count(&player, ".spot.ship").await,
        0,
        "the bot's fleet is not shown"
    );
    // By hand: the carrier down from the corner (turned with R), then undone; then every
    // ship across, one every other row, from the left edge.
    let own = |cell: &str| format!(".spot[data-side=\"0\"][data-cell=\"{cell}\"]");
    player
        .wait_for_text("#placing-help", "Place your carrier (5 cells, across)")
        .await;
    player.press_key("r").await;
    player.wait_for_text("#placing-help", "5 cells, down").await;
    player.click(&own("0,0")).await;
    player
        .wait_for_text("#placing-help", "Place your battleship")
        .await;
    assert_eq!(
        count(&player, ".spot.ship[data-cell=\"4,0\"]").await,
        1,
        "down the column"
    );
    player.click("#undo-ship").await;
    player.click("#turn-ship").await;
    player
        .wait_for_text("#placing-help", "5 cells, across")
        .await;
    for row in [0, 2, 4, 6, 8] {
        player.click(&own(&format!("{row},0"))).await;
    }
    player
        .wait_for_text("#placing-help", "Your fleet is ready.")
        .await;
    assert_eq!(count(&player, ".spot.ship").await, 17);
    player.click("#place-fleet").await;
    player.wait_for_text("#status", "Your turn").await;
    assert_eq!(count(&player, ".spot.ship").await, 17, "your own fleet is");
    // The carrier lies across the top row, as placed.
    assert_eq!(
        count(&player, ".spot.ship[data-side=\"0\"][data-cell=\"0,4\"]").await,
        1
    );
    player
        .wait_for_text(".afloat[data-side=\"1\"]", "5 of 5 ships afloat")
        .await;
    player.screenshot("battleship-start").await;
    let mut shots = 0;
    loop {
        let status = player
            .wait_for(
                "the player's turn or the end",
                "const s = document.getElementById('status').textContent; \
                 return s.includes('Your turn') || s.includes('win') ? s : null;",
                json!([]),
            )
            .await;
        if !status.as_str().unwrap().contains("Your turn") {
            break;
        }
        let before = count(&player, ".spot[data-side=\"1\"]:disabled").await;
        player.click(".spot[data-side=\"1\"]:not(:disabled)").await;
        player
            .wait_for(
                "the shot to land",
                "return document.querySelectorAll('.spot[data-side=\"1\"]:disabled').length > arguments[0];",
                json!([before]),
            )
            .await;
        shots += 1;
        assert!(shots <= 100, "a board has 100 cells");
        if shots == 1 {
            player.wait_for_text("#shot-news", "at row").await;
        }
    }
    player.screenshot("battleship-end").await;
    let stored: Value = app.room(&room).await;
    assert_eq!(stored["finished"], true);
    let status = player.text("#status").await;
    match stored["state"]["winner"]["username"].as_str() {
        Some("medium bot") => assert_eq!(status, "Game over: medium bot wins!"),
        _ => assert_eq!(status, "You win!"),
    }
    // At the end everything shows: both fleets.
    assert_eq!(count(&player, ".spot.ship").await, 34);
    player.close().await;
}
