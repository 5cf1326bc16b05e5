use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_problem, unique, TestApp};

#[tokio::test]
async fn a_player_gets_an_id_and_a_token_once() {
    let app = TestApp::spawn().await;
    let name = unique("alice");
    let response = app
        .post("/players", None, Some(&json!({"username": name})))
        .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["username"], name.as_str());
    let token = body["token"].as_str().unwrap();
    // `<player id>.<session id>.<secret>`: 256 bits of secret.
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts[0], body["id"].as_str().unwrap());
    assert_eq!(parts[1], body["session"].as_str().unwrap());
    assert_eq!(parts[2].len(), 64);

    // Only a hash of the secret is stored, with its session.
    let stored: Vec<(String, String)> = stored_rows(
        &app,
        "SELECT p.username, s.token_hash FROM sessions s JOIN players p ON p.id = s.player_id",
    )
    .await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].1.len(), 64);
    assert!(!stored[0].1.contains(parts[2]));
}

#[tokio::test]
async fn usernames_are_generated_when_not_given() {
    let app = TestApp::spawn().await;
    let mut names = std::collections::HashSet::new();
    for body in [None, Some(json!({}))] {
        for _ in 0..5 {
            let response = app.post("/players", None, body.as_ref()).await;
            assert_eq!(response.status(), StatusCode::CREATED);
            let body: Value = response.json().await.unwrap();
            let name = body["username"].as_str().unwrap().to_owned();
            assert!(name.contains('_'), "adjective_animal: {name}");
            assert!(names.insert(name), "generated names are unique");
        }
    }
}

#[tokio::test]
async fn usernames_are_unique_and_well_formed() {
    let app = TestApp::spawn().await;
    let name = unique("bob");
    app.register(&name).await;
    let again = app
        .post("/players", None, Some(&json!({"username": name})))
        .await;
    assert_problem(again, StatusCode::CONFLICT, "username_taken").await;
    for bad in ["ab", "with space", "ünïcode", "a;drop"] {
        let response = app
            .post("/players", None, Some(&json!({"username": bad})))
            .await;
        assert_problem(response, StatusCode::BAD_REQUEST, "invalid_username").await;
    }
    let count: Vec<(String,)> =
        stored_rows(&app, "SELECT username FROM players WHERE bot IS NULL").await;
    assert_eq!(count.len(), 1, "refused registrations store nothing");
}

/// Rows of a query against the test's database, read directly.
pub async fn stored_rows<T>(app: &TestApp, sql: &'static str) -> Vec<T>
where
    T: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>
        + for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>
        + Send
        + Unpin,
{
    crate::databases::database_rows(&app.database, sql).await
}
