//! The turns inbox on the page, in Chromium: "Your move (N)" in the bar and in the tab's title,
//! on a phone's width too, the list of rooms waiting, the count going down as she moves, and
//! muting a room.

use reqwest::StatusCode;
use serde_json::json;

use crate::browser::{click_cell, sign_up};
use crate::helpers::TestApp;
use crate::webdriver::{Browser, Driver};

/// The signed-in player's token, from the page's storage.
async fn token_of(browser: &Browser) -> String {
    let token = browser
        .eval(
            "return JSON.parse(localStorage.getItem('turnhouse.player')).token;",
            json!([]),
        )
        .await;
    token.as_str().unwrap().to_owned()
}

async fn wait_for_title(browser: &Browser, title: &str) {
    browser
        .wait_for(
            &format!("the title {title:?}"),
            "return document.title === arguments[0] || null;",
            json!([title]),
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bar_counts_the_rooms_waiting_on_her_move() {
    let app = TestApp::spawn_for_browsers().await;
    let driver = Driver::start().await;
    let ada = driver.browser("turns-ada").await;
    sign_up(&ada, &app, "ada").await;
    let token = token_of(&ada).await;

    // Two rooms where Ada moves first, opened from elsewhere (her phone, say).
    let mut rooms = Vec::new();
    for _ in 0..2 {
        let response = app
            .post("/rooms", Some(&token), Some(&json!({"game": "tictactoe"})))
            .await;
        assert_eq!(response.status(), StatusCode::CREATED);
        let room: serde_json::Value = response.json().await.unwrap();
        let id = room["id"].as_str().unwrap().to_owned();
        let other = app.new_player().await;
        assert_eq!(app.join(&other, &id).await.status(), StatusCode::OK);
        rooms.push(id);
    }
    ada.goto(&format!("{}/", app.address)).await;
    ada.wait_for_text("#turns", "Your move (2)").await;
    wait_for_title(&ada, "(2) Turnhouse").await;
    ada.resize(390, 844).await;
    let shown = ada
        .eval(
            "const r = document.getElementById('turns').getBoundingClientRect(); \
             return r.width > 0 && r.right <= window.innerWidth;",
            json!([]),
        )
        .await;
    assert_eq!(shown, true, "the count fits a phone's width");
    ada.screenshot("turns-phone").await;

    // The list links each room; she opens one and moves: one room is left.
    ada.click("#turns").await;
    ada.find(&format!("#turn-list [data-room=\"{}\"] a", rooms[0]))
        .await;
    assert_eq!(crate::browser::count(&ada, "#turn-list .turn").await, 2);
    ada.click(&format!("#turn-list [data-room=\"{}\"] a", rooms[1]))
        .await;
    ada.wait_for_text("#status", "Your turn").await;
    click_cell(&ada, "1,1").await;
    ada.wait_for_text("#turns", "Your move (1)").await;
    wait_for_title(&ada, "(1) Turnhouse").await;

    // Muting the room: nothing more is mailed or pushed about it.
    ada.wait_for_text("#mute-room", "Mute this room").await;
    ada.click("#mute-room").await;
    ada.wait_for_text("#mute-room", "Unmute this room").await;
    let settings: serde_json::Value = app
        .request(
            reqwest::Method::GET,
            "/players/me/email",
            Some(&token),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(settings["mutedRooms"], json!([rooms[1]]));
    ada.close().await;
}
