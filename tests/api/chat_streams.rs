//! Chat on the streams: `event: chat` on a room's stream for whoever may read the channel and
//! on the lobby's, resumed with `Last-Event-ID` without a gap or a duplicate, blocks and
//! deletions live, and messages crossing servers on PostgreSQL.

use reqwest::Method;
use serde_json::{json, Value};

use crate::databases::on_postgres;
use crate::helpers::{unique, TestApp, TestPlayer};
use crate::moderation::new_admin;
use crate::sse_client::{EventStream, Frame};

async fn say(app: &TestApp, who: &TestPlayer, room: &str, channel: &str, text: &str) -> i64 {
    let (status, sent) = app
        .post_value(
            &format!("/rooms/{room}/chat"),
            Some(&who.token),
            json!({"text": text, "channel": channel}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "{sent}");
    sent["id"].as_i64().unwrap()
}

async fn say_in_lobby(app: &TestApp, who: &TestPlayer, text: &str) -> i64 {
    let (status, sent) = app
        .post_value("/lobby/chat", Some(&who.token), json!({ "text": text }))
        .await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "{sent}");
    sent["id"].as_i64().unwrap()
}

/// A room's stream as `who` (anyone with `None`) opens it, resuming after `last`.
async fn room_stream(
    app: &TestApp,
    room: &str,
    who: Option<&TestPlayer>,
    last: Option<String>,
) -> EventStream {
    let token = who.map_or(String::new(), |w| format!("?access_token={}", w.token));
    let url = format!("{}/rooms/{room}/stream{token}", app.address);
    EventStream::resume(&app.client, &url, last).await
}

async fn lobby_stream(app: &TestApp, who: &TestPlayer, last: Option<String>) -> EventStream {
    let url = format!("{}/rooms/stream?access_token={}", app.address, who.token);
    EventStream::resume(&app.client, &url, last).await
}

/// The next `chat` event, passing over versions and the rest.
async fn next_chat(stream: &mut EventStream) -> Frame {
    loop {
        let frame = stream.event().await;
        if frame.event.as_deref() == Some("chat") {
            return frame;
        }
    }
}

/// The texts of the next `n` chat events (`(deleted)` for a deletion).
async fn texts(stream: &mut EventStream, n: usize) -> Vec<String> {
    let mut seen = Vec::new();
    while seen.len() < n {
        let data = next_chat(stream).await.json();
        seen.push(data["text"].as_str().unwrap_or("(deleted)").to_owned());
    }
    seen
}

#[tokio::test]
async fn each_viewer_hears_the_channels_they_may_read_and_resumes_without_a_gap_or_a_duplicate() {
    let app = TestApp::spawn().await;
    let (room, x, o) = app.started_tictactoe().await;
    let watcher = app.register(&unique("watcher")).await;
    let mut at_x = room_stream(&app, &room, Some(&x), None).await;
    let mut at_watcher = room_stream(&app, &room, Some(&watcher), None).await;
    let mut anyone = room_stream(&app, &room, None, None).await;
    let first = at_x.event().await;
    assert_eq!(first.event.as_deref(), Some("version"));
    assert_eq!(first.chat_id(), Some(0), "no message yet: {:?}", first.id);

    let hello = say(&app, &o, &room, "table", "hello").await;
    say(
        &app,
        &watcher,
        &room,
        "gallery",
        "<script>alert(1)</script>",
    )
    .await;
    let heard = next_chat(&mut at_x).await;
    assert_eq!(heard.json()["text"], "hello");
    assert_eq!(heard.json()["channel"], "table");
    assert_eq!(heard.json()["player"]["id"], o.id.as_str());
    assert_eq!(heard.id, Some(format!("3:{hello}")), "version and message");
    assert_eq!(
        texts(&mut at_watcher, 1).await,
        ["<script>alert(1)</script>"]
    );
    assert_eq!(
        texts(&mut anyone, 1).await,
        ["<script>alert(1)</script>"],
        "the gallery is open to anyone, the table to its players"
    );

    // x goes away, having heard "hello"; meanwhile a move and two messages.
    let last = heard.id.clone();
    drop(at_x);
    app.play_ok(&x, &room, json!({"x": 0, "y": 0})).await;
    say(&app, &o, &room, "table", "nice").await;
    say(&app, &watcher, &room, "gallery", "not for the players").await;
    let after = say(&app, &o, &room, "table", "your turn").await;
    let mut again = room_stream(&app, &room, Some(&x), last).await;
    let mut events = Vec::new();
    while events.len() < 3 {
        let frame = again.event().await;
        events.push((frame.event.clone().unwrap(), frame.id.clone().unwrap()));
    }
    assert_eq!(events[0], ("version".into(), format!("4:{hello}")));
    assert_eq!(events[1].0, "chat");
    assert_eq!(events[2], ("chat".into(), format!("4:{after}")));
    // Nothing else was pending: the next message is the next event.
    say(&app, &o, &room, "table", "still there?").await;
    assert_eq!(texts(&mut again, 1).await, ["still there?"]);
    assert_eq!(texts(&mut at_watcher, 1).await, ["not for the players"]);
}

#[tokio::test]
async fn a_block_hides_live_for_one_viewer_and_a_deletion_shows_live_for_all() {
    let app = TestApp::spawn().await;
    let (alice, bob, carol) = (
        app.register(&unique("alice")).await,
        app.register(&unique("bob")).await,
        app.register(&unique("carol")).await,
    );
    let admin = new_admin(&app).await;
    let mut at_alice = lobby_stream(&app, &alice, None).await;
    let mut at_carol = lobby_stream(&app, &carol, None).await;
    say_in_lobby(&app, &bob, "hi all").await;
    assert_eq!(texts(&mut at_alice, 1).await, ["hi all"]);
    assert_eq!(texts(&mut at_carol, 1).await, ["hi all"]);

    let blocked = app
        .post(
            "/players/me/blocks",
            Some(&alice.token),
            Some(&json!({"player": bob.id})),
        )
        .await;
    assert!(blocked.status().is_success(), "{}", blocked.status());
    say_in_lobby(&app, &bob, "can you hear me?").await;
    let reply = say_in_lobby(&app, &carol, "I can").await;
    assert_eq!(texts(&mut at_carol, 2).await, ["can you hear me?", "I can"]);
    assert_eq!(texts(&mut at_alice, 1).await, ["I can"], "bob is hidden");

    // A deletion reaches every stream at once, as the message without its text.
    let response = app
        .request(
            Method::DELETE,
            &format!("/admin/chat/{reply}"),
            Some(&admin.token),
            Some(&json!({"reason": "spam"})),
        )
        .await;
    assert!(response.status().is_success());
    for stream in [&mut at_alice, &mut at_carol] {
        let deleted = next_chat(stream).await;
        assert_eq!(deleted.id, None, "a deletion is not a new message");
        let data: Value = deleted.json();
        assert_eq!(
            (data["id"].as_i64(), data["deleted"].clone()),
            (Some(reply), json!(true))
        );
        assert_eq!(data["text"], Value::Null);
    }

    // The lobby resumes after a message's id.
    let mark = next_id_after(&app, &carol, &mut at_carol).await;
    drop(at_carol);
    say_in_lobby(&app, &bob, "missed one").await;
    say_in_lobby(&app, &alice, "missed two").await;
    let mut again = lobby_stream(&app, &carol, Some(mark.to_string())).await;
    assert_eq!(texts(&mut again, 2).await, ["missed one", "missed two"]);
}

/// Says something in the lobby and returns its id once `stream` heard it.
async fn next_id_after(app: &TestApp, who: &TestPlayer, stream: &mut EventStream) -> i64 {
    let id = say_in_lobby(app, who, "mark").await;
    let heard = next_chat(stream).await;
    assert_eq!(
        heard.id,
        Some(id.to_string()),
        "a lobby message's id is its own"
    );
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_deletions_and_blocks_cross_three_servers() {
    if !on_postgres() {
        return;
    }
    let a = TestApp::spawn().await;
    let b = a.spawn_beside(turnhouse::games::builtin()).await;
    let c = a.spawn_beside(turnhouse::games::builtin()).await;
    let (room, x, o) = a.started_tictactoe().await;
    let watcher = a.register(&unique("watcher")).await;
    let admin = new_admin(&a).await;
    let mut x_on_b = room_stream(&b, &room, Some(&x), None).await;
    let mut watching_on_c = room_stream(&c, &room, Some(&watcher), None).await;
    // Each stream has said its first version before the messages are written.
    x_on_b.event().await;
    watching_on_c.event().await;

    let mut written = Vec::new();
    for (n, server) in [&a, &b, &c, &a, &c].into_iter().enumerate() {
        written.push(say(server, &o, &room, "table", &format!("table {n}")).await);
        say(server, &watcher, &room, "gallery", &format!("gallery {n}")).await;
    }
    let table: Vec<String> = (0..5).map(|n| format!("table {n}")).collect();
    let gallery: Vec<String> = (0..5).map(|n| format!("gallery {n}")).collect();
    assert_eq!(texts(&mut x_on_b, 5).await, table);
    assert_eq!(texts(&mut watching_on_c, 5).await, gallery);

    // A deletion on one server reaches a stream on another.
    let response = c
        .request(
            Method::DELETE,
            &format!("/admin/chat/{}", written[1]),
            Some(&admin.token),
            Some(&json!({"reason": "spam"})),
        )
        .await;
    assert!(response.status().is_success());
    let deleted = next_chat(&mut x_on_b).await.json();
    assert_eq!(deleted["id"].as_i64(), Some(written[1]));
    assert_eq!(deleted["deleted"], true);

    // A block made on one server hides live on the stream another serves.
    let blocked = c
        .post(
            "/players/me/blocks",
            Some(&x.token),
            Some(&json!({"player": o.id})),
        )
        .await;
    assert!(blocked.status().is_success());
    say(&a, &o, &room, "table", "hidden from x").await;
    say(&b, &x, &room, "table", "x still talks").await;
    assert_eq!(texts(&mut x_on_b, 1).await, ["x still talks"]);
}
