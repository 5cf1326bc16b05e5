//! `GET /metrics`, and serving rooms from memory only while no other server shares the file.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::{unique, TestApp};
use crate::sse_client::EventStream;

/// The value of the sample `name{labels}` (`name` alone when it has no labels).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|value| value.parse().ok())
}

async fn metrics(app: &TestApp) -> String {
    let response = app.get("/metrics").await;
    assert_eq!(response.status(), StatusCode::OK);
    let kind = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
    response.text().await.unwrap()
}

#[tokio::test]
async fn metrics_count_requests_commits_streams_and_cached_rooms() {
    // A closed stream is noticed when the next keep-alive cannot be written.
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.stream_keepalive_secs = 1
    })
    .await;
    let (room, x, o) = app.started_tictactoe().await;
    for (player, row, col) in [(&x, 0, 0), (&o, 1, 0), (&x, 0, 1)] {
        app.play_ok(player, &room, json!({"x": row, "y": col}))
            .await;
    }
    assert_eq!(
        app.play(&o, &room, json!({"x": 0, "y": 0})).await.status(),
        StatusCode::UNPROCESSABLE_ENTITY
    );
    app.get("/no/such/route").await;
    let stream = EventStream::open(
        &reqwest::Client::new(),
        &format!("{}/rooms/{room}/stream", app.address),
        None,
    )
    .await;

    let text = metrics(&app).await;
    let moves = r#"route="/rooms/{id}/moves""#;
    assert_eq!(
        sample(
            &text,
            &format!(
                r#"turnhouse_http_request_duration_seconds_count{{method="POST",{moves},status="200"}}"#
            )
        ),
        Some(3.0),
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            &format!(
                r#"turnhouse_http_request_duration_seconds_count{{method="POST",{moves},status="422"}}"#
            )
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &text,
            r#"turnhouse_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}"#
        ),
        Some(1.0),
        "a path nobody serves is one series, not one per path"
    );
    // Two sign-ups, the room (created and joined) and three moves, each committed.
    let writes = sample(&text, "turnhouse_store_writes_total").unwrap();
    assert!(writes >= 7.0, "{text}");
    let commits = sample(&text, "turnhouse_store_commits_total").unwrap();
    assert!((1.0..=writes).contains(&commits));
    assert_eq!(
        sample(&text, "turnhouse_store_batch_writes_count"),
        Some(commits)
    );
    assert_eq!(
        sample(&text, r#"turnhouse_store_commit_seconds_bucket{le="+Inf"}"#),
        Some(commits)
    );
    // On a SQLite file every commit is answered after a sync of the log, one sync for all the
    // commits before it; PostgreSQL's commits are durable when they return.
    let syncs = sample(&text, "turnhouse_store_syncs_total").unwrap();
    match crate::databases::on_postgres() {
        true => assert_eq!(syncs, 0.0),
        false => assert!(
            (1.0..=commits).contains(&syncs),
            "{syncs} syncs, {commits} commits"
        ),
    }
    assert_eq!(
        sample(&text, r#"turnhouse_store_sync_seconds_bucket{le="+Inf"}"#),
        Some(syncs)
    );
    assert_eq!(sample(&text, "turnhouse_streams_open"), Some(1.0));
    assert_eq!(sample(&text, "turnhouse_rooms_watched"), Some(1.0));
    assert!(sample(&text, "turnhouse_rooms_cached").unwrap() >= 1.0);

    drop(stream);
    let mut open = Some(1.0);
    for _ in 0..500 {
        open = sample(&metrics(&app).await, "turnhouse_streams_open");
        if open == Some(0.0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(open, Some(0.0), "a closed stream is no longer counted");
}

/// Two servers on one file: each reads rooms from the database while the other is there, so a
/// room changed by one is current on the other at once.
#[tokio::test]
async fn a_server_sharing_its_file_serves_rooms_the_other_changed() {
    let first = TestApp::spawn().await;
    let (room, x, o) = first.started_tictactoe().await;
    first.play_ok(&x, &room, json!({"x": 0, "y": 0})).await;
    // Now in the first server's memory.
    let version = first.room(&room).await["version"].as_i64().unwrap();

    let second = first.spawn_beside(turnhouse::games::builtin()).await;
    second.play_ok(&o, &room, json!({"x": 1, "y": 1})).await;
    let seen = first.room(&room).await;
    assert_eq!(seen["version"], version + 1, "at once, not eventually");
    assert_eq!(seen["state"]["plrToMoveIndex"], 0, "X's turn again");
    first.play_ok(&x, &room, json!({"x": 0, "y": 1})).await;
    assert_eq!(second.room(&room).await["version"], version + 2);
    let mine = second.register(&unique("late")).await;
    let created = second
        .create_room(&mine, json!({"game": "tictactoe"}))
        .await;
    assert_eq!(
        first.room(created["id"].as_str().unwrap()).await["version"],
        created["version"]
    );
}
