//! Chat on the page: two players and a watcher through a game, in two browsers and a stream;
//! a message that looks like HTML shows as text; block, report, a moderator's deletion live,
//! a mute, the unread count on a phone, the replay's chat, and the lobby's panel.

use reqwest::Method;
use serde_json::json;

use crate::browser::count;
use crate::helpers::{unique, TestApp};
use crate::moderation::new_admin;
use crate::replay_browser::open_as;
use crate::sse_client::EventStream;
use crate::webdriver::{Browser, Driver};

/// Waits until a line of the chat's log shows `text`.
async fn shows(browser: &Browser, text: &str) {
    browser
        .wait_for(
            &format!("a chat line saying {text:?}"),
            "return [...document.querySelectorAll('#chat-log .chat-line:not([hidden]) .chat-text')] \
             .some((e) => e.textContent === arguments[0]);",
            json!([text]),
        )
        .await;
}

/// How many lines of the chat's log show `text`.
async fn lines_saying(browser: &Browser, text: &str) -> i64 {
    browser
        .eval(
            "return [...document.querySelectorAll('#chat-log .chat-line:not([hidden]) .chat-text')] \
             .filter((e) => e.textContent === arguments[0]).length;",
            json!([text]),
        )
        .await
        .as_i64()
        .unwrap()
}

async fn send(browser: &Browser, text: &str) {
    browser.type_into("#chat-text", text).await;
    browser.click("#chat-form button[type=submit]").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_players_and_a_watcher_chat_through_a_game() {
    let app = TestApp::spawn_for_browsers().await;
    let (room, x, o) = app.started_tictactoe().await;
    let watcher = app.register(&unique("watcher")).await;
    let fan = app.register(&unique("fan")).await;
    let admin = new_admin(&app).await;
    let driver = Driver::start().await;
    let player = driver.browser("chat-player").await;
    let phone = driver.browser("chat-watcher").await;
    phone.resize(390, 844).await;
    open_as(&player, &app, &x, &format!("#/room/{room}")).await;
    open_as(&phone, &app, &watcher, &format!("#/room/{room}")).await;
    player.wait_for_text("#chat-channel", "At the table").await;
    phone.wait_for_text("#chat-channel", "In the gallery").await;
    // o follows the room as a client would: its stream.
    let url = format!(
        "{}/rooms/{room}/stream?access_token={}",
        app.address, o.token
    );
    let mut o_stream = EventStream::open(&app.client, &url, None).await;

    // x writes at the table from the page; o hears it on the stream and answers.
    send(&player, "good luck").await;
    shows(&player, "good luck").await;
    let heard = loop {
        let frame = o_stream.event().await;
        if frame.event.as_deref() == Some("chat") {
            break frame.json();
        }
    };
    assert_eq!(heard["text"], "good luck");
    let script = "<script>window.pwned = 1</script><b>bold?</b>";
    let (status, _) = app
        .post_value(
            &format!("/rooms/{room}/chat"),
            Some(&o.token),
            json!({"text": script, "channel": "table"}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CREATED);
    shows(&player, script).await;
    assert_eq!(
        player
            .eval("return [window.pwned === undefined, document.querySelectorAll('#chat-log b, #chat-log script').length];", json!([]))
            .await,
        json!([true, 0]),
        "shown as text, never run or parsed"
    );

    // On the phone the panel starts folded: what arrives counts as unread.
    assert_eq!(
        phone
            .eval("return document.getElementById('chat').open;", json!([]))
            .await,
        false
    );
    let (status, _) = app
        .post_value(
            &format!("/rooms/{room}/chat"),
            Some(&fan.token),
            json!({"text": "go x!", "channel": "gallery"}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CREATED);
    phone.wait_for_text("#chat-unread", "1 new").await;
    phone.screenshot("unread-390").await;
    phone.click("#chat > summary").await;
    shows(&phone, "go x!").await;
    phone
        .wait_for(
            "the unread count to go once the panel is open",
            "return document.getElementById('chat-unread').hidden;",
            json!([]),
        )
        .await;
    send(&phone, "nice corner").await;
    shows(&phone, "nice corner").await;
    assert_eq!(
        lines_saying(&phone, "good luck").await,
        0,
        "the table is the players'"
    );

    // The watcher reports the fan; the report reaches the admins.
    phone.click("#chat-log .chat-line .chat-report").await;
    phone
        .wait_for_text("#chat-log .chat-report[disabled]", "Reported")
        .await;
    let reports = app.get_value_as("/admin/chat/reports", &admin).await;
    assert_eq!(reports["reports"][0]["message"]["text"], "go x!");

    // x blocks o: o's lines go, and what o says next never shows (x's own line after it does).
    player.click("#chat-log .chat-line .chat-block").await;
    player.wait_for_text("#chat-note", "You blocked").await;
    assert_eq!(lines_saying(&player, script).await, 0);
    app.post_value(
        &format!("/rooms/{room}/chat"),
        Some(&o.token),
        json!({"text": "hidden from x", "channel": "table"}),
    )
    .await;
    send(&player, "after the block").await;
    shows(&player, "after the block").await;
    assert_eq!(lines_saying(&player, "hidden from x").await, 0);

    // A moderator deletes x's first message: it goes from both screens at once.
    let first = heard["id"].as_i64().unwrap();
    let response = app
        .request(
            Method::DELETE,
            &format!("/admin/chat/{first}"),
            Some(&admin.token),
            Some(&json!({"reason": "test"})),
        )
        .await;
    assert!(response.status().is_success());
    player
        .wait_for_text("#chat-log", "removed by a moderator")
        .await;
    assert_eq!(lines_saying(&player, "good luck").await, 0);

    // Muted, x is told until when.
    let (status, _) = app
        .post_value(
            &format!("/admin/players/{}/mute", x.id),
            Some(&admin.token),
            json!({"minutes": 10, "reason": "cool off"}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    send(&player, "let me explain").await;
    player
        .wait_for_text("#chat-note", "You are muted in chat until")
        .await;
    player.screenshot("muted").await;

    // The game ends; the players read the gallery now, and the replay shows the chat as it was.
    for (who, mv) in [
        (&x, (0, 0)),
        (&o, (1, 0)),
        (&x, (0, 1)),
        (&o, (1, 1)),
        (&x, (0, 2)),
    ] {
        app.play_ok(who, &room, json!({"x": mv.0, "y": mv.1})).await;
    }
    shows(&player, "nice corner").await;
    let (status, _) = app
        .post_value(
            &format!("/rooms/{room}/chat"),
            Some(&fan.token),
            json!({"text": "well played", "channel": "gallery"}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CREATED);
    shows(&player, "well played").await;
    open_as(&player, &app, &x, &format!("#/room/{room}/v/3")).await;
    player
        .wait_for_text("#chat-channel", "as it was at version 3")
        .await;
    shows(&player, "nice corner").await;
    assert_eq!(
        lines_saying(&player, "well played").await,
        0,
        "written at version 8"
    );
    player.click("#replay-last").await;
    shows(&player, "well played").await;

    // The lobby has its panel too.
    player.goto(&format!("{}/#/", app.address)).await;
    player.wait_for_text("#chat-channel", "The lobby").await;
    let (status, _) = app
        .post_value(
            "/lobby/chat",
            Some(&fan.token),
            json!({"text": "anyone for chess?"}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CREATED);
    shows(&player, "anyone for chess?").await;
    assert!(count(&player, "#chat-log .chat-line").await >= 1);
}

/// A game's page that keeps the chat messages it is sent, and asks for them when told to.
const CHAT_FRAME: &str = r#"<!doctype html><pre id="report">[]</pre><script>
const seen = [];
window.addEventListener('message', (event) => {
  if (event.source !== parent || event.data.type !== 'turnhouse:chat') return;
  seen.push(event.data.message.text);
  document.getElementById('report').textContent = JSON.stringify(seen);
});
window.askForChat = () => parent.postMessage({ type: 'turnhouse:chat' }, '*');
parent.postMessage({ type: 'turnhouse:ready' }, '*');
</script>"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_games_own_page_hears_the_chat_only_when_it_asks() {
    let app = TestApp::spawn_for_browsers().await;
    crate::frontends_browser::publish_with_page(&app, "chatty", CHAT_FRAME).await;
    let x = app.register(&unique("x")).await;
    let o = app.register(&unique("o")).await;
    let room = app.create_room(&x, json!({"game": "chatty"})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    assert!(app.join(&o, &room).await.status().is_success());
    let driver = Driver::start().await;
    let browser = driver.browser("chat-frame").await;
    open_as(&browser, &app, &x, &format!("#/room/{room}")).await;
    browser.find("#game-frame").await;
    let say = |text: &'static str| {
        let (app, o, room) = (&app, &o, &room);
        async move {
            let path = format!("/rooms/{room}/chat");
            let body = json!({"text": text, "channel": "table"});
            let (status, _) = app.post_value(&path, Some(&o.token), body).await;
            assert_eq!(status, reqwest::StatusCode::CREATED);
        }
    };
    say("before asking").await;
    shows(&browser, "before asking").await;
    browser.enter_frame("#game-frame").await;
    assert_eq!(browser.text("#report").await, "[]", "nothing unasked");
    browser
        .eval("window.askForChat(); return true;", json!([]))
        .await;
    browser.wait_for_text("#report", "before asking").await;
    browser.leave_frame().await;
    say("after asking").await;
    browser.enter_frame("#game-frame").await;
    browser
        .wait_for_text("#report", r#"["before asking","after asking"]"#)
        .await;
    browser.leave_frame().await;
}
