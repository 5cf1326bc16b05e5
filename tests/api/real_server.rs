//! The server binary itself, started on a database (a SQLite file or a PostgreSQL URL) as an
//! operator would start it, for tests that kill, stop or starve it, or run several at once.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::unique;

/// The server binary on a free port; its address is read from its own log line.
pub struct Server {
    pub child: Child,
    pub address: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    pub fn start(database: impl AsRef<OsStr>) -> Self {
        Self::start_with(database, &[])
    }

    /// Started with more flags.
    pub fn start_with(database: impl AsRef<OsStr>, flags: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_turnhouse"))
            .args(["--bind", "127.0.0.1:0", "--database"])
            .arg(database)
            .args(flags)
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
        // Keep draining the log (and keep it) so the server never blocks on a full pipe.
        let log = Arc::new(Mutex::new(Vec::new()));
        let kept = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                kept.lock().unwrap().push(line);
            }
        });
        Self {
            child,
            address,
            log,
        }
    }

    /// The log lines so far that contain every one of `parts`.
    pub fn log_lines_with(&self, parts: &[&str]) -> Vec<String> {
        let log = self.log.lock().unwrap();
        log.iter()
            .filter(|line| parts.iter().all(|part| line.contains(part)))
            .cloned()
            .collect()
    }

    pub fn kill(mut self) {
        self.child.kill().unwrap(); // SIGKILL: no shutdown, no flush.
        self.child.wait().unwrap();
    }
}

pub async fn post(
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

/// Two new players and a room of `game` the first opened and the second joined: returns
/// (first's token, second's token, room id).
pub async fn started_room(
    client: &reqwest::Client,
    base: &str,
    game: &str,
) -> (String, String, String) {
    let mut tokens = vec![register(client, base).await, register(client, base).await];
    let (status, room) = post(
        client,
        format!("{base}/rooms"),
        Some(&tokens[0]),
        json!({"game": game}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{room}");
    let id = room["id"].as_str().unwrap().to_owned();
    let (status, joined) = post(
        client,
        format!("{base}/rooms/{id}/join"),
        Some(&tokens[1]),
        json!(null),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{joined}");
    let second = tokens.pop().unwrap();
    (tokens.pop().unwrap(), second, id)
}

pub async fn get_json(client: &reqwest::Client, url: String) -> Value {
    client.get(url).send().await.unwrap().json().await.unwrap()
}

/// A new player's token.
pub async fn register(client: &reqwest::Client, base: &str) -> String {
    let body = json!({"username": unique("killed")});
    let (status, player) = post(client, format!("{base}/players"), None, body).await;
    assert_eq!(status, StatusCode::CREATED, "{player}");
    player["token"].as_str().unwrap().to_owned()
}
