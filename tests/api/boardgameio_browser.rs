//! A boardgame.io React board on the page: the tutorial's tic-tac-toe board and
//! `boardgame.io/react`'s `Client`, whose only Turnhouse line is `multiplayer: Turnhouse()`
//! (`tests/boardgameio/board/`, bundled by esbuild), uploaded as the game's page beside its
//! hooks bundle and played by two people clicking in their frames.

use reqwest::multipart::Form;
use reqwest::StatusCode;
use serde_json::json;

use crate::boardgameio::{bundle, project};
use crate::helpers::{file_part, unique, TestApp};
use crate::urturn_browser::{frame_waits_for, in_frame, two_seated, zipped};
use crate::webdriver::Driver;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_boardgameio_react_board_plays_to_a_win_in_two_frames() {
    let app = TestApp::spawn_for_browsers().await;
    let author = app.register(&unique("author")).await;
    let form = Form::new()
        .part(
            "source",
            file_part("tictactoe.js", bundle("tictactoe").into_bytes()),
        )
        .part(
            "frontend",
            file_part("build.zip", zipped(&project().join("build/board"))),
        );
    let response = app.upload_form(&author, "bgio-ttt", "", form).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let driver = Driver::start().await;
    let (alice, bob, _, _, room) = two_seated(&app, &driver, "bgio-ttt").await;

    // Each frame is told its match and seat in its address, and boardgame.io's client knows it.
    // Bob's frame is loaded again once he has a seat: wait for that before looking inside.
    for (browser, seat) in [(&alice, 0), (&bob, 1)] {
        browser
            .wait_for(
                "the frame of the viewer's seat",
                "const f = document.getElementById('game-frame'); \
                 return !!f && f.src.endsWith('&playerID=' + arguments[0]);",
                json!([seat]),
            )
            .await;
    }
    frame_waits_for(&alice, "#seat", "player 0").await;
    frame_waits_for(&bob, "#seat", "player 1").await;
    frame_waits_for(&alice, "#turn", "your turn").await;
    frame_waits_for(&bob, "#turn", "waiting").await;
    let address = in_frame(&bob, "return location.search;").await;
    assert_eq!(
        address,
        json!(format!("?room={room}&matchID={room}&playerID=1"))
    );
    // The frame takes the board's height (the transport reports it), not the default 600 px.
    alice
        .wait_for(
            "the frame to fit the board",
            "return document.getElementById('game-frame').getBoundingClientRect().height < 400;",
            json!([]),
        )
        .await;
    alice.screenshot("boardgameio-start").await;

    let moves = [
        (&alice, &bob, 0, "0"),
        (&bob, &alice, 3, "1"),
        (&alice, &bob, 1, "0"),
    ];
    let moves = moves
        .into_iter()
        .chain([(&bob, &alice, 4, "1"), (&alice, &bob, 2, "0")]);
    for (mover, other, cell, mark) in moves {
        frame_waits_for(mover, "#turn", "your turn").await;
        mover.enter_frame("#game-frame").await;
        mover.click(&format!("[data-cell=\"{cell}\"] button")).await;
        mover.leave_frame().await;
        frame_waits_for(other, &format!("[data-cell=\"{cell}\"]"), mark).await;
    }
    frame_waits_for(&alice, "#winner", "Winner: 0").await;
    frame_waits_for(&bob, "#winner", "Winner: 0").await;
    alice.screenshot("boardgameio-won").await;
    bob.screenshot("boardgameio-lost").await;
    let stored = app.room(&room).await;
    assert_eq!(stored["finished"], true);
    assert_eq!(
        stored["state"]["match"]["ctx"]["gameover"],
        json!({"winner": "0"})
    );
    for browser in [&alice, &bob] {
        let console = browser.console().await;
        assert!(console.is_empty(), "the console stays empty: {console:?}");
    }
}
