//! The benchmarks that start a server in their own process drive it with the tests' own client
//! (`tests/api/client.rs`, the one vocabulary of the API), and add what only they need: whole
//! games of tic-tac-toe timed move by move, and runaway moves of the `spinner` game.
#![allow(dead_code)]

use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

#[path = "../../tests/api/client.rs"]
mod client;

pub use client::TestPlayer;

/// A client of one server, with a switch that stops the runaway moves.
#[derive(Clone)]
pub struct Api {
    pub http: client::Api,
    pub stop: Arc<AtomicBool>,
}

impl Deref for Api {
    type Target = client::Api;

    fn deref(&self) -> &client::Api {
        &self.http
    }
}

impl Api {
    pub fn new(address: String) -> Self {
        Self {
            http: client::Api::new(address),
            stop: Default::default(),
        }
    }

    /// One whole game (X wins in five moves); the latency of each move.
    pub async fn game(&self, game: &str) -> Vec<Duration> {
        let (x, o) = (self.new_player().await, self.new_player().await);
        let room = self.create_room(&x, json!({"game": game})).await;
        let id = room["id"].as_str().unwrap().to_owned();
        assert!(self.join(&o, &id).await.status().is_success());
        let mut took = Vec::new();
        for (turn, (row, col)) in [(0, 0), (1, 1), (0, 1), (2, 2), (0, 2)].iter().enumerate() {
            let player = if turn % 2 == 0 { &x } else { &o };
            let started = Instant::now();
            self.play_ok(player, &id, json!({"x": row, "y": col})).await;
            took.push(started.elapsed());
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
    pub async fn spin_until_stopped(&self, author: &TestPlayer) -> Vec<Duration> {
        let room = self.create_room(author, json!({"game": "spinner"})).await;
        let path = format!("/rooms/{}/moves", room["id"].as_str().unwrap());
        let mut took = Vec::new();
        while !self.stop.load(Ordering::Relaxed) {
            let started = Instant::now();
            let (_, answer) = self.post_value(&path, Some(&author.token), json!({})).await;
            took.push(started.elapsed());
            assert_eq!(answer["code"], "hook_timeout", "{answer}");
        }
        took
    }
}
