//! Whose move it is: `toMove` on rooms, their history and streams (built-in games, an uploaded
//! game's `toMove` export and its faults), and the turns inbox, on any server.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{example, unique, TestApp, TestPlayer};
use crate::sse_client::EventStream;

/// The rooms of `player`'s inbox, by id, in its order.
async fn inbox(app: &TestApp, player: &TestPlayer) -> Vec<Value> {
    let response = app
        .request(Method::GET, "/players/me/turns", Some(&player.token), None)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    body["rooms"].as_array().unwrap().clone()
}

fn ids(rooms: &[Value]) -> Vec<&str> {
    rooms.iter().map(|r| r["id"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn a_built_in_room_says_whose_move_it_is_and_the_inbox_lists_it() {
    let app = TestApp::spawn().await;
    let (x, o) = (
        app.register(&unique("x")).await,
        app.register(&unique("o")).await,
    );
    let waiting = app.create_room(&x, json!({"game": "tictactoe"})).await;
    assert_eq!(
        waiting["toMove"],
        json!([]),
        "a room waiting for players waits on nobody"
    );
    let room = waiting["id"].as_str().unwrap().to_owned();
    assert_eq!(app.join(&o, &room).await.status(), StatusCode::OK);
    let body = app.room(&room).await;
    assert_eq!(body["toMove"], json!([x.id]), "{body}");
    assert_eq!(ids(&inbox(&app, &x).await), [room.as_str()]);
    assert!(inbox(&app, &o).await.is_empty());
    let waiting = &inbox(&app, &x).await[0];
    assert_eq!(waiting["game"], "tictactoe");
    assert_eq!(waiting["version"], body["version"]);
    assert!(waiting.get("deadline").is_none(), "{waiting}");
    assert!(waiting["since"].is_string(), "{waiting}");

    // The stream says so with each version.
    let url = format!(
        "{}/rooms/{room}/stream?access_token={}",
        app.address, o.token
    );
    let mut stream =
        EventStream::open(&app.client, &url, Some(body["version"].as_i64().unwrap())).await;
    let moved = app.play_ok(&x, &room, json!({"x": 0, "y": 0})).await;
    assert_eq!(moved["toMove"], json!([o.id]), "{moved}");
    let frame = stream.event().await.json();
    assert_eq!(frame["toMove"], json!([o.id]), "{frame}");
    assert!(inbox(&app, &x).await.is_empty());
    assert_eq!(ids(&inbox(&app, &o).await), [room.as_str()]);

    // A second server on the same database lists the same.
    let beside = app.spawn_beside(turnhouse::games::builtin()).await;
    assert_eq!(ids(&inbox(&beside, &o).await), [room.as_str()]);

    // Finished, the room waits on nobody; the history kept each version's.
    for (player, (row, col)) in [(&o, (1, 0)), (&x, (0, 1)), (&o, (1, 1))] {
        app.play_ok(player, &room, json!({"x": row, "y": col}))
            .await;
    }
    let won = app.play_ok(&x, &room, json!({"x": 0, "y": 2})).await;
    assert_eq!(won["finished"], true);
    assert_eq!(won["toMove"], json!([]), "{won}");
    assert!(inbox(&app, &x).await.is_empty() && inbox(&app, &o).await.is_empty());
    let history = app.events(&room).await;
    let second = history.iter().find(|e| e["kind"] == "move").unwrap();
    assert_eq!(second["toMove"], json!([o.id]), "{second}");
}

/// The inbox puts the soonest deadline first, then the longest waiting; a room left is no
/// longer there.
#[tokio::test]
async fn the_inbox_is_ordered_by_deadline_then_by_waiting() {
    let app = TestApp::spawn().await;
    let me = app.register(&unique("me")).await;
    let mut rooms = Vec::new();
    for clock in [None, Some(86_400), Some(3_600), None] {
        let other = app.register(&unique("other")).await;
        let mut body = json!({"game": "tictactoe"});
        if let Some(seconds) = clock {
            body["clock"] = json!({"moveSeconds": seconds});
        }
        let room = app.create_room(&me, body).await;
        let id = room["id"].as_str().unwrap().to_owned();
        assert_eq!(app.join(&other, &id).await.status(), StatusCode::OK);
        rooms.push(id);
    }
    let listed = inbox(&app, &me).await;
    assert_eq!(
        ids(&listed),
        [&rooms[2], &rooms[1], &rooms[0], &rooms[3]].map(String::as_str)
    );
    assert!(listed[0]["deadline"].is_string(), "{:?}", listed[0]);
    assert_eq!(listed[0]["clock"], json!({"moveSeconds": 3600}));

    assert_eq!(app.quit(&me, &rooms[2]).await.status(), StatusCode::OK);
    assert!(!ids(&inbox(&app, &me).await).contains(&rooms[2].as_str()));

    let anonymous = app.get("/players/me/turns").await;
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
}

/// A game whose state says nothing of turns: its `toMove` export does. Everyone moves at once
/// until they have all moved; a move `"confuse"` makes `toMove` throw.
const EVERYONE_AT_ONCE: &str = r#"
function onRoomStart() { return { state: { moved: [] } }; }
function onPlayerJoin(player, room) { return { joinable: room.players.length < 3 }; }
function onPlayerQuit() { return {}; }
function onPlayerMove(player, move, room) {
  const moved = room.state.moved.concat([player.id]);
  return { state: { moved, confused: move === 'confuse' }, finished: moved.length === 3 };
}
function toMove(room) {
  if (room.state.confused) throw new Error('lost track of turns');
  return room.players.filter((p) => !room.state.moved.includes(p.id));
}
module.exports = { onRoomStart, onPlayerJoin, onPlayerQuit, onPlayerMove, toMove };
"#;

#[tokio::test]
async fn an_uploaded_game_says_whose_move_it_is_through_its_to_move_export() {
    let app = TestApp::spawn().await;
    let game = unique("at-once").replace('_', "-");
    let author = app.publish(&game, EVERYONE_AT_ONCE).await;
    let listing = app.get_json(&format!("/games/{game}")).await;
    assert_eq!(listing["toMove"], true, "{listing}");
    let players = [
        app.new_player().await,
        app.new_player().await,
        app.new_player().await,
    ];
    let room = app.create_room(&players[0], json!({"game": game})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    for player in &players[1..] {
        assert_eq!(app.join(player, &room).await.status(), StatusCode::OK);
    }
    let everyone: Vec<&str> = players.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(app.room(&room).await["toMove"], json!(everyone));
    for player in &players {
        assert_eq!(ids(&inbox(&app, player).await), [room.as_str()]);
    }
    let moved = app.play_ok(&players[1], &room, json!("wait")).await;
    assert_eq!(moved["toMove"], json!([everyone[0], everyone[2]]));
    assert!(inbox(&app, &players[1]).await.is_empty());

    // `toMove` throwing is the game's fault, in its logs: whose move it is is unknown (null),
    // and the room is in nobody's inbox; the game goes on.
    let confused = app.play_ok(&players[0], &room, json!("confuse")).await;
    assert_eq!(confused["toMove"], Value::Null, "{confused}");
    assert!(inbox(&app, &players[2]).await.is_empty());
    let logs: Value = app
        .request(
            Method::GET,
            &format!("/games/{game}/logs"),
            Some(&author.token),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    let fault = logs["lines"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(fault["hook"], "toMove", "{logs}");
    assert!(fault["text"]
        .as_str()
        .unwrap()
        .contains("lost track of turns"));
    let last = app.play_ok(&players[2], &room, json!("done")).await;
    assert_eq!(
        (last["finished"].clone(), last["toMove"].clone()),
        (json!(true), json!([]))
    );
}

/// Without a `toMove` export, the seat `plrToMoveIndex` names is to move, but only once the
/// room has stopped taking players: a room still waiting waits on nobody's move.
#[tokio::test]
async fn an_uploaded_game_without_to_move_waits_on_nobody_until_its_room_fills() {
    let app = TestApp::spawn().await;
    let game = unique("seat-to-move").replace('_', "-");
    app.publish(&game, &example("tictactoe.js")).await;
    let (x, o) = (app.new_player().await, app.new_player().await);
    let room = app.create_room(&x, json!({"game": game})).await;
    assert_eq!(room["state"]["plrToMoveIndex"], 0, "{room}");
    assert_eq!(room["toMove"], json!([]), "{room}");
    let room = room["id"].as_str().unwrap().to_owned();
    assert!(inbox(&app, &x).await.is_empty());
    assert_eq!(app.join(&o, &room).await.status(), StatusCode::OK);
    assert_eq!(app.room(&room).await["toMove"], json!([x.id]));
    assert_eq!(ids(&inbox(&app, &x).await), [room.as_str()]);
}
