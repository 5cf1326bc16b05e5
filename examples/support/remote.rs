//! The few calls the stream and chat benchmarks make of a server that may run in another
//! process: JSON in and out, a bearer token, any failure a panic (a benchmark has no use for a
//! half-answered request).

use serde_json::{json, Value};

pub struct Api {
    base: String,
    client: reqwest::Client,
}

impl Api {
    /// A client of the server at `base` (`http://host:port`).
    pub fn new(base: String) -> Self {
        Self {
            base,
            client: reqwest::Client::new(),
        }
    }

    /// Sends `body` (none when null) with `method` to `path`, signed in with `token` (none
    /// when empty); the answer, which must be a success.
    pub async fn send(&self, method: &str, path: &str, token: &str, body: Value) -> Value {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if !token.is_empty() {
            request = request.bearer_auth(token);
        }
        if !body.is_null() {
            request = request.body(body.to_string());
        }
        let response = request.send().await.expect("the server answers");
        assert!(
            response.status().is_success(),
            "{path}: {}",
            response.status()
        );
        response.json().await.expect("JSON")
    }

    /// A new player's token.
    pub async fn player(&self) -> String {
        let name = format!("bench-{}", rand::random::<u32>());
        let player = self
            .send("POST", "/players", "", json!({"username": name}))
            .await;
        player["token"].as_str().unwrap().to_owned()
    }
}
