//! Every error a client can meet: its status, its stable code, and that nothing changed.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{assert_problem, unique, TestApp};

#[tokio::test]
async fn malformed_and_misshapen_bodies_are_400() {
    let app = TestApp::spawn().await;
    let x = app.register(&unique("x")).await;
    let raw = |body: &'static str| {
        app.client
            .post(format!("{}/rooms", app.address))
            .bearer_auth(&x.token)
            .body(body)
            .send()
    };
    assert_problem(
        raw("{not json").await.unwrap(),
        StatusCode::BAD_REQUEST,
        "malformed_json",
    )
    .await;
    assert_problem(
        raw("").await.unwrap(),
        StatusCode::BAD_REQUEST,
        "malformed_json",
    )
    .await;
    assert_problem(
        raw("[1, 2]").await.unwrap(),
        StatusCode::BAD_REQUEST,
        "invalid_body",
    )
    .await;
    assert_problem(
        raw(r#"{"gmae": "tictactoe"}"#).await.unwrap(),
        StatusCode::BAD_REQUEST,
        "invalid_body",
    )
    .await;
    assert_problem(
        raw(r#"{"game": 7}"#).await.unwrap(),
        StatusCode::BAD_REQUEST,
        "invalid_body",
    )
    .await;
    let players = app
        .post(
            "/players",
            None,
            Some(&json!({"username": "ok_name", "extra": 1})),
        )
        .await;
    assert_problem(players, StatusCode::BAD_REQUEST, "invalid_body").await;
    // serde would read a struct from an array; the schema says object, and so does the server.
    for not_an_object in [json!([null]), json!(["alice"]), json!(3)] {
        let players = app.post("/players", None, Some(&not_an_object)).await;
        assert_problem(players, StatusCode::BAD_REQUEST, "invalid_body").await;
    }

    let (room, x, _) = app.started_tictactoe().await;
    let response = app
        .client
        .post(format!("{}/rooms/{room}/moves", app.address))
        .bearer_auth(&x.token)
        .body("{\"x\": 1,")
        .send()
        .await
        .unwrap();
    assert_problem(response, StatusCode::BAD_REQUEST, "malformed_json").await;
    assert_eq!(app.room(&room).await["version"], 3, "nothing changed");

    for query in [
        "limit=0",
        "limit=abc",
        "joinable=maybe",
        "cursor=-4",
        "colour=red",
    ] {
        let response = app.get(&format!("/rooms?{query}")).await;
        assert_problem(response, StatusCode::BAD_REQUEST, "invalid_query").await;
    }
    let response = app.get(&format!("/rooms/{room}/events?after=-1")).await;
    assert_problem(response, StatusCode::BAD_REQUEST, "invalid_query").await;

    // If-Match as RFC 9110 reads it: not a list of entity tags is a 400; tags that cannot
    // match (weak ones, ones that are no version) a 412; `*` or a list holding the current
    // version applies the move.
    let pinned = |value: &'static str| {
        app.client
            .post(format!("{}/rooms/{room}/moves", app.address))
            .bearer_auth(&x.token)
            .header("If-Match", value)
            .body(json!({"x": 1, "y": 1}).to_string())
            .send()
    };
    for malformed in ["three", "3", "\"3", "\"3\" \"4\""] {
        let response = pinned(malformed).await.unwrap();
        assert_problem(response, StatusCode::BAD_REQUEST, "invalid_header").await;
    }
    for unmatched in ["\"three\"", "\"\"", "W/\"3\"", "\"1\", \"2\"", "\"03\""] {
        let response = pinned(unmatched).await.unwrap();
        let problem = assert_problem(
            response,
            StatusCode::PRECONDITION_FAILED,
            "version_mismatch",
        )
        .await;
        assert_eq!(problem["currentVersion"], 3);
    }
    assert_eq!(app.room(&room).await["version"], 3, "nothing changed");
    let response = pinned("\"2\", W/\"3\", \"3\"").await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(app.room(&room).await["version"], 4);
}

#[tokio::test]
async fn missing_or_bad_tokens_are_401() {
    let app = TestApp::spawn().await;
    let x = app.register(&unique("x")).await;
    let body = json!({"game": "tictactoe"});
    assert_problem(
        app.post("/rooms", None, Some(&body)).await,
        StatusCode::UNAUTHORIZED,
        "missing_token",
    )
    .await;
    let forged = format!("{}.{}", x.id, "0".repeat(64));
    for token in ["garbage", forged.as_str()] {
        let response = app.post("/rooms", Some(token), Some(&body)).await;
        assert_problem(response, StatusCode::UNAUTHORIZED, "invalid_token").await;
    }
    let basic = app
        .client
        .post(format!("{}/rooms", app.address))
        .header("Authorization", "Basic dXNlcjpwYXNz")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_problem(basic, StatusCode::UNAUTHORIZED, "invalid_token").await;
    let rooms = app.get_json("/rooms").await;
    assert_eq!(rooms["rooms"], json!([]), "no room was created");
}

#[tokio::test]
async fn spectators_cannot_move_or_quit() {
    let app = TestApp::spawn().await;
    let (room, _, _) = app.started_tictactoe().await;
    let watcher = app.register(&unique("watcher")).await;
    let response = app.play(&watcher, &room, json!({"x": 0, "y": 0})).await;
    assert_problem(response, StatusCode::FORBIDDEN, "not_a_player").await;
    assert_problem(
        app.quit(&watcher, &room).await,
        StatusCode::FORBIDDEN,
        "not_a_player",
    )
    .await;
    // Anyone can watch.
    assert_eq!(app.room(&room).await["version"], 3);
}

#[tokio::test]
async fn unknown_rooms_games_and_routes_are_404() {
    let app = TestApp::spawn().await;
    let x = app.register(&unique("x")).await;
    let unknown = "0123456789abcdef0123456789abcdef";
    assert_problem(
        app.get(&format!("/rooms/{unknown}")).await,
        StatusCode::NOT_FOUND,
        "room_not_found",
    )
    .await;
    assert_problem(
        app.get("/rooms/not-an-id").await,
        StatusCode::NOT_FOUND,
        "room_not_found",
    )
    .await;
    assert_problem(
        app.join(&x, unknown).await,
        StatusCode::NOT_FOUND,
        "room_not_found",
    )
    .await;
    assert_problem(
        app.get(&format!("/rooms/{unknown}/events")).await,
        StatusCode::NOT_FOUND,
        "room_not_found",
    )
    .await;
    let chess = app
        .post("/rooms", Some(&x.token), Some(&json!({"game": "chess"})))
        .await;
    assert_problem(chess, StatusCode::NOT_FOUND, "game_not_found").await;
    assert_problem(
        app.get("/rooms?game=chess").await,
        StatusCode::NOT_FOUND,
        "game_not_found",
    )
    .await;
    assert_problem(
        app.get("/nowhere").await,
        StatusCode::NOT_FOUND,
        "route_not_found",
    )
    .await;
    let delete = app.request(Method::DELETE, "/rooms", None, None).await;
    assert_eq!(delete.headers()["allow"], "POST, GET, HEAD, OPTIONS");
    assert_problem(delete, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed").await;
    let trace = app
        .request(
            Method::TRACE,
            "/rooms/00000000000000000000000000000000/quit",
            None,
            None,
        )
        .await;
    assert_eq!(trace.headers()["allow"], "POST, OPTIONS");
    assert_problem(trace, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed").await;
    let head = app.request(Method::HEAD, "/healthz", None, None).await;
    assert_eq!(head.status(), StatusCode::OK, "every GET answers HEAD");
    // An empty cursor is the first page, as a form that left it blank would send.
    let first = app.get("/rooms?cursor=").await;
    assert_eq!(first.status(), StatusCode::OK);
}

#[tokio::test]
async fn conflicts_are_409() {
    let app = TestApp::spawn().await;
    let (room, x, o) = app.started_tictactoe().await;
    assert_problem(
        app.join(&x, &room).await,
        StatusCode::CONFLICT,
        "already_a_player",
    )
    .await;
    let third = app.register(&unique("third")).await;
    assert_problem(
        app.join(&third, &room).await,
        StatusCode::CONFLICT,
        "room_not_joinable",
    )
    .await;

    for (turn, (row, col)) in [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)].iter().enumerate() {
        let player = if turn % 2 == 0 { &x } else { &o };
        app.play_ok(player, &room, json!({"x": row, "y": col}))
            .await;
    }
    let late = app.play(&o, &room, json!({"x": 2, "y": 2})).await;
    assert_problem(late, StatusCode::CONFLICT, "room_finished").await;
    assert_problem(
        app.join(&third, &room).await,
        StatusCode::CONFLICT,
        "room_finished",
    )
    .await;
    assert_eq!(app.room(&room).await["version"], 8, "nothing changed");
}

#[tokio::test]
async fn stale_pinned_versions_are_412_and_current_ones_apply() {
    let app = TestApp::spawn().await;
    let (room, x, o) = app.started_tictactoe().await;
    let pinned = |player: &crate::helpers::TestPlayer, version: &str, mv: Value| {
        app.client
            .post(format!("{}/rooms/{room}/moves", app.address))
            .bearer_auth(&player.token)
            .header("If-Match", version)
            .body(mv.to_string())
            .send()
    };
    let ok = pinned(&x, "\"3\"", json!({"x": 1, "y": 1})).await.unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(ok.headers()["etag"], "\"4\"");
    let stale = pinned(&o, "\"3\"", json!({"x": 0, "y": 0})).await.unwrap();
    let problem = assert_problem(stale, StatusCode::PRECONDITION_FAILED, "version_mismatch").await;
    assert_eq!(problem["currentVersion"], 4);
    assert_eq!(
        app.room(&room).await["state"]["board"][0][0],
        Value::Null,
        "the stale move was not applied"
    );
}

#[tokio::test]
async fn etags_answer_304_when_nothing_changed() {
    let app = TestApp::spawn().await;
    let (room, x, _) = app.started_tictactoe().await;
    let first = app.get(&format!("/rooms/{room}")).await;
    let tag = first.headers()["etag"].to_str().unwrap().to_owned();
    assert_eq!(tag, "\"3\"");
    let conditional = |tag: String| {
        app.client
            .get(format!("{}/rooms/{room}", app.address))
            .header("If-None-Match", tag)
            .send()
    };
    assert_eq!(
        conditional(tag.clone()).await.unwrap().status(),
        StatusCode::NOT_MODIFIED
    );
    app.play_ok(&x, &room, json!({"x": 0, "y": 0})).await;
    let changed = conditional(tag).await.unwrap();
    assert_eq!(changed.status(), StatusCode::OK);
    assert_eq!(changed.headers()["etag"], "\"4\"");
}

#[tokio::test]
async fn oversized_bodies_are_413() {
    let app = TestApp::spawn().await;
    let x = app.register(&unique("x")).await;
    let huge = json!({"game": "tictactoe", "pad": "x".repeat(turnhouse::api::BODY_LIMIT)});
    let response = app.post("/rooms", Some(&x.token), Some(&huge)).await;
    assert_problem(response, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large").await;
    assert_eq!(app.get_json("/rooms").await["rooms"], json!([]));
}

#[tokio::test]
async fn the_game_refusing_a_move_is_422_with_its_reason() {
    let app = TestApp::spawn().await;
    let x = app.register(&unique("x")).await;
    let room = app.create_room(&x, json!({"game": "tictactoe"})).await;
    let id = room["id"].as_str().unwrap().to_owned();
    let early = app.play(&x, &id, json!({"x": 0, "y": 0})).await;
    let problem = assert_problem(early, StatusCode::UNPROCESSABLE_ENTITY, "game_refused").await;
    assert_eq!(problem["reason"], "game_not_started");

    let o = app.register(&unique("o")).await;
    app.join(&o, &id).await;
    let cases = [
        (&o, json!({"x": 0, "y": 0}), "not_your_turn"),
        (&x, json!({"x": 3, "y": 0}), "off_board"),
        (&x, json!({"x": "a", "y": 0}), "invalid_move"),
        (&x, json!("center"), "invalid_move"),
    ];
    for (player, mv, reason) in cases {
        let response = app.play(player, &id, mv).await;
        let problem =
            assert_problem(response, StatusCode::UNPROCESSABLE_ENTITY, "game_refused").await;
        assert_eq!(problem["reason"], reason);
    }
    app.play_ok(&x, &id, json!({"x": 1, "y": 1})).await;
    let taken = app.play(&o, &id, json!({"x": 1, "y": 1})).await;
    let problem = assert_problem(taken, StatusCode::UNPROCESSABLE_ENTITY, "game_refused").await;
    assert_eq!(problem["reason"], "cell_taken");
    assert_eq!(problem["detail"], "that cell is already taken");
    assert_eq!(
        app.room(&id).await["version"],
        4,
        "only the one legal move counted"
    );
}
