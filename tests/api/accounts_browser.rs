//! One account on two devices, in Chromium: a code shown on the laptop signs the phone in;
//! both play the same seat of the same room; the laptop signs the phone out, sets a password,
//! and the phone signs in with it.

use serde_json::json;

use crate::browser::{click_cell, room_in_view, sign_up, wait_for_mark};
use crate::helpers::TestApp;
use crate::webdriver::Driver;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_shown_on_one_device_signs_in_another_as_the_same_player() {
    let app = TestApp::spawn_for_browsers().await;
    let driver = Driver::start().await;
    let laptop = driver.browser("account-laptop").await;
    let phone = driver.browser("account-phone").await;
    phone.resize(390, 844).await;
    let name = sign_up(&laptop, &app, "traveller").await;

    // Devices: a code, and a link carrying it.
    laptop.click("#devices").await;
    laptop.click("#new-code").await;
    laptop.find("#sign-in-code").await;
    let code = laptop.text("#sign-in-code").await;
    assert_eq!(code.len(), 8, "{code}");
    let link = laptop
        .eval(
            "return document.getElementById('sign-in-link').value;",
            json!([]),
        )
        .await;
    assert!(link
        .as_str()
        .unwrap()
        .ends_with(&format!("/#/signin/{code}")));
    laptop.screenshot("sign-in-code").await;

    // The phone types it.
    phone.goto(&format!("{}/", app.address)).await;
    phone.type_into("#code", &code).await;
    phone.click("#signin-code").await;
    phone.wait_for_text("#me", &name).await;
    // On a phone's width the header's buttons keep their words on one line.
    let lines = phone
        .eval(
            "const range = document.createRange(); \
             range.selectNodeContents(document.getElementById('sign-out')); \
             return range.getClientRects().length;",
            json!([]),
        )
        .await;
    assert_eq!(lines, json!(1), "\"Sign out\" wraps at 390 px");

    // Both devices play the same seat: the laptop opens a room, a friend joins, and the
    // player moves once from each device.
    laptop.goto(&format!("{}/#/", app.address)).await;
    laptop.click("[data-game=\"tictactoe\"] .new-room").await;
    let room = room_in_view(&laptop).await;
    phone.goto(&format!("{}/#/room/{room}", app.address)).await;
    phone.wait_for_text("#players", "(you)").await;
    let friend = app.new_player().await;
    assert!(app.join(&friend, &room).await.status().is_success());
    laptop.wait_for_text("#status", "Your turn").await;
    click_cell(&laptop, "0,0").await;
    wait_for_mark(&phone, "0,0", "X").await;
    app.play_ok(&friend, &room, json!({"x": 1, "y": 1})).await;
    phone.wait_for_text("#status", "Your turn").await;
    click_cell(&phone, "0,1").await;
    wait_for_mark(&laptop, "0,1", "X").await;
    phone.screenshot("same-player-on-a-phone").await;

    // The laptop lists both devices and signs the other out; the phone hears of it.
    laptop.goto(&format!("{}/#/account", app.address)).await;
    laptop.wait_for_text("#sessions", "(this device)").await;
    assert_eq!(crate::browser::count(&laptop, "#sessions li").await, 2);
    laptop.screenshot("devices").await;
    laptop.click("#end-others").await;
    laptop
        .wait_for_text("#account-message", "Signed out on 1 other device")
        .await;
    assert_eq!(crate::browser::count(&laptop, "#sessions li").await, 1);
    phone.goto(&format!("{}/#/", app.address)).await;
    phone.wait_for_text("#signed-out", "no longer works").await;

    // A password, set on the laptop, signs the phone in again.
    laptop
        .type_into("#new-password", "correct horse battery")
        .await;
    laptop.click("#set-password-button").await;
    laptop
        .wait_for_text("#account-message", "Your password is set")
        .await;
    phone.type_into("#signin-name", &name).await;
    phone
        .type_into("#signin-password", "correct horse battery")
        .await;
    phone.click("#signin-password-button").await;
    phone.wait_for_text("#me", &name).await;
    phone.screenshot("signed-in-with-a-password").await;
    let fits = phone
        .eval(
            "return document.documentElement.scrollWidth <= window.innerWidth;",
            json!([]),
        )
        .await;
    assert_eq!(fits, true, "the phone's page does not scroll sideways");
    laptop.close().await;
    phone.close().await;
}
