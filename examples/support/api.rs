//! A small client of the API for the benchmarks that start a server in their own process:
//! players, uploads, whole games of tic-tac-toe, and runaway moves of the `spinner` game.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[derive(Clone)]
pub struct Api {
    pub base: String,
    client: reqwest::Client,
    pub stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Api {
    pub fn new(base: String) -> Self {
        Self {
            base,
            client: reqwest::Client::new(),
            stop: Default::default(),
        }
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: String,
    ) -> Value {
        let response = self
            .client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(token)
            .body(body)
            .send()
            .await
            .expect("the server answers");
        response.json().await.expect("JSON")
    }

    pub async fn player(&self) -> String {
        let created: Value = self
            .client
            .post(format!("{}/players", self.base))
            .body("{}")
            .send()
            .await
            .expect("the server answers")
            .json()
            .await
            .expect("JSON");
        created["token"].as_str().unwrap().to_owned()
    }

    pub async fn put_game(&self, token: &str, id: &str, source: &str) {
        let response = self
            .client
            .put(format!("{}/games/{id}", self.base))
            .bearer_auth(token)
            .header("content-type", "application/javascript")
            .body(source.to_owned())
            .send()
            .await
            .expect("the server answers");
        assert!(
            response.status().is_success(),
            "{id}: {}",
            response.status()
        );
    }

    /// One whole game (X wins in five moves); the latency of each move.
    pub async fn game(&self, game: &str) -> Vec<Duration> {
        let (x, o) = (self.player().await, self.player().await);
        let room = self
            .send(
                reqwest::Method::POST,
                "/rooms",
                &x,
                json!({"game": game}).to_string(),
            )
            .await;
        let id = room["id"].as_str().unwrap().to_owned();
        self.send(
            reqwest::Method::POST,
            &format!("/rooms/{id}/join"),
            &o,
            String::new(),
        )
        .await;
        let mut took = Vec::new();
        for (turn, (row, col)) in [(0, 0), (1, 1), (0, 1), (2, 2), (0, 2)].iter().enumerate() {
            let token = if turn % 2 == 0 { &x } else { &o };
            let started = Instant::now();
            let after = self
                .send(
                    reqwest::Method::POST,
                    &format!("/rooms/{id}/moves"),
                    token,
                    json!({"x": row, "y": col}).to_string(),
                )
                .await;
            took.push(started.elapsed());
            assert!(after["version"].is_i64(), "{after}");
        }
        took
    }

    pub async fn games(&self, game: &str, count: usize) -> Vec<Duration> {
        let mut all = Vec::new();
        for _ in 0..count {
            all.extend(self.game(game).await);
        }
        all
    }

    /// Sends runaway moves one after another until told to stop; how long each took.
    pub async fn spin_until_stopped(&self, author: &str) -> Vec<Duration> {
        let room = self
            .send(
                reqwest::Method::POST,
                "/rooms",
                author,
                json!({"game": "spinner"}).to_string(),
            )
            .await;
        let path = format!("/rooms/{}/moves", room["id"].as_str().unwrap());
        let mut took = Vec::new();
        while !self.stop.load(std::sync::atomic::Ordering::Relaxed) {
            let started = Instant::now();
            let answer = self
                .send(reqwest::Method::POST, &path, author, "{}".into())
                .await;
            took.push(started.elapsed());
            assert_eq!(answer["code"], "hook_timeout", "{answer}");
        }
        took
    }
}
