//! Web push, end to end: the real server, and a push service on loopback that holds a
//! browser's keys, decrypts with an independent library and checks the VAPID JWT.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{assert_problem, unique, Api, TestApp, TestPlayer};
use crate::push_receiver::PushReceiver;
use crate::sse_client::EventStream;

const WAIT: Duration = Duration::from_secs(30);

async fn subscribe(app: &Api, player: &TestPlayer, subscription: &Value) -> reqwest::Response {
    app.request(
        Method::POST,
        "/players/me/push-subscriptions",
        Some(&player.token),
        Some(subscription),
    )
    .await
}

async fn browsers(app: &TestApp, player: &TestPlayer) -> Vec<Value> {
    let response = app
        .request(
            Method::GET,
            "/players/me/push-subscriptions",
            Some(&player.token),
            None,
        )
        .await;
    let body: Value = response.json().await.unwrap();
    body["subscriptions"].as_array().unwrap().clone()
}

async fn sent_pushes(app: &TestApp) -> f64 {
    app.metric("turnhouse_notices_total{channel=\"push\",outcome=\"sent\"}")
        .await
        .unwrap_or(0.0)
}

async fn held_pushes(app: &TestApp) -> f64 {
    app.metric("turnhouse_notices_total{channel=\"push\",outcome=\"held\"}")
        .await
        .unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_turn_is_pushed_encrypted_and_signed_and_a_gone_browser_is_forgotten() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.webhooks.allow_private_destinations = true;
    })
    .await;
    let push = PushReceiver::start();
    let key = app.get_json("/push/key").await;
    let key = key["key"].as_str().unwrap().to_owned();
    assert_eq!(key.len(), 87, "65 bytes, base64url: {key}");

    let (ada, bob) = (
        app.register(&unique("ada")).await,
        app.register(&unique("bob")).await,
    );
    let subscription = push.subscription("/send/ada").await;
    let made = subscribe(&app, &ada, &subscription).await;
    assert_eq!(made.status(), StatusCode::CREATED);
    let mut bad = subscription.clone();
    bad["keys"]["p256dh"] = json!("AAAA");
    let refused = subscribe(&app, &ada, &bad).await;
    assert_problem(
        refused,
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_push_subscription",
    )
    .await;
    let mut bad = subscription.clone();
    bad["endpoint"] = json!("ftp://push.example/x");
    let refused = subscribe(&app, &ada, &bad).await;
    assert_problem(
        refused,
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_push_subscription",
    )
    .await;

    // Bob opens a room and Ada joins: Bob moves first, then each move makes it Ada's turn.
    let room = app.create_room(&bob, json!({"game": "tictactoe"})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    assert_eq!(app.join(&ada, &room).await.status(), StatusCode::OK);
    app.play_ok(&bob, &room, json!({"x": 0, "y": 0})).await;
    let first = push.wait_for(WAIT, |p| p.len() == 1).await.remove(0);
    assert!(first.get("error").is_none(), "{first}");
    assert_eq!(first["path"], "/send/ada");
    let payload = &first["payload"];
    assert_eq!(payload["title"], "Your move");
    assert_eq!(
        payload["body"],
        format!("Your move: Tic-tac-toe against {}", bob.username)
    );
    assert!(payload["url"]
        .as_str()
        .unwrap()
        .ends_with(&format!("/#/room/{room}")));
    assert_eq!(first["headers"]["Topic"], room.as_str());
    assert_eq!(first["headers"]["Urgency"], "normal");
    assert_eq!(first["headers"]["TTL"], "86400");
    assert_eq!(first["headers"]["Content-Encoding"], "aes128gcm");
    let vapid = &first["vapid"];
    assert!(vapid.get("error").is_none(), "{vapid}");
    assert_eq!(vapid["key"], key.as_str());
    assert_eq!(vapid["claims"]["aud"], push.address.as_str());
    assert_eq!(vapid["claims"]["sub"], "mailto:turnhouse@localhost");

    // One push per turn.
    app.play_ok(&ada, &room, json!({"x": 1, "y": 1})).await;
    app.play_ok(&bob, &room, json!({"x": 0, "y": 1})).await;
    push.wait_for(WAIT, |p| p.len() == 2).await;

    // While Ada looks at the room, nothing is pushed to her.
    let held_before = held_pushes(&app).await;
    let url = format!(
        "{}/rooms/{room}/stream?access_token={}",
        app.address, ada.token
    );
    let mut looking = EventStream::open(&app.client, &url, None).await;
    looking.event().await;
    app.play_ok(&ada, &room, json!({"x": 2, "y": 2})).await;
    app.play_ok(&bob, &room, json!({"x": 2, "y": 0})).await;
    let until = Instant::now() + WAIT;
    while held_pushes(&app).await <= held_before {
        assert!(
            Instant::now() < until,
            "the push to a player looking was never held back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(looking);
    assert_eq!(push.received().await.len(), 2);

    // The push service says the browser is gone (410): it is forgotten.
    push.answer(410).await;
    let room = app.create_room(&bob, json!({"game": "tictactoe"})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    assert_eq!(app.join(&ada, &room).await.status(), StatusCode::OK);
    app.play_ok(&bob, &room, json!({"x": 0, "y": 0})).await;
    push.wait_for(WAIT, |p| p.len() == 3).await;
    let until = Instant::now() + WAIT;
    while !browsers(&app, &ada).await.is_empty() {
        assert!(
            Instant::now() < until,
            "the gone browser was never forgotten"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A turn taken within `--push-after`, as a player at the board takes it, is never pushed; one
/// that lasts is pushed once, when it has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_taken_at_once_is_never_pushed() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.webhooks.allow_private_destinations = true;
        config.mail.push_after = turnhouse::config::parse_span("2s").unwrap();
    })
    .await;
    let push = PushReceiver::start();
    let (ada, bob) = (
        app.register(&unique("ada")).await,
        app.register(&unique("bob")).await,
    );
    let subscription = push.subscription("/send/ada").await;
    assert_eq!(
        subscribe(&app, &ada, &subscription).await.status(),
        StatusCode::CREATED
    );
    let room = app.create_room(&bob, json!({"game": "tictactoe"})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    assert_eq!(app.join(&ada, &room).await.status(), StatusCode::OK);
    let held_before = held_pushes(&app).await;
    // Ada's turn, taken at once; then another, which she leaves waiting.
    app.play_ok(&bob, &room, json!({"x": 0, "y": 0})).await;
    app.play_ok(&ada, &room, json!({"x": 1, "y": 1})).await;
    let waiting = app.play_ok(&bob, &room, json!({"x": 0, "y": 1})).await;
    let pushed = push.wait_for(WAIT, |p| !p.is_empty()).await;
    assert_eq!(pushed[0]["payload"]["version"], waiting["version"]);
    let until = Instant::now() + WAIT;
    while held_pushes(&app).await <= held_before {
        assert!(
            Instant::now() < until,
            "the turn taken at once was not counted as held back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        push.received().await.len(),
        1,
        "the turn taken at once was pushed"
    );
}

/// A turn waiting for its push when the server is killed (`kill -9`) is pushed after the
/// restart, once: it was kept with the turn's commit, and the push is made in the same
/// transaction that takes it.
#[tokio::test]
async fn a_turn_waiting_for_its_push_through_a_kill_is_pushed_once_after_the_restart() {
    let push = PushReceiver::start();
    let dir = tempfile::tempdir().unwrap();
    let database = crate::databases::fresh_database(dir.path(), "push.db").await;
    let flags = ["--allow-private-destinations", "--push-after", "3"];
    let server = crate::real_server::Server::start_with(&database, &flags);
    let api = server.api.with_timeout(Duration::from_secs(10));
    let (ada, bob) = (
        api.register(&unique("ada")).await,
        api.register(&unique("bob")).await,
    );
    let subscription = push.subscription("/send/ada").await;
    assert_eq!(
        subscribe(&api, &ada, &subscription).await.status(),
        StatusCode::CREATED
    );
    let room = api.create_room(&bob, json!({"game": "tictactoe"})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    assert_eq!(api.join(&ada, &room).await.status(), StatusCode::OK);
    api.play_ok(&bob, &room, json!({"x": 0, "y": 0})).await;
    // Killed within the turn's three seconds: its push is not made yet.
    server.kill();
    assert!(push.received().await.is_empty());

    let server = crate::real_server::Server::start_with(&database, &flags);
    let api = server.api.with_timeout(Duration::from_secs(10));
    let pushed = push.wait_for(WAIT, |p| !p.is_empty()).await;
    assert_eq!(pushed[0]["payload"]["room"], room.as_str());
    let sent = "turnhouse_notices_total{channel=\"push\",outcome=\"sent\"}";
    let until = Instant::now() + WAIT;
    while api.metric(sent).await.unwrap_or(0.0) < 1.0 {
        assert!(Instant::now() < until, "the push was never counted");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(push.received().await.len(), 1, "pushed once");
    server.kill();
}

/// Two servers on one database take the notices due between them: each turn is pushed once,
/// whichever server made it and whichever sends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_push_each_turn_once() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.webhooks.allow_private_destinations = true;
    })
    .await;
    let beside = app
        .spawn_beside_configured(turnhouse::games::builtin(), |config| {
            config.webhooks.allow_private_destinations = true;
        })
        .await;
    let push = PushReceiver::start();
    let (ada, bob) = (
        app.register(&unique("ada")).await,
        app.register(&unique("bob")).await,
    );
    for (player, path) in [(&ada, "/send/ada"), (&bob, "/send/bob")] {
        let subscription = push.subscription(path).await;
        assert_eq!(
            subscribe(&app, player, &subscription).await.status(),
            StatusCode::CREATED
        );
    }
    // A game whose moves are made on one server and the other in turn: Ada's turn as it
    // starts, then each move makes it the other's until Bob's last one wins it (six turns).
    // Each push arrives before the next move, so that none is held back for a move made.
    let room = app.create_room(&ada, json!({"game": "tictactoe"})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    assert_eq!(beside.join(&bob, &room).await.status(), StatusCode::OK);
    push.wait_for(WAIT, |p| p.len() == 1).await;
    let moves = [
        (&ada, 0, 0),
        (&bob, 1, 0),
        (&ada, 0, 1),
        (&bob, 1, 1),
        (&ada, 2, 2),
        (&bob, 1, 2),
    ];
    for (n, (player, x, y)) in moves.into_iter().enumerate() {
        let server = if n % 2 == 0 { &app } else { &beside };
        let moved = server.play_ok(player, &room, json!({"x": x, "y": y})).await;
        if !moved["finished"].as_bool().unwrap() {
            push.wait_for(WAIT, |p| p.len() == n + 2).await;
        }
    }
    // Every push was sent by one server or the other, once.
    let until = Instant::now() + WAIT;
    let total = loop {
        let total = sent_pushes(&app).await + sent_pushes(&beside).await;
        if total >= 6.0 {
            break total;
        }
        assert!(
            Instant::now() < until,
            "only {total} pushes were counted sent"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(total, 6.0);
    let versions: Vec<i64> = (push.received().await.iter())
        .map(|p| p["payload"]["version"].as_i64().unwrap())
        .collect();
    assert_eq!(versions.len(), 6, "{versions:?}");
    let mut distinct = versions.clone();
    distinct.dedup();
    assert_eq!(distinct, versions, "each turn once, in order");
}
