//! Abuse limits, request ids and token rotation.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{assert_problem, unique, TestApp};
use turnhouse::api::limits::RateSetting;

fn rate(text: &str) -> RateSetting {
    text.parse().unwrap()
}

/// A 429 with a Retry-After of whole seconds, at least one.
async fn assert_rate_limited(response: reqwest::Response) -> Value {
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry_after >= 1);
    assert_problem(response, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await
}

#[tokio::test]
async fn sign_ups_actions_and_uploads_are_limited_and_nothing_is_done_beyond() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.abuse_limits.signup_rate = rate("3/h");
        config.abuse_limits.action_rate = rate("4/h");
        config.abuse_limits.upload_rate = rate("1/h");
    })
    .await;
    let x = app.register(&unique("x")).await;
    let o = app.register(&unique("o")).await;
    let author = app.register(&unique("author")).await;
    let refused = app
        .post("/players", None, Some(&json!({"username": unique("late")})))
        .await;
    let problem = assert_rate_limited(refused).await;
    assert!(problem["detail"].as_str().unwrap().contains("sign-ups"));
    let players = app.get("/rooms").await; // reads are never limited
    assert_eq!(players.status(), StatusCode::OK);

    // Actions are counted per player: x's fifth is refused, o's first is not.
    let room = app.create_room(&x, json!({"game": "tictactoe"})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    let moves = format!("/rooms/{room}/moves");
    for cell in [(0, 0), (1, 1), (2, 2)] {
        let body = json!({"x": cell.0, "y": cell.1});
        let response = app.post(&moves, Some(&x.token), Some(&body)).await;
        assert_ne!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    }
    let version = app.room(&room).await["version"].clone();
    let fifth = app
        .post(&moves, Some(&x.token), Some(&json!({"x": 0, "y": 2})))
        .await;
    assert_rate_limited(fifth).await;
    assert_eq!(app.room(&room).await["version"], version, "nothing changed");
    let join = app
        .post(&format!("/rooms/{room}/join"), Some(&o.token), None)
        .await;
    assert_eq!(join.status(), StatusCode::OK);

    let source = "module.exports = { onRoomStart: () => ({}), onPlayerJoin: () => ({}), \
                  onPlayerQuit: () => ({}), onPlayerMove: () => ({}) };";
    assert_eq!(
        app.upload(&author, "limited", source).await.status(),
        StatusCode::CREATED
    );
    assert_rate_limited(app.upload(&author, "limited", source).await).await;
    let versions = app
        .get("/games/limited")
        .await
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(versions["version"], 1);
}

#[tokio::test]
async fn limits_can_be_turned_off() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.abuse_limits.signup_rate = rate("1/h");
        config.abuse_limits.rate_limits = "off".into();
    })
    .await;
    for _ in 0..5 {
        app.register(&unique("free")).await;
    }
}

#[tokio::test]
async fn every_response_carries_a_request_id_the_client_can_choose() {
    let app = TestApp::spawn().await;
    let response = app.get("/healthz").await;
    let id = response.headers()["x-request-id"].to_str().unwrap();
    assert_eq!(id.len(), 32, "a new id: 128 random bits in hex");
    assert_eq!(response.headers()["x-content-type-options"], "nosniff");

    let chosen = app
        .client
        .post(format!("{}/rooms", app.address))
        .header("X-Request-Id", "trace-42:a/b")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(chosen.headers()["x-request-id"], "trace-42:a/b");
    let problem = assert_problem(chosen, StatusCode::UNAUTHORIZED, "missing_token").await;
    assert_eq!(problem["requestId"], "trace-42:a/b");

    // An id that could not be repeated safely is replaced, not echoed.
    let unsafe_id = app
        .client
        .get(format!("{}/nowhere", app.address))
        .header("X-Request-Id", "<script>")
        .send()
        .await
        .unwrap();
    let replaced = unsafe_id.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_ne!(replaced, "<script>");
    let problem = assert_problem(unsafe_id, StatusCode::NOT_FOUND, "route_not_found").await;
    assert_eq!(problem["requestId"], replaced.as_str());

    let not_allowed = app.request(Method::PATCH, "/healthz", None, None).await;
    assert!(not_allowed.headers().contains_key("x-request-id"));
}

#[tokio::test]
async fn a_rotated_token_stops_working_at_once_everywhere() {
    let app = TestApp::spawn().await;
    let player = app.register(&unique("rotor")).await;
    let room = app.create_room(&player, json!({"game": "tictactoe"})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    // A second server on the same database has the old token cached from a request.
    let beside = app.spawn_beside(turnhouse::games::builtin()).await;
    let quit_on_beside = |token: String| {
        let url = format!("{}/rooms/{room}/quit", beside.address);
        let client = beside.client.clone();
        async move { client.post(url).bearer_auth(token).send().await.unwrap() }
    };
    let listed = beside
        .client
        .get(format!("{}/rooms?player={}", beside.address, player.id))
        .bearer_auth(&player.token)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), StatusCode::OK);

    let rotated = app
        .post("/players/me/token", Some(&player.token), None)
        .await;
    assert_eq!(rotated.status(), StatusCode::OK);
    let body: Value = rotated.json().await.unwrap();
    assert_eq!(body["id"], player.id.as_str());
    assert_eq!(body["username"], player.username.as_str());
    let new_token = body["token"].as_str().unwrap().to_owned();
    assert_ne!(new_token, player.token);

    for server in [&app.address, &beside.address] {
        let old = app
            .client
            .post(format!("{server}/rooms"))
            .bearer_auth(&player.token)
            .body(json!({"game": "tictactoe"}).to_string())
            .send()
            .await
            .unwrap();
        assert_problem(old, StatusCode::UNAUTHORIZED, "invalid_token").await;
    }
    let quit = quit_on_beside(new_token.clone()).await;
    assert_eq!(
        quit.status(),
        StatusCode::OK,
        "the new token works everywhere"
    );
    let again = app.post("/players/me/token", Some(&new_token), None).await;
    assert_eq!(again.status(), StatusCode::OK);
}

/// Clients that send their body a byte now and then are answered `408 body_timeout` once
/// `--body-timeout-secs` has passed, and their connections closed; everyone else is served
/// meanwhile.
#[tokio::test]
async fn a_body_sent_a_byte_at_a_time_is_cut_off_at_its_deadline() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.serving.body_timeout_secs = 1;
    })
    .await;
    let address = app.address.trim_start_matches("http://").to_owned();
    let started = std::time::Instant::now();
    let slow: Vec<_> = (0..20)
        .map(|_| {
            let address = address.clone();
            tokio::spawn(async move {
                let mut socket = tokio::net::TcpStream::connect(&address).await.unwrap();
                let head = format!(
                    "POST /players HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                );
                socket.write_all(head.as_bytes()).await.unwrap();
                let mut answer = Vec::new();
                for _ in 0..100 {
                    if socket.write_all(b" ").await.is_err() {
                        break;
                    }
                    let mut buffer = [0u8; 4096];
                    tokio::select! {
                        read = socket.read(&mut buffer) => match read {
                            Ok(0) | Err(_) => break,
                            Ok(n) => answer.extend_from_slice(&buffer[..n]),
                        },
                        _ = tokio::time::sleep(std::time::Duration::from_millis(300)) => {}
                    }
                }
                // The rest of the answer, then the end of the connection.
                let _ = tokio::time::timeout(
                    std::time::Duration::from_secs(5),
                    socket.read_to_end(&mut answer),
                )
                .await;
                String::from_utf8_lossy(&answer).into_owned()
            })
        })
        .collect();
    // Served meanwhile.
    let (status, _) = app
        .post_value("/players", None, json!({"username": unique("quick")}))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    for answer in slow {
        let answer = answer.await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains("\"code\":\"body_timeout\""), "{answer}");
    }
    println!("twenty slow bodies cut off after {:?}", started.elapsed());
}

/// One address holds at most `--max-connections-per-address` connections: the next is answered
/// `429 too_many_connections` and closed, and once one of the others closes, a new one is
/// served. A trusted proxy's connections are not counted (its clients are: see `proxies.rs`).
#[tokio::test]
async fn an_address_holds_only_so_many_connections() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    async fn ask(address: &str) -> (tokio::net::TcpStream, String) {
        let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
        let head = format!("GET /healthz HTTP/1.1\r\nHost: {address}\r\n\r\n");
        socket.write_all(head.as_bytes()).await.unwrap();
        let mut buffer = vec![0u8; 4096];
        let n = socket.read(&mut buffer).await.unwrap();
        (socket, String::from_utf8_lossy(&buffer[..n]).into_owned())
    }
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.serving.max_connections_per_address = 3;
    })
    .await;
    let address = app.address.trim_start_matches("http://").to_owned();
    let mut held = Vec::new();
    for _ in 0..3 {
        let (socket, answer) = ask(&address).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        held.push(socket);
    }
    let (mut refused, answer) = ask(&address).await;
    assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
    assert!(
        answer.contains("\"code\":\"too_many_connections\""),
        "{answer}"
    );
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        refused.read_to_end(&mut rest),
    )
    .await;
    assert!(closed.is_ok(), "the refused connection is closed");
    drop(held.pop());
    let mut served = false;
    for _ in 0..50 {
        let (_socket, answer) = ask(&address).await;
        if answer.starts_with("HTTP/1.1 200") {
            served = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(served, "a connection is served again once one has closed");

    let behind = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.serving.max_connections_per_address = 1;
        config.serving.trusted_proxies = "127.0.0.1".parse().unwrap();
    })
    .await;
    let address = behind.address.trim_start_matches("http://").to_owned();
    let mut kept = Vec::new();
    for _ in 0..5 {
        let (socket, answer) = ask(&address).await;
        assert!(
            answer.starts_with("HTTP/1.1 200"),
            "a proxy's connections are not capped: {answer}"
        );
        kept.push(socket);
    }
}
