//! Mail on the page, in Chromium, against a real SMTP server: giving an address and following
//! its link, the mail settings, a mailed room's link opening the room, and "Forgot your
//! password?" through to signing in with the new one.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::browser::sign_up;
use crate::helpers::{unique, TestApp};
use crate::smtp_sink::SmtpSink;
use crate::sse_client::EventStream;
use crate::webdriver::Driver;

const WAIT: Duration = Duration::from_secs(30);

/// The next number of players online the lobby stream gives.
async fn lobby_count(lobby: &mut EventStream) -> u64 {
    loop {
        let event = lobby.any_event().await;
        if event.event.as_deref() == Some("online") {
            return event.json()["players"].as_u64().unwrap();
        }
    }
}

/// The first link in `text` that starts with `prefix`.
fn link_in(text: &str, prefix: &str) -> String {
    let at = text.find(prefix).expect("the link");
    text[at..].split_whitespace().next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_its_settings_a_mailed_room_and_a_forgotten_password_on_the_page() {
    let sink = SmtpSink::start();
    let url = sink.url();
    let app = TestApp::spawn_for_browsers_configured(move |config| {
        config.mail.smtp_url = Some(url);
        config.mail.turn_mail_after = turnhouse::config::parse_span("1s").unwrap();
    })
    .await;
    let driver = Driver::start().await;
    let ada = driver.browser("mail-ada").await;
    let name = sign_up(&ada, &app, "ada").await;
    let address = format!("{}@example.test", name.to_lowercase());

    // The account screen's card mails a link; following it confirms the address.
    ada.goto(&format!("{}/#/account", app.address)).await;
    ada.type_into("#email", &address).await;
    ada.click("#email-save").await;
    ada.wait_for_text("#email-message", "A link is on its way")
        .await;
    ada.wait_for_text("#email-pending", &address).await;
    let mail = sink
        .wait_for(&address, WAIT, |m| !m.is_empty())
        .await
        .remove(0);
    let link = link_in(
        mail["text"].as_str().unwrap(),
        &format!("{}/#/verify-email?token=", app.address),
    );
    ada.goto(&link).await;
    ada.wait_for_text("#verify-message", "is confirmed").await;
    ada.goto(&format!("{}/#/account", app.address)).await;
    ada.wait_for_text("#email-address", &address).await;
    ada.click("#clock-mail").await;
    ada.wait_for_text("#email-message", "Saved.").await;
    // Notifications in this browser: the service worker registers, and the card offers them.
    ada.wait_for_text("#push-on", "Turn notifications on").await;
    let scope = ada
        .wait_for(
            "the service worker",
            "const r = window.__sw; if (!r) { navigator.serviceWorker.getRegistration('/').then((g) => { window.__sw = g ? g.scope : 'none'; }); return null; } return r;",
            json!([]),
        )
        .await;
    assert_eq!(scope, format!("{}/", app.address));
    ada.screenshot("email-card").await;
    let token = ada
        .eval(
            "return JSON.parse(localStorage.getItem('turnhouse.player')).token;",
            json!([]),
        )
        .await;
    let token = token.as_str().unwrap().to_owned();
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
    assert_eq!(
        (settings["turnMail"].clone(), settings["clockMail"].clone()),
        (json!(true), json!(false))
    );
    // The server notices a closed page only when a keep-alive to it fails; until then Ada is
    // in the lobby, and a digest due then is rightly held back. So the turn begins once the
    // lobby counts nobody.
    let lobby = format!("{}/rooms/stream", app.address);
    let mut lobby = EventStream::open(&app.client, &lobby, None).await;
    ada.close().await;
    while lobby_count(&mut lobby).await != 0 {}
    drop(lobby);

    // Away, Ada is mailed the room waiting on her; its link opens the room.
    let response = app
        .post("/rooms", Some(&token), Some(&json!({"game": "tictactoe"})))
        .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let room: serde_json::Value = response.json().await.unwrap();
    let room = room["id"].as_str().unwrap().to_owned();
    let bob = app.register(&unique("bob")).await;
    assert_eq!(app.join(&bob, &room).await.status(), StatusCode::OK);
    let digest = sink
        .wait_for(&address, WAIT, |m| m.len() == 2)
        .await
        .remove(1);
    let link = link_in(
        digest["text"].as_str().unwrap(),
        &format!("{}/#/room/", app.address),
    );
    assert!(link.ends_with(&room), "{link}");
    let later = driver.browser("mail-later").await;
    later.goto(&link).await;
    later.wait_for_text("#players", &name).await;

    // Forgot the password: the link mailed sets a new one, which signs her in.
    later.goto(&format!("{}/", app.address)).await;
    later.click("#forgot-password").await;
    later.type_into("#forgot-who", &name).await;
    later.click("#forgot-send").await;
    later
        .wait_for_text("#forgot-message", "a link is on its way")
        .await;
    let reset = sink
        .wait_for(&address, WAIT, |m| m.len() == 3)
        .await
        .remove(2);
    let link = link_in(
        reset["text"].as_str().unwrap(),
        &format!("{}/#/reset-password?token=", app.address),
    );
    later.goto(&link).await;
    later.type_into("#reset-password", "a new password").await;
    later.click("#reset-save").await;
    later
        .wait_for_text("#reset-message", "Your password is replaced")
        .await;
    later.goto(&format!("{}/", app.address)).await;
    later.type_into("#signin-name", &name).await;
    later.type_into("#signin-password", "a new password").await;
    later.click("#signin-password-button").await;
    later.wait_for_text("#me", &name).await;
    later.screenshot("signed-in-after-reset").await;
    later.close().await;
}
