//! Moderation: roles granted from the command line (with the server running), suspending and
//! renaming players, unpublishing games, closing rooms, who may publish, and the audit log
//! every admin action is kept in. Every admin route is refused to a player who is not one.

use std::process::Command;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::databases::{database_execute, database_rows};
use crate::helpers::{assert_problem, example, unique, TestApp, TestPlayer};
use crate::sessions::{ends_within, set_password, sign_in_with};
use crate::sse_client::EventStream;
use turnhouse::domain::roles::UploadPolicy;

/// `turnhouse admin ARGS…` on the server's database, as an operator at a shell runs it: its
/// exit status and what it printed.
fn admin_command(app: &TestApp, args: &[&str]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_turnhouse"))
        .args(["admin"])
        .args(args)
        .args(["--database", &app.database])
        .output()
        .expect("turnhouse runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// A game id of its own (ids take `-`, not `_`).
fn game_id(prefix: &str) -> String {
    unique(prefix).replace('_', "-")
}

/// A new player granted the admin role from the command line.
pub async fn new_admin(app: &TestApp) -> TestPlayer {
    let admin = app.register(&unique("admin")).await;
    let (ok, said) = admin_command(app, &["grant", &admin.username]);
    assert!(ok, "{said}");
    assert!(
        said.contains(&format!("admin granted to {}", admin.username)),
        "{said}"
    );
    admin
}

async fn admin_post(
    app: &TestApp,
    path: &str,
    who: &TestPlayer,
    body: Value,
) -> (StatusCode, Value) {
    app.post_value(path, Some(&who.token), body).await
}

/// The audit log's newest entries, as `admin` reads it.
async fn audit(app: &TestApp, admin: &TestPlayer) -> Vec<Value> {
    let response = app
        .request(Method::GET, "/admin/audit", Some(&admin.token), None)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let page: Value = response.json().await.unwrap();
    page["entries"].as_array().unwrap().clone()
}

/// The newest entry about `target`.
async fn last_entry_about(app: &TestApp, admin: &TestPlayer, target: &str) -> Value {
    audit(app, admin)
        .await
        .into_iter()
        .find(|e| e["target"]["id"] == target)
        .unwrap_or_else(|| panic!("no audit entry about {target}"))
}

/// Gives `player` a password.
async fn set_password_of(app: &TestApp, player: &TestPlayer, password: &str) {
    let response = set_password(app, player, json!({"password": password})).await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn roles_are_granted_and_revoked_from_the_command_line_while_the_server_runs() {
    let app = TestApp::spawn().await;
    let player = app.register(&unique("mod")).await;
    let read_audit = || app.request(Method::GET, "/admin/audit", Some(&player.token), None);
    assert_problem(read_audit().await, StatusCode::FORBIDDEN, "not_admin").await;
    assert_problem(
        app.request(Method::GET, "/admin/audit", None, None).await,
        StatusCode::UNAUTHORIZED,
        "missing_token",
    )
    .await;

    let (ok, said) = admin_command(&app, &["grant", &player.username]);
    assert!(ok, "{said}");
    assert_eq!(read_audit().await.status(), StatusCode::OK);
    let entry = last_entry_about(&app, &player, &player.id).await;
    assert_eq!(entry["action"], "grant");
    assert_eq!(entry["actor"], Value::Null);
    assert_eq!(entry["actorName"], "turnhouse admin");
    assert_eq!(entry["details"]["role"], "admin");

    let (ok, said) = admin_command(&app, &["revoke", &player.username]);
    assert!(ok, "{said}");
    assert!(said.contains("admin revoked from"), "{said}");
    assert_problem(read_audit().await, StatusCode::FORBIDDEN, "not_admin").await;

    let (ok, said) = admin_command(&app, &["grant", "nobody-by-this-name"]);
    assert!(!ok);
    assert!(
        said.contains("there is no player named nobody-by-this-name"),
        "{said}"
    );
    let (ok, said) = admin_command(&app, &["grant", &player.username, "--role", "owner"]);
    assert!(!ok, "{said}");
}

/// A suspended player's sessions end (their stream closes), they cannot sign in, they leave
/// the room that waits for players, and the game they were playing runs `onPlayerQuit`.
#[tokio::test]
async fn a_suspended_player_is_signed_out_and_leaves_every_room() {
    let app = TestApp::spawn().await;
    let admin = new_admin(&app).await;
    let (game, mallory, bob) = app.started_tictactoe().await;
    app.play_ok(&mallory, &game, json!({"x": 0, "y": 0})).await;
    let waiting = app
        .create_room(&mallory, json!({"game": "tictactoe"}))
        .await;
    let waiting = waiting["id"].as_str().unwrap().to_owned();
    set_password_of(&app, &mallory, "correct horse battery").await;
    let url = format!(
        "{}/rooms/{game}/stream?access_token={}",
        app.address, mallory.token
    );
    let mut stream = EventStream::open(&app.client, &url, None).await;
    stream.event().await;

    // An admin finds her by name; nobody but an admin may.
    let find = format!("/admin/players?username={}", mallory.username);
    let response = app
        .request(Method::GET, &find, Some(&admin.token), None)
        .await;
    let found: Value = response.json().await.unwrap();
    assert_eq!(found["players"][0]["id"], mallory.id.as_str());
    assert_eq!(found["players"][0]["suspended"], Value::Null);
    let response = app
        .request(Method::GET, &find, Some(&bob.token), None)
        .await;
    assert_problem(response, StatusCode::FORBIDDEN, "not_admin").await;
    let path = format!("/admin/players/{}/suspend", mallory.id);
    let (status, body) = admin_post(&app, &path, &bob, json!({"reason": "spam"})).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("not_admin"))
    );
    let (status, body) = admin_post(&app, &path, &admin, json!({})).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_body"))
    );
    assert_eq!(
        app.room(&waiting).await["players"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let (status, done) =
        admin_post(&app, &path, &admin, json!({"reason": "spam in room names"})).await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(done["player"]["username"], mallory.username.as_str());
    assert_eq!(done["sessionsEnded"], 1);
    assert_eq!(done["rooms"]["changed"], 2);
    ends_within(&mut stream, Duration::from_secs(1)).await;
    assert_problem(
        app.play(&mallory, &game, json!({"x": 1, "y": 1})).await,
        StatusCode::UNAUTHORIZED,
        "invalid_token",
    )
    .await;

    // The game in play: her quit is a forfeit; the waiting room: she left it.
    let room = app.room(&game).await;
    assert_eq!(room["finished"], true);
    assert_eq!(room["state"]["winner"]["id"], bob.id.as_str());
    let last = app.events(&game).await.pop().unwrap();
    assert_eq!(
        (last["kind"].as_str(), last["player"]["id"].as_str()),
        (Some("quit"), Some(mallory.id.as_str()))
    );
    let room = app.room(&waiting).await;
    assert!(room["players"].as_array().unwrap().is_empty(), "{room}");

    // Her password is refused with the reason, a wrong one as any wrong one.
    let (status, body) = sign_in_with(&app, &mallory.username, "correct horse battery").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["code"], "player_suspended");
    assert_eq!(body["reason"], "spam in room names");
    let (status, _) = sign_in_with(&app, &mallory.username, "wrong horse").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let entry = last_entry_about(&app, &admin, &mallory.id).await;
    assert_eq!(entry["action"], "suspend");
    assert_eq!(entry["reason"], "spam in room names");
    assert_eq!(entry["actor"]["id"], admin.id.as_str());
    assert_eq!(entry["client"], "127.0.0.1");
    assert_eq!(entry["details"]["sessionsEnded"], 1);
    let rows: Vec<(String, String, String)> = database_rows(
        &app.database,
        "SELECT action, target_id, reason FROM audit_log WHERE action = 'suspend'",
    )
    .await;
    assert!(rows.contains(&(
        "suspend".into(),
        mallory.id.clone(),
        "spam in room names".into()
    )));

    let response = app
        .request(Method::GET, &find, Some(&admin.token), None)
        .await;
    let found: Value = response.json().await.unwrap();
    assert_eq!(
        found["players"][0]["suspended"]["reason"],
        "spam in room names"
    );

    // A session a sign-in racing the suspension left on another server (written as that
    // server would): refused while she is suspended, and ended when she is unsuspended.
    let stray: &'static str = Box::leak(
        format!(
            "INSERT INTO sessions (id, player_id, token_hash, label, created_at, last_used_at) \
             VALUES ('{}', '{}', 'x', 'Raced', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
            "f".repeat(32),
            mallory.id
        )
        .into_boxed_str(),
    );
    database_execute(&app.database, stray).await;

    // Unsuspended, she signs in again.
    let path = format!("/admin/players/{}/unsuspend", mallory.id);
    let (status, _) = admin_post(&app, &path, &bob, json!(null)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, body) = admin_post(&app, &path, &admin, json!({"reason": "appeal heard"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = sign_in_with(&app, &mallory.username, "correct horse battery").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        last_entry_about(&app, &admin, &mallory.id).await["action"],
        "unsuspend"
    );
    let ended: Vec<(Option<String>,)> = database_rows(
        &app.database,
        "SELECT ended_at FROM sessions WHERE label = 'Raced'",
    )
    .await;
    assert!(ended[0].0.is_some(), "the raced session was ended");
    // Unsuspending her again lifts nothing, and the audit log does not say it did.
    let entries = audit(&app, &admin).await.len();
    let (status, body) = admin_post(&app, &path, &admin, json!({"reason": "again"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["suspended"], false);
    assert_eq!(audit(&app, &admin).await.len(), entries);
    let (status, body) = admin_post(
        &app,
        "/admin/players/00000000000000000000000000000000/suspend",
        &admin,
        json!({"reason": "x"}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("player_not_found"))
    );
}

/// A suspension ends every session on every server sharing the database, and a sign-in code
/// issued before it no longer opens one.
#[tokio::test]
async fn a_suspension_reaches_every_server_and_every_way_in() {
    let app = TestApp::spawn().await;
    let beside = app.spawn_beside(turnhouse::games::builtin()).await;
    let admin = new_admin(&app).await;
    let eve = app.register(&unique("eve")).await;
    let (status, code) = app
        .post_value("/players/me/sign-in-codes", Some(&eve.token), json!(null))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let room = app.create_room(&eve, json!({"game": "tictactoe"})).await;
    let url = format!(
        "{}/rooms/{}/stream?access_token={}",
        beside.address,
        room["id"].as_str().unwrap(),
        eve.token
    );
    let mut stream = EventStream::open(&beside.client, &url, None).await;
    stream.event().await;

    let path = format!("/admin/players/{}/suspend", eve.id);
    let (status, _) = admin_post(&app, &path, &admin, json!({"reason": "abuse"})).await;
    assert_eq!(status, StatusCode::OK);
    let took = ends_within(&mut stream, Duration::from_millis(2_500)).await;
    println!("the suspended player's stream on another server closed after {took:?}");
    let refused = beside
        .request(Method::GET, "/players/me/sessions", Some(&eve.token), None)
        .await;
    assert_problem(refused, StatusCode::UNAUTHORIZED, "invalid_token").await;
    let (status, body) = beside
        .post_value("/sessions", None, json!({"code": code["code"]}))
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("player_suspended"))
    );
}

#[tokio::test]
async fn a_renamed_player_is_shown_by_the_new_name_in_their_rooms() {
    let app = TestApp::spawn().await;
    let admin = new_admin(&app).await;
    let (room, carol, dave) = app.started_tictactoe().await;
    set_password_of(&app, &carol, "a long password").await;
    let path = format!("/admin/players/{}", carol.id);
    let rename = |who: TestPlayer, body: Value| {
        let (app, path) = (&app, &path);
        async move {
            app.request(Method::PATCH, path, Some(&who.token), Some(&body))
                .await
        }
    };
    let new_name = unique("renamed");
    assert_problem(
        rename(dave.clone(), json!({"username": new_name})).await,
        StatusCode::FORBIDDEN,
        "not_admin",
    )
    .await;
    assert_problem(
        rename(admin.clone(), json!({"username": "x"})).await,
        StatusCode::BAD_REQUEST,
        "invalid_username",
    )
    .await;
    assert_problem(
        rename(admin.clone(), json!({"username": dave.username})).await,
        StatusCode::CONFLICT,
        "username_taken",
    )
    .await;

    let response = rename(
        admin.clone(),
        json!({"username": new_name, "reason": "offensive name"}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let done: Value = response.json().await.unwrap();
    assert_eq!(done["player"]["username"], new_name.as_str());
    assert_eq!(done["previousUsername"], carol.username.as_str());
    assert_eq!(done["rooms"]["changed"], 1);

    // The room shows the new name, from a `renamed` version on; her own token still works,
    // and what she does next is under the new name.
    let last = app.events(&room).await.pop().unwrap();
    assert_eq!(last["kind"], "renamed");
    assert_eq!(last["player"]["username"], new_name.as_str());
    let moved = app.play_ok(&carol, &room, json!({"x": 1, "y": 1})).await;
    assert!(moved["players"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["username"] == new_name.as_str()));
    let last = app.events(&room).await.pop().unwrap();
    assert_eq!(last["player"]["username"], new_name.as_str());
    let (status, _) = sign_in_with(&app, &new_name, "a long password").await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = sign_in_with(&app, &carol.username, "a long password").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let entry = last_entry_about(&app, &admin, &carol.id).await;
    assert_eq!(entry["action"], "rename");
    assert_eq!(entry["details"]["from"], carol.username.as_str());
    assert_eq!(entry["details"]["to"], new_name.as_str());
}

#[tokio::test]
async fn an_unpublished_game_opens_no_rooms_and_its_rooms_finish_or_close() {
    let app = TestApp::spawn().await;
    let admin = new_admin(&app).await;
    let game = game_id("ttt");
    let author = app.publish(&game, &example("tictactoe.js")).await;
    let (playing, x, o) = app.started_game(&game).await;
    let waiting = app.create_room(&x, json!({"game": game})).await;
    let waiting = waiting["id"].as_str().unwrap().to_owned();
    let path = format!("/admin/games/{game}/unpublish");

    let (status, _) = admin_post(
        &app,
        &path,
        &author,
        json!({"reason": "insults", "rooms": "finish"}),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, body) = admin_post(&app, &path, &admin, json!({"reason": "insults"})).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_body"))
    );
    let (status, body) = admin_post(
        &app,
        &path,
        &admin,
        json!({"reason": "insults", "rooms": "finish"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["rooms"], json!({"changed": 0, "closed": 1, "left": 1}));

    // The game in play goes on; the room waiting for players is closed, saying why.
    app.play_ok(&x, &playing, json!({"x": 0, "y": 0})).await;
    let closed = app.events(&waiting).await.pop().unwrap();
    assert_eq!(closed["kind"], "closed");
    assert_eq!(
        closed["move"]["reason"],
        "the game was unpublished: insults"
    );
    assert_eq!(app.room(&waiting).await["finished"], true);

    // No new rooms, no quick play, no new version, no "Play again"; listings leave it out.
    let (status, body) = app
        .post_value("/rooms", Some(&o.token), json!({"game": game}))
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::CONFLICT, Some("game_unpublished"))
    );
    let (status, body) = app
        .post_value("/rooms/quickplay", Some(&o.token), json!({"game": game}))
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::CONFLICT, Some("game_unpublished"))
    );
    assert_problem(
        app.upload(&author, &game, &example("tictactoe.js")).await,
        StatusCode::CONFLICT,
        "game_unpublished",
    )
    .await;
    let games = app.get_json("/games").await;
    assert!(!games["games"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g["id"] == game.as_str()));
    assert!(app.get_json(&format!("/games/{game}")).await["unpublishedAt"].is_string());
    app.quit(&o, &playing).await;
    let (status, body) = app
        .post_value(
            &format!("/rooms/{playing}/reset"),
            Some(&x.token),
            json!(null),
        )
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::CONFLICT, Some("game_unpublished"))
    );
    assert_eq!(
        last_entry_about(&app, &admin, &game).await["details"]["rooms"],
        "finish"
    );

    // With "close", the games in play are closed as they are.
    let other = game_id("ttt");
    app.publish(&other, &example("tictactoe.js")).await;
    let (playing, x, _) = app.started_game(&other).await;
    app.play_ok(&x, &playing, json!({"x": 2, "y": 2})).await;
    let before = app.room(&playing).await;
    let path = format!("/admin/games/{other}/unpublish");
    let (status, body) = admin_post(
        &app,
        &path,
        &admin,
        json!({"reason": "broken", "rooms": "close"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["rooms"]["closed"], 1);
    let after = app.room(&playing).await;
    assert_eq!(
        (after["finished"].as_bool(), &after["state"]),
        (Some(true), &before["state"])
    );

    let (status, body) = admin_post(
        &app,
        "/admin/games/tictactoe/unpublish",
        &admin,
        json!({"reason": "x", "rooms": "close"}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::CONFLICT, Some("game_is_builtin"))
    );
    let (status, body) = admin_post(
        &app,
        "/admin/games/no-such-game/unpublish",
        &admin,
        json!({"reason": "x", "rooms": "close"}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("game_not_found"))
    );
}

#[tokio::test]
async fn an_admin_closes_a_room_as_it_is_on_the_record() {
    let app = TestApp::spawn().await;
    let admin = new_admin(&app).await;
    let (room, x, o) = app.started_tictactoe().await;
    app.play_ok(&x, &room, json!({"x": 1, "y": 1})).await;
    let before = app.room(&room).await;
    let path = format!("/admin/rooms/{room}/close");

    let (status, _) = admin_post(&app, &path, &o, json!({"reason": "abuse in chat"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = admin_post(&app, &path, &admin, json!({"reason": " "})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(app.room(&room).await["version"], before["version"]);

    let (status, closed) =
        admin_post(&app, &path, &admin, json!({"reason": "abuse in chat"})).await;
    assert_eq!(status, StatusCode::OK, "{closed}");
    assert_eq!(closed["finished"], true);
    assert_eq!(closed["state"], before["state"]);
    assert_eq!(closed["version"], before["version"].as_i64().unwrap() + 1);
    let last = app.events(&room).await.pop().unwrap();
    assert_eq!(
        (last["kind"].as_str(), &last["move"]),
        (Some("closed"), &json!({"reason": "abuse in chat"}))
    );

    let (status, body) = admin_post(&app, &path, &admin, json!({"reason": "again"})).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::CONFLICT, Some("room_finished"))
    );
    let (status, _) = admin_post(
        &app,
        "/admin/rooms/00000000000000000000000000000000/close",
        &admin,
        json!({"reason": "x"}),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // On the record: once, with the version it wrote.
    let entries = audit(&app, &admin).await;
    let closes: Vec<&Value> = entries
        .iter()
        .filter(|e| e["target"]["id"] == room.as_str())
        .collect();
    assert_eq!(closes.len(), 1);
    assert_eq!(closes[0]["action"], "close_room");
    assert_eq!(closes[0]["details"]["version"], closed["version"]);

    // The log pages, newest first.
    let response = app
        .request(
            Method::GET,
            "/admin/audit?limit=1",
            Some(&admin.token),
            None,
        )
        .await;
    let first: Value = response.json().await.unwrap();
    assert_eq!(first["entries"].as_array().unwrap().len(), 1);
    let cursor = first["nextCursor"].as_str().unwrap();
    let response = app
        .request(
            Method::GET,
            &format!("/admin/audit?limit=1&cursor={cursor}"),
            Some(&admin.token),
            None,
        )
        .await;
    let second: Value = response.json().await.unwrap();
    assert!(second["entries"][0]["id"].as_i64() < first["entries"][0]["id"].as_i64());
}

#[tokio::test]
async fn uploads_can_be_kept_to_authors_or_to_admins() {
    let source = example("tictactoe.js");
    for policy in [UploadPolicy::Authors, UploadPolicy::Admins] {
        let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
            config.uploads = policy;
        })
        .await;
        let player = app.register(&unique("writer")).await;
        assert_problem(
            app.upload(&player, &game_id("g"), &source).await,
            StatusCode::FORBIDDEN,
            "uploads_restricted",
        )
        .await;
        let (ok, said) = admin_command(&app, &["grant", &player.username, "--role", "author"]);
        assert!(ok, "{said}");
        let as_author = app.upload(&player, &game_id("g"), &source).await.status();
        let admin = new_admin(&app).await;
        let as_admin = app.upload(&admin, &game_id("g"), &source).await.status();
        match policy {
            UploadPolicy::Authors => assert_eq!(as_author, StatusCode::CREATED),
            _ => assert_eq!(as_author, StatusCode::FORBIDDEN),
        }
        assert_eq!(as_admin, StatusCode::CREATED);
    }
}
