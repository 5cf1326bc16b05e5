//! Ratings: a finished rated game changes its players' ratings once, in the commit of the
//! version that finishes it, which carries the change; unrated rooms change nothing.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::client::Api;
use crate::databases::database_rows;
use crate::helpers::{TestApp, TestPlayer};

/// X takes two of the top row while O plays the middle one: [`winning_move`] is X's next.
pub(crate) async fn x_one_move_from_winning(api: &Api, room: &str, x: &TestPlayer, o: &TestPlayer) {
    for (player, (cx, cy)) in [(x, (0, 0)), (o, (1, 1)), (x, (1, 0)), (o, (2, 2))] {
        api.play_ok(player, room, json!({"x": cx, "y": cy})).await;
    }
}

/// X's move that completes the top row, after [`x_one_move_from_winning`].
pub(crate) fn winning_move() -> Value {
    json!({"x": 2, "y": 0})
}

/// X takes the top row while O plays the middle one: X wins.
pub(crate) async fn x_wins(app: &TestApp, room: &str, x: &TestPlayer, o: &TestPlayer) -> Value {
    x_one_move_from_winning(app, room, x, o).await;
    app.play_ok(x, room, winning_move()).await
}

/// The last version of the room's history.
async fn last_event(app: &TestApp, room: &str) -> Value {
    app.events(room).await.pop().unwrap()
}

fn change_of<'a>(event: &'a Value, player: &TestPlayer) -> &'a Value {
    event["ratingChanges"]
        .as_array()
        .unwrap_or_else(|| panic!("no ratingChanges in {event}"))
        .iter()
        .find(|c| c["player"]["id"] == player.id.as_str())
        .unwrap()
}

#[tokio::test]
async fn a_won_game_moves_both_ratings_once_and_its_last_version_says_so() {
    let app = TestApp::spawn().await;
    let (room, x, o) = app.started_tictactoe().await;
    assert_eq!(app.room(&room).await["rated"], true);
    let finished = x_wins(&app, &room, &x, &o).await;
    assert_eq!(finished["finished"], true);
    let last = last_event(&app, &room).await;
    let (won, lost) = (change_of(&last, &x), change_of(&last, &o));
    assert_eq!(
        (won["before"].as_i64(), lost["before"].as_i64()),
        (Some(1500), Some(1500))
    );
    assert!(won["after"].as_i64().unwrap() > 1500, "{last}");
    assert!(lost["after"].as_i64().unwrap() < 1500, "{last}");
    // Only the finishing version says it, and it is written once.
    let events = app.events(&room).await;
    let with: Vec<i64> = events
        .iter()
        .filter(|e| e.get("ratingChanges").is_some())
        .map(|e| e["version"].as_i64().unwrap())
        .collect();
    assert_eq!(with, [last["version"].as_i64().unwrap()]);
    let rows: Vec<(String, i64)> = database_rows(
        &app.database,
        "SELECT player_id, games FROM ratings ORDER BY player_id",
    )
    .await;
    let mut expected = vec![(x.id.clone(), 1), (o.id.clone(), 1)];
    expected.sort();
    assert_eq!(rows, expected);

    // The next game in the room starts from the ratings the first left.
    let again = app
        .post_value(&format!("/rooms/{room}/reset"), Some(&x.token), json!(null))
        .await;
    assert_eq!(again.0, StatusCode::OK, "{}", again.1);
    assert_eq!(app.join(&o, &room).await.status(), StatusCode::OK);
    x_wins(&app, &room, &x, &o).await;
    let second = last_event(&app, &room).await;
    assert_eq!(change_of(&second, &x)["before"], won["after"]);
}

#[tokio::test]
async fn a_quit_is_a_loss_and_unrated_rooms_change_nothing() {
    let app = TestApp::spawn().await;
    let (room, x, o) = app.started_tictactoe().await;
    app.play_ok(&x, &room, json!({"x": 0, "y": 0})).await;
    assert_eq!(app.quit(&o, &room).await.status(), StatusCode::OK);
    let last = last_event(&app, &room).await;
    assert!(
        change_of(&last, &x)["after"].as_i64().unwrap() > 1500,
        "{last}"
    );
    assert!(
        change_of(&last, &o)["after"].as_i64().unwrap() < 1500,
        "{last}"
    );

    // Private, with a bot, or opted out: no rating moves.
    for body in [
        json!({"game": "tictactoe", "private": true}),
        json!({"game": "tictactoe", "rated": false}),
    ] {
        let room = app.create_room(&x, body.clone()).await;
        assert_eq!(room["rated"], false, "{body}");
        let id = room["id"].as_str().unwrap();
        assert_eq!(app.join(&o, id).await.status(), StatusCode::OK);
        x_wins(&app, id, &x, &o).await;
        assert!(last_event(&app, id).await.get("ratingChanges").is_none());
    }
    let bot = app
        .create_room(&x, json!({"game": "tictactoe", "bot": "easy"}))
        .await;
    assert_eq!(bot["rated"], false);
    let rows: Vec<(i64,)> = database_rows(&app.database, "SELECT games FROM ratings").await;
    assert_eq!(rows, [(1,), (1,)], "only the first room was rated");
}

#[tokio::test]
async fn a_draw_moves_equal_players_closer_to_sure_and_rebuild_gives_the_same_numbers() {
    let app = TestApp::spawn().await;
    let (room, x, o) = app.started_tictactoe().await;
    // X O X / X O O / O X X: nobody wins.
    for (player, (cx, cy)) in [
        (&x, (0, 0)),
        (&o, (1, 0)),
        (&x, (2, 0)),
        (&o, (1, 1)),
        (&x, (0, 1)),
        (&o, (2, 1)),
        (&x, (1, 2)),
        (&o, (0, 2)),
        (&x, (2, 2)),
    ] {
        app.play_ok(player, &room, json!({"x": cx, "y": cy})).await;
    }
    let last = last_event(&app, &room).await;
    assert_eq!(last["finished"], true);
    assert_eq!(change_of(&last, &x)["after"], 1500, "{last}");
    assert_eq!(change_of(&last, &o)["after"], 1500, "{last}");
    // A second game, won, so the rebuild has an order to keep.
    let (room, x2, o2) = app.started_tictactoe().await;
    x_wins(&app, &room, &x2, &o2).await;

    let ratings = "SELECT game, player_id, rating, deviation, volatility, games FROM ratings \
                   ORDER BY player_id";
    type Row = (String, String, f64, f64, f64, i64);
    let before: Vec<Row> = database_rows(&app.database, ratings).await;
    assert_eq!(before.len(), 4);
    let rebuild = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_turnhouse"))
            .args(["ratings", "rebuild", "--database", &app.database])
            .output()
            .expect("turnhouse runs")
    };
    let output = rebuild();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{said}");
    assert!(
        said.contains("2 rated games replayed, 4 ratings computed, 0 numbers differed"),
        "{said}"
    );
    let after: Vec<Row> = database_rows(&app.database, ratings).await;
    assert_eq!(after, before, "the same numbers, to the last bit");

    // A rating spoiled by hand is put right from the kept results.
    crate::databases::database_execute(&app.database, "UPDATE ratings SET rating = 0").await;
    assert!(rebuild().status.success());
    let mended: Vec<Row> = database_rows(&app.database, ratings).await;
    assert_eq!(mended, before);
}

/// The real binary, killed with `kill -9` while the finishing moves of eight games are in
/// flight, then started again: each game that finished changed its ratings exactly once, one
/// that did not changed none, and finishing it then changes them once.
#[tokio::test]
async fn a_kill_between_the_finishing_move_and_its_answer_rates_the_game_exactly_once() {
    use crate::databases::fresh_database;
    use crate::real_server::Server;
    use std::time::Duration;

    let dir = tempfile::tempdir().unwrap();
    let database = fresh_database(dir.path(), "ratings.db").await;
    let server = Server::start(&database);
    let api = server.api.with_timeout(Duration::from_secs(10));
    let mut games = Vec::new();
    for _ in 0..8 {
        let (room, x, o) = api.started_tictactoe().await;
        x_one_move_from_winning(&api, &room, &x, &o).await;
        games.push((room, x, o));
    }
    let finishing: Vec<_> = games
        .iter()
        .map(|(room, x, _)| {
            let (api, room, x) = (api.clone(), room.clone(), x.clone());
            tokio::spawn(async move { api.play(&x, &room, winning_move()).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(3)).await;
    server.kill();
    for task in finishing {
        let _ = task.await;
    }

    let server = Server::start(&database);
    let api = server.api.with_timeout(Duration::from_secs(10));
    let mut finished_before_the_kill = 0;
    for (room, x, o) in &games {
        let rows: Vec<(i64,)> = changes_of(&database, room).await;
        if api.room(room).await["finished"] == true {
            finished_before_the_kill += 1;
            assert_eq!(rows.len(), 2, "room {room}: one change per player");
        } else {
            assert!(
                rows.is_empty(),
                "room {room}: no change for a game not finished"
            );
            api.play_ok(x, room, winning_move()).await;
            assert_eq!(changes_of(&database, room).await.len(), 2);
        }
        for player in [x, o] {
            let games: Vec<(i64,)> = games_of(&database, &player.id).await;
            assert_eq!(games, [(1,)], "one rated game for {}", player.id);
        }
    }
    println!("{finished_before_the_kill} of 8 finishing moves were committed before the kill");
    server.kill();
}

/// The rating changes kept for `room`.
async fn changes_of(database: &str, room: &str) -> Vec<(i64,)> {
    let sql: &'static str = Box::leak(
        format!("SELECT version FROM rating_changes WHERE room_id = '{room}'").into_boxed_str(),
    );
    database_rows(database, sql).await
}

/// How many rated games `player`'s tic-tac-toe rating counts.
async fn games_of(database: &str, player: &str) -> Vec<(i64,)> {
    let sql: &'static str = Box::leak(
        format!("SELECT games FROM ratings WHERE player_id = '{player}'").into_boxed_str(),
    );
    database_rows(database, sql).await
}

/// A game any number may play: the first to send `{"win": true}` wins.
const FIRST_TO_CALL: &str = r#"
function onRoomStart() { return { state: {} }; }
function onPlayerJoin(player, room) { return { joinable: room.players.length < 3 }; }
function onPlayerQuit() { return {}; }
function onPlayerMove(player, move) {
  if (move.win) return { state: { winner: player }, finished: true };
  return {};
}
module.exports = { onRoomStart, onPlayerJoin, onPlayerQuit, onPlayerMove };
"#;

#[tokio::test]
async fn three_players_are_rated_together_winner_first_on_one_scale() {
    let app = TestApp::spawn().await;
    app.publish("first-to-call", FIRST_TO_CALL).await;
    let a = app.new_player().await;
    let room = app.create_room(&a, json!({"game": "first-to-call"})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    let (b, c) = (app.new_player().await, app.new_player().await);
    for player in [&b, &c] {
        assert_eq!(app.join(player, &room).await.status(), StatusCode::OK);
    }
    app.play_ok(&b, &room, json!({"win": true})).await;
    let last = last_event(&app, &room).await;
    assert!(
        change_of(&last, &b)["after"].as_i64().unwrap() > 1500,
        "{last}"
    );
    let (lost_a, lost_c) = (change_of(&last, &a), change_of(&last, &c));
    assert!(lost_a["after"].as_i64().unwrap() < 1500, "{last}");
    assert_eq!(lost_a["after"], lost_c["after"], "the two who lost tie");
}

/// One player finishes two games at once (often in one commit of the writer): the second
/// change starts where the first ended, in the order kept, and a rebuild agrees.
#[tokio::test]
async fn two_games_of_one_player_finishing_together_chain_their_changes() {
    let app = TestApp::spawn().await;
    let x = app.new_player().await;
    let mut rooms = Vec::new();
    for _ in 0..2 {
        let room = app.create_room(&x, json!({"game": "tictactoe"})).await;
        let room = room["id"].as_str().unwrap().to_owned();
        let o = app.new_player().await;
        assert_eq!(app.join(&o, &room).await.status(), StatusCode::OK);
        x_one_move_from_winning(&app, &room, &x, &o).await;
        rooms.push(room);
    }
    let (a, b) = tokio::join!(
        app.play(&x, &rooms[0], winning_move()),
        app.play(&x, &rooms[1], winning_move())
    );
    assert_eq!((a.status(), b.status()), (StatusCode::OK, StatusCode::OK));
    let sql: &'static str = Box::leak(
        format!(
            "SELECT rating_before, rating_after FROM rating_changes \
             WHERE player_id = '{}' ORDER BY seq",
            x.id
        )
        .into_boxed_str(),
    );
    let chain: Vec<(f64, f64)> = database_rows(&app.database, sql).await;
    assert_eq!(chain.len(), 2);
    assert_eq!(chain[0].0, 1500.0);
    assert_eq!(
        chain[1].0, chain[0].1,
        "the second game starts from the first"
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_turnhouse"))
        .args(["ratings", "rebuild", "--database", &app.database])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(said.contains("0 numbers differed"), "{said}");
}

/// `x` beats `o` in a new public room.
pub(crate) async fn beats(app: &TestApp, x: &TestPlayer, o: &TestPlayer) {
    let room = app.create_room(x, json!({"game": "tictactoe"})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    assert_eq!(app.join(o, &room).await.status(), StatusCode::OK);
    x_wins(app, &room, x, o).await;
}

#[tokio::test]
async fn the_leaderboard_ranks_players_with_five_games_by_conservative_rating_a_page_at_a_time() {
    let app = TestApp::spawn().await;
    let mut players = Vec::new();
    for _ in 0..6 {
        players.push(app.new_player().await);
    }
    let (a, b, c, d, e, f) = (
        &players[0],
        &players[1],
        &players[2],
        &players[3],
        &players[4],
        &players[5],
    );
    for _ in 0..5 {
        beats(&app, a, b).await;
        beats(&app, c, d).await;
    }
    for _ in 0..4 {
        beats(&app, e, f).await; // four games: not listed yet
    }
    let board = app.get_json("/games/tictactoe/leaderboard").await;
    let entries = board["entries"].as_array().unwrap();
    let ids: Vec<&str> = entries
        .iter()
        .map(|e| e["player"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 4, "{board}");
    let mut top = ids[..2].to_vec();
    top.sort();
    let mut winners = vec![a.id.as_str(), c.id.as_str()];
    winners.sort();
    assert_eq!(top, winners, "{board}");
    assert!(!ids.contains(&e.id.as_str()));
    let ranks: Vec<i64> = entries
        .iter()
        .map(|e| e["rank"].as_i64().unwrap())
        .collect();
    assert_eq!(ranks, [1, 2, 3, 4]);
    // Each player's profile gives the same rank (counted by bands, not place by place), and
    // so it does once the bands are counted again by a rebuild, after being spoiled by hand.
    let bands = "SELECT game, band, players FROM rating_bands ORDER BY game, band";
    let counted: Vec<(String, i64, i64)> = database_rows(&app.database, bands).await;
    crate::databases::database_execute(&app.database, "UPDATE rating_bands SET players = 9").await;
    let rebuild = std::process::Command::new(env!("CARGO_BIN_EXE_turnhouse"))
        .args(["ratings", "rebuild", "--database", &app.database])
        .output()
        .expect("turnhouse runs");
    assert!(rebuild.status.success());
    assert_eq!(
        database_rows::<(String, i64, i64)>(&app.database, bands).await,
        counted
    );
    for entry in entries {
        let profile = app
            .get_json(&format!(
                "/players/{}",
                entry["player"]["id"].as_str().unwrap()
            ))
            .await;
        assert_eq!(profile["ratings"][0]["rank"], entry["rank"], "{profile}");
    }
    assert_eq!(entries[0]["games"], 5);
    assert!(entries[0]["rating"].as_i64() > entries[3]["rating"].as_i64());
    assert_eq!(board["nextCursor"], Value::Null);

    // A page at a time, the same order and ranks.
    let mut paged = Vec::new();
    let mut path = "/games/tictactoe/leaderboard?limit=1".to_owned();
    loop {
        let page = app.get_json(&path).await;
        for entry in page["entries"].as_array().unwrap() {
            paged.push((
                entry["rank"].as_i64().unwrap(),
                entry["player"]["id"].clone(),
            ));
        }
        match page["nextCursor"].as_str() {
            Some(cursor) => path = format!("/games/tictactoe/leaderboard?limit=1&cursor={cursor}"),
            None => break,
        }
    }
    let whole: Vec<(i64, Value)> = entries
        .iter()
        .map(|e| (e["rank"].as_i64().unwrap(), e["player"]["id"].clone()))
        .collect();
    assert_eq!(paged, whole);
    assert_eq!(
        app.get("/games/no-such-game/leaderboard").await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.get("/games/tictactoe/leaderboard?cursor=nonsense")
            .await
            .status(),
        StatusCode::BAD_REQUEST
    );
}

/// A game whose state names no winner: it says who won through its `winners` export. Whoever
/// ends the game loses it; ending it "badly" makes `winners` throw.
const WHOEVER_ENDS_LOSES: &str = r#"
function onRoomStart() { return { state: {} }; }
function onPlayerJoin(player, room) { return { joinable: room.players.length < 2 }; }
function onPlayerQuit() { return {}; }
function onPlayerMove(player, move) {
  return { state: { endedBy: player.id, badly: !!move.badly }, finished: true };
}
function winners(room) {
  if (room.state.badly) throw new Error('no idea who won');
  return room.players.filter((p) => p.id !== room.state.endedBy);
}
module.exports = { onRoomStart, onPlayerJoin, onPlayerQuit, onPlayerMove, winners };
"#;

#[tokio::test]
async fn a_hosted_game_names_its_winners_through_its_winners_export() {
    let app = TestApp::spawn().await;
    let author = app.publish("whoever-ends-loses", WHOEVER_ENDS_LOSES).await;
    let listing = app.get_json("/games/whoever-ends-loses").await;
    assert_eq!(listing["winners"], true, "{listing}");
    let (a, b) = (app.new_player().await, app.new_player().await);
    let room = app
        .create_room(&a, json!({"game": "whoever-ends-loses"}))
        .await;
    let room = room["id"].as_str().unwrap().to_owned();
    assert_eq!(app.join(&b, &room).await.status(), StatusCode::OK);

    // `winners` throwing is the game's fault, kept in its logs: the room still finishes (no
    // one is held in it), neither scored nor rated.
    let ended = app.play_ok(&a, &room, json!({"badly": true})).await;
    assert_eq!(ended["finished"], true, "{ended}");
    assert!(ended.get("score").is_none(), "{ended}");
    let unrated = last_event(&app, &room).await;
    assert!(unrated.get("ratingChanges").is_none(), "{unrated}");
    let logs = app
        .request(
            Method::GET,
            "/games/whoever-ends-loses/logs",
            Some(&author.token),
            None,
        )
        .await
        .json::<Value>()
        .await
        .unwrap();
    let fault = logs["lines"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(fault["hook"], "winners", "{logs}");
    assert!(fault["text"].as_str().unwrap().contains("no idea who won"));

    let room = app
        .create_room(&a, json!({"game": "whoever-ends-loses"}))
        .await;
    let room = room["id"].as_str().unwrap().to_owned();
    assert_eq!(app.join(&b, &room).await.status(), StatusCode::OK);
    // The state names nobody; the export names b, who did not end it.
    app.play_ok(&a, &room, json!({})).await;
    let last = last_event(&app, &room).await;
    assert!(
        change_of(&last, &b)["after"].as_i64().unwrap() > 1500,
        "{last}"
    );
    assert!(
        change_of(&last, &a)["after"].as_i64().unwrap() < 1500,
        "{last}"
    );
}
