//! Webhooks, end to end: the real server, a real receiver on loopback that verifies every
//! delivery with the Standard Webhooks reference library, on both databases.

use std::collections::{HashMap, HashSet};
use std::process::Command;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::client::Api;
use crate::databases::fresh_database;
use crate::helpers::{assert_problem, example, unique, TestApp, TestPlayer};
use crate::real_server::Server;
use crate::webhook_receiver::{of_type, Receiver};

/// Long enough for anything a test waits on here, on a busy machine.
const WAIT: Duration = Duration::from_secs(30);

/// A server whose webhooks may reach the loopback, retried quickly.
async fn spawn() -> TestApp {
    TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.webhooks.allow_private_destinations = true;
        config.webhooks.webhook_first_retry_ms = 100;
    })
    .await
}

/// A game id of its own (ids take `-`, not `_`).
fn game_id(prefix: &str) -> String {
    unique(prefix).replace('_', "-")
}

/// `POST path {url, events}` by `who`: the endpoint made, with its secret.
async fn add_endpoint(
    api: &Api,
    who: &TestPlayer,
    path: &str,
    url: &str,
    events: &[&str],
) -> Value {
    let (status, endpoint) = api
        .post_value(
            path,
            Some(&who.token),
            json!({"url": url, "events": events}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{endpoint}");
    assert!(endpoint["secret"].as_str().unwrap().starts_with("whsec_"));
    endpoint
}

/// Plays a tic-tac-toe room of `game` (the built-in one, or an upload of it) to X's win:
/// the room's id.
async fn won_game(api: &Api, game: &str, x: &TestPlayer, o: &TestPlayer) -> String {
    let room = api.create_room(x, json!({"game": game})).await;
    let id = room["id"].as_str().unwrap().to_owned();
    assert_eq!(api.join(o, &id).await.status(), StatusCode::OK);
    for (player, (cx, cy)) in [
        (x, (0, 0)),
        (o, (0, 1)),
        (x, (1, 0)),
        (o, (1, 1)),
        (x, (2, 0)),
    ] {
        api.play_ok(player, &id, json!({"x": cx, "y": cy})).await;
    }
    id
}

async fn get(api: &Api, path: &str, who: &TestPlayer) -> (StatusCode, Value) {
    let response = api
        .request(reqwest::Method::GET, path, Some(&who.token), None)
        .await;
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn an_owner_gets_their_games_events_signed_and_no_one_else_reaches_them() {
    let app = spawn().await;
    let game = game_id("hooked");
    let owner = app.publish(&game, &example("tictactoe.js")).await;
    let receiver = Receiver::start(&[]).await;
    let hooks = format!("/games/{game}/webhooks");

    // Another player can neither subscribe to the game nor see its endpoints; a built-in game
    // has no owner to subscribe.
    let stranger = app.new_player().await;
    let body = json!({"url": receiver.url(), "events": ["room.finished"]});
    let response = app.post(&hooks, Some(&stranger.token), Some(&body)).await;
    assert_problem(response, StatusCode::FORBIDDEN, "not_your_game").await;
    let (status, _) = get(&app, &hooks, &stranger).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let response = app
        .post("/games/tictactoe/webhooks", Some(&owner.token), Some(&body))
        .await;
    assert!(response.status().is_client_error(), "{}", response.status());
    let unknown = json!({"url": receiver.url(), "events": ["room.exploded"]});
    let response = app.post(&hooks, Some(&owner.token), Some(&unknown)).await;
    assert_problem(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "unknown_event_type",
    )
    .await;

    let events = [
        "room.created",
        "player.joined",
        "room.started",
        "room.finished",
    ];
    let endpoint = add_endpoint(&app, &owner, &hooks, &receiver.url(), &events).await;
    receiver.set(json!({"secrets": [endpoint["secret"]]})).await;
    // The secret is shown once: never again in a listing.
    let (status, listed) = get(&app, &hooks, &owner).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed["endpoints"][0]["id"], endpoint["id"]);
    assert!(!listed.to_string().contains("whsec_"), "{listed}");

    let (x, o) = (app.new_player().await, app.new_player().await);
    let theirs = won_game(&app, &game, &x, &o).await;
    let builtin = won_game(&app, "tictactoe", &x, &o).await;
    let got = receiver
        .wait_for(WAIT, |r| !of_type(r, "room.finished").is_empty())
        .await;
    for delivery in &got {
        assert_eq!(delivery["verified"], json!([0]), "{delivery}");
        assert_eq!(delivery["body"]["data"]["room"]["id"], theirs.as_str());
        let text = delivery["body"].to_string();
        assert!(
            !text.contains(&x.token) && !text.contains(&o.token),
            "{text}"
        );
    }
    let everything = Value::from(got.clone()).to_string();
    assert!(
        !everything.contains(&builtin),
        "another game's room reached the owner"
    );
    let kinds: HashSet<&str> = got
        .iter()
        .map(|d| d["body"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, HashSet::from(events));
    assert_eq!(of_type(&got, "player.joined").len(), 2);
    let finished = of_type(&got, "room.finished")[0];
    assert_eq!(finished["body"]["data"]["winners"], json!([x.id]));
    assert_eq!(finished["body"]["data"]["room"]["finished"], true);
    assert!(finished["body"]["data"]["room"]["state"].is_object());
}

#[tokio::test]
async fn a_ping_a_redelivery_a_pause_and_a_rotation_each_work() {
    let app = spawn().await;
    let admin = crate::moderation::new_admin(&app).await;
    let receiver = Receiver::start(&[]).await;
    let endpoint = add_endpoint(
        &app,
        &admin,
        "/admin/webhooks",
        &receiver.url(),
        &["room.finished"],
    )
    .await;
    let old_secret = endpoint["secret"].as_str().unwrap().to_owned();
    receiver.set(json!({"secrets": [old_secret]})).await;
    let hook = format!("/admin/webhooks/{}", endpoint["id"].as_str().unwrap());

    // A ping, delivered and logged.
    let (status, ping) = app
        .post_value(&format!("{hook}/ping"), Some(&admin.token), json!({}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{ping}");
    let got = receiver.wait_for(WAIT, |r| r.len() == 1).await;
    assert_eq!(got[0]["id"], ping["id"]);
    assert_eq!(got[0]["body"]["type"], "ping");
    assert_eq!(got[0]["verified"], json!([0]));
    let delivered = |log: &Value| log["deliveries"][0]["state"] == "delivered";
    let log = wait_for_log(&app, &admin, &hook, delivered).await;
    let attempt = &log["deliveries"][0]["attempts"][0];
    assert_eq!(attempt["status"], 200);
    assert_eq!(attempt["response"], "received");
    assert!(attempt["latencyMs"].is_i64());

    // Delivered again on demand, with the same webhook-id.
    let again = format!(
        "{hook}/deliveries/{}/redeliver",
        ping["id"].as_str().unwrap()
    );
    let (status, _) = app.post_value(&again, Some(&admin.token), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let got = receiver.wait_for(WAIT, |r| r.len() == 2).await;
    assert_eq!(got[1]["id"], ping["id"]);
    let missing = format!("{hook}/deliveries/msg_nothing/redeliver");
    let response = app.post(&missing, Some(&admin.token), None).await;
    assert_problem(response, StatusCode::NOT_FOUND, "delivery_not_found").await;

    // Paused, events wait; resumed, they arrive.
    let (status, paused) = app
        .post_value(&format!("{hook}/pause"), Some(&admin.token), json!({}))
        .await;
    assert_eq!(
        (status, paused["status"].as_str()),
        (StatusCode::OK, Some("paused"))
    );
    let (_, waiting) = app
        .post_value(&format!("{hook}/ping"), Some(&admin.token), json!({}))
        .await;
    let held = |log: &Value| log["deliveries"][0]["id"] == waiting["id"];
    let log = wait_for_log(&app, &admin, &hook, held).await;
    assert_eq!(log["deliveries"][0]["state"], "pending");
    assert_eq!(log["deliveries"][0]["attempts"], json!(null));
    assert_eq!(receiver.received().await.len(), 2);
    let (status, resumed) = app
        .post_value(&format!("{hook}/resume"), Some(&admin.token), json!({}))
        .await;
    assert_eq!(
        (status, resumed["status"].as_str()),
        (StatusCode::OK, Some("active"))
    );
    let got = receiver.wait_for(WAIT, |r| r.len() == 3).await;
    assert_eq!(got[2]["id"], waiting["id"]);

    // Rotated: both secrets sign until the old one's day is over, so a receiver holding either
    // verifies.
    let (status, rotated) = app
        .post_value(&format!("{hook}/rotate"), Some(&admin.token), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let new_secret = rotated["secret"].as_str().unwrap().to_owned();
    assert_ne!(new_secret, old_secret);
    assert!(rotated["previousSecretUntil"].is_string());
    receiver
        .set(json!({"secrets": [new_secret, old_secret]}))
        .await;
    app.post_value(&format!("{hook}/ping"), Some(&admin.token), json!({}))
        .await;
    let got = receiver.wait_for(WAIT, |r| r.len() == 4).await;
    assert_eq!(got[3]["verified"], json!([0, 1]), "{}", got[3]);
    assert_eq!(got[3]["signature"].as_str().unwrap().split(' ').count(), 2);
}

/// The endpoint's delivery log once `done` holds of it.
async fn wait_for_log(
    app: &TestApp,
    who: &TestPlayer,
    hook: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let until = std::time::Instant::now() + WAIT;
    loop {
        let (status, log) = get(app, &format!("{hook}/deliveries"), who).await;
        assert_eq!(status, StatusCode::OK, "{log}");
        if done(&log) {
            return log;
        }
        assert!(std::time::Instant::now() < until, "the log stayed {log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn an_endpoint_that_fails_every_delivery_is_disabled_and_its_owner_sees_why() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.webhooks.allow_private_destinations = true;
        config.webhooks.webhook_first_retry_ms = 100;
        config.webhooks.webhook_disable_after_secs = 1;
    })
    .await;
    let game = game_id("failing");
    let owner = app.publish(&game, &example("tictactoe.js")).await;
    let receiver = Receiver::start(&[]).await;
    let hooks = format!("/games/{game}/webhooks");
    let endpoint = add_endpoint(&app, &owner, &hooks, &receiver.url(), &["room.created"]).await;
    receiver
        .set(json!({"secrets": [endpoint["secret"]], "status": 500}))
        .await;
    let hook = format!("{hook}/{}", endpoint["id"].as_str().unwrap(), hook = hooks);
    const WAITING: &str = "turnhouse_outbox_waiting";
    assert_eq!(app.metric(WAITING).await, Some(0.0));
    app.create_room(&owner, json!({"game": game})).await;

    let until = std::time::Instant::now() + WAIT;
    let mut most_waiting = 0.0_f64;
    let disabled = loop {
        let waiting = app.metric(WAITING).await.unwrap();
        let (_, now) = get(&app, &hook, &owner).await;
        if now["status"] == "disabled" {
            break now;
        }
        most_waiting = most_waiting.max(waiting);
        assert!(std::time::Instant::now() < until, "still {now}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let reason = disabled["disabledReason"].as_str().unwrap();
    assert!(reason.contains("HTTP 500"), "{reason}");
    assert!(receiver.received().await.len() >= 2, "it was tried again");
    // While it failed, its row waited for the operator to see; a disabled endpoint's rows are
    // no backlog of the outbox's.
    assert_eq!(most_waiting, 1.0);
    assert_eq!(app.metric(WAITING).await, Some(0.0));

    // A disabled endpoint takes no ping either, until it is resumed.
    let response = app
        .post(&format!("{hook}/ping"), Some(&owner.token), None)
        .await;
    assert_problem(response, StatusCode::CONFLICT, "webhook_disabled").await;
    // Resumed with the receiver mended, the event that waited arrives.
    receiver.set(json!({"status": 200})).await;
    let (status, resumed) = app
        .post_value(&format!("{hook}/resume"), Some(&owner.token), json!({}))
        .await;
    assert_eq!(
        (status, resumed["status"].as_str()),
        (StatusCode::OK, Some("active"))
    );
    wait_for_log(&app, &owner, &hook, |log| {
        log["deliveries"][0]["state"] == "delivered"
    })
    .await;
}

#[tokio::test]
async fn webhooks_reach_only_public_addresses_follow_no_redirect_and_time_out_alone() {
    // By default: https:// to public addresses only.
    let strict = TestApp::spawn().await;
    let admin = crate::moderation::new_admin(&strict).await;
    for (url, code) in [
        ("http://127.0.0.1:9/hook", "https_required"),
        ("https://127.0.0.1:9/hook", "destination_not_allowed"),
        ("https://[::1]:9/hook", "destination_not_allowed"),
        ("https://10.1.2.3/hook", "destination_not_allowed"),
        ("ftp://example.org/hook", "invalid_webhook_url"),
    ] {
        let body = json!({"url": url, "events": ["room.finished"]});
        let response = strict
            .post("/admin/webhooks", Some(&admin.token), Some(&body))
            .await;
        assert_problem(response, StatusCode::UNPROCESSABLE_ENTITY, code).await;
    }
    // A name is checked where it is connected to: `localhost` resolves to the loopback, so the
    // delivery is refused there (as a name that rebinds to a private address would be).
    let named = add_endpoint(
        &strict,
        &admin,
        "/admin/webhooks",
        "https://localhost:9/hook",
        &["room.finished"],
    )
    .await;
    let hook = format!("/admin/webhooks/{}", named["id"].as_str().unwrap());
    strict
        .post_value(&format!("{hook}/ping"), Some(&admin.token), json!({}))
        .await;
    let log = wait_for_log(&strict, &admin, &hook, |log| {
        log["deliveries"][0]["attempts"][0].is_object()
    })
    .await;
    let error = log["deliveries"][0]["attempts"][0]["error"]
        .as_str()
        .unwrap();
    assert!(error.contains("loopback, private or reserved"), "{error}");

    // With private destinations allowed: a redirect is an answer, not followed; a receiver
    // that never answers in time times out and holds up no other endpoint.
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.webhooks.allow_private_destinations = true;
        config.webhooks.webhook_timeout_secs = 1;
    })
    .await;
    let admin = crate::moderation::new_admin(&app).await;
    let (redirecting, target, silent, prompt) = (
        Receiver::start(&[]).await,
        Receiver::start(&[]).await,
        Receiver::start(&[]).await,
        Receiver::start(&[]).await,
    );
    let mut hooks = Vec::new();
    for receiver in [&redirecting, &silent, &prompt] {
        let endpoint = add_endpoint(
            &app,
            &admin,
            "/admin/webhooks",
            &receiver.url(),
            &["room.created"],
        )
        .await;
        receiver.set(json!({"secrets": [endpoint["secret"]]})).await;
        hooks.push(format!(
            "/admin/webhooks/{}",
            endpoint["id"].as_str().unwrap()
        ));
    }
    redirecting.set(json!({"redirect": target.url()})).await;
    silent.set(json!({"delay": 20})).await;
    let player = app.new_player().await;
    app.create_room(&player, json!({"game": "tictactoe"})).await;

    prompt.wait_for(WAIT, |r| r.len() == 1).await;
    let log = wait_for_log(&app, &admin, &hooks[0], |log| {
        log["deliveries"][0]["attempts"][0].is_object()
    })
    .await;
    assert_eq!(log["deliveries"][0]["attempts"][0]["status"], 302);
    assert_eq!(
        log["deliveries"][0]["state"], "pending",
        "a redirect is tried again later"
    );
    let log = wait_for_log(&app, &admin, &hooks[1], |log| {
        log["deliveries"][0]["attempts"][0].is_object()
    })
    .await;
    let error = log["deliveries"][0]["attempts"][0]["error"]
        .as_str()
        .unwrap();
    assert!(error.contains("timed out"), "{error}");
    assert!(
        target.received().await.is_empty(),
        "the redirect was followed"
    );
}

/// `turnhouse webhooks add URL --events …` on `database`: the endpoint's id and secret.
fn operator_adds(database: &str, url: &str, events: &str) -> (String, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_turnhouse"))
        .args([
            "webhooks",
            "add",
            url,
            "--events",
            events,
            "--database",
            database,
        ])
        .args(["--allow-private-destinations"])
        .output()
        .expect("turnhouse runs");
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let field = |name: &str| {
        said.lines()
            .find_map(|line| line.strip_prefix(name))
            .map(|rest| rest.trim().to_owned())
            .unwrap_or_else(|| panic!("`{name}` in {said}"))
    };
    let active = field("active from:");
    let active = active.split_whitespace().next().unwrap().to_owned();
    (field("id:"), field("secret:"), active)
}

/// Waits until `active_from` (an endpoint's `activeFrom`) has passed: from then on, every
/// server on the database sends it every event.
async fn until_active(active_from: &str) {
    let at = chrono::DateTime::parse_from_rfc3339(active_from).unwrap();
    let left = (at.with_timezone(&chrono::Utc) - chrono::Utc::now()).to_std();
    if let Ok(left) = left {
        tokio::time::sleep(left).await;
    }
}

/// The server binary with `flags` on a fresh database, and a receiver the operator's endpoint
/// (made on the command line, taking `room.finished`) delivers to, once that endpoint is active.
async fn operator_on_binary(flags: &[&str]) -> (tempfile::TempDir, String, Server, Receiver) {
    let dir = tempfile::tempdir().unwrap();
    let database = fresh_database(dir.path(), "webhooks.db").await;
    let server = Server::start_with(&database, flags);
    let receiver = Receiver::start(&[]).await;
    let (_, secret, active_from) = operator_adds(&database, &receiver.url(), "room.finished");
    receiver.set(json!({"secrets": [secret]})).await;
    until_active(&active_from).await;
    (dir, database, server, receiver)
}

/// Plays `count` games on `api`, a few at a time, between the same two players: their rooms.
async fn won_games(api: &Api, count: usize) -> Vec<String> {
    let (x, o) = (api.new_player().await, api.new_player().await);
    let mut rooms = Vec::new();
    for _ in 0..count.div_ceil(8) {
        let batch = (0..8.min(count - rooms.len())).map(|_| won_game(api, "tictactoe", &x, &o));
        rooms.extend(futures_util::future::join_all(batch).await);
    }
    rooms
}

#[tokio::test]
async fn every_finished_game_arrives_exactly_once_through_a_kill_and_a_restart() {
    let flags = [
        "--allow-private-destinations",
        "--webhook-first-retry-ms",
        "200",
    ];
    let (_dir, database, server, receiver) = operator_on_binary(&flags).await;
    // Answering 500 at first: every delivery is still pending when the server is killed.
    receiver.set(json!({"status": 500})).await;
    let mut rooms = won_games(&server.api, 70).await;
    server.kill();

    receiver.set(json!({"status": 200})).await;
    let server = Server::start_with(&database, &flags);
    rooms.extend(won_games(&server.api, 70).await);
    // Stopped as an operator stops it this time.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
    drop(server);
    let server = Server::start_with(&database, &flags);
    rooms.extend(won_games(&server.api, 60).await);

    let expected: HashSet<String> = rooms.into_iter().collect();
    assert_eq!(expected.len(), 200);
    let got = receiver
        .wait_for(Duration::from_secs(120), |r| {
            let delivered: HashSet<&str> = r
                .iter()
                .filter(|d| !d["verified"].as_array().unwrap().is_empty())
                .filter_map(|d| d["body"]["data"]["room"]["id"].as_str())
                .collect();
            delivered.len() >= expected.len()
        })
        .await;
    // Deduplicated by webhook-id, as a receiver does: each finished game once, nothing else.
    let mut by_id: HashMap<&str, &Value> = HashMap::new();
    for delivery in &got {
        assert_eq!(delivery["verified"], json!([0]), "{delivery}");
        let id = delivery["id"].as_str().unwrap();
        if let Some(seen) = by_id.insert(id, delivery) {
            assert_eq!(
                seen["body"], delivery["body"],
                "a retry carries the same event"
            );
        }
    }
    let mut rooms_seen: Vec<&str> = by_id
        .values()
        .map(|d| {
            assert_eq!(d["body"]["type"], "room.finished");
            d["body"]["data"]["room"]["id"].as_str().unwrap()
        })
        .collect();
    rooms_seen.sort_unstable();
    let distinct: HashSet<&str> = rooms_seen.iter().copied().collect();
    assert_eq!(
        rooms_seen.len(),
        distinct.len(),
        "one webhook-id per finished game"
    );
    let expected: HashSet<&str> = expected.iter().map(String::as_str).collect();
    assert_eq!(distinct, expected);
    drop(server);
}

#[tokio::test]
async fn several_servers_on_one_database_deliver_each_event_once() {
    let first = spawn().await;
    let configure = |config: &mut turnhouse::config::Config| {
        config.webhooks.allow_private_destinations = true;
    };
    let second = first
        .spawn_beside_configured(turnhouse::games::builtin(), configure)
        .await;
    let third = first
        .spawn_beside_configured(turnhouse::games::builtin(), configure)
        .await;
    let admin = crate::moderation::new_admin(&first).await;
    let receiver = Receiver::start(&[]).await;
    let events = ["room.created", "player.joined", "room.finished"];
    let endpoint = add_endpoint(&first, &admin, "/admin/webhooks", &receiver.url(), &events).await;
    receiver.set(json!({"secrets": [endpoint["secret"]]})).await;
    until_active(endpoint["activeFrom"].as_str().unwrap()).await;
    let mut rooms = Vec::new();
    for server in [&first, &second, &third] {
        rooms.extend(won_games(server, 6).await);
    }
    let got = receiver
        .wait_for(WAIT, |r| of_type(r, "room.finished").len() >= rooms.len())
        .await;
    let ids: Vec<&str> = got.iter().map(|d| d["id"].as_str().unwrap()).collect();
    let distinct: HashSet<&str> = ids.iter().copied().collect();
    assert_eq!(ids.len(), distinct.len(), "an event was delivered twice");
    assert_eq!(
        got.len(),
        rooms.len() * 4,
        "created, two joins, finished per room"
    );
}

#[tokio::test]
async fn delivered_events_leave_the_log_after_the_keeping_period() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.webhooks.allow_private_destinations = true;
        config.webhooks.webhook_keep_secs = 1;
    })
    .await;
    let admin = crate::moderation::new_admin(&app).await;
    let receiver = Receiver::start(&[]).await;
    let endpoint = add_endpoint(
        &app,
        &admin,
        "/admin/webhooks",
        &receiver.url(),
        &["room.finished"],
    )
    .await;
    receiver.set(json!({"secrets": [endpoint["secret"]]})).await;
    let hook = format!("/admin/webhooks/{}", endpoint["id"].as_str().unwrap());
    app.post_value(&format!("{hook}/ping"), Some(&admin.token), json!({}))
        .await;
    wait_for_log(&app, &admin, &hook, |log| {
        log["deliveries"][0]["state"] == "delivered"
    })
    .await;
    wait_for_log(&app, &admin, &hook, |log| log["deliveries"] == json!([])).await;
}

#[tokio::test]
async fn a_delivery_in_flight_when_the_server_is_killed_arrives_again_with_the_same_id() {
    // A short timeout, so that another server may take a row this one held soon after.
    let flags = [
        "--allow-private-destinations",
        "--webhook-timeout-secs",
        "2",
    ];
    let (_dir, database, server, receiver) = operator_on_binary(&flags).await;
    // The receiver keeps the delivery and only then answers, too late: it is in flight when
    // the server dies.
    receiver.set(json!({"delay": 30})).await;
    let rooms = won_games(&server.api, 1).await;
    let first = receiver.wait_for(WAIT, |r| r.len() == 1).await;
    server.kill();

    receiver.set(json!({"delay": 0})).await;
    let server = Server::start_with(&database, &flags);
    let got = receiver
        .wait_for(Duration::from_secs(60), |r| r.len() >= 2)
        .await;
    assert_eq!(got[1]["id"], first[0]["id"], "the same webhook-id");
    assert_eq!(got[1]["body"], first[0]["body"], "the same event");
    assert_eq!(got[1]["verified"], json!([0]));
    assert_eq!(got[1]["body"]["data"]["room"]["id"], rooms[0].as_str());
    drop(server);
}

/// A server that drains hands the delivery it could not finish to another server at once,
/// rather than leaving it to wait out its lease.
#[tokio::test]
async fn a_delivery_in_flight_when_a_server_drains_is_handed_to_another_at_once() {
    let flags = ["--allow-private-destinations", "--shutdown-timeout", "2"];
    let (_dir, database, mut first, receiver) = operator_on_binary(&flags).await;
    receiver.set(json!({"delay": 30})).await;
    won_games(&first.api, 1).await;
    let held = receiver.wait_for(WAIT, |r| r.len() == 1).await;
    let second = Server::start_with(&database, &flags);
    receiver.set(json!({"delay": 0})).await;
    let stopping = std::time::Instant::now();
    // SAFETY: signalling the server this test started.
    assert_eq!(
        unsafe { libc::kill(first.child.id() as i32, libc::SIGTERM) },
        0
    );
    let got = receiver.wait_for(WAIT, |r| r.len() >= 2).await;
    let took = stopping.elapsed();
    assert_eq!(
        got[1]["id"], held[0]["id"],
        "the same webhook-id, from the other server"
    );
    // Its lease (the delivery's timeout and more) would have kept it another ten seconds.
    assert!(took < Duration::from_secs(6), "handed back after {took:?}");
    assert!(first.child.wait().unwrap().success());
    assert_eq!(
        first
            .final_log_lines_with(&["stopping", "let go for another server"])
            .len(),
        1
    );
    drop(second);
}

#[tokio::test]
async fn pings_and_redeliveries_count_against_the_callers_action_limit() {
    // Each sends a request to a URL a user gave: an owner cannot turn the server into a
    // hose pointed at someone else's address.
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.webhooks.allow_private_destinations = true;
        config.abuse_limits.action_rate = "2/h".parse().unwrap();
    })
    .await;
    let game = game_id("limited");
    let owner = app.publish(&game, &example("tictactoe.js")).await;
    let receiver = Receiver::start(&[]).await;
    let hooks = format!("/games/{game}/webhooks");
    let endpoint = add_endpoint(&app, &owner, &hooks, &receiver.url(), &["room.finished"]).await;
    let ping = format!("{hooks}/{}/ping", endpoint["id"].as_str().unwrap());
    for _ in 0..2 {
        let (status, _) = app.post_value(&ping, Some(&owner.token), json!({})).await;
        assert_eq!(status, StatusCode::ACCEPTED);
    }
    let response = app.post(&ping, Some(&owner.token), None).await;
    assert_problem(response, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
}

#[tokio::test]
async fn a_delivery_is_marked_failed_once_its_retry_period_is_over() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.webhooks.allow_private_destinations = true;
        config.webhooks.webhook_first_retry_ms = 100;
        config.webhooks.webhook_retry_for_secs = 1;
    })
    .await;
    let admin = crate::moderation::new_admin(&app).await;
    let receiver = Receiver::start(&[]).await;
    let endpoint = add_endpoint(
        &app,
        &admin,
        "/admin/webhooks",
        &receiver.url(),
        &["room.finished"],
    )
    .await;
    receiver
        .set(json!({"secrets": [endpoint["secret"]], "status": 503}))
        .await;
    let hook = format!("/admin/webhooks/{}", endpoint["id"].as_str().unwrap());
    app.post_value(&format!("{hook}/ping"), Some(&admin.token), json!({}))
        .await;
    let log = wait_for_log(&app, &admin, &hook, |log| {
        log["deliveries"][0]["state"] == "failed"
    })
    .await;
    let delivery = &log["deliveries"][0];
    assert!(
        delivery["attemptCount"].as_i64().unwrap() >= 2,
        "{delivery}"
    );
    assert_eq!(delivery["lastStatus"], 503);
    assert_eq!(delivery["nextAttemptAt"], Value::Null);
    // Tried again on demand, for a retry period of its own.
    receiver.set(json!({"status": 200})).await;
    let again = format!(
        "{hook}/deliveries/{}/redeliver",
        delivery["id"].as_str().unwrap()
    );
    let (status, _) = app.post_value(&again, Some(&admin.token), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    wait_for_log(&app, &admin, &hook, |log| {
        log["deliveries"][0]["state"] == "delivered"
    })
    .await;
}
