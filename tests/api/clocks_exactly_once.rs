//! Deadlines fire exactly once through a `kill -9` and across servers on one database: a
//! thousand rooms armed at once, each with exactly one `timeout` version afterwards.

use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::json;

use crate::client::Api;
use crate::clocks::{patient, timed};
use crate::databases::{database_rows, on_postgres};
use crate::helpers::TestApp;
use crate::real_server::Server;

/// `count` rooms of the timed game (through `api`), then each armed to fire `lead_ms` after
/// the last is created; returns the rooms and when they fire.
async fn armed_rooms(
    api: &Api,
    game: &str,
    count: usize,
    lead_ms: i64,
) -> (Vec<String>, DateTime<Utc>) {
    // A player per fifty rooms, each well within the per-player action limit.
    let mut rooms: Vec<(String, String)> = Vec::new();
    // Fifty at a time: the machine has two cores.
    for _ in 0..count.div_ceil(50) {
        let token = api.new_player().await.token;
        let batch = join_all((0..50.min(count - rooms.len())).map(|_| async {
            let (status, room) = api
                .post_value("/rooms", Some(&token), json!({"game": game}))
                .await;
            assert_eq!(status, StatusCode::CREATED, "{room}");
            (room["id"].as_str().unwrap().to_owned(), token.clone())
        }))
        .await;
        rooms.extend(batch);
    }
    let at = Utc::now() + chrono::TimeDelta::milliseconds(lead_ms);
    let text = turnhouse::domain::time::Timestamp::from(at).text();
    for chunk in rooms.chunks(50) {
        join_all(chunk.iter().map(|(id, token)| {
            let text = &text;
            async move {
                let path = format!("/rooms/{id}/moves");
                let (status, armed) = api
                    .post_value(&path, Some(token), json!({"at": text}))
                    .await;
                assert_eq!(status, StatusCode::OK, "{armed}");
            }
        }))
        .await;
    }
    let ids = rooms.into_iter().map(|(id, _)| id).collect();
    (ids, at)
}

/// Each room's count of `timeout` versions, read from the database, once every room has one
/// (or after 90 s).
async fn timeouts_per_room(database: &str, rooms: &[String]) -> Vec<i64> {
    let counts = || async {
        let rows: Vec<(String, i64)> = database_rows(
            database,
            "SELECT room_id, count(*) FROM room_events WHERE kind = 'timeout' GROUP BY room_id",
        )
        .await;
        let by_room: std::collections::HashMap<String, i64> = rows.into_iter().collect();
        rooms
            .iter()
            .map(|room| by_room.get(room).copied().unwrap_or(0))
            .collect::<Vec<i64>>()
    };
    for _ in 0..180 {
        if counts().await.iter().all(|&c| c >= 1) {
            // Any second firing would come within the rescan interval.
            tokio::time::sleep(Duration::from_millis(1500)).await;
            return counts().await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    counts().await
}

/// Rooms whose count is not exactly one: how many have none, and how many more than one.
fn not_once(counts: &[i64]) -> (usize, usize) {
    (
        counts.iter().filter(|&&c| c == 0).count(),
        counts.iter().filter(|&&c| c > 1).count(),
    )
}

async fn publish_to(api: &Api, game: &str) {
    let author = api.new_player().await;
    let response = api.upload(&author, game, &timed()).await;
    assert!(
        response.status().is_success(),
        "{}",
        response.text().await.unwrap()
    );
}

/// `kill -9` with 1,000 rooms whose deadlines are a second ahead (some fire before the kill,
/// the rest while the server is down): after a restart each room has exactly one timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadlines_fire_exactly_once_through_a_kill() {
    let dir = tempfile::tempdir().unwrap();
    let database = if on_postgres() {
        crate::databases::fresh_postgres().await
    } else {
        dir.path().join("clocks.db").display().to_string()
    };
    let patient = ["--hook-time-limit-ms", "1000"];
    let server = Server::start_with(&database, &patient);
    let game = "timed-kill";
    publish_to(&server, game).await;
    // A second ahead: arming the thousand takes about that long, so some fire before the kill
    // and the rest after.
    let (rooms, at) = armed_rooms(&server, game, 1000, 1000).await;
    tokio::time::sleep((at - Utc::now()).to_std().unwrap_or_default()).await;
    server.kill();
    let server = Server::start_with(&database, &patient);
    let counts = timeouts_per_room(&database, &rooms).await;
    assert_eq!(
        not_once(&counts),
        (0, 0),
        "rooms with no timeout, and with more than one"
    );
    server.kill();
}

/// Two servers on one SQLite file (three on PostgreSQL), 1,000 deadlines due while all of
/// them run: each fires exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadlines_fire_exactly_once_across_servers() {
    let first = TestApp::spawn_configured(turnhouse::games::builtin(), patient).await;
    let game = "timed-servers";
    first.publish(game, &timed()).await;
    let mut others = vec![
        first
            .spawn_beside_configured(turnhouse::games::builtin(), patient)
            .await,
    ];
    if on_postgres() {
        others.push(
            first
                .spawn_beside_configured(turnhouse::games::builtin(), patient)
                .await,
        );
    }
    let (rooms, _) = armed_rooms(&first, game, 1000, 1000).await;
    let counts = timeouts_per_room(&first.database, &rooms).await;
    assert_eq!(
        not_once(&counts),
        (0, 0),
        "rooms with no timeout, and with more than one"
    );
}
