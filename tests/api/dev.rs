//! `turnhouse dev` without a browser: what its routes do (a deadline fired by hand, a bot in
//! any seat, the stored truth), that it serves only this machine, that `--database` keeps its
//! game and players across runs, and that no other server has its routes.

use std::path::Path;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::client::{Api, TestPlayer};
use crate::dev_browser::{copy_example, DevServer};
use crate::helpers::{assert_problem, TestApp};

impl DevServer {
    /// The server as a client, and the dev session's state.
    pub(crate) async fn api(&self) -> (Api, Value) {
        let address = self.page.rsplit_once("/dev/").unwrap().0.to_owned();
        let api = Api {
            address,
            client: reqwest::Client::new(),
        };
        let game = self.page.rsplit('/').next().unwrap();
        let session = api.get_json(&format!("/dev/{game}/session")).await;
        (api, session)
    }
}

pub(crate) fn local(player: &Value) -> TestPlayer {
    TestPlayer {
        id: player["id"].as_str().unwrap().into(),
        username: player["username"].as_str().unwrap().into(),
        token: player["token"].as_str().unwrap().into(),
    }
}

#[tokio::test]
async fn the_author_fires_a_deadline_now_and_reads_every_version_as_stored() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = copy_example(dir.path(), "timed.js");
    let dev = DevServer::start(&[&hooks]);
    let (api, session) = dev.api().await;
    assert_eq!(session["layout"], json!({"seats": 2, "bot": null}));
    let room = session["room"].as_str().unwrap().to_owned();
    let first = local(&session["players"][0]);

    // No deadline yet: nothing to fire.
    let deadline = json!({ "room": room });
    let fire = || api.post("/dev/timed/deadline", None, Some(&deadline));
    assert_problem(fire().await, StatusCode::CONFLICT, "no_deadline").await;
    // An hour away, fired now: onTimeout runs once, and the deadline is used up.
    api.play_ok(&first, &room, json!({"arm": 3_600_000})).await;
    let fired: Value = fire().await.json().await.unwrap();
    assert_eq!(fired["state"]["timeouts"], 1);
    assert_eq!(fired["triggerTimeoutAt"], Value::Null);
    assert_problem(fire().await, StatusCode::CONFLICT, "no_deadline").await;

    let truth = api.get_json(&format!("/dev/timed/truth?room={room}")).await;
    let kinds: Vec<&str> = truth["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["room_start", "join", "join", "move", "timeout"]);
    assert_eq!(truth["room"]["version"], 5);
}

#[tokio::test]
async fn a_bot_takes_any_seat_and_a_new_room_keeps_the_seats_unless_told() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = copy_example(dir.path(), "connect-four.js");
    let dev = DevServer::start(&[&hooks]);
    let (api, session) = dev.api().await;
    let rooms = "/dev/connect-four/rooms";

    // The bot in the second seat: dev-1 opens, the bot joins, and replies to dev-1's move.
    let response = api
        .post(
            rooms,
            None,
            Some(&json!({"bot": {"seat": 2, "level": "easy"}})),
        )
        .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let room = response.json::<Value>().await.unwrap()["room"]
        .as_str()
        .unwrap()
        .to_owned();
    let players = api.room(&room).await["players"].clone();
    assert_eq!(players[0]["username"], "dev-1");
    assert_eq!(players[1]["username"], "easy bot");
    let after = api
        .play_ok(&local(&session["players"][0]), &room, json!({"column": 3}))
        .await;
    assert_eq!(after["state"]["moves"], 2, "the bot replied");

    // A new room with no body change keeps the bot where it was; `"bot": null` removes it.
    let again: Value = api
        .post(rooms, None, Some(&json!({})))
        .await
        .json()
        .await
        .unwrap();
    let players = api.room(again["room"].as_str().unwrap()).await["players"].clone();
    assert_eq!(players[1]["username"], "easy bot");
    let plain: Value = api
        .post(rooms, None, Some(&json!({"bot": null})))
        .await
        .json()
        .await
        .unwrap();
    let players = api.room(plain["room"].as_str().unwrap()).await["players"].clone();
    assert_eq!(players[1]["username"], "dev-2");
    let state: Value = api.get_json("/dev/connect-four/session").await;
    assert_eq!(state["room"], plain["room"]);

    let response = api.post(rooms, None, Some(&json!({"seats": 5}))).await;
    assert_problem(response, StatusCode::BAD_REQUEST, "invalid_body").await;
    let response = api
        .post(
            rooms,
            None,
            Some(&json!({"bot": {"seat": 3, "level": "easy"}})),
        )
        .await;
    assert_problem(response, StatusCode::BAD_REQUEST, "invalid_body").await;
    // Another game's routes, on this server, do not exist.
    let response = api.get("/dev/tictactoe/session").await;
    assert_problem(response, StatusCode::NOT_FOUND, "route_not_found").await;
}

#[tokio::test]
async fn turnhouse_dev_refuses_to_serve_anything_but_this_machine() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_turnhouse"))
        .args(["dev", "examples/tictactoe.js", "--bind", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("not a loopback address"), "{said}");
}

#[tokio::test]
async fn a_database_given_keeps_the_game_and_its_local_players_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = copy_example(dir.path(), "tictactoe.js");
    let database = format!("sqlite://{}", dir.path().join("mine.db").display());
    let args = [
        hooks.as_path(),
        Path::new("--database"),
        Path::new(&database),
    ];
    let first = DevServer::start(&args);
    first.wait_for_terminal("published version 1").await;
    drop(first);
    // The same author publishes the next version; the local players sign in again.
    let second = DevServer::start(&args);
    second.wait_for_terminal("published version 2").await;
    let (api, session) = second.api().await;
    let game = api.get_json("/games/tictactoe").await;
    assert_eq!(game["version"], 2);
    assert_eq!(game["owner"]["username"], "dev-author");
    let room = session["room"].as_str().unwrap();
    api.play_ok(
        &local(&session["players"][0]),
        room,
        json!({"x": 1, "y": 1}),
    )
    .await;
}

#[tokio::test]
async fn no_other_server_has_the_dev_routes() {
    let app = TestApp::spawn().await;
    for path in ["/dev/tictactoe", "/dev/tictactoe/session", "/dev.js"] {
        let response = app.get(path).await;
        assert_problem(response, StatusCode::NOT_FOUND, "route_not_found").await;
    }
    // The page keeps refusing to be framed.
    let page = app.get("/").await;
    let policy = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
}

/// The dev routes hand out every seat's token: a page on another site gets no CORS headers
/// to read them with, and a request addressed to another name (a site whose name was made to
/// resolve to this machine) is refused.
#[tokio::test]
async fn the_dev_routes_answer_only_this_machine_by_name_and_no_other_site() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = copy_example(dir.path(), "connect-four.js");
    let dev = DevServer::start(&[&hooks]);
    let (api, _) = dev.api().await;
    let url = format!("{}/dev/connect-four/session", api.address);
    let port = api.address.rsplit(':').next().unwrap().to_owned();

    let from_elsewhere = api
        .client
        .get(&url)
        .header("Origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(
        from_elsewhere.status(),
        StatusCode::OK,
        "same-origin use works"
    );
    assert!(from_elsewhere
        .headers()
        .get("access-control-allow-origin")
        .is_none());
    // The rest of the API still allows every origin.
    let rooms = api
        .client
        .get(format!("{}/rooms", api.address))
        .header("Origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(rooms.headers()["access-control-allow-origin"], "*");

    let addressed_to = |host: String| api.client.get(&url).header("Host", host).send();
    for host in [format!("evil.example:{port}"), "rebound.test".to_owned()] {
        let rebound = addressed_to(host).await.unwrap();
        let body = assert_problem(rebound, StatusCode::FORBIDDEN, "host_not_loopback").await;
        assert!(!body.to_string().contains("token"), "{body}");
    }
    for host in [format!("localhost:{port}"), format!("127.0.0.1:{port}")] {
        let local = addressed_to(host.clone()).await.unwrap();
        assert_eq!(local.status(), StatusCode::OK, "{host}");
    }
}

/// `turnhouse dev` publishes only the file: the game's name, player counts, description and
/// move example come from the file's own `settings` export, and the seats from its minPlayers.
#[tokio::test]
async fn the_file_names_the_game_and_its_players() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = dir.path().join("rps.js");
    std::fs::write(
        &hooks,
        "export const settings = { name: 'Rock paper scissors', minPlayers: 3, maxPlayers: 3,\n\
         description: 'Best of three.', moveExample: { choice: 'rock' } };\n\
         export function onRoomStart() { return { state: {} }; }\n\
         export function onPlayerJoin() {}\nexport function onPlayerQuit() {}\n\
         export function onPlayerMove() {}\n",
    )
    .unwrap();
    let dev = DevServer::start(&[&hooks]);
    let (api, session) = dev.api().await;
    let listing = api.get_json("/games/rps").await;
    assert_eq!(listing["name"], "Rock paper scissors");
    assert_eq!(listing["minPlayers"], 3);
    assert_eq!(listing["maxPlayers"], 3);
    assert_eq!(listing["description"], "Best of three.");
    assert_eq!(listing["moveExample"], json!({"choice": "rock"}));
    assert_eq!(session["layout"]["seats"], 3);
}
