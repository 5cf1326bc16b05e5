//! HTTPS of the server's own: a whole game over it, HTTP/2 offered, HSTS, the plain HTTP
//! listener that only redirects, and a new certificate read on SIGHUP while a stream opened
//! before stays open.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::certificates::{certificate, trusting};
use crate::databases::fresh_database;
use crate::helpers::unique;
use crate::real_server::Server;

async fn post(
    client: &reqwest::Client,
    url: String,
    token: Option<&str>,
    body: Value,
) -> (StatusCode, Value, reqwest::header::HeaderMap) {
    let mut request = client.post(url).json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("an answer over HTTPS");
    let (status, headers) = (response.status(), response.headers().clone());
    (
        status,
        response.json().await.unwrap_or(Value::Null),
        headers,
    )
}

/// HTTP/2 is offered, and taken by a client that speaks it.
fn http2_is_taken(certs: &Path, base: &str) {
    let ca = certs.join("first-ca.pem");
    let version = Command::new("curl")
        .args([
            "-s",
            "--http2",
            "--cacert",
            ca.to_str().unwrap(),
            "-o",
            "/dev/null",
            "-w",
            "%{http_version}",
        ])
        .arg(format!("{base}/healthz"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&version.stdout), "2");
}

/// The plain HTTP listener sends browsers to the same path over HTTPS, and serves nothing.
async fn plain_http_is_redirected(server: &Server, base: &str) {
    let line = server
        .log_lines_with(&["redirecting", "to HTTPS"])
        .pop()
        .expect("the redirect listener's line");
    let plain = line
        .split("http://")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    let redirected = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(format!("http://{plain}/rooms?game=tictactoe"))
        .send()
        .await
        .unwrap();
    assert_eq!(redirected.status(), StatusCode::PERMANENT_REDIRECT);
    assert_eq!(
        redirected.headers()["location"],
        format!("{base}/rooms?game=tictactoe").as_str()
    );
}

/// A game started over HTTPS, with HSTS on every answer, and a stream of it open: the room,
/// the first player's token, and the stream.
async fn started_and_watched(
    first: &reqwest::Client,
    base: &str,
) -> (String, String, reqwest::Response) {
    // A whole game, with HSTS on every answer.
    let (status, x, headers) = post(
        first,
        format!("{base}/players"),
        None,
        json!({"username": unique("x")}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(headers["strict-transport-security"], "max-age=31536000");
    let (_, o, _) = post(
        first,
        format!("{base}/players"),
        None,
        json!({"username": unique("o")}),
    )
    .await;
    let (x, o) = (
        x["token"].as_str().unwrap().to_owned(),
        o["token"].as_str().unwrap().to_owned(),
    );
    let (status, room, _) = post(
        first,
        format!("{base}/rooms"),
        Some(&x),
        json!({"game": "tictactoe"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let id = room["id"].as_str().unwrap().to_owned();
    let (status, _, _) = post(
        first,
        format!("{base}/rooms/{id}/join"),
        Some(&o),
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let mut stream = first
        .get(format!("{base}/rooms/{id}/stream"))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    stream.chunk().await.unwrap().expect("the retry line");

    (id, x, stream)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_is_played_over_https_and_a_new_certificate_is_read_on_sighup() {
    let dir = tempfile::tempdir().unwrap();
    let certs = dir.path();
    certificate(certs, "first");
    certificate(certs, "second");
    std::fs::copy(certs.join("first.pem"), certs.join("served.pem")).unwrap();
    std::fs::copy(certs.join("first.key"), certs.join("served.key")).unwrap();
    let database = fresh_database(dir.path(), "tls.db").await;
    let (cert, key) = (certs.join("served.pem"), certs.join("served.key"));
    let server = Server::start_with(
        &database,
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
            "--http-redirect",
            "127.0.0.1:0",
        ],
    );
    let base = server.api.address.clone();
    assert!(base.starts_with("https://127.0.0.1:"), "{base}");
    let first = trusting(certs, "first");

    let (id, x, mut stream) = started_and_watched(&first, &base).await;
    // The page, in Chromium, with no warning: a game against a bot, and an author's page.
    let api = crate::client::Api {
        address: base.clone(),
        client: first.clone(),
    };
    crate::proxies::publish_framed(&api).await;
    crate::https_browser::played_in_chromium(&base, "own-tls").await;

    http2_is_taken(certs, &base);
    plain_http_is_redirected(&server, &base).await;

    // A new certificate on disk, and SIGHUP: new connections get it, the stream stays open.
    std::fs::copy(certs.join("second.pem"), &cert).unwrap();
    std::fs::copy(certs.join("second.key"), &key).unwrap();
    // SAFETY: signalling the server this test started.
    assert_eq!(
        unsafe { libc::kill(server.child.id() as i32, libc::SIGHUP) },
        0
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while server.log_lines_with(&["SIGHUP", "read again"]).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the certificate was not read again"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let second = trusting(certs, "second");
    let (status, moved, _) = post(
        &second,
        format!("{base}/rooms/{id}/moves"),
        Some(&x),
        json!({"x": 1, "y": 1}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert!(
        trusting(certs, "first")
            .get(format!("{base}/healthz"))
            .send()
            .await
            .is_err(),
        "a new connection gets the new certificate"
    );
    let mut seen = String::new();
    while !seen.contains("\"version\":3") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), stream.chunk())
            .await
            .expect("the stream opened before SIGHUP still delivers")
            .unwrap()
            .expect("still open");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
}
