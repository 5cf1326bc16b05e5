//! Uploaded JavaScript games: publishing, versions, ownership, validation, and rooms of them
//! with everything rooms have (quick play, private rooms, play again, If-Match, history).

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_problem, example, unique, TestApp};

/// A counter whose every move adds `step`; the room finishes at 3 or more.
fn counter(step: i64) -> String {
    format!(
        "'use strict';
        module.exports = {{
          onRoomStart: (room) => ({{ state: {{ count: 0, private: room.roomStartContext.private }} }}),
          onPlayerJoin: () => ({{}}),
          onPlayerQuit: () => ({{}}),
          onPlayerMove(player, move, room) {{
            const count = room.state.count + {step};
            return count >= 3 ? {{ state: {{ count }}, finished: true }} : {{ state: {{ count }} }};
          }},
        }};"
    )
}

#[tokio::test]
async fn the_first_upload_creates_the_game_and_later_ones_publish_versions() {
    let app = TestApp::spawn().await;
    let author = app.register(&unique("author")).await;
    let response = app.upload(&author, "counter", &counter(1)).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!(response.headers()["location"], "/games/counter");
    let game: Value = response.json().await.unwrap();
    assert_eq!(game["id"], "counter");
    assert_eq!(game["name"], "counter", "the name defaults to the id");
    assert_eq!(game["builtin"], false);
    assert_eq!(game["version"], 1);
    assert_eq!(game["format"], "commonjs");
    assert_eq!(game["owner"]["id"], author.id.as_str());
    assert_eq!(game["bots"], false);

    let response = app.upload(&author, "counter", &counter(2)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let game: Value = response.json().await.unwrap();
    assert_eq!(game["version"], 2);

    let stranger = app.register(&unique("stranger")).await;
    let response = app.upload(&stranger, "counter", &counter(5)).await;
    assert_problem(response, StatusCode::FORBIDDEN, "not_the_owner").await;
    assert_eq!(app.get_json("/games/counter").await["version"], 2);

    let listed = app.get_json("/games").await;
    let ids: Vec<&str> = listed["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["battleship", "tictactoe", "tictactoe3d", "counter"]);
    assert_eq!(listed["games"][0]["builtin"], true);
    assert_eq!(listed["games"][0]["owner"], Value::Null);
}

#[tokio::test]
async fn json_uploads_carry_settings_and_es_modules_are_accepted() {
    let app = TestApp::spawn().await;
    let author = app.register(&unique("author")).await;
    let body = json!({
        "source": example("connect-four.js"),
        "name": "Connect Four",
        "description": "Four in a row.",
        "minPlayers": 2,
        "maxPlayers": 2,
    });
    let response = app
        .client
        .put(format!("{}/games/connect-four", app.address))
        .bearer_auth(&author.token)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let game: Value = response.json().await.unwrap();
    assert_eq!(game["format"], "module");
    assert_eq!(game["name"], "Connect Four");
    assert_eq!(game["maxPlayers"], 2);

    // A raw re-upload without settings keeps them.
    let again = app
        .upload(&author, "connect-four", &example("connect-four.js"))
        .await;
    let game: Value = again.json().await.unwrap();
    assert_eq!(
        (game["version"].as_i64(), game["name"].as_str()),
        (Some(2), Some("Connect Four"))
    );

    // maxPlayers caps the room.
    let (room, _, _) = app.started_game("connect-four").await;
    let third = app.register(&unique("third")).await;
    let response = app.join(&third, &room).await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
}

#[tokio::test]
async fn bad_uploads_are_refused_by_name_and_store_nothing() {
    let app = TestApp::spawn().await;
    let author = app.register(&unique("author")).await;

    let syntax = app
        .upload(
            &author,
            "broken",
            "'use strict';\nconst a = 1;\nlet b = ;\n",
        )
        .await;
    let problem = assert_problem(
        syntax,
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_game_code",
    )
    .await;
    assert_eq!(problem["line"], 3, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("line 3"),
        "{problem}"
    );

    let partial = app
        .upload(
            &author,
            "broken",
            "module.exports = { onRoomStart() {}, onPlayerMove: 3 };",
        )
        .await;
    let problem = assert_problem(
        partial,
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_game_code",
    )
    .await;
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains("onPlayerJoin, onPlayerQuit, onPlayerMove"),
        "{detail}"
    );

    let throws = app
        .upload(&author, "broken", "throw new Error('not today');")
        .await;
    let problem = assert_problem(
        throws,
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_game_code",
    )
    .await;
    assert!(
        problem["detail"].as_str().unwrap().contains("not today"),
        "{problem}"
    );

    let big = format!("/*{}*/", "x".repeat(1 << 20));
    let response = app.upload(&author, "broken", &big).await;
    assert_problem(response, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large").await;

    let response = app.upload(&author, "tictactoe", &counter(1)).await;
    assert_problem(response, StatusCode::CONFLICT, "game_is_builtin").await;
    let response = app.upload(&author, "Not_An_Id", &counter(1)).await;
    assert_problem(response, StatusCode::BAD_REQUEST, "invalid_game_id").await;
    let response = app
        .client
        .put(format!("{}/games/anonymous", app.address))
        .header("content-type", "application/javascript")
        .body(counter(1))
        .send()
        .await
        .unwrap();
    assert_problem(response, StatusCode::UNAUTHORIZED, "missing_token").await;

    for id in ["broken", "anonymous", "not_an_id"] {
        let response = app.get(&format!("/games/{id}")).await;
        assert_problem(response, StatusCode::NOT_FOUND, "game_not_found").await;
    }
    assert_eq!(versions_in_database(&app).await, "");
}

#[tokio::test]
async fn every_version_of_the_source_is_kept_and_served() {
    let app = TestApp::spawn().await;
    let author = app.publish("counter", &counter(1)).await;
    app.upload(&author, "counter", &counter(2)).await;

    let response = app.get("/games/counter/source?version=1").await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["etag"], "\"1\"");
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/javascript"));
    assert_eq!(response.text().await.unwrap(), counter(1));
    let latest = app.get("/games/counter/source").await;
    assert_eq!(latest.headers()["etag"], "\"2\"");
    assert_eq!(latest.text().await.unwrap(), counter(2));

    let missing = app.get("/games/counter/source?version=3").await;
    assert_problem(missing, StatusCode::NOT_FOUND, "game_version_not_found").await;
    let builtin = app.get("/games/tictactoe/source").await;
    assert_problem(builtin, StatusCode::CONFLICT, "game_is_builtin").await;
    assert_eq!(versions_in_database(&app).await, "counter|1\ncounter|2\n");
}

#[tokio::test]
async fn a_room_plays_the_version_it_was_created_with_for_its_whole_life() {
    let app = TestApp::spawn().await;
    let author = app.publish("counter", &counter(1)).await;
    let old = app.create_room(&author, json!({"game": "counter"})).await;
    let old_id = old["id"].as_str().unwrap();
    assert_eq!(old["gameVersion"], 1);

    app.upload(&author, "counter", &counter(2)).await;
    let new = app.create_room(&author, json!({"game": "counter"})).await;
    assert_eq!(new["gameVersion"], 2);

    let after = app.play_ok(&author, old_id, json!({})).await;
    assert_eq!(after["state"]["count"], 1, "version 1 adds one");
    let after = app
        .play_ok(&author, new["id"].as_str().unwrap(), json!({}))
        .await;
    assert_eq!(after["state"]["count"], 2, "version 2 adds two");

    // Play again keeps the version too.
    app.play_ok(&author, old_id, json!({})).await;
    let done = app.play_ok(&author, old_id, json!({})).await;
    assert_eq!(done["finished"], true);
    let reset: Value = app
        .post(&format!("/rooms/{old_id}/reset"), Some(&author.token), None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(reset["gameVersion"], 1);
    assert_eq!(reset["state"]["count"], 0);
    assert_eq!(
        app.play_ok(&author, old_id, json!({})).await["state"]["count"],
        1
    );
}

#[tokio::test]
async fn hosted_rooms_have_quick_play_private_rooms_if_match_and_history() {
    let app = TestApp::spawn().await;
    let game = app.publish_example("tictactoe.js", "js-tictactoe").await;
    let (a, b) = (
        app.register(&unique("a")).await,
        app.register(&unique("b")).await,
    );
    let body = json!({"game": game});
    let quick = |player: &crate::helpers::TestPlayer| {
        let token = player.token.clone();
        let (app, body) = (&app, &body);
        async move { app.post("/rooms/quickplay", Some(&token), Some(body)).await }
    };
    let first = quick(&a).await;
    assert_eq!(first.status(), StatusCode::CREATED);
    let first: Value = first.json().await.unwrap();
    let second = quick(&b).await;
    assert_eq!(second.status(), StatusCode::OK);
    let second: Value = second.json().await.unwrap();
    assert_eq!(first["id"], second["id"]);
    assert_eq!(second["state"]["status"], "inGame");
    let id = second["id"].as_str().unwrap();

    // A pinned, stale version is refused before any hook runs.
    let stale = app
        .client
        .post(format!("{}/rooms/{id}/moves", app.address))
        .bearer_auth(&a.token)
        .header("if-match", "\"2\"")
        .body(json!({"x": 0, "y": 0}).to_string())
        .send()
        .await
        .unwrap();
    assert_problem(stale, StatusCode::PRECONDITION_FAILED, "version_mismatch").await;
    let moved = app.play_ok(&a, id, json!({"x": 0, "y": 0})).await;
    assert_eq!(moved["version"], 4);
    let kinds: Vec<Value> = app
        .events(id)
        .await
        .iter()
        .map(|e| e["kind"].clone())
        .collect();
    assert_eq!(
        kinds,
        [
            json!("room_start"),
            json!("join"),
            json!("join"),
            json!("move")
        ]
    );

    let private = app
        .create_room(&a, json!({"game": game, "private": true}))
        .await;
    let listed = app.get_json(&format!("/rooms?game={game}")).await;
    assert!(!listed["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["id"] == private["id"]));

    // This game exports enumerateMoves, so it has bots; a game without it has none.
    let bot = app
        .post(
            "/rooms",
            Some(&a.token),
            Some(&json!({"game": game, "bot": "easy"})),
        )
        .await;
    assert_eq!(bot.status(), StatusCode::CREATED);
    let words = app.publish_example("secret-words.js", "secret-words").await;
    let bot = app
        .post(
            "/rooms",
            Some(&a.token),
            Some(&json!({"game": words, "bot": "easy"})),
        )
        .await;
    assert_problem(bot, StatusCode::UNPROCESSABLE_ENTITY, "bots_unsupported").await;
}

#[tokio::test]
async fn connect_four_is_played_to_the_end() {
    let app = TestApp::spawn().await;
    let game = app.publish_example("connect-four.js", "connect-four").await;
    let (room, red, yellow) = app.started_game(&game).await;
    for _ in 0..3 {
        app.play_ok(&red, &room, json!({"column": 3})).await;
        app.play_ok(&yellow, &room, json!({"column": 4})).await;
    }
    let response = app.play(&red, &room, json!({"column": 7})).await;
    let problem = assert_problem(response, StatusCode::UNPROCESSABLE_ENTITY, "game_refused").await;
    assert_eq!(problem["reason"], "invalid_move");
    let won = app.play_ok(&red, &room, json!({"column": 3})).await;
    assert_eq!(won["finished"], true);
    assert_eq!(won["state"]["winner"]["id"], red.id.as_str());
    assert_eq!(
        won["state"]["line"],
        json!([[0, 3], [1, 3], [2, 3], [3, 3]])
    );
}

#[tokio::test]
async fn what_a_hook_sees_and_how_its_throws_are_reported() {
    let app = TestApp::spawn().await;
    let source = r#"
        class NotYourTurn extends Error { constructor(m) { super(m); this.name = 'NotYourTurn'; } }
        module.exports = {
          onRoomStart(room) {
            return { state: { seen: { players: room.players, version: room.version, state: room.state,
                                      joinable: room.joinable, finished: room.finished,
                                      context: room.roomStartContext } } };
          },
          onPlayerJoin(player, room) { room.logger.info('joined', player.username, { n: 1 }); return {}; },
          onPlayerQuit() { return undefined; },
          onPlayerMove(player, move, room) {
            console.log('move', move);
            switch (move.do) {
              case 'coded': { const e = new Error('wait your turn'); e.code = 'not_your_turn'; throw e; }
              case 'named': throw new NotYourTurn('it is not yours');
              case 'string': throw 'plain words';
              case 'async': return (async () => ({ state: { async: true } }))();
              case 'clone': {
                const original = { when: new Date(0), tags: new Set(['a']), nested: [1, { two: 2 }] };
                const copy = structuredClone(original);
                copy.nested[1].two = 3;
                return { state: { two: original.nested[1].two, set: copy.tags.has('a'),
                                  time: copy.when.getTime(), random: typeof Math.random(),
                                  player, mutated: (room.version = 99) } };
              }
              case 'extra': return { state: 1, score: 2 };
              default: return {};
            }
          },
        };"#;
    let author = app.publish("inspector", source).await;
    let room = app
        .create_room(&author, json!({"game": "inspector", "private": true}))
        .await;
    assert_eq!(
        room["state"]["seen"],
        json!({"players": [], "version": 0, "state": null, "joinable": true,
               "finished": false, "context": {"private": true}})
    );
    let id = room["id"].as_str().unwrap();

    let refused = |mv: Value| {
        let (app, author) = (&app, &author);
        async move {
            let response = app.play(author, id, mv).await;
            assert_problem(response, StatusCode::UNPROCESSABLE_ENTITY, "game_refused").await
        }
    };
    let coded = refused(json!({"do": "coded"})).await;
    assert_eq!(
        (coded["reason"].as_str(), coded["detail"].as_str()),
        (Some("not_your_turn"), Some("wait your turn"))
    );
    let named = refused(json!({"do": "named"})).await;
    assert_eq!(
        (named["reason"].as_str(), named["detail"].as_str()),
        (Some("NotYourTurn"), Some("it is not yours"))
    );
    let plain = refused(json!({"do": "string"})).await;
    assert_eq!(
        (plain["reason"].as_str(), plain["detail"].as_str()),
        (Some("Error"), Some("plain words"))
    );

    let async_move = app.play_ok(&author, id, json!({"do": "async"})).await;
    assert_eq!(async_move["state"], json!({"async": true}));
    let cloned = app.play_ok(&author, id, json!({"do": "clone"})).await;
    assert_eq!(
        cloned["state"],
        json!({"two": 2, "set": true, "time": 0, "random": "number",
               "player": {"id": author.id, "username": author.username}, "mutated": 99})
    );
    assert_eq!(
        cloned["version"], 4,
        "a hook mutates its copy, never the room"
    );
    let extra = app.play(&author, id, json!({"do": "extra"})).await;
    let problem = assert_problem(extra, StatusCode::INTERNAL_SERVER_ERROR, "invalid_patch").await;
    assert!(
        problem["detail"].as_str().unwrap().contains("`score`"),
        "{problem}"
    );
    let quit: Value = app.quit(&author, id).await.json().await.unwrap();
    assert_eq!(
        quit["version"], 5,
        "an undefined patch is an empty one, and still a version"
    );
}

/// `game_id|version` of every stored version, read from the database.
async fn versions_in_database(app: &TestApp) -> String {
    let rows: Vec<(String, i64)> = crate::databases::database_rows(
        &app.database,
        "SELECT game_id, version FROM game_versions ORDER BY game_id, version",
    )
    .await;
    rows.iter()
        .map(|(game, version)| format!("{game}|{version}\n"))
        .collect()
}
