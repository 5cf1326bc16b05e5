//! The one vocabulary the tests drive the API with: [`Api`], a typed client of one server's
//! address, whether that server runs in the test's process (`helpers::TestApp`) or is the real
//! binary (`real_server::Server`); both deref to it. The benchmarks that start a server build
//! on it too (`examples/support/api.rs`), so it stands alone.

use reqwest::{Method, Response, StatusCode};
use serde_json::{json, Value};

/// A client of one server.
#[derive(Clone)]
pub struct Api {
    /// `http://127.0.0.1:<port>`.
    pub address: String,
    pub client: reqwest::Client,
}

#[derive(Debug, Clone)]
pub struct TestPlayer {
    pub id: String,
    pub username: String,
    pub token: String,
}

impl Api {
    pub fn new(address: String) -> Self {
        Self {
            address,
            client: reqwest::Client::new(),
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
        let build = || {
            let mut request =
                (self.client).request(method.clone(), format!("{}{path}", self.address));
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            if let Some(body) = body {
                request = request.body(body.to_string());
            }
            request
        };
        match build().send().await {
            // A kept-alive connection the server closed as idle just as this request went out
            // on it: a read is sent again, on a new connection, as any HTTP client may (RFC 9110
            // §9.2.2). Anything else, or a second failure, is the server's fault.
            Err(err) if method == Method::GET && (err.is_request() || err.is_connect()) => {
                build().send().await.expect("the server answers")
            }
            sent => sent.expect("the server answers"),
        }
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

    /// The same server through a client that gives up on an answer after `timeout` (for
    /// servers a test kills, freezes or starves).
    pub fn with_timeout(&self, timeout: std::time::Duration) -> Self {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .pool_max_idle_per_host(128)
            .build()
            .expect("a client");
        Self {
            client,
            ..self.clone()
        }
    }

    /// A POST whatever its answer: the status and the JSON body (`null` for none).
    pub async fn post_value(
        &self,
        path: &str,
        token: Option<&str>,
        body: Value,
    ) -> (StatusCode, Value) {
        let response = self.post(path, token, Some(&body)).await;
        let status = response.status();
        let text = response.text().await.expect("a body");
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// A GET's JSON body whatever its status.
    pub async fn get_value(&self, path: &str) -> Value {
        self.get(path).await.json().await.expect("a JSON body")
    }

    /// A GET's JSON body as `player` reads it, whatever its status.
    pub async fn get_value_as(&self, path: &str, player: &TestPlayer) -> Value {
        self.request(Method::GET, path, Some(&player.token), None)
            .await
            .json()
            .await
            .expect("a JSON body")
    }

    /// A new player with a name of its own.
    pub async fn new_player(&self) -> TestPlayer {
        self.register(&unique("player")).await
    }
}

/// A name no other test in this run uses.
pub fn unique(prefix: &str) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("{prefix}_{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The text of `examples/<file>`.
pub fn example(file: &str) -> String {
    std::fs::read_to_string(format!("{}/examples/{file}", env!("CARGO_MANIFEST_DIR")))
        .expect("the example exists")
}
