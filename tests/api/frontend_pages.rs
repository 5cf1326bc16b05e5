//! A game's own page, in one document: served sandboxed per version, and refused with nothing
//! stored when it or its example breaks the rules.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::frontends::header;
use crate::helpers::{assert_problem, example, unique, TestApp, TestPlayer};

async fn put_game(app: &TestApp, author: &TestPlayer, id: &str, body: Value) -> reqwest::Response {
    app.client
        .put(format!("{}/games/{id}", app.address))
        .bearer_auth(&author.token)
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_game_ships_its_own_page_which_is_served_sandboxed_per_version() {
    let app = TestApp::spawn().await;
    let author = app.register(&unique("author")).await;
    let page = example("frontends/tictactoe.html");
    let hooks = example("tictactoe.js");
    let first = put_game(
        &app,
        &author,
        "c4",
        json!({"source": hooks, "frontend": page, "moveExample": {"x": 1, "y": 1}}),
    )
    .await;
    assert_eq!(first.status(), StatusCode::CREATED);
    let first: Value = first.json().await.unwrap();
    assert_eq!(first["hasFrontend"], true);
    assert_eq!(first["moveExample"], json!({"x": 1, "y": 1}));

    let served = app.get("/games/c4/frontend?version=1").await;
    assert_eq!(served.status(), StatusCode::OK);
    let headers = served.headers().clone();
    assert_eq!(
        header(&headers, "content-security-policy"),
        Some(
            "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; \
             style-src 'unsafe-inline'; img-src data:; font-src data:; connect-src 'none'"
        )
    );
    assert_eq!(header(&headers, "x-content-type-options"), Some("nosniff"));
    assert_eq!(
        header(&headers, "content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(header(&headers, "etag"), Some("\"1\""));
    assert_eq!(served.text().await.unwrap(), page);

    // Version 2 changes only the page: the hooks are the first version's, byte for byte.
    let second = put_game(
        &app,
        &author,
        "c4",
        json!({"frontend": "<!doctype html><p>v2</p>"}),
    )
    .await;
    assert_eq!(second.status(), StatusCode::OK);
    let second: Value = second.json().await.unwrap();
    assert_eq!(second["version"], 2);
    assert_eq!(second["sha256"], first["sha256"]);
    assert_eq!(second["moveExample"], json!({"x": 1, "y": 1}), "kept");
    let source = app.get("/games/c4/source?version=2").await;
    assert_eq!(source.text().await.unwrap(), hooks);
    let latest = app.get("/games/c4/frontend").await;
    assert_eq!(header(latest.headers(), "etag"), Some("\"2\""));
    assert_eq!(latest.text().await.unwrap(), "<!doctype html><p>v2</p>");
    // Rooms of it play as before.
    let (room, _, _) = app.started_game("c4").await;
    assert_eq!(app.room(&room).await["gameVersion"], 2);

    // Version 3 changes the hooks and keeps the page; version 4 removes page and example.
    let third = put_game(
        &app,
        &author,
        "c4",
        json!({"source": example("connect-four.js")}),
    )
    .await;
    let third: Value = third.json().await.unwrap();
    assert_eq!(third["hasFrontend"], true);
    assert_ne!(third["sha256"], first["sha256"]);
    let fourth = put_game(
        &app,
        &author,
        "c4",
        json!({"frontend": null, "moveExample": null}),
    )
    .await;
    let fourth: Value = fourth.json().await.unwrap();
    assert_eq!(
        (fourth["version"].clone(), fourth["hasFrontend"].clone()),
        (json!(4), json!(false))
    );
    assert_eq!(fourth["moveExample"], Value::Null);
    assert_problem(
        app.get("/games/c4/frontend").await,
        StatusCode::NOT_FOUND,
        "frontend_not_found",
    )
    .await;

    // Each version keeps what it was published with.
    let version_one = app.get_json("/games/c4?version=1").await;
    assert_eq!(version_one["hasFrontend"], true);
    assert_eq!(version_one["version"], 1);
    assert_eq!(
        app.get("/games/c4/frontend?version=1")
            .await
            .text()
            .await
            .unwrap(),
        page
    );
    assert_problem(
        app.get("/games/c4?version=9").await,
        StatusCode::NOT_FOUND,
        "game_version_not_found",
    )
    .await;
    assert_problem(
        app.get("/games/c4/frontend?version=9").await,
        StatusCode::NOT_FOUND,
        "game_version_not_found",
    )
    .await;
    assert_problem(
        app.get("/games/tictactoe/frontend").await,
        StatusCode::NOT_FOUND,
        "frontend_not_found",
    )
    .await;
    assert_problem(
        app.get("/games/nothing-here/frontend").await,
        StatusCode::NOT_FOUND,
        "game_not_found",
    )
    .await;
    // Built-in games give their own example move.
    let builtin = app.get_json("/games/tictactoe3d").await;
    assert_eq!(builtin["moveExample"], json!({"index": 13}));
    assert_eq!(builtin["hasFrontend"], false);
}

#[tokio::test]
async fn a_page_or_example_that_breaks_the_rules_is_refused_and_nothing_is_stored() {
    let app = TestApp::spawn().await;
    let author = app.register(&unique("author")).await;
    // A first version needs its hooks.
    let no_hooks = put_game(&app, &author, "pageonly", json!({"frontend": "<p>x</p>"})).await;
    assert_problem(
        no_hooks,
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_game_settings",
    )
    .await;
    let too_big = "x".repeat((1 << 20) + 1);
    let hooks = example("tictactoe.js");
    for (body, status, code) in [
        (
            json!({"source": hooks, "frontend": too_big}),
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
        ),
        (
            json!({"source": hooks, "frontend": "  "}),
            StatusCode::BAD_REQUEST,
            "invalid_body",
        ),
        (
            json!({"source": hooks, "frontend": 42}),
            StatusCode::BAD_REQUEST,
            "invalid_body",
        ),
        (
            json!({"source": hooks, "moveExample": "y".repeat(2000)}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_game_settings",
        ),
    ] {
        let refused = put_game(&app, &author, "pageonly", body).await;
        assert_problem(refused, status, code).await;
    }
    assert_problem(
        app.get("/games/pageonly").await,
        StatusCode::NOT_FOUND,
        "game_not_found",
    )
    .await;
}
