//! boardgame.io games on Turnhouse, unchanged: each game object in `tests/boardgameio/games/`
//! is bundled with `turnhouse-boardgameio/server` (`clients/boardgameio/`) and
//! boardgame.io 0.50.2 from the registry, uploaded as any game, and played by boardgame.io's
//! own `Client` in Node through the `turnhouse-boardgameio/client` transport
//! (`tests/boardgameio/play.cjs`), and over plain HTTP where the exact refusal is the point.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{unique, Api, TestApp, TestPlayer};

/// `tests/boardgameio/`, installed and built once per test process by its `install` script
/// (boardgame.io 0.50.2 and the rest from its lock, the adapter as it is in the tree, the
/// bundles and the board).
pub(crate) fn project() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/boardgameio");
        let status = Command::new(dir.join("install"))
            .status()
            .unwrap_or_else(|e| {
                panic!("tests/boardgameio/install runs (scripts/test installs npm): {e}")
            });
        assert!(status.success(), "tests/boardgameio/install failed");
        dir
    })
}

/// The uploadable bundle of `tests/boardgameio/entries/<game>.js`.
pub(crate) fn bundle(game: &str) -> String {
    std::fs::read_to_string(project().join(format!("build/hooks/{game}.js"))).unwrap()
}

/// Publishes the bundle of `game` as `id`.
pub(crate) async fn publish(api: &Api, id: &str, game: &str) {
    api.publish(id, &bundle(game)).await;
}

/// A room of `id` with `seats` players seated in order (the first opened it).
pub(crate) async fn seated(api: &Api, id: &str, seats: usize) -> (String, Vec<TestPlayer>) {
    let first = api.register(&unique("seat0")).await;
    let room = api.create_room(&first, json!({"game": id})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    let mut players = vec![first];
    for seat in 1..seats {
        let player = api.register(&unique(&format!("seat{seat}"))).await;
        assert_eq!(api.join(&player, &room).await.status(), StatusCode::OK);
        players.push(player);
    }
    (room, players)
}

/// Runs `node <script> <arg>` in the project with `env`; returns what it printed, as JSON.
fn node(script: &str, arg: &str, env: &[(&str, &str)], input: Option<&[u8]>) -> Value {
    let mut command = Command::new("node");
    // turnhouse-boardgameio is linked from its folder: it finds boardgame.io through the link.
    command
        .arg("--preserve-symlinks")
        .arg(script)
        .arg(arg)
        .current_dir(project())
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("node runs");
    if let Some(input) = input {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(input).unwrap();
    }
    drop(child.stdin.take());
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "node {script} {arg} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// Plays `scenario` of `play.cjs` in `room` with boardgame.io's Client, one per seat.
async fn play(api: &Api, scenario: &str, room: &str, players: &[TestPlayer]) -> Value {
    let tokens: Vec<&str> = players.iter().map(|p| p.token.as_str()).collect();
    let env = [
        ("SERVER", api.address.as_str()),
        ("ROOM", room),
        ("TOKENS", &tokens.join(",")),
    ];
    let (scenario, env) = (scenario.to_owned(), env.map(|(k, v)| (k, v.to_owned())));
    tokio::task::spawn_blocking(move || {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        node("play.cjs", &scenario, &env, None)
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn boardgameios_client_plays_tictactoe_to_a_win_and_to_a_draw() {
    let app = TestApp::spawn().await;
    publish(&app, "bgio-tictactoe", "tictactoe").await;
    let game = app.get_json("/games/bgio-tictactoe").await;
    assert_eq!(game["minPlayers"], 2);
    assert_eq!(game["maxPlayers"], 2);

    let (room, players) = seated(&app, "bgio-tictactoe", 2).await;
    // boardgame.io enables endGame, but a player may not declare the result with it.
    let (status, problem) = app
        .post_value(
            &format!("/rooms/{room}/moves"),
            Some(&players[0].token),
            json!({"event": "endGame", "args": [{"winner": "0"}]}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(problem["reason"], "action/action_disabled", "{problem}");
    let started = app.room(&room).await;
    assert_eq!(
        started["joinable"], false,
        "the match starts when the room fills"
    );
    assert_eq!(
        started["toMove"],
        json!([players[0].id]),
        "seat 0 moves first"
    );

    let won = play(&app, "tictactoe-win", &room, &players).await;
    assert_eq!(won["gameover"], json!({"winner": "0"}));
    let names: Vec<&str> = won["matchData"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [&players[0].username, &players[1].username]);
    let finished = app.room(&room).await;
    assert_eq!(finished["finished"], true, "ctx.gameover finishes the room");
    assert_eq!(finished["toMove"], json!([]));
    assert_eq!(finished["score"]["wins"][&players[0].id], 1, "{finished}");

    let (room, players) = seated(&app, "bgio-tictactoe", 2).await;
    let drawn = play(&app, "tictactoe-draw", &room, &players).await;
    assert_eq!(drawn["gameover"], json!({"draw": true}));
    let finished = app.room(&room).await;
    assert_eq!(finished["finished"], true);
    assert_eq!(finished["score"]["draws"], 1, "{finished}");
}

#[tokio::test]
async fn phases_stages_and_simultaneous_moves_play_through_and_name_who_is_to_move() {
    let app = TestApp::spawn().await;
    publish(&app, "bgio-auction", "auction").await;
    let (room, players) = seated(&app, "bgio-auction", 3).await;
    let ids: Vec<&str> = players.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(
        app.room(&room).await["toMove"],
        json!(ids),
        "everyone bids at once"
    );

    let result = play(&app, "stages", &room, &players).await;
    assert_eq!(result["gameover"], json!({"winner": "2"}));
    assert_eq!(result["answers"], 6);

    // Whose move it was, version by version: the bidders, then the player to play, then the
    // two who must answer (activePlayers), then one left to answer.
    let history = app.events(&room).await;
    let waits: Vec<usize> = history
        .iter()
        .filter(|e| e["kind"] == "move")
        .map(|e| e["toMove"].as_array().unwrap().len())
        .collect();
    assert_eq!(waits.last(), Some(&0), "{waits:?}");
    assert!(waits.contains(&2) && waits.contains(&1), "{waits:?}");
    let first_player = history
        .iter()
        .find(|e| e["state"]["match"]["ctx"]["phase"] == "playing")
        .unwrap();
    assert_eq!(
        first_player["toMove"],
        json!([players[1].id]),
        "the highest bidder plays first"
    );
}

#[tokio::test]
async fn player_view_hides_each_hand_and_a_random_match_replays_exactly() {
    let app = TestApp::spawn().await;
    publish(&app, "bgio-cards", "cards").await;
    let (room, players) = seated(&app, "bgio-cards", 2).await;

    // Over plain HTTP too: each seat sees its own hand, a spectator none, and nobody the seed.
    for (seat, player) in players.iter().enumerate() {
        let mine: Value = app
            .request(
                reqwest::Method::GET,
                &format!("/rooms/{room}"),
                Some(&player.token),
                None,
            )
            .await
            .json()
            .await
            .unwrap();
        let hands = &mine["state"]["match"]["G"]["hands"];
        assert_eq!(
            hands[seat.to_string()].as_array().unwrap().len(),
            3,
            "{hands}"
        );
        assert_eq!(hands[(1 - seat).to_string()], 3, "{hands}");
        assert!(mine["state"].get("seed").is_none(), "the seed stays hidden");
        assert_eq!(mine["state"]["match"]["plugins"]["random"], json!({}));
    }
    let watched = app.room(&room).await;
    assert_eq!(
        watched["state"]["match"]["G"]["hands"],
        json!({"0": 3, "1": 3})
    );

    let result = play(&app, "hands", &room, &players).await;
    assert_eq!(result["table"].as_array().unwrap().len(), 4);

    // The finished match shows its seed; the same hooks given it make every version again.
    let events = app
        .get_json(&format!("/rooms/{room}/events?limit=1000"))
        .await;
    let input = serde_json::to_vec(&events).unwrap();
    let replay =
        tokio::task::spawn_blocking(move || node("replay.cjs", "cards", &[], Some(&input)))
            .await
            .unwrap();
    assert_eq!(
        replay["versions"].as_u64().unwrap() as usize,
        events["events"].as_array().unwrap().len()
    );
}

/// Plays `mv` as `player`, expecting boardgame.io's refusal `reason`; the room is unchanged.
async fn refused(api: &Api, player: &TestPlayer, room: &str, mv: Value, reason: &str) {
    let before = api.room(room).await["version"].clone();
    let (status, problem) = api
        .post_value(
            &format!("/rooms/{room}/moves"),
            Some(&player.token),
            mv.clone(),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{mv}: {problem}");
    assert_eq!(problem["code"], "game_refused", "{problem}");
    assert_eq!(problem["reason"], reason, "{mv}: {problem}");
    assert_eq!(
        api.room(room).await["version"],
        before,
        "a refusal changes nothing"
    );
}

/// The match's `_stateID` and count after `mv`, which must be taken.
async fn taken(api: &Api, player: &TestPlayer, room: &str, mv: Value) -> (i64, i64) {
    let after = api.play_ok(player, room, mv).await;
    let stored = &after["state"]["match"];
    (
        stored["_stateID"].as_i64().unwrap(),
        stored["G"]["count"].as_i64().unwrap(),
    )
}

#[tokio::test]
async fn stale_and_out_of_turn_actions_are_refused_with_boardgameios_reason_and_undo_follows_the_masters_rule(
) {
    let app = TestApp::spawn().await;
    publish(&app, "bgio-counter", "counter").await;
    let (room, players) = seated(&app, "bgio-counter", 2).await;
    let (zero, one) = (&players[0], &players[1]);

    refused(
        &app,
        one,
        &room,
        json!({"type": "add", "args": [1]}),
        "action/inactive_player",
    )
    .await;
    refused(
        &app,
        zero,
        &room,
        json!({"type": "jump", "args": []}),
        "action/unavailable_move",
    )
    .await;
    refused(
        &app,
        zero,
        &room,
        json!({"type": "add", "args": [7]}),
        "action/invalid_move",
    )
    .await;
    refused(&app, zero, &room, json!({"x": 1}), "invalid_action").await;
    refused(
        &app,
        zero,
        &room,
        json!({"event": "endGame"}),
        "action/action_disabled",
    )
    .await;

    assert_eq!(
        taken(
            &app,
            zero,
            &room,
            json!({"type": "add", "args": [3], "stateID": 0})
        )
        .await,
        (1, 3)
    );
    // An action made on the state before is stale; one that names no state is not checked.
    refused(
        &app,
        zero,
        &room,
        json!({"type": "add", "args": [1], "stateID": 0}),
        "action/stale_state_id",
    )
    .await;
    assert_eq!(
        taken(&app, zero, &room, json!({"type": "add", "args": [2]})).await,
        (2, 5)
    );

    // Undo and redo: only by the one player who may act now.
    refused(
        &app,
        one,
        &room,
        json!({"undo": true}),
        "action/action_disabled",
    )
    .await;
    assert_eq!(
        taken(&app, zero, &room, json!({"undo": true, "stateID": 2})).await,
        (3, 3)
    );
    assert_eq!(
        taken(&app, zero, &room, json!({"redo": true})).await,
        (4, 5)
    );
    assert_eq!(
        taken(&app, zero, &room, json!({"undo": true})).await,
        (5, 3)
    );

    // The turn ends with the event; the next player has nothing to undo.
    let ended = app.play_ok(zero, &room, json!({"event": "endTurn"})).await;
    assert_eq!(ended["toMove"], json!([one.id]));
    refused(
        &app,
        one,
        &room,
        json!({"undo": true}),
        "action/action_invalid",
    )
    .await;
    refused(
        &app,
        zero,
        &room,
        json!({"type": "add", "args": [1]}),
        "action/inactive_player",
    )
    .await;
    for n in [3, 3] {
        app.play_ok(one, &room, json!({"type": "add", "args": [n]}))
            .await;
    }
    let won = app
        .play_ok(one, &room, json!({"type": "add", "args": [1]}))
        .await;
    assert_eq!(won["finished"], true);
    assert_eq!(
        won["state"]["match"]["ctx"]["gameover"],
        json!({"winner": "1"})
    );
    assert_eq!(won["score"]["wins"][&one.id], 1, "{won}");
    // ctx.gameover finished the room: Turnhouse itself turns the next action away.
    let after = app
        .play(one, &room, json!({"type": "add", "args": [1]}))
        .await;
    crate::helpers::assert_problem(after, StatusCode::CONFLICT, "room_finished").await;
}

#[tokio::test]
async fn a_quit_is_a_forfeit_and_a_room_waiting_for_players_gives_the_seat_back() {
    let app = TestApp::spawn().await;
    publish(&app, "bgio-auction", "auction").await;
    let (room, players) = seated(&app, "bgio-auction", 2).await;
    assert_eq!(
        app.room(&room).await["joinable"],
        true,
        "two of three seats taken"
    );
    assert_eq!(app.quit(&players[1], &room).await.status(), StatusCode::OK);
    let third = app.register(&unique("seat")).await;
    let fourth = app.register(&unique("seat")).await;
    for player in [&third, &fourth] {
        assert_eq!(app.join(player, &room).await.status(), StatusCode::OK);
    }
    let started = app.room(&room).await;
    assert_eq!(
        started["state"]["seats"],
        json!([players[0].id, third.id, fourth.id])
    );

    // Seat 1 leaves mid-match: it forfeits, and the other two win.
    assert_eq!(app.quit(&third, &room).await.status(), StatusCode::OK);
    let over = app.room(&room).await;
    assert_eq!(over["finished"], true);
    assert_eq!(
        over["state"]["match"]["ctx"]["gameover"],
        json!({"winners": ["0", "2"], "forfeit": "1"})
    );
    assert_eq!(over["score"]["wins"][&players[0].id], 1, "{over}");
    assert_eq!(over["score"]["wins"][&fourth.id], 1, "{over}");
}

#[tokio::test]
async fn turnhouses_bots_play_a_boardgameio_game_through_ai_enumerate() {
    let app = TestApp::spawn().await;
    publish(&app, "bgio-tictactoe", "tictactoe").await;
    assert_eq!(app.get_json("/games/bgio-tictactoe").await["bots"], true);
    for level in ["easy", "hard"] {
        let human = app.register(&unique("human")).await;
        let mut room = app
            .create_room(&human, json!({"game": "bgio-tictactoe", "bot": level}))
            .await;
        let id = room["id"].as_str().unwrap().to_owned();
        // The human takes the first empty cell until the game ends; the bot answers each move.
        while room["finished"] != true {
            let cells = room["state"]["match"]["G"]["cells"]
                .as_array()
                .unwrap()
                .clone();
            let free = cells.iter().position(Value::is_null).unwrap();
            room = app
                .play_ok(&human, &id, json!({"type": "clickCell", "args": [free]}))
                .await;
        }
        let gameover = &room["state"]["match"]["ctx"]["gameover"];
        let history = app.events(&id).await;
        let bot_moves = history
            .iter()
            .filter(|e| e["kind"] == "move" && e["player"]["id"] != human.id.as_str())
            .count();
        assert!(bot_moves >= 2, "the bot moved: {bot_moves}");
        if level == "hard" {
            // The hard bot plays tic-tac-toe exactly: against first-free-cell it wins.
            assert_eq!(gameover, &json!({"winner": "1"}), "{room}");
        }
    }
}

#[tokio::test]
async fn a_rooms_clock_ends_the_turn_of_whoever_lets_it_run_out() {
    let app = TestApp::spawn().await;
    publish(&app, "bgio-counter", "counter").await;
    let zero = app.register(&unique("zero")).await;
    let one = app.register(&unique("one")).await;
    let room = app
        .create_room(
            &zero,
            json!({"game": "bgio-counter", "clock": {"moveSeconds": 1}}),
        )
        .await;
    let room = room["id"].as_str().unwrap().to_owned();
    let joined: Value = app.join(&one, &room).await.json().await.unwrap();
    assert!(
        joined["triggerTimeoutAt"].is_string(),
        "the first turn is timed: {joined}"
    );
    app.play_ok(&zero, &room, json!({"type": "add", "args": [1]}))
        .await;
    // Seat 0 neither moves again nor ends the turn: the clock ends it.
    let mut waited = 0;
    let timed_out = loop {
        let history = app.events(&room).await;
        if let Some(timeout) = history.iter().find(|e| e["kind"] == "timeout") {
            break timeout.clone();
        }
        waited += 1;
        assert!(waited < 100, "no timeout version after 10 s: {history:?}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(timed_out["toMove"], json!([one.id]), "{timed_out}");
    let now = app.room(&room).await;
    assert_eq!(now["state"]["match"]["ctx"]["currentPlayer"], "1");
    assert!(
        now["triggerTimeoutAt"].is_string(),
        "the next turn is timed"
    );
}

#[tokio::test]
async fn the_matchs_state_survives_a_kill_9_mid_game_and_the_game_goes_on() {
    use crate::real_server::Server;
    let dir = tempfile::tempdir().unwrap();
    let database = crate::databases::fresh_database(dir.path(), "bgio.db").await;
    let timeout = std::time::Duration::from_secs(10);
    let server = Server::start(&database);
    let api = server.api.with_timeout(timeout);
    publish(&api, "bgio-counter", "counter").await;
    let (room, players) = seated(&api, "bgio-counter", 2).await;
    let (zero, one) = (&players[0], &players[1]);
    api.play_ok(zero, &room, json!({"type": "add", "args": [3]}))
        .await;
    let acknowledged = api
        .play_ok(
            zero,
            &room,
            json!({"type": "add", "args": [2], "stateID": 1}),
        )
        .await;
    server.kill();

    let server = Server::start(&database);
    let api = server.api.with_timeout(timeout);
    let after = api
        .request(
            reqwest::Method::GET,
            &format!("/rooms/{room}"),
            Some(&zero.token),
            None,
        )
        .await
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(
        after["state"], acknowledged["state"],
        "the match as acknowledged"
    );
    // The reducer goes on from it: the stale check, undo within the turn, the next turn.
    refused(
        &api,
        zero,
        &room,
        json!({"type": "add", "args": [1], "stateID": 1}),
        "action/stale_state_id",
    )
    .await;
    assert_eq!(
        taken(&api, zero, &room, json!({"undo": true, "stateID": 2})).await,
        (3, 3)
    );
    api.play_ok(zero, &room, json!({"event": "endTurn"})).await;
    for n in [3, 3] {
        api.play_ok(one, &room, json!({"type": "add", "args": [n]}))
            .await;
    }
    let won = api
        .play_ok(one, &room, json!({"type": "add", "args": [1]}))
        .await;
    assert_eq!(
        won["state"]["match"]["ctx"]["gameover"],
        json!({"winner": "1"})
    );
    assert_eq!(won["finished"], true);
    server.kill();
}

#[tokio::test]
async fn turnhouse_dev_takes_a_boardgameio_bundle_and_its_board() {
    use crate::dev::local;
    use crate::dev_browser::DevServer;
    let dir = tempfile::tempdir().unwrap();
    let hooks = dir.path().join("tictactoe.js");
    std::fs::write(&hooks, bundle("tictactoe")).unwrap();
    let board = project().join("build/board");
    let dev = DevServer::start(&[&hooks, Path::new("--frontend"), &board]);
    let (api, session) = dev.api().await;
    assert_eq!(
        session["layout"],
        json!({"seats": 2, "bot": null}),
        "seats from the game"
    );
    let room = session["room"].as_str().unwrap().to_owned();
    let seats: Vec<TestPlayer> = (0..2).map(|i| local(&session["players"][i])).collect();
    let started = api.room(&room).await;
    assert_eq!(started["state"]["seats"], json!([seats[0].id, seats[1].id]));
    assert_eq!(
        started["toMove"],
        json!([seats[0].id]),
        "the match has started"
    );
    assert_eq!(api.get_json("/games/tictactoe").await["hasFrontend"], true);
    api.play_ok(&seats[0], &room, json!({"type": "clickCell", "args": [4]}))
        .await;

    // The bot in the second seat answers through ai.enumerate.
    let bot = json!({"bot": {"seat": 2, "level": "hard"}});
    let response = api.post("/dev/tictactoe/rooms", None, Some(&bot)).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let room = response.json::<Value>().await.unwrap()["room"]
        .as_str()
        .unwrap()
        .to_owned();
    let after = api
        .play_ok(&seats[0], &room, json!({"type": "clickCell", "args": [0]}))
        .await;
    let cells = after["state"]["match"]["G"]["cells"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        cells.iter().filter(|c| !c.is_null()).count(),
        2,
        "the bot replied"
    );

    // A rebuilt bundle (esbuild --watch writes it again) is published as the next version.
    std::fs::write(&hooks, bundle("tictactoe") + "\n// rebuilt\n").unwrap();
    dev.wait_for_terminal("published version 2").await;
}
