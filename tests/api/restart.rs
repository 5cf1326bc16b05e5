//! The real binary, killed without warning and started again on the same file: everything that
//! was acknowledged is still there.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::unique;

/// The server binary on a free port; its address is read from its own log line.
struct Server {
    child: Child,
    address: String,
}

impl Server {
    fn start(database: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_turnhouse"))
            .args(["--bind", "127.0.0.1:0", "--database"])
            .arg(database)
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server binary starts");
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let address = loop {
            let line = lines
                .next()
                .expect("the server logs where it listens")
                .unwrap();
            if let Some(rest) = line.split("listening on ").nth(1) {
                break rest.split_whitespace().next().unwrap().to_owned();
            }
        };
        // Keep draining the log so the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Self { child, address }
    }

    fn kill(mut self) {
        self.child.kill().unwrap(); // SIGKILL: no shutdown, no flush.
        self.child.wait().unwrap();
    }
}

async fn post(
    client: &reqwest::Client,
    url: String,
    token: Option<&str>,
    body: Value,
) -> (StatusCode, Value) {
    let mut request = client.post(url).body(body.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    (response.status(), response.json().await.unwrap())
}

#[tokio::test]
async fn a_killed_server_loses_nothing_it_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("nested").join("rooms.db");
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();

    let server = Server::start(&database);
    let base = server.address.clone();
    let (_, x) = post(
        &client,
        format!("{base}/players"),
        None,
        json!({"username": unique("kx")}),
    )
    .await;
    let (_, o) = post(
        &client,
        format!("{base}/players"),
        None,
        json!({"username": unique("ko")}),
    )
    .await;
    let (x_token, o_token) = (x["token"].as_str().unwrap(), o["token"].as_str().unwrap());
    let (status, room) = post(
        &client,
        format!("{base}/rooms"),
        Some(x_token),
        json!({"game": "tictactoe"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let id = room["id"].as_str().unwrap().to_owned();
    post(
        &client,
        format!("{base}/rooms/{id}/join"),
        Some(o_token),
        json!(null),
    )
    .await;
    let (status, before) = post(
        &client,
        format!("{base}/rooms/{id}/moves"),
        Some(x_token),
        json!({"x": 1, "y": 1}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let events_before: Value = client
        .get(format!("{base}/rooms/{id}/events"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    server.kill();

    let server = Server::start(&database);
    let base = server.address.clone();
    let after: Value = client
        .get(format!("{base}/rooms/{id}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(after, before, "the room is exactly as acknowledged");
    let events_after: Value = client
        .get(format!("{base}/rooms/{id}/events"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(events_after, events_before);
    // The players' tokens still work, and the game goes on.
    let (status, next) = post(
        &client,
        format!("{base}/rooms/{id}/moves"),
        Some(o_token),
        json!({"x": 0, "y": 0}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{next}");
    assert_eq!(next["version"], 5);
    let listed: Value = client
        .get(format!("{base}/rooms"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["rooms"][0]["id"], id.as_str());
    server.kill();
}
