//! Sessions: one player on several devices, each with a token of its own; sign-in codes that
//! open a session on another device (once, for ten minutes); ending a session refuses its
//! token at once and closes its open streams, on every server sharing the database.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::databases::database_execute;
use crate::helpers::{assert_problem, unique, TestApp, TestPlayer};
use crate::sse_client::EventStream;

/// A code for `player`'s account.
async fn code_for(app: &TestApp, player: &TestPlayer) -> String {
    let (status, body) = app
        .post_value(
            "/players/me/sign-in-codes",
            Some(&player.token),
            json!(null),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let code = body["code"].as_str().unwrap().to_owned();
    assert_eq!(code.len(), 8);
    assert!(body["expiresAt"].as_str().unwrap().ends_with('Z'));
    code
}

/// Signs in with `code`, labelled `label`: the status and the answer.
async fn sign_in(app: &TestApp, code: &str, label: &str) -> (StatusCode, Value) {
    app.post_value("/sessions", None, json!({"code": code, "label": label}))
        .await
}

/// `player` on a second device, through a code.
async fn second_device(app: &TestApp, player: &TestPlayer) -> TestPlayer {
    let code = code_for(app, player).await;
    let (status, body) = sign_in(app, &code, "Phone").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["id"], player.id.as_str());
    assert_eq!(body["username"], player.username.as_str());
    TestPlayer {
        token: body["token"].as_str().unwrap().to_owned(),
        ..player.clone()
    }
}

/// `player` asking `server` for their sessions, the request every token check here makes.
async fn ask_sessions(server: &TestApp, player: &TestPlayer) -> reqwest::Response {
    let token = Some(player.token.as_str());
    server
        .request(Method::GET, "/players/me/sessions", token, None)
        .await
}

async fn sessions(app: &TestApp, player: &TestPlayer) -> Vec<Value> {
    let response = ask_sessions(app, player).await;
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    body["sessions"].as_array().unwrap().clone()
}

/// Checks that `server` refuses `player`'s token.
async fn refused(server: &TestApp, player: &TestPlayer) {
    let response = ask_sessions(server, player).await;
    assert_problem(response, StatusCode::UNAUTHORIZED, "invalid_token").await;
}

fn session_of(token: &str) -> &str {
    token.split('.').nth(1).unwrap()
}

/// Waits for the stream to end; how long that took.
pub(crate) async fn ends_within(stream: &mut EventStream, limit: Duration) -> Duration {
    let start = Instant::now();
    loop {
        match tokio::time::timeout(limit.saturating_sub(start.elapsed()), stream.frame()).await {
            Ok(None) => return start.elapsed(),
            Ok(Some(_)) => continue,
            Err(_) => panic!("the stream was still open after {limit:?}"),
        }
    }
}

#[tokio::test]
async fn one_player_on_two_devices_each_with_its_own_token() {
    let app = TestApp::spawn().await;
    let laptop = app.register(&unique("traveller")).await;
    let phone = second_device(&app, &laptop).await;
    assert_ne!(phone.token, laptop.token);

    // Both work, as the same player; each lists both sessions and marks itself.
    let room = app.create_room(&laptop, json!({"game": "tictactoe"})).await;
    let id = room["id"].as_str().unwrap();
    assert_problem(
        app.join(&phone, id).await,
        StatusCode::CONFLICT,
        "already_a_player",
    )
    .await;
    let seen_by_phone = sessions(&app, &phone).await;
    assert_eq!(seen_by_phone.len(), 2);
    let current: Vec<&str> = seen_by_phone
        .iter()
        .filter(|s| s["current"] == true)
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(current, [session_of(&phone.token)]);
    assert!(seen_by_phone.iter().any(|s| s["label"] == "Phone"));
    for session in &seen_by_phone {
        let used = session["lastUsedAt"].as_str().unwrap();
        assert!(used.ends_with(":00.000Z"), "to the minute: {used}");
    }

    // Rotating the phone's token leaves the laptop's alone.
    let (status, rotated) = app
        .post_value("/players/me/token", Some(&phone.token), json!(null))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(rotated["session"], session_of(&phone.token));
    refused(&app, &phone).await;
    assert_eq!(sessions(&app, &laptop).await.len(), 2);
}

/// Ending a session closes its streams within a second, here and on a second server that
/// shares the database (on PostgreSQL, another instance).
#[tokio::test]
async fn ending_a_session_refuses_its_token_and_closes_its_streams_everywhere() {
    let app = TestApp::spawn().await;
    let beside = app.spawn_beside(turnhouse::games::builtin()).await;
    let laptop = app.register(&unique("owner")).await;
    let phone = second_device(&app, &laptop).await;
    let tablet = second_device(&app, &laptop).await;
    let room = app.create_room(&laptop, json!({"game": "tictactoe"})).await;
    let id = room["id"].as_str().unwrap();
    let stream_of = |server: &TestApp, player: &TestPlayer| {
        format!(
            "{}/rooms/{id}/stream?access_token={}",
            server.address, player.token
        )
    };
    let mut here = EventStream::open(&app.client, &stream_of(&app, &phone), None).await;
    let mut there = EventStream::open(&beside.client, &stream_of(&beside, &tablet), None).await;
    here.event().await;
    there.event().await;

    // The laptop ends the phone's session: the phone's stream on this server closes.
    let path = format!("/players/me/sessions/{}", session_of(&phone.token));
    let ended = app
        .request(Method::DELETE, &path, Some(&laptop.token), None)
        .await;
    assert_eq!(ended.status(), StatusCode::NO_CONTENT);
    let took = ends_within(&mut here, Duration::from_secs(1)).await;
    println!("a stream on the server that ended its session closed after {took:?}");
    for server in [&app, &beside] {
        refused(server, &phone).await;
    }
    assert_problem(
        app.request(Method::DELETE, &path, Some(&laptop.token), None)
            .await,
        StatusCode::NOT_FOUND,
        "session_not_found",
    )
    .await;

    // "Sign out everywhere else": the tablet's stream, on the other server, closes too.
    let response = app
        .request(
            Method::DELETE,
            "/players/me/sessions",
            Some(&laptop.token),
            None,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.json::<Value>().await.unwrap()["ended"], 1);
    let took = ends_within(&mut there, Duration::from_millis(2_500)).await;
    println!("a stream on another server closed after {took:?}");
    assert!(took < Duration::from_millis(2_500));

    // And signing out ends the laptop's own.
    let out = app
        .request(
            Method::DELETE,
            "/sessions/current",
            Some(&laptop.token),
            None,
        )
        .await;
    assert_eq!(out.status(), StatusCode::NO_CONTENT);
    refused(&app, &laptop).await;
}

#[tokio::test]
async fn a_code_works_once_and_not_after_it_expires_and_guesses_are_throttled() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.abuse_limits.sign_in_rate = "4/min".parse().unwrap();
    })
    .await;
    let player = app.register(&unique("coder")).await;
    let code = code_for(&app, &player).await;
    // Typed loosely: lower case, with a dash.
    let typed = format!("{}-{}", &code[..4], &code[4..]).to_lowercase();
    assert_eq!(sign_in(&app, &typed, "Phone").await.0, StatusCode::CREATED);
    let (status, again) = sign_in(&app, &code, "Phone").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{again}");
    assert_eq!(again["code"], "invalid_code");

    // Ten minutes later (the clock moved on in the database), an unused code is refused.
    let late = code_for(&app, &player).await;
    database_execute(
        &app.database,
        "UPDATE sign_in_codes SET expires_at = '2000-01-01T00:00:00.000Z' WHERE used_at IS NULL",
    )
    .await;
    assert_eq!(
        sign_in(&app, &late, "Phone").await.1["code"],
        "invalid_code"
    );

    // Guesses: a wrong code is refused, and an address that keeps guessing is slowed down.
    assert_eq!(
        sign_in(&app, "ZZZZZZZZ", "Guess").await.1["code"],
        "invalid_code"
    );
    let (status, limited) = sign_in(&app, "YYYYYYYY", "Guess").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{limited}");
    assert_eq!(limited["code"], "rate_limited");
    assert_eq!(
        sessions(&app, &player).await.len(),
        2,
        "nothing a guess opened"
    );
}

pub(crate) async fn set_password(
    app: &TestApp,
    player: &TestPlayer,
    body: Value,
) -> reqwest::Response {
    app.request(
        Method::PUT,
        "/players/me/password",
        Some(&player.token),
        Some(&body),
    )
    .await
}

pub(crate) async fn sign_in_with(
    app: &TestApp,
    username: &str,
    password: &str,
) -> (StatusCode, Value) {
    app.post_value(
        "/sessions",
        None,
        json!({"username": username, "password": password}),
    )
    .await
}

#[tokio::test]
async fn a_password_signs_in_anywhere_and_a_wrong_one_or_an_unknown_name_is_the_same_answer() {
    let app = TestApp::spawn().await;
    let player = app.register(&unique("keeper")).await;
    // Too short, and no sign-in before there is a password.
    let short = set_password(&app, &player, json!({"password": "short"})).await;
    assert_problem(short, StatusCode::UNPROCESSABLE_ENTITY, "invalid_password").await;
    let (status, none_yet) = sign_in_with(&app, &player.username, "correct horse").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{none_yet}");

    let set = set_password(&app, &player, json!({"password": "correct horse"})).await;
    assert_eq!(set.status(), StatusCode::NO_CONTENT);
    let (status, signed) = sign_in_with(&app, &player.username, "correct horse").await;
    assert_eq!(status, StatusCode::CREATED, "{signed}");
    assert_eq!(signed["id"], player.id.as_str());
    assert_eq!(sessions(&app, &player).await.len(), 2);

    // A wrong password and a name nobody has: one answer, word for word but the request id.
    let (wrong_status, wrong) = sign_in_with(&app, &player.username, "correct horsE").await;
    let (unknown_status, unknown) = sign_in_with(&app, &unique("nobody"), "correct horse").await;
    assert_eq!(wrong_status, StatusCode::UNAUTHORIZED);
    assert_eq!(unknown_status, wrong_status);
    for field in ["code", "title", "detail", "status"] {
        assert_eq!(wrong[field], unknown[field], "{field}");
    }
    assert_eq!(wrong["code"], "invalid_credentials");

    // Changing it needs the current one.
    let without = set_password(&app, &player, json!({"password": "battery staple"})).await;
    assert_problem(without, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
    let with = set_password(
        &app,
        &player,
        json!({"password": "battery staple", "currentPassword": "correct horse"}),
    )
    .await;
    assert_eq!(with.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        sign_in_with(&app, &player.username, "battery staple")
            .await
            .0,
        StatusCode::CREATED
    );

    // Only a hash is kept, and it says how it was made.
    let stored: Vec<(String,)> = crate::databases::database_rows(
        &app.database,
        "SELECT password_hash FROM players WHERE password_hash IS NOT NULL",
    )
    .await;
    assert_eq!(stored.len(), 1);
    assert!(stored[0].0.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
    assert!(!stored[0].0.contains("battery"));
}

#[tokio::test]
async fn failed_passwords_are_throttled_per_account_and_per_address() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.abuse_limits.password_failure_rate = "3/h".parse().unwrap();
    })
    .await;
    let player = app.register(&unique("guarded")).await;
    let set = set_password(&app, &player, json!({"password": "correct horse"})).await;
    assert_eq!(set.status(), StatusCode::NO_CONTENT);
    for _ in 0..3 {
        assert_eq!(
            sign_in_with(&app, &player.username, "guess guess").await.0,
            StatusCode::UNAUTHORIZED
        );
    }
    // The account is closed to sign-ins for a while, even with the right password.
    let response = app
        .post(
            "/sessions",
            None,
            Some(&json!({"username": player.username, "password": "correct horse"})),
        )
        .await;
    assert!(response.headers().contains_key("retry-after"));
    assert_problem(response, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    // Another account is not.
    let other = app.register(&unique("bystander")).await;
    let set = set_password(&app, &other, json!({"password": "correct horse"})).await;
    assert_eq!(set.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        sign_in_with(&app, &other.username, "correct horse").await.0,
        StatusCode::CREATED
    );
}

/// A wrong password and an unknown name cost the server the same work: one Argon2 check each
/// (counted), so they take the same time. The medians over 50 tries each are printed, not
/// asserted: this machine is shared, and timings belong in benchmarks.
#[tokio::test]
async fn a_wrong_password_and_an_unknown_name_cost_one_hash_each() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.abuse_limits.rate_limits = "off".into();
    })
    .await;
    let player = app.register(&unique("timed")).await;
    let set = set_password(&app, &player, json!({"password": "correct horse"})).await;
    assert_eq!(set.status(), StatusCode::NO_CONTENT);
    let hashes = || app.metric("turnhouse_password_hashes_total");
    let before = hashes().await.unwrap();
    let mut medians = Vec::new();
    for name in [player.username.clone(), unique("nobody")] {
        let mut times = Vec::new();
        for _ in 0..50 {
            let start = Instant::now();
            let (status, _) = sign_in_with(&app, &name, "wrong horse").await;
            times.push(start.elapsed());
            assert_eq!(status, StatusCode::UNAUTHORIZED);
        }
        times.sort();
        medians.push(times[times.len() / 2]);
    }
    assert_eq!(
        hashes().await.unwrap() - before,
        100.0,
        "one hash per attempt, either way"
    );
    println!(
        "median refusal: wrong password {:?}, unknown name {:?}",
        medians[0], medians[1]
    );
}

/// A stolen token could set a password on an account that had none, and its thief sign in
/// with it after the owner had rotated their token and signed out everywhere else. Setting or
/// changing a password now ends every other session (their streams too), and guesses at the
/// current password through a token are slowed as sign-ins are.
#[tokio::test]
async fn setting_a_password_ends_every_other_session_and_guessing_the_current_one_is_throttled() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.abuse_limits.password_failure_rate = "3/h".parse().unwrap();
    })
    .await;
    let laptop = app.register(&unique("owner")).await;
    let phone = second_device(&app, &laptop).await;
    let room = app.create_room(&laptop, json!({"game": "tictactoe"})).await;
    let url = format!(
        "{}/rooms/{}/stream?access_token={}",
        app.address,
        room["id"].as_str().unwrap(),
        phone.token
    );
    let mut stream = EventStream::open(&app.client, &url, None).await;
    stream.event().await;

    // The phone's token sets a password: the laptop is signed out at once.
    let set = set_password(&app, &phone, json!({"password": "correct horse"})).await;
    assert_eq!(set.status(), StatusCode::NO_CONTENT);
    refused(&app, &laptop).await;
    assert_eq!(sessions(&app, &phone).await.len(), 1);

    // The owner signs in with the password on the laptop and changes it: the phone's
    // session, and its stream, end.
    let (status, body) = sign_in_with(&app, &laptop.username, "correct horse").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let laptop = TestPlayer {
        token: body["token"].as_str().unwrap().to_owned(),
        ..laptop
    };
    let changed = set_password(
        &app,
        &laptop,
        json!({"password": "battery staple", "currentPassword": "correct horse"}),
    )
    .await;
    assert_eq!(changed.status(), StatusCode::NO_CONTENT);
    ends_within(&mut stream, Duration::from_secs(5)).await;
    refused(&app, &phone).await;
    assert_eq!(
        sign_in_with(&app, &laptop.username, "correct horse")
            .await
            .0,
        StatusCode::UNAUTHORIZED
    );

    // Guessing the current password through a token meets the sign-ins' limit: the old
    // password tried at signing in and two wrong guesses here spend it, and then even the
    // right one waits.
    for _ in 0..2 {
        let guess = set_password(
            &app,
            &laptop,
            json!({"password": "mine now", "currentPassword": "a guess"}),
        )
        .await;
        assert_problem(guess, StatusCode::UNAUTHORIZED, "invalid_credentials").await;
    }
    let right = set_password(
        &app,
        &laptop,
        json!({"password": "mine now", "currentPassword": "battery staple"}),
    )
    .await;
    assert_problem(right, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
}

/// Many tokens checked at the same moment (on PostgreSQL, read together in one statement) are
/// each answered as their own session, on either of two servers, and those signed out refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_checked_at_once_are_each_answered_as_their_own_session() {
    let app = TestApp::spawn().await;
    let beside = app.spawn_beside(turnhouse::games::builtin()).await;
    let mut players = Vec::new();
    for _ in 0..30 {
        players.push(app.register(&unique("crowd")).await);
    }
    for player in players.iter().step_by(3) {
        let out = beside
            .request(
                Method::DELETE,
                "/sessions/current",
                Some(&player.token),
                None,
            )
            .await;
        assert_eq!(out.status(), StatusCode::NO_CONTENT);
    }
    let servers = [&app, &beside];
    let asks = players.iter().enumerate().flat_map(|(at, player)| {
        (0..4).map(move |round| {
            let server = servers[(at + round) % 2];
            async move {
                if at % 3 == 0 {
                    return refused(server, player).await;
                }
                let sessions = sessions(server, player).await;
                assert_eq!(sessions.len(), 1, "{sessions:?}");
                assert_eq!(sessions[0]["id"], session_of(&player.token), "{sessions:?}");
                assert_eq!(sessions[0]["current"], true, "{sessions:?}");
            }
        })
    });
    futures::future::join_all(asks).await;
}

/// On PostgreSQL the task that reads tokens together keeps its connection while it has work.
/// The database dropping connections under load (a restart of its processes, an operator's
/// `pg_terminate_backend`) costs at most the checks whose statement it cut, each answered 503
/// `storage_unavailable` and to be sent again: a read that fails is made once more on a
/// connection the pool checks, and no dropped connection is kept, so once the cuts stop every
/// check is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_checks_go_on_when_the_database_drops_the_connections_they_are_read_on() {
    if !crate::databases::on_postgres() {
        return;
    }
    let app = TestApp::spawn().await;
    let player = app.register(&unique("steady")).await;
    let checking = std::sync::atomic::AtomicBool::new(true);
    let check = || async {
        let response = ask_sessions(&app, &player).await;
        if response.status() == StatusCode::OK {
            return true;
        }
        assert_problem(
            response,
            StatusCode::SERVICE_UNAVAILABLE,
            "storage_unavailable",
        )
        .await;
        false
    };
    let checks = async {
        let mut answered = 0;
        while checking.load(std::sync::atomic::Ordering::Relaxed) {
            let crowd = futures::future::join_all((0..16).map(|_| check())).await;
            answered += crowd.into_iter().filter(|ok| *ok).count();
        }
        answered
    };
    let cutting = async {
        let mut cut = 0;
        for _ in 0..20 {
            let killed: Vec<(bool,)> = crate::databases::database_rows(
                &app.database,
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = current_database() AND pid <> pg_backend_pid() \
                 AND query LIKE 'WITH v (id) AS (VALUES%'",
            )
            .await;
            cut += killed.len();
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        checking.store(false, std::sync::atomic::Ordering::Relaxed);
        cut
    };
    let (answered, cut) = tokio::join!(checks, cutting);
    assert!(cut > 0, "no connection reading sessions was found to cut");
    assert!(
        answered > 0,
        "no check was answered while connections were cut"
    );
    let after = futures::future::join_all((0..16).map(|_| sessions(&app, &player))).await;
    assert!(after.iter().all(|listed| listed.len() == 1), "{after:?}");
}
