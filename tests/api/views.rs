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
    // What a room looks like depends on who asks, and caches are told so; a viewer's tag is
    // the version, so their If-None-Match stays right while the room does not change.
    let path = format!("/rooms/{id}");
    let response = app
        .request(reqwest::Method::GET, &path, Some(&bob.token), None)
        .await;
    assert_eq!(response.headers()["vary"], "Authorization");
    let tag = response.headers()["etag"].to_str().unwrap().to_owned();
    let again = app
        .client
        .get(format!("{}{path}", app.address))
        .bearer_auth(&bob.token)
        .header("if-none-match", &tag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(again.headers()["vary"], "Authorization");
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

/// Random games with a fixed seed (a small budget: the full-strength run is the same test with
/// `VIEW_GAMES` raised): after every action, on every route and stream, as each player, a
/// watcher and someone not signed in, no secret of another player shows before the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_games_never_show_another_players_secret() {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    let games: usize = std::env::var("VIEW_GAMES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    let mut rng = StdRng::seed_from_u64(2026);
    let app = TestApp::spawn().await;
    let game = "secret-words";
    app.publish(game, &example("secret-words.js")).await;
    let watcher = app.register(&unique("watcher")).await;

    // Secret words: up to three players join, say things and sometimes quit.
    for _ in 0..games {
        let players: Vec<TestPlayer> = join_all_players(&app, 3).await;
        let room = app.create_room(&players[0], json!({"game": game})).await;
        let id = room["id"].as_str().unwrap().to_owned();
        let mut seated = vec![players[0].clone()];
        for _ in 0..8 {
            let version = match rng.random_range(0..4) {
                0 if seated.len() < players.len() => {
                    let next = players[seated.len()].clone();
                    let response = app.join(&next, &id).await;
                    assert_eq!(response.status(), StatusCode::OK);
                    seated.push(next);
                    response.json::<Value>().await.unwrap()["version"]
                        .as_i64()
                        .unwrap()
                }
                _ => {
                    let who = &seated[rng.random_range(0..seated.len())];
                    let said = format!("words-{}", rng.random::<u32>());
                    app.play_ok(who, &id, json!({"say": said})).await["version"]
                        .as_i64()
                        .unwrap()
                }
            };
            let mut words = Vec::new();
            for player in &seated {
                words.push((player.id.clone(), word_of(&app, &id, player).await));
            }
            let viewers: Vec<Option<&TestPlayer>> = seated
                .iter()
                .map(Some)
                .chain([Some(&watcher), None])
                .collect();
            for viewer in viewers {
                let seen = everything_seen(&app, &id, game, version, viewer).await;
                for (owner, word) in &words {
                    if viewer.is_some_and(|v| &v.id == owner) {
                        continue;
                    }
                    assert!(!seen.contains(word.as_str()), "a viewer saw {owner}'s word");
                }
            }
        }
    }

    // Battleship between two people placing at random and shooting at random.
    for _ in 0..games {
        let players = join_all_players(&app, 2).await;
        let room = app
            .create_room(&players[0], json!({"game": "battleship"}))
            .await;
        let id = room["id"].as_str().unwrap().to_owned();
        assert_eq!(app.join(&players[1], &id).await.status(), StatusCode::OK);
        for player in &players {
            let fleet = random_fleet(&mut rng);
            app.play_ok(player, &id, json!({"fleet": fleet})).await;
        }
        let mut turn = 0;
        for _ in 0..40 {
            let mv = json!({"row": rng.random_range(0..10), "col": rng.random_range(0..10)});
            let response = app.play(&players[turn], &id, mv).await;
            if response.status() != StatusCode::OK {
                continue; // a cell already shot: the same player tries again
            }
            let room: Value = response.json().await.unwrap();
            if room["finished"] == true {
                break;
            }
            turn = 1 - turn;
            let version = room["version"].as_i64().unwrap();
            for (seat, viewer) in [
                (Some(0), Some(&players[0])),
                (Some(1), Some(&players[1])),
                (None, Some(&watcher)),
                (None, None),
            ] {
                let seen = everything_seen(&app, &id, "battleship", version, viewer).await;
                assert_only_sunk_ships_shown(&seen, seat);
            }
        }
    }
}

/// `count` new players.
async fn join_all_players(app: &TestApp, count: usize) -> Vec<TestPlayer> {
    let mut players = Vec::new();
    for _ in 0..count {
        players.push(app.register(&unique("p")).await);
    }
    players
}

/// A legal fleet, placed at random.
fn random_fleet(rng: &mut impl rand::Rng) -> Value {
    loop {
        let mut taken = std::collections::HashSet::new();
        let mut fleet = Vec::new();
        for size in [5, 4, 3, 3, 2] {
            let across = rng.random_bool(0.5);
            let (row, col) = match across {
                true => (rng.random_range(0..10), rng.random_range(0..=10 - size)),
                false => (rng.random_range(0..=10 - size), rng.random_range(0..10)),
            };
            let cells: Vec<(i64, i64)> = (0..size)
                .map(|i| {
                    if across {
                        (row, col + i)
                    } else {
                        (row + i, col)
                    }
                })
                .collect();
            if cells.iter().any(|c| taken.contains(c)) {
                break;
            }
            taken.extend(cells);
            fleet.push(json!({"row": row, "col": col, "across": across}));
        }
        if fleet.len() == 5 {
            return Value::Array(fleet);
        }
    }
}

/// Every Battleship state in `seen` (room bodies, history entries, stream events) shows of
/// each fleet other than `seat`'s only the ships its opponent's shots sank.
fn assert_only_sunk_ships_shown(seen: &str, seat: Option<usize>) {
    let mut states = Vec::new();
    collect_states(
        &serde_json::Deserializer::from_str(seen)
            .into_iter::<Value>()
            .filter_map(Result::ok)
            .collect::<Vec<_>>(),
        &mut states,
    );
    assert!(!states.is_empty());
    for state in states {
        for side in 0..2 {
            if Some(side) == seat || state["fleets"][side].is_null() {
                continue;
            }
            let shown = state["fleets"][side].as_array().unwrap();
            let sunk: Vec<&Value> = state["shots"][1 - side]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|shot| shot.get("sunk").filter(|s| !s.is_null()))
                .collect();
            assert_eq!(
                shown.len(),
                sunk.len(),
                "side {side} shows unsunk ships: {state}"
            );
        }
    }
}

/// Every Battleship state inside `values`.
fn collect_states(values: &[Value], states: &mut Vec<Value>) {
    for value in values {
        match value {
            Value::Object(map) => {
                if map.contains_key("fleets") && map.contains_key("shots") {
                    states.push(value.clone());
                }
                collect_states(&map.values().cloned().collect::<Vec<_>>(), states);
            }
            Value::Array(items) => collect_states(items, states),
            _ => {}
        }
    }
}
