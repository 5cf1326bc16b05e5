//! What one account, or a stranger, could do to others' accounts or to the server: a flood of
//! sign-in codes, a stream kept open on a replaced token, a stranger's wrong passwords locking
//! the owner out, and names that differ only by case or by characters nobody can see.

use std::net::IpAddr;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::databases::{database_execute, database_rows};
use crate::helpers::{assert_problem, unique, TestApp, TestPlayer};
use crate::sessions::ends_within;
use crate::sse_client::EventStream;

/// The sign-in codes kept, for every account.
async fn codes_kept(app: &TestApp) -> i64 {
    let rows: Vec<(i64,)> =
        database_rows(&app.database, "SELECT count(*) FROM sign_in_codes").await;
    rows[0].0
}

/// Asks for a sign-in code for `player`: the status and the answer.
async fn ask_code(app: &TestApp, player: &TestPlayer) -> (StatusCode, Value) {
    app.post_value(
        "/players/me/sign-in-codes",
        Some(&player.token),
        json!(null),
    )
    .await
}

#[tokio::test]
async fn a_flood_of_sign_in_codes_is_refused_and_the_database_keeps_only_live_ones() {
    let app = TestApp::spawn().await;
    let flooder = app.register(&unique("flooder")).await;
    let mut codes = Vec::new();
    for _ in 0..5 {
        let (status, body) = ask_code(&app, &flooder).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        codes.push(body["code"].as_str().unwrap().to_owned());
    }
    // A sixth while five work: refused, and nothing is kept for it.
    let (status, body) = ask_code(&app, &flooder).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["code"], "too_many_codes");
    assert_eq!(codes_kept(&app).await, 5);

    // A code used is gone; so are expired ones, once anyone asks for a code.
    let (status, _) = app
        .post_value("/sessions", None, json!({"code": codes[0]}))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(codes_kept(&app).await, 4);
    database_execute(
        &app.database,
        "UPDATE sign_in_codes SET expires_at = '2000-01-01T00:00:00.000Z'",
    )
    .await;
    let other = app.new_player().await;
    assert_eq!(ask_code(&app, &other).await.0, StatusCode::CREATED);
    assert_eq!(codes_kept(&app).await, 1, "the expired codes were removed");

    // Asking again and again, as fast as it can, the flooder is soon refused outright; the
    // table never holds more than a few codes of theirs.
    let mut refused = None;
    for attempt in 0..40 {
        let (status, body) = ask_code(&app, &flooder).await;
        if status == StatusCode::TOO_MANY_REQUESTS {
            assert_eq!(body["code"], "rate_limited");
            refused = Some(attempt);
            break;
        }
        database_execute(
            &app.database,
            "UPDATE sign_in_codes SET expires_at = '2000-01-01T00:00:00.000Z'",
        )
        .await;
    }
    assert!(refused.is_some(), "the flood was never refused");
    assert!(codes_kept(&app).await <= 6);
}

#[tokio::test]
async fn a_replaced_token_closes_the_streams_opened_with_it_everywhere() {
    let app = TestApp::spawn().await;
    let beside = app.spawn_beside(turnhouse::games::builtin()).await;
    let (room, x, o) = app.started_tictactoe().await;
    let stream_of = |server: &TestApp, token: &str| {
        format!(
            "{}/rooms/{room}/stream?access_token={token}",
            server.address
        )
    };
    let mut here = EventStream::open(&app.client, &stream_of(&app, &x.token), None).await;
    let mut there = EventStream::open(&beside.client, &stream_of(&beside, &x.token), None).await;
    here.event().await;
    there.event().await;

    let (status, rotated) = app
        .post_value("/players/me/token", Some(&x.token), json!(null))
        .await;
    assert_eq!(status, StatusCode::OK, "{rotated}");
    let new_token = rotated["token"].as_str().unwrap().to_owned();
    ends_within(&mut here, Duration::from_secs(2)).await;
    ends_within(&mut there, Duration::from_millis(3_500)).await;

    // A stream opened with the new token stays open through later changes of sessions, and
    // shows the game going on.
    let url = format!("{}&after=1", stream_of(&app, &new_token));
    let mut fresh = EventStream::open(&app.client, &url, None).await;
    let other_device = app
        .post_value("/players/me/sign-in-codes", Some(&new_token), json!(null))
        .await;
    assert_eq!(other_device.0, StatusCode::CREATED);
    let (status, _) = app
        .post_value("/players/me/token", Some(&o.token), json!(null))
        .await;
    assert_eq!(status, StatusCode::OK);
    let x_now = TestPlayer {
        token: new_token,
        ..x.clone()
    };
    app.play_ok(&x_now, &room, json!({"x": 0, "y": 0})).await;
    let frames = fresh.versions_through(3).await;
    assert_eq!(frames.last().unwrap()["version"], 3);
}

/// A client whose requests come from `ip` (an address of the loopback range).
fn client_from(ip: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(ip.parse::<IpAddr>().unwrap())
        .build()
        .unwrap()
}

/// A password sign-in as `username` from `client`: the status and the problem's code.
async fn sign_in(
    app: &TestApp,
    client: &reqwest::Client,
    username: &str,
    password: &str,
) -> (StatusCode, Value) {
    let response = client
        .post(format!("{}/sessions", app.address))
        .json(&json!({"username": username, "password": password}))
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_stranger_guessing_a_password_slows_only_themselves() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.abuse_limits.account_failure_rate = "12/h".parse().unwrap();
    })
    .await;
    let victim = app.register(&unique("victim")).await;
    let response = app
        .request(
            Method::PUT,
            "/players/me/password",
            Some(&victim.token),
            Some(&json!({"password": "correct horse battery"})),
        )
        .await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let shouted = victim.username.to_uppercase();
    let stranger = client_from("127.0.0.2");
    let owner = client_from("127.0.0.1");

    // Ten wrong guesses from one address, then that address is refused for this account.
    for _ in 0..10 {
        let (status, body) = sign_in(&app, &stranger, &shouted, "wrong").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    }
    let (status, body) = sign_in(&app, &stranger, &shouted, "wrong").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    // The owner, from their own address, signs in (their name in any case).
    let (status, body) = sign_in(&app, &owner, &victim.username, "correct horse battery").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["id"], victim.id.as_str());

    // Guessing spread over addresses meets the ceiling for the account as a whole.
    let second = client_from("127.0.0.3");
    for _ in 0..2 {
        assert_eq!(
            sign_in(&app, &second, &shouted, "wrong").await.0,
            StatusCode::UNAUTHORIZED
        );
    }
    let (status, body) = sign_in(&app, &owner, &victim.username, "correct horse battery").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
}

#[tokio::test]
async fn names_are_one_account_whatever_their_case_and_hold_no_hidden_characters() {
    let app = TestApp::spawn().await;
    let name = unique("casey");
    app.register(&name).await;
    for other in [name.to_uppercase(), format!("C{}", &name[1..])] {
        let response = app
            .post("/players", None, Some(&json!({"username": other})))
            .await;
        assert_problem(response, StatusCode::CONFLICT, "username_taken").await;
    }
    for hidden in ["ali\u{202E}ce", "bo\u{200B}b", "zoë_1", "a\u{0007}bc"] {
        let response = app
            .post("/players", None, Some(&json!({"username": hidden})))
            .await;
        assert_problem(response, StatusCode::BAD_REQUEST, "invalid_username").await;
    }
}
