//! `TestApp`: the real server on a free loopback port with a fresh database (a SQLite file, or
//! a PostgreSQL database: see `databases`), and typed helpers to drive it over HTTP.

use std::sync::LazyLock;

use reqwest::{Method, Response, StatusCode};
use serde_json::{json, Value};
use tempfile::TempDir;
use turnhouse::config::Config;
use turnhouse::game::GameRegistry;
use turnhouse::startup::Application;

static TRACING: LazyLock<()> = LazyLock::new(|| {
    if std::env::var_os("TEST_LOG").is_some() {
        turnhouse::telemetry::init("debug");
    }
});

/// Bots decide the same way in every run.
pub const BOT_SEED: u64 = 2026;

pub struct TestApp {
    pub address: String,
    /// The database: a SQLite file's path or a PostgreSQL URL.
    pub database: String,
    pub client: reqwest::Client,
    _dir: Option<TempDir>,
}

#[derive(Debug, Clone)]
pub struct TestPlayer {
    pub id: String,
    pub username: String,
    pub token: String,
}

impl TestApp {
    pub async fn spawn() -> Self {
        Self::spawn_with(turnhouse::games::builtin()).await
    }

    pub async fn spawn_with(games: GameRegistry) -> Self {
        Self::spawn_configured(games, |_| {}).await
    }

    /// A server whose settings `adjust` changes first (hook limits, sandbox workers…).
    pub async fn spawn_configured(games: GameRegistry, adjust: impl FnOnce(&mut Config)) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let database = crate::databases::fresh_database(dir.path(), "test.db").await;
        let mut app = Self::spawn_on(database, games, adjust).await;
        app._dir = Some(dir);
        app
    }

    /// A second server instance on this one's database, as in a scaled-out deployment.
    /// A server for browser tests: browsers share two cores with the other tests, so hooks
    /// get a second or two to run (what the limit does is tested in sandbox.rs).
    pub async fn spawn_for_browsers() -> Self {
        Self::spawn_configured(turnhouse::games::builtin(), |config| {
            config.hook_limits.time_ms = 2_000;
        })
        .await
    }

    pub async fn spawn_beside(&self, games: GameRegistry) -> Self {
        Self::spawn_on(self.database.clone(), games, |_| {}).await
    }

    /// The same, with its settings changed by `adjust` first.
    pub async fn spawn_beside_configured(
        &self,
        games: GameRegistry,
        adjust: impl FnOnce(&mut Config),
    ) -> Self {
        Self::spawn_on(self.database.clone(), games, adjust).await
    }

    async fn spawn_on(
        database: String,
        games: GameRegistry,
        adjust: impl FnOnce(&mut Config),
    ) -> Self {
        LazyLock::force(&TRACING);
        let mut config = Config::for_database(&database);
        config.bot_seed = Some(BOT_SEED);
        // Sandbox processes are the server binary itself, not this test program.
        config.sandbox_program = Some(env!("CARGO_BIN_EXE_turnhouse").into());
        adjust(&mut config);
        let app = Application::build(&config, games)
            .await
            .expect("the app builds");
        let address = format!("http://127.0.0.1:{}", app.port());
        tokio::spawn(app.run_until_stopped());
        Self {
            address,
            database,
            client: reqwest::Client::new(),
            _dir: None,
        }
    }

    /// Sends a request; `body` is sent as JSON text when given.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Response {
        let mut request = self
            .client
            .request(method, format!("{}{path}", self.address));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.body(body.to_string());
        }
        request.send().await.expect("the server answers")
    }

    pub async fn get(&self, path: &str) -> Response {
        self.request(Method::GET, path, None, None).await
    }

    pub async fn get_json(&self, path: &str) -> Value {
        let response = self.get(path).await;
        assert_eq!(response.status(), StatusCode::OK, "GET {path}");
        response.json().await.unwrap()
    }

    pub async fn post(&self, path: &str, token: Option<&str>, body: Option<&Value>) -> Response {
        self.request(Method::POST, path, token, body).await
    }

    pub async fn register(&self, username: &str) -> TestPlayer {
        let response = self
            .post("/players", None, Some(&json!({"username": username})))
            .await;
        assert_eq!(response.status(), StatusCode::CREATED);
        let body: Value = response.json().await.unwrap();
        TestPlayer {
            id: body["id"].as_str().unwrap().to_owned(),
            username: body["username"].as_str().unwrap().to_owned(),
            token: body["token"].as_str().unwrap().to_owned(),
        }
    }

    /// Creates a room of `game` with `body`'s extra fields; returns the room.
    pub async fn create_room(&self, player: &TestPlayer, body: Value) -> Value {
        let response = self.post("/rooms", Some(&player.token), Some(&body)).await;
        assert_eq!(
            response.status(),
            StatusCode::CREATED,
            "{:?}",
            response.text().await
        );
        response.json().await.unwrap()
    }

    pub async fn join(&self, player: &TestPlayer, room: &str) -> Response {
        self.post(&format!("/rooms/{room}/join"), Some(&player.token), None)
            .await
    }

    pub async fn quit(&self, player: &TestPlayer, room: &str) -> Response {
        self.post(&format!("/rooms/{room}/quit"), Some(&player.token), None)
            .await
    }

    pub async fn play(&self, player: &TestPlayer, room: &str, mv: Value) -> Response {
        self.post(
            &format!("/rooms/{room}/moves"),
            Some(&player.token),
            Some(&mv),
        )
        .await
    }

    /// Plays a move that must be accepted; returns the room after it.
    pub async fn play_ok(&self, player: &TestPlayer, room: &str, mv: Value) -> Value {
        let response = self.play(player, room, mv.clone()).await;
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert_eq!(status, StatusCode::OK, "move {mv} refused: {body}");
        body
    }

    /// The value of a sample on `GET /metrics` (its name and labels as printed), if shown.
    pub async fn metric(&self, sample: &str) -> Option<f64> {
        let text = self.get("/metrics").await.text().await.unwrap();
        text.lines()
            .find_map(|line| line.strip_prefix(&format!("{sample} ")))
            .and_then(|value| value.trim().parse().ok())
    }

    pub async fn room(&self, room: &str) -> Value {
        self.get_json(&format!("/rooms/{room}")).await
    }

    /// A whole room history (following pages).
    pub async fn events(&self, room: &str) -> Vec<Value> {
        let mut all = Vec::new();
        let mut after = 0;
        loop {
            let page = self
                .get_json(&format!("/rooms/{room}/events?after={after}&limit=1000"))
                .await;
            all.extend(page["events"].as_array().unwrap().iter().cloned());
            match page["nextAfter"].as_i64() {
                Some(next) => after = next,
                None => return all,
            }
        }
    }

    /// A room of the test games' counter with `seats` players (the first opened it): returns
    /// (room id, players). Needs a server with [`crate::test_games::registry`].
    pub async fn counter_room(&self, seats: usize) -> (String, Vec<TestPlayer>) {
        let owner = self.register(&unique("owner")).await;
        let room = self.create_room(&owner, json!({"game": "counter"})).await;
        let room = room["id"].as_str().unwrap().to_owned();
        let mut players = vec![owner];
        for _ in 1..seats {
            let player = self.register(&unique("racer")).await;
            assert_eq!(self.join(&player, &room).await.status(), StatusCode::OK);
            players.push(player);
        }
        (room, players)
    }

    /// A two-player tic-tac-toe game, started: returns (room id, X, O).
    pub async fn started_tictactoe(&self) -> (String, TestPlayer, TestPlayer) {
        self.started_game("tictactoe").await
    }

    /// A two-player room of `game`, both seated: returns (room id, first, second).
    pub async fn started_game(&self, game: &str) -> (String, TestPlayer, TestPlayer) {
        let x = self.register(&unique("x")).await;
        let o = self.register(&unique("o")).await;
        let room = self.create_room(&x, json!({"game": game})).await;
        let id = room["id"].as_str().unwrap().to_owned();
        assert_eq!(self.join(&o, &id).await.status(), StatusCode::OK);
        (id, x, o)
    }
}

impl TestApp {
    /// Uploads `source` as the game `id` (raw JavaScript, as curl would send it).
    pub async fn upload(&self, author: &TestPlayer, id: &str, source: &str) -> Response {
        self.client
            .put(format!("{}/games/{id}", self.address))
            .bearer_auth(&author.token)
            .header("content-type", "application/javascript")
            .body(source.to_owned())
            .send()
            .await
            .expect("the server answers")
    }

    /// Uploads a game that must be accepted, by a new author; returns the author.
    pub async fn publish(&self, id: &str, source: &str) -> TestPlayer {
        let author = self.register(&unique("author")).await;
        let response = self.upload(&author, id, source).await;
        let status = response.status();
        let body = response.text().await.unwrap();
        assert!(status.is_success(), "uploading {id}: {status} {body}");
        author
    }

    /// Uploads a game as a form (`query` holds any settings for the query string), as
    /// `curl -F source=@… -F frontend=@…` would.
    pub async fn upload_form(
        &self,
        author: &TestPlayer,
        id: &str,
        query: &str,
        form: reqwest::multipart::Form,
    ) -> Response {
        self.client
            .put(format!("{}/games/{id}{query}", self.address))
            .bearer_auth(&author.token)
            .multipart(form)
            .send()
            .await
            .expect("the server answers")
    }

    /// Publishes `examples/<file>` as `id`; returns the id, for rooms of it.
    pub async fn publish_example(&self, file: &str, id: &str) -> String {
        self.publish(id, &example(file)).await;
        id.to_owned()
    }
}

/// The text of `examples/<file>`.
pub fn example(file: &str) -> String {
    std::fs::read_to_string(format!("{}/examples/{file}", env!("CARGO_MANIFEST_DIR")))
        .expect("the example exists")
}

/// A form part holding `bytes` as the file `name`.
pub fn file_part(name: &str, bytes: Vec<u8>) -> reqwest::multipart::Part {
    reqwest::multipart::Part::bytes(bytes).file_name(name.to_owned())
}

/// A .zip of `entries` (path, content), deflated, as a build tool would make it.
pub fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write;
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (path, body) in entries {
        writer.start_file(*path, options).unwrap();
        writer.write_all(body).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// Every file below `dir`, as (path relative to it, content), in a stable order.
pub fn folder_files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let relative = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                files.push((relative, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// A username that no other test in this process uses.
pub fn unique(prefix: &str) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("{prefix}_{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Asserts an RFC 9457 problem with this status and code; returns its body.
pub async fn assert_problem(response: Response, status: StatusCode, code: &str) -> Value {
    assert_eq!(response.status(), status, "expected {status} {code}");
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(content_type, "application/problem+json");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["status"], status.as_u16());
    assert!(
        body["detail"].as_str().is_some_and(|d| !d.is_empty()),
        "{body}"
    );
    body
}

/// Lets this test process hold as many connections as the machine allows.
pub fn raise_open_files_limit() {
    turnhouse::startup::raise_open_files_limit().expect("the open-files limit can be raised");
}
