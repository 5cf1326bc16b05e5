//! Racing clients: every acknowledged update is applied exactly once, versions have no gaps and
//! no duplicates, and nobody gets a 500.

use std::collections::HashSet;

use futures::future::join_all;
use rand::seq::IndexedRandom;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{unique, TestApp};
use crate::test_games;

const CLIENTS: usize = 32;

fn assert_gapless(events: &[Value]) {
    let versions: Vec<i64> = events
        .iter()
        .map(|e| e["version"].as_i64().unwrap())
        .collect();
    let expected: Vec<i64> = (1..=versions.len() as i64).collect();
    assert_eq!(
        versions, expected,
        "one event per version, no gaps, no duplicates"
    );
}

/// 32 players each add 5 to one counter at the same time: every acknowledged move counts once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_moves_on_one_room_are_never_lost_or_doubled() {
    let app = TestApp::spawn_with(test_games::registry()).await;
    let (room, players) = app.counter_room(CLIENTS).await;
    let start_version = app.room(&room).await["version"].as_i64().unwrap();

    let tasks = players.iter().map(|p| {
        let (app, room) = (&app, &room);
        async move {
            let mut statuses = Vec::new();
            let mut versions = Vec::new();
            for _ in 0..5 {
                let response = app.play(p, room, json!({})).await;
                let status = response.status();
                if status == StatusCode::OK {
                    versions.push(
                        response.json::<Value>().await.unwrap()["version"]
                            .as_i64()
                            .unwrap(),
                    );
                }
                statuses.push(status);
            }
            (statuses, versions)
        }
    });
    let results = join_all(tasks).await;
    let statuses: Vec<StatusCode> = results.iter().flat_map(|(s, _)| s.clone()).collect();
    assert!(
        statuses.iter().all(|s| *s == StatusCode::OK),
        "{statuses:?}"
    );
    let acknowledged: Vec<i64> = results.iter().flat_map(|(_, v)| v.clone()).collect();
    let distinct: HashSet<i64> = acknowledged.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        acknowledged.len(),
        "no two moves got the same version"
    );
    assert_eq!(acknowledged.len(), CLIENTS * 5);

    let final_room = app.room(&room).await;
    assert_eq!(final_room["state"]["count"], acknowledged.len() as i64);
    assert_eq!(
        final_room["version"],
        start_version + acknowledged.len() as i64
    );
    let events = app.events(&room).await;
    assert_gapless(&events);
    let moves = events.iter().filter(|e| e["kind"] == "move").count();
    assert_eq!(moves, acknowledged.len());
}

/// 32 clients (16 holding each player's token) hammer one tic-tac-toe game with random moves
/// until it ends: the rules still hold and the history is exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_clients_play_one_consistent_game() {
    let app = TestApp::spawn().await;
    let (room, x, o) = app.started_tictactoe().await;
    let tasks = (0..CLIENTS).map(|client| {
        let (app, room) = (&app, &room);
        let player = if client % 2 == 0 {
            x.clone()
        } else {
            o.clone()
        };
        async move {
            let mut accepted = 0;
            let mut statuses = Vec::new();
            for _ in 0..30 {
                let cells: Vec<(u8, u8)> =
                    (0..3).flat_map(|r| (0..3).map(move |c| (r, c))).collect();
                let (row, col) = *cells.choose(&mut rand::rng()).unwrap();
                let response = app.play(&player, room, json!({"x": row, "y": col})).await;
                let status = response.status();
                statuses.push(status);
                if status == StatusCode::OK {
                    accepted += 1;
                }
                if status == StatusCode::CONFLICT {
                    break; // room_finished
                }
            }
            (accepted, statuses)
        }
    });
    let results = join_all(tasks).await;
    for (_, statuses) in &results {
        for status in statuses {
            assert!(
                [
                    StatusCode::OK,
                    StatusCode::UNPROCESSABLE_ENTITY,
                    StatusCode::CONFLICT
                ]
                .contains(status),
                "unexpected {status}"
            );
        }
    }
    let accepted: usize = results.iter().map(|(a, _)| a).sum();
    let events = app.events(&room).await;
    assert_gapless(&events);
    let final_room = app.room(&room).await;
    let moves = events.iter().filter(|e| e["kind"] == "move").count();
    assert_eq!(moves, accepted);
    assert_eq!(final_room["state"]["moveCount"], accepted as i64);
    let marks = final_room["state"]["board"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap().clone());
    assert_eq!(marks.filter(|m| !m.is_null()).count(), accepted);
}

/// Two server instances on one database file, 32 clients split between them: the version
/// compare-and-set (not the in-process queue) is all that keeps them apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_racing_on_one_room_lose_nothing() {
    let first = TestApp::spawn_with(test_games::registry()).await;
    let second = first.spawn_beside(test_games::registry()).await;
    let owner = first.register(&unique("owner")).await;
    let room = first.create_room(&owner, json!({"game": "counter"})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    let mut players = vec![owner];
    for _ in 1..CLIENTS {
        let p = first.register(&unique("racer")).await;
        assert_eq!(second.join(&p, &room).await.status(), StatusCode::OK);
        players.push(p);
    }
    let start_version = first.room(&room).await["version"].as_i64().unwrap();

    let tasks = players.iter().enumerate().map(|(i, p)| {
        let (app, room) = (if i % 2 == 0 { &first } else { &second }, &room);
        async move {
            let mut outcome = Vec::new();
            for _ in 0..5 {
                let response = app.play(p, room, json!({})).await;
                let status = response.status();
                let body: Value = response.json().await.unwrap();
                outcome.push((status, body["version"].as_i64()));
            }
            outcome
        }
    });
    let outcomes: Vec<(StatusCode, Option<i64>)> =
        join_all(tasks).await.into_iter().flatten().collect();
    for (status, _) in &outcomes {
        // A move either lands or is answered "try again"; never a 500.
        assert!(
            [StatusCode::OK, StatusCode::SERVICE_UNAVAILABLE].contains(status),
            "{status}"
        );
    }
    let acknowledged: Vec<i64> = outcomes
        .iter()
        .filter(|(s, _)| *s == StatusCode::OK)
        .filter_map(|(_, v)| *v)
        .collect();
    let distinct: HashSet<i64> = acknowledged.iter().copied().collect();
    assert_eq!(distinct.len(), acknowledged.len());
    assert!(!acknowledged.is_empty());
    let final_room = second.room(&room).await;
    assert_eq!(final_room["state"]["count"], acknowledged.len() as i64);
    assert_eq!(
        final_room["version"],
        start_version + acknowledged.len() as i64
    );
    let events = first.events(&room).await;
    assert_gapless(&events);
}
