//! Live streams over real HTTP: every version exactly once and in order, whenever a client
//! connects, resumes, lags or shares the room with many others.

use std::time::Duration;

use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{unique, TestApp, TestPlayer};
use crate::sse_client::{versions, EventStream};
use crate::test_games;

/// A stream event's data minus what is the same for every version of the room: what is left
/// is exactly the room's history entry for that version.
fn as_history_entry(mut data: Value) -> Value {
    let object = data.as_object_mut().unwrap();
    for key in ["room", "game", "gameVersion"] {
        object.remove(key);
    }
    data
}

async fn reset(app: &TestApp, player: &TestPlayer, room: &str) -> Value {
    let response = app
        .post(&format!("/rooms/{room}/reset"), Some(&player.token), None)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

/// X wins along the top row: five moves.
async fn play_out(app: &TestApp, room: &str, x: &TestPlayer, o: &TestPlayer) -> Value {
    let mut last = Value::Null;
    for (player, (row, col)) in [
        (x, (0, 0)),
        (o, (1, 0)),
        (x, (0, 1)),
        (o, (1, 1)),
        (x, (0, 2)),
    ] {
        last = app.play_ok(player, room, json!({"x": row, "y": col})).await;
    }
    last
}

#[tokio::test]
async fn a_stream_opens_at_the_current_version_then_sends_each_commit() {
    let app = TestApp::spawn().await;
    let (room, x, o) = app.started_tictactoe().await;
    let current = app.room(&room).await["version"].as_i64().unwrap();
    let url = format!("{}/rooms/{room}/stream", app.address);
    let mut stream = EventStream::open(&app.client, &url, None).await;

    assert_eq!(stream.headers["cache-control"], "no-cache");
    assert_eq!(stream.headers["x-accel-buffering"], "no");
    let encoding = stream.headers.get("content-encoding");
    assert!(
        encoding.is_none_or(|e| e == "identity"),
        "a stream is never compressed: {encoding:?}"
    );
    let retry = stream.frame().await.unwrap().retry.expect("a retry first");
    assert!((1_000..3_000).contains(&retry), "{retry}");

    let first = stream.event().await;
    assert_eq!(first.version_id(), Some(current));
    let data = first.json();
    assert_eq!(data["room"], room.as_str());
    assert_eq!(data["game"], "tictactoe");
    assert_eq!(data["kind"], "join");
    assert_eq!(data["players"].as_array().unwrap().len(), 2);

    app.play_ok(&x, &room, json!({"x": 1, "y": 1})).await;
    let moved = stream.event().await.json();
    assert_eq!(moved["version"], current + 1);
    assert_eq!(moved["kind"], "move");
    assert_eq!(moved["player"]["id"], x.id.as_str());
    assert_eq!(moved["move"], json!({"x": 1, "y": 1}));
    assert_eq!(moved["state"]["board"][1][1], "X");
    assert_eq!(moved["joinable"], false);
    assert_eq!(moved["finished"], false);

    app.quit(&o, &room).await;
    let quit = stream.event().await.json();
    assert_eq!(quit["kind"], "quit");
    assert_eq!(quit["finished"], true);
    assert_eq!(
        quit["players"],
        json!([{"id": x.id, "username": x.username}])
    );
}

#[tokio::test]
async fn resuming_after_any_version_sends_exactly_the_versions_after_it() {
    let app = TestApp::spawn().await;
    let (room, x, o) = app.started_tictactoe().await;
    play_out(&app, &room, &x, &o).await;
    // Play again, and a move in the new game: versions keep counting through the reset.
    reset(&app, &x, &room).await;
    app.join(&o, &room).await;
    let last = app.play_ok(&x, &room, json!({"x": 2, "y": 2})).await;
    let last = last["version"].as_i64().unwrap();
    let history = app.events(&room).await;
    assert_eq!(history.len() as i64, last);

    let url = format!("{}/rooms/{room}/stream", app.address);
    for after in 0..last {
        // Half through the query, half as a reconnecting browser would.
        let mut stream = if after % 2 == 0 {
            EventStream::open(&app.client, &format!("{url}?after={after}"), None).await
        } else {
            EventStream::open(&app.client, &url, Some(after)).await
        };
        let got = stream.versions_through(last).await;
        assert_eq!(
            versions(&got),
            ((after + 1)..=last).collect::<Vec<_>>(),
            "after {after}"
        );
        let entries: Vec<Value> = got.into_iter().map(as_history_entry).collect();
        assert_eq!(entries[..], history[after as usize..], "after {after}");
    }

    // Caught up on everything: the next event is the next commit, nothing repeated.
    let mut stream = EventStream::open(&app.client, &url, Some(last)).await;
    app.play_ok(&o, &room, json!({"x": 0, "y": 0})).await;
    assert_eq!(stream.event().await.json()["version"], last + 1);
}

#[tokio::test]
async fn last_event_id_wins_over_the_query_a_browser_reconnects_with() {
    let app = TestApp::spawn().await;
    let (room, x, _) = app.started_tictactoe().await;
    let moved = app.play_ok(&x, &room, json!({"x": 0, "y": 0})).await;
    let current = moved["version"].as_i64().unwrap();
    let url = format!("{}/rooms/{room}/stream?after=0", app.address);
    let mut stream = EventStream::open(&app.client, &url, Some(current - 1)).await;
    assert_eq!(stream.event().await.version_id(), Some(current));
}

#[tokio::test]
async fn a_stream_is_refused_with_a_problem_not_opened() {
    let app = TestApp::spawn().await;
    let (room, _, _) = app.started_tictactoe().await;
    let current = app.room(&room).await["version"].as_i64().unwrap();

    let ahead = app
        .get(&format!("/rooms/{room}/stream?after={}", current + 1))
        .await;
    assert_eq!(ahead.status(), StatusCode::CONFLICT);
    let problem: Value = ahead.json().await.unwrap();
    assert_eq!(problem["code"], "unknown_version");
    assert_eq!(problem["currentVersion"], current);

    let missing = app.get(&format!("/rooms/{}/stream", "0".repeat(32))).await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        missing.headers()["content-type"],
        "application/problem+json"
    );

    for (header, code) in [
        ("soon", "invalid_header"),
        ("-1", "invalid_header"),
        ("3:", "invalid_header"),
        (":3", "invalid_header"),
        ("3:x", "invalid_header"),
        ("3:4:5", "invalid_header"),
    ] {
        let response = app
            .client
            .get(format!("{}/rooms/{room}/stream", app.address))
            .header("Last-Event-ID", header)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert_eq!(response.json::<Value>().await.unwrap()["code"], code);
    }
    for query in ["after=-1", "after=x", "from=1"] {
        let response = app.get(&format!("/rooms/{room}/stream?{query}")).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{query}");
        assert_eq!(
            response.json::<Value>().await.unwrap()["code"],
            "invalid_query"
        );
    }
}

/// 32 players add to one counter five times each, all at once, while 50 clients watch.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_watchers_of_a_move_race_all_see_the_same_gap_free_sequence() {
    let app = TestApp::spawn_with(test_games::registry()).await;
    let (room, players) = app.counter_room(32).await;
    let start = app.room(&room).await["version"].as_i64().unwrap();
    let url = format!("{}/rooms/{room}/stream", app.address);
    let mut watchers = Vec::new();
    for _ in 0..50 {
        // Each on its own connection, as separate browsers would be.
        let client = reqwest::Client::new();
        watchers.push(EventStream::open(&client, &url, None).await);
    }

    let racers = players.iter().map(|player| {
        let (app, room) = (&app, &room);
        async move {
            for _ in 0..5 {
                app.play_ok(player, room, json!({})).await;
            }
        }
    });
    join_all(racers).await;
    let last = start + 32 * 5;
    assert_eq!(app.room(&room).await["version"], last);

    let history: Vec<Value> = app.events(&room).await[(start - 1) as usize..].to_vec();
    let seen = join_all(watchers.iter_mut().map(|w| w.versions_through(last))).await;
    for sequence in seen {
        assert_eq!(versions(&sequence), (start..=last).collect::<Vec<_>>());
        let entries: Vec<Value> = sequence.into_iter().map(as_history_entry).collect();
        assert_eq!(entries, history);
    }
}

/// Versions of about 120 KB each, committed while a watcher reads nothing: far more than the
/// socket buffers and the room's channel hold, so the server side of the stream falls behind
/// and has to catch up from the history.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_watcher_that_reads_slowly_still_gets_every_version() {
    let app = TestApp::spawn_with(test_games::registry()).await;
    let (room, players) = app.counter_room(1).await;
    let owner = &players[0];
    let start = app.room(&room).await["version"].as_i64().unwrap();
    let url = format!("{}/rooms/{room}/stream", app.address);
    let mut slow = EventStream::open(&app.client, &url, None).await;

    let pad = "p".repeat(60_000);
    for n in 0..150 {
        app.play_ok(
            owner,
            &room,
            json!({"do": "pad", "pad": format!("{n}{pad}")}),
        )
        .await;
    }
    let last = start + 150;

    let mut got = Vec::new();
    while got.last().is_none_or(|v| *v < last) {
        let frame = slow.event().await;
        got.push(frame.json()["version"].as_i64().unwrap());
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(got, (start..=last).collect::<Vec<_>>());
}

#[tokio::test]
async fn idle_streams_get_a_comment_to_keep_proxies_from_closing_them() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.stream_keepalive_secs = 1;
    })
    .await;
    let (room, _, _) = app.started_tictactoe().await;
    let url = format!("{}/rooms/{room}/stream", app.address);
    let mut stream = EventStream::open(&app.client, &url, None).await;
    stream.event().await;
    let presence = stream.frame().await.unwrap();
    assert_eq!(presence.event.as_deref(), Some("presence"), "{presence:?}");
    let next = stream.frame().await.unwrap();
    assert!(next.comment && next.data.is_none(), "{next:?}");
}

#[tokio::test]
async fn the_lobby_stream_announces_public_rooms_opening_filling_and_finishing() {
    let app = TestApp::spawn().await;
    let all = format!("{}/rooms/stream", app.address);
    let cubes = format!("{}/rooms/stream?game=tictactoe3d", app.address);
    let mut lobby = EventStream::open(&app.client, &all, None).await;
    let mut cube_lobby = EventStream::open(&app.client, &cubes, None).await;

    let alice = app.register(&unique("alice")).await;
    let bob = app.register(&unique("bob")).await;
    // Private rooms never appear, nor do changes a lobby does not show (a move).
    app.create_room(&alice, json!({"game": "tictactoe", "private": true}))
        .await;
    let room = app.create_room(&alice, json!({"game": "tictactoe"})).await;
    let room = room["id"].as_str().unwrap().to_owned();

    let created = lobby.event().await;
    assert_eq!(created.event.as_deref(), Some("room"));
    let created = created.json();
    assert_eq!(created["change"], "created");
    assert_eq!(created["room"]["id"], room.as_str());
    assert_eq!(created["room"]["joinable"], true);

    app.join(&bob, &room).await;
    let full = lobby.event().await.json();
    assert_eq!(full["change"], "updated");
    assert_eq!(full["room"]["joinable"], false);
    assert_eq!(full["room"]["players"].as_array().unwrap().len(), 2);

    app.play_ok(&alice, &room, json!({"x": 0, "y": 0})).await;
    app.quit(&bob, &room).await;
    let finished = lobby.event().await.json();
    assert_eq!(finished["change"], "updated");
    assert_eq!(finished["room"]["finished"], true);
    assert_eq!(
        finished["room"]["version"], 5,
        "the move in between was not announced"
    );

    let cube = app.create_room(&bob, json!({"game": "tictactoe3d"})).await;
    let from_filtered = cube_lobby.event().await.json();
    assert_eq!(
        from_filtered["room"]["id"], cube["id"],
        "tic-tac-toe never reached it"
    );
    assert_eq!(lobby.event().await.json()["room"]["id"], cube["id"]);

    let unknown = app.get("/rooms/stream?game=no-such-game").await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
}

/// A game of hidden information whose view of a full room takes longer to compute than a
/// signed-in stream goes without writing (its keep-alive pulse, one second).
const SLOW_VIEW_GAME: &str = r#"module.exports = {
  onRoomStart: () => ({ state: {} }),
  onPlayerJoin: (player, room) => ({ joinable: room.players.length < 2 }),
  onPlayerQuit: () => ({}),
  onPlayerMove: () => ({}),
  onPlayerView: (viewer, room) => {
    if (room.players.length === 2) {
      const until = Date.now() + 1500;
      while (Date.now() < until) {}
    }
    return { seen: room.players.length };
  },
};"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_whose_view_outlasts_a_keep_alive_still_reaches_its_viewer() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.hook_limits.time_ms = 10_000;
    })
    .await;
    app.publish("slow-view", SLOW_VIEW_GAME).await;
    let alice = app.register(&unique("alice")).await;
    let bob = app.register(&unique("bob")).await;
    let room = app.create_room(&alice, json!({"game": "slow-view"})).await;
    let (id, version) = (
        room["id"].as_str().unwrap(),
        room["version"].as_i64().unwrap(),
    );
    let url = format!(
        "{}/rooms/{id}/stream?after={version}&access_token={}",
        app.address, alice.token
    );
    let mut stream = EventStream::open(&app.client, &url, None).await;
    assert_eq!(app.join(&bob, id).await.status(), StatusCode::OK);
    // While the view is computed the stream's pulse falls due, once at least: the version is
    // still sent, once framed.
    let next = tokio::time::timeout(Duration::from_secs(20), stream.event())
        .await
        .expect("the joined version reaches the stream");
    assert_eq!(next.event.as_deref(), Some("version"));
    let data = next.json();
    assert_eq!(data["version"], version + 1);
    assert_eq!(data["state"], json!({"seen": 2}));
}
