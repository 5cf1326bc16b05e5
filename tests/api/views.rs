//! Hidden information: every way a room leaves the server shows each viewer only their own
//! view (a hosted game's `onPlayerView`, the built-in Battleship's), and a failing view hook
//! answers with its fault, never with the whole state.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_problem, example, unique, TestApp, TestPlayer};
use crate::sse_client::EventStream;

/// Everything `viewer` (a token, or none) receives about `room`: the room, the history, the
/// listing of its game, and its stream up to `version`, as text.
async fn everything_seen(
    app: &TestApp,
    room: &str,
    game: &str,
    version: i64,
    viewer: Option<&TestPlayer>,
) -> String {
    let token = viewer.map(|p| p.token.as_str());
    let mut seen = String::new();
    for path in [
        format!("/rooms/{room}"),
        format!("/rooms/{room}/events"),
        format!("/rooms?game={game}"),
    ] {
        let response = app.request(reqwest::Method::GET, &path, token, None).await;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        seen.push_str(&response.text().await.unwrap());
    }
    let query = token.map_or_else(String::new, |t| format!("&access_token={t}"));
    let url = format!("{}/rooms/{room}/stream?after=0{query}", app.address);
    let mut stream = EventStream::open(&app.client, &url, None).await;
    for frame in stream.versions_through(version).await {
        seen.push_str(&frame.to_string());
    }
    seen
}

/// The word `player` was dealt, as they see it.
async fn word_of(app: &TestApp, room: &str, player: &TestPlayer) -> String {
    let response = app
        .request(
            reqwest::Method::GET,
            &format!("/rooms/{room}"),
            Some(&player.token),
            None,
        )
        .await;
    let body: Value = response.json().await.unwrap();
    body["state"]["words"][&player.id]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_way_out_shows_another_players_secret_before_the_end() {
    let app = TestApp::spawn().await;
    let game = "secret-words";
    app.publish(game, &example("secret-words.js")).await;
    let listing = app.get_json(&format!("/games/{game}")).await;
    assert_eq!(listing["onPlayerView"], true);
    let alice = app.register(&unique("alice")).await;
    let bob = app.register(&unique("bob")).await;
    let lobby_url = format!("{}/rooms/stream?game={game}", app.address);
    let mut lobby = EventStream::open(&app.client, &lobby_url, None).await;
    let room = app.create_room(&alice, json!({"game": game})).await;
    let id = room["id"].as_str().unwrap().to_owned();
    let joined: Value = app.join(&bob, &id).await.json().await.unwrap();
    // The lobby's stream shows what a watcher sees: its two changes, created and filled.
    let mut lobby_seen = String::new();
    for _ in 0..2 {
        lobby_seen.push_str(lobby.event().await.data.as_deref().unwrap());
    }
    let said = app.play_ok(&alice, &id, json!({"say": "hello"})).await;
    let version = said["version"].as_i64().unwrap();

    let (alice_word, bob_word) = (
        word_of(&app, &id, &alice).await,
        word_of(&app, &id, &bob).await,
    );
    assert!(alice_word.starts_with("secret-") && bob_word.starts_with("secret-"));
    assert_ne!(alice_word, bob_word);
    assert_eq!(
        joined["state"]["words"][&alice.id], "hidden",
        "bob's join answer"
    );
    assert_eq!(
        said["state"]["words"][&bob.id], "hidden",
        "alice's move answer"
    );

    assert!(lobby_seen.contains("\"hidden\""), "{lobby_seen}");
    for secret in [&alice_word, &bob_word] {
        assert!(
            !lobby_seen.contains(secret.as_str()),
            "the lobby showed {secret}"
        );
    }
    let watcher = app.register(&unique("watcher")).await;
    for (viewer, secrets) in [
        (Some(&alice), vec![&bob_word]),
        (Some(&bob), vec![&alice_word]),
        (Some(&watcher), vec![&alice_word, &bob_word]),
        (None, vec![&alice_word, &bob_word]),
    ] {
        let seen = everything_seen(&app, &id, game, version, viewer).await;
        for secret in secrets {
            assert!(
                !seen.contains(secret.as_str()),
                "{viewer:?} saw {secret}: {seen}"
            );
        }
        if let Some(viewer) = viewer.filter(|v| v.id != watcher.id) {
            let own = if viewer.id == alice.id {
                &alice_word
            } else {
                &bob_word
            };
            assert!(seen.contains(own.as_str()), "a player sees their own word");
        }
    }
    // Another player's move is hidden in the history until the end.
    let bobs_history = app
        .request(
            reqwest::Method::GET,
            &format!("/rooms/{id}/events"),
            Some(&bob.token),
            None,
        )
        .await
        .json::<Value>()
        .await
        .unwrap();
    let last = bobs_history["events"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["kind"], "move");
    assert_eq!(last["move"], Value::Null, "{last}");

    // After the end, everyone sees everything.
    let ended = app.play_ok(&alice, &id, json!({"end": true})).await;
    assert_eq!(ended["finished"], true);
    let seen = everything_seen(&app, &id, game, ended["version"].as_i64().unwrap(), None).await;
    assert!(seen.contains(&alice_word) && seen.contains(&bob_word));
    assert!(
        seen.contains("\"say\":\"hello\""),
        "moves show once it is over"
    );
}

#[tokio::test]
async fn a_failing_view_hook_answers_with_its_fault_and_never_the_state() {
    let app = TestApp::spawn().await;
    let source = example("secret-words.js").replace(
        "if (room.finished) return room.state;",
        "if (room.state.said.length > 0) { for (;;) {} }\n    if (room.finished) return room.state;",
    );
    let game = "looping-view";
    app.publish(game, &source).await;
    let alice = app.register(&unique("alice")).await;
    let room = app.create_room(&alice, json!({"game": game})).await;
    let id = room["id"].as_str().unwrap().to_owned();
    let response = app
        .play(&alice, &id, json!({"say": "the-plain-state"}))
        .await;
    let problem = assert_problem(response, StatusCode::INTERNAL_SERVER_ERROR, "hook_timeout").await;
    assert!(
        !problem.to_string().contains("the-plain-state"),
        "{problem}"
    );
    let response = app.get(&format!("/rooms/{id}")).await;
    let body = assert_problem(response, StatusCode::INTERNAL_SERVER_ERROR, "hook_timeout").await;
    assert!(!body.to_string().contains("secret-"), "{body}");
    let response = app.get(&format!("/rooms/{id}/events")).await;
    assert_problem(response, StatusCode::INTERNAL_SERVER_ERROR, "hook_timeout").await;
}

/// Battleship against the medium bot: until the end the player never sees a bot ship that
/// is not sunk, on any route; a watcher sees no ship at all; at the end, both fleets.
#[tokio::test]
async fn battleship_hides_each_fleet_until_it_sinks() {
    let app = TestApp::spawn().await;
    let player = app.register(&unique("admiral")).await;
    let room = app
        .create_room(&player, json!({"game": "battleship", "bot": "medium"}))
        .await;
    let id = room["id"].as_str().unwrap().to_owned();
    assert_eq!(room["state"]["status"], "placing");
    assert_eq!(
        room["state"]["placed"],
        json!([false, true]),
        "the bot placed at once"
    );
    assert_eq!(
        room["state"]["fleets"][1],
        json!([]),
        "the bot's fleet is hidden"
    );
    let fleet: Vec<Value> = [0, 2, 4, 6, 8]
        .iter()
        .map(|row| json!({"row": row, "col": 0, "across": true}))
        .collect();
    let mut state = app.play_ok(&player, &id, json!({"fleet": fleet})).await;
    assert_eq!(state["state"]["status"], "inGame");
    assert_eq!(state["state"]["fleets"][0].as_array().unwrap().len(), 5);
    let mut shots = 0;
    'game: for row in 0..10 {
        for col in 0..10 {
            if state["finished"] == true {
                break 'game;
            }
            let shown = state["state"]["fleets"][1].as_array().unwrap().len();
            let sunk = state["state"]["shots"][0]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| !s["sunk"].is_null())
                .count();
            assert_eq!(shown, sunk, "only sunk enemy ships are shown");
            let watched = app.room(&id).await;
            assert_eq!(
                watched["state"]["fleets"][0].as_array().map(Vec::len),
                Some(
                    watched["state"]["shots"][1]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|s| !s["sunk"].is_null())
                        .count()
                ),
                "a watcher sees only sunk ships"
            );
            state = app
                .play_ok(&player, &id, json!({"row": row, "col": col}))
                .await;
            shots += 1;
        }
    }
    assert_eq!(state["finished"], true, "after {shots} shots");
    let end = app.room(&id).await;
    assert_eq!(
        end["state"]["fleets"][1].as_array().unwrap().len(),
        5,
        "everything at the end"
    );
}
