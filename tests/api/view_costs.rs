//! What views cost: a version watched by many is one view hook call per distinct viewer, counted
//! on `GET /metrics`.

use serde_json::{json, Value};

use crate::helpers::{example, unique, TestApp};
use crate::sse_client::EventStream;

/// The value of a counter on `GET /metrics`.
async fn metric(app: &TestApp, name: &str) -> f64 {
    app.metric(name).await.unwrap_or_else(|| panic!("{name}"))
}

/// One version of a hosted game with a view hook, watched by a hundred streams (two players
/// and 98 watchers): the view hook runs once per distinct viewer, not once per stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_watched_by_a_hundred_costs_one_view_per_viewer() {
    let app = TestApp::spawn().await;
    let game = "secret-words";
    app.publish(game, &example("secret-words.js")).await;
    let alice = app.register(&unique("alice")).await;
    let bob = app.register(&unique("bob")).await;
    let room = app.create_room(&alice, json!({"game": game})).await;
    let id = room["id"].as_str().unwrap().to_owned();
    let joined: Value = app.join(&bob, &id).await.json().await.unwrap();
    let version = joined["version"].as_i64().unwrap();
    let mut streams = Vec::new();
    for n in 0..100 {
        let token = match n {
            0 => format!("&access_token={}", alice.token),
            1 => format!("&access_token={}", bob.token),
            _ => String::new(),
        };
        let url = format!("{}/rooms/{id}/stream?after={version}{token}", app.address);
        streams.push(EventStream::open(&app.client, &url, None).await);
    }
    let before = metric(&app, "turnhouse_view_hook_calls_total").await;
    let said = app.play_ok(&alice, &id, json!({"say": "hello all"})).await;
    let next = said["version"].as_i64().unwrap();
    for stream in &mut streams {
        let seen = stream.versions_through(next).await;
        assert_eq!(seen.last().unwrap()["version"], next);
    }
    let calls = metric(&app, "turnhouse_view_hook_calls_total").await - before;
    // Alice's view (her answer and her stream), Bob's, and one for every watcher.
    assert!(
        calls <= 3.0,
        "{calls} view hook calls for one version and 100 streams"
    );
}
