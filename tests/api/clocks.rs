//! Clocks: `triggerTimeoutAt` in patches, `onTimeout`, and deadlines that fire exactly once,
//! through a `kill -9` and with several servers on one database; the built-in games' clock.

use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_problem, example, unique, TestApp, TestPlayer};

/// `examples/timed.js`: a game that keeps time as its moves say (see its header).
pub(crate) fn timed() -> String {
    example("timed.js")
}

/// The same game without `onTimeout`.
fn untimed() -> String {
    let source = timed();
    let start = source.find("  onTimeout").unwrap();
    let end = source.rfind("  },").unwrap() + 4;
    format!("{}{}", &source[..start], &source[end..])
}

/// Hooks may take a second here: a test that races the clock must not lose a timeout to a
/// machine busy with other tests (the limits themselves are tested in sandbox.rs).
const HOOK_TIME_MS: u64 = 1000;

pub(crate) fn patient(config: &mut turnhouse::config::Config) {
    config.hook_limits.time_ms = HOOK_TIME_MS;
}

/// A server with the timed game published; returns the game's id.
async fn timed_app() -> (TestApp, String) {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), patient).await;
    let id = unique("timed").replace('_', "-");
    app.publish(&id, &timed()).await;
    (app, id)
}

/// A room of `game` with one player.
async fn room_of(app: &TestApp, game: &str) -> (String, TestPlayer) {
    let player = app.register(&unique("p")).await;
    let room = app.create_room(&player, json!({"game": game})).await;
    (room["id"].as_str().unwrap().to_owned(), player)
}

fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["kind"] == kind).collect()
}

/// Waits (up to 15 s) until the room's history has `count` versions of `kind`.
async fn await_kind(app: &TestApp, room: &str, kind: &str, count: usize) -> Vec<Value> {
    for _ in 0..300 {
        let events = app.events(room).await;
        if of_kind(&events, kind).len() >= count {
            return events;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("room {room} never had {count} `{kind}` versions");
}

/// The room once it shows `version`.
async fn await_version(app: &TestApp, room: &str, version: &Value) -> Value {
    for _ in 0..300 {
        let shown = app.room(room).await;
        if &shown["version"] == version {
            return shown;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("room {room} never showed version {version}");
}

fn parse(at: &Value) -> DateTime<Utc> {
    at.as_str().unwrap().parse().unwrap()
}

#[tokio::test]
async fn a_deadline_fires_once_as_a_version_of_its_own() {
    let (app, game) = timed_app().await;
    let (room, player) = room_of(&app, &game).await;
    let armed = app.play_ok(&player, &room, json!({"arm": 200})).await;
    let at = parse(&armed["triggerTimeoutAt"]);
    assert!(at > Utc::now() - chrono::TimeDelta::seconds(1), "{armed}");
    assert_eq!(
        app.events(&room).await.last().unwrap()["triggerTimeoutAt"],
        armed["triggerTimeoutAt"]
    );

    let events = await_kind(&app, &room, "timeout", 1).await;
    let timeout = of_kind(&events, "timeout")[0];
    assert_eq!(timeout["player"], Value::Null);
    assert_eq!(
        timeout["triggerTimeoutAt"],
        Value::Null,
        "the deadline is used up"
    );
    assert_eq!(timeout["state"]["timeouts"], 1);
    assert!(
        parse(&timeout["createdAt"]) >= at,
        "fired before its time: {timeout}"
    );
    // It stays fired once.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let room_now = app.room(&room).await;
    assert_eq!(room_now["triggerTimeoutAt"], Value::Null);
    assert_eq!(room_now["state"]["timeouts"], 1);
    assert_eq!(of_kind(&app.events(&room).await, "timeout").len(), 1);
}

#[tokio::test]
async fn a_move_in_time_voids_the_deadline_and_one_without_the_key_keeps_it() {
    let (app, game) = timed_app().await;
    let (cleared, player) = room_of(&app, &game).await;
    app.play_ok(&player, &cleared, json!({"arm": 400})).await;
    let after = app.play_ok(&player, &cleared, json!({"clear": true})).await;
    assert_eq!(after["triggerTimeoutAt"], Value::Null);

    let (kept, player) = room_of(&app, &game).await;
    let armed = app.play_ok(&player, &kept, json!({"arm": 400})).await;
    let moved = app.play_ok(&player, &kept, json!({"count": 1})).await;
    assert_eq!(moved["triggerTimeoutAt"], armed["triggerTimeoutAt"]);

    let events = await_kind(&app, &kept, "timeout", 1).await;
    assert_eq!(of_kind(&events, "timeout")[0]["state"]["moves"], 1);
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(of_kind(&app.events(&cleared).await, "timeout").is_empty());
}

#[tokio::test]
async fn a_deadline_in_the_past_fires_at_once_and_a_bad_one_is_refused() {
    let (app, game) = timed_app().await;
    let (room, player) = room_of(&app, &game).await;
    let response = app.play(&player, &room, json!({"at": "tomorrow"})).await;
    let problem =
        assert_problem(response, StatusCode::INTERNAL_SERVER_ERROR, "invalid_patch").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("triggerTimeoutAt"),
        "{problem}"
    );
    assert_eq!(app.room(&room).await["version"], 2, "nothing changed");

    let armed = app
        .play_ok(&player, &room, json!({"at": "2000-01-01T01:00:00+01:00"}))
        .await;
    assert_eq!(
        armed["triggerTimeoutAt"], "2000-01-01T00:00:00.000Z",
        "stored in UTC"
    );
    await_kind(&app, &room, "timeout", 1).await;
}

#[tokio::test]
async fn a_game_without_on_timeout_cannot_set_a_deadline_or_have_a_clock() {
    let app = TestApp::spawn().await;
    let game = unique("untimed").replace('_', "-");
    app.publish(&game, &untimed()).await;
    let listing = app.get_json(&format!("/games/{game}")).await;
    assert_eq!(listing["onTimeout"], false, "{listing}");
    let (room, player) = room_of(&app, &game).await;
    let response = app.play(&player, &room, json!({"arm": 100})).await;
    let problem =
        assert_problem(response, StatusCode::INTERNAL_SERVER_ERROR, "invalid_patch").await;
    assert!(
        problem["detail"].as_str().unwrap().contains("onTimeout"),
        "{problem}"
    );
    assert_eq!(app.room(&room).await["triggerTimeoutAt"], Value::Null);

    let response = app
        .post(
            "/rooms",
            Some(&player.token),
            Some(&json!({"game": game, "clock": {"moveSeconds": 30}})),
        )
        .await;
    assert_problem(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "clock_unsupported",
    )
    .await;
    for bad in [
        json!({"moveSeconds": 0}),
        json!({"moveSeconds": 14 * 86_400 + 1}),
    ] {
        let body = json!({"game": "tictactoe", "clock": bad});
        let response = app.post("/rooms", Some(&player.token), Some(&body)).await;
        assert_problem(response, StatusCode::BAD_REQUEST, "invalid_body").await;
    }
}

/// A timeout that re-arms at "now" gets one version a second, not a spin, and other rooms go
/// on as usual meanwhile; a timeout that loops until its time limit is a fault: the deadline
/// is cleared, once, in a `timeout_fault` version.
#[tokio::test]
async fn hostile_timeouts_are_bounded_and_faults_clear_the_deadline() {
    let (app, game) = timed_app().await;
    let (spinning, player) = room_of(&app, &game).await;
    app.play_ok(&player, &spinning, json!({"mode": "rearm"}))
        .await;
    app.play_ok(&player, &spinning, json!({"arm": 0})).await;
    let (looping, looper) = room_of(&app, &game).await;
    app.play_ok(&looper, &looping, json!({"mode": "loop"}))
        .await;
    app.play_ok(&looper, &looping, json!({"arm": 0})).await;

    // Another room plays on meanwhile.
    let (other, mover) = room_of(&app, &game).await;
    for _ in 0..20 {
        app.play_ok(&mover, &other, json!({"count": 1})).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let events = await_kind(&app, &looping, "timeout_fault", 1).await;
    let fault = of_kind(&events, "timeout_fault")[0];
    assert_eq!(fault["triggerTimeoutAt"], Value::Null);
    assert_eq!(fault["state"]["timeouts"], 0, "nothing else changed");
    assert!(of_kind(&events, "timeout").is_empty());

    let started = Utc::now();
    let before = of_kind(&app.events(&spinning).await, "timeout").len();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let events = app.events(&spinning).await;
    let timeouts = of_kind(&events, "timeout");
    let lately = timeouts.len() - before;
    let elapsed = (Utc::now() - started).num_milliseconds() as f64 / 1000.0;
    assert!(lately >= 1, "it keeps firing");
    assert!(
        (lately as f64) <= elapsed + 1.0,
        "{lately} timeouts in {elapsed} s: at most one a second"
    );
    for pair in timeouts.windows(2) {
        let gap = parse(&pair[1]["createdAt"]) - parse(&pair[0]["createdAt"]);
        assert!(gap >= chrono::TimeDelta::milliseconds(1000), "{gap}");
    }
    assert_eq!(
        of_kind(&app.events(&looping).await, "timeout_fault").len(),
        1
    );
}

/// A move sent within ±5 ms of its room's deadline races the timeout: in every trial exactly
/// one of them applies (the move, or the timeout that finishes the room and so refuses it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_racing_its_deadline_or_the_timeout_applies_never_both() {
    let (app, game) = timed_app().await;
    let trials = join_all((0..100).map(|trial| {
        let (app, game) = (&app, &game);
        async move {
            tokio::time::sleep(Duration::from_millis(trial * 20)).await;
            let (room, player) = room_of(app, game).await;
            app.play_ok(&player, &room, json!({"mode": "finish"})).await;
            let armed = app.play_ok(&player, &room, json!({"arm": 300})).await;
            let version = armed["version"].as_i64().unwrap();
            let offset = chrono::TimeDelta::milliseconds(trial as i64 % 11 - 5);
            let send_at = parse(&armed["triggerTimeoutAt"]) + offset;
            let wait = (send_at - Utc::now()).to_std().unwrap_or_default();
            tokio::time::sleep(wait).await;
            let response = app.play(&player, &room, json!({"clear": true})).await;
            (room, version, response.status())
        }
    }))
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (mut moves, mut timeouts) = (0, 0);
    for (room, version, status) in trials {
        let events = app.events(&room).await;
        let after: Vec<&Value> = events
            .iter()
            .filter(|e| e["version"].as_i64().unwrap() > version)
            .collect();
        assert_eq!(after.len(), 1, "{room}: {after:?}");
        match after[0]["kind"].as_str().unwrap() {
            "move" => {
                assert_eq!(status, StatusCode::OK);
                moves += 1;
            }
            "timeout" => {
                assert_eq!(
                    status,
                    StatusCode::CONFLICT,
                    "the finished room refuses the move"
                );
                timeouts += 1;
            }
            other => panic!("{other}"),
        }
    }
    assert_eq!(moves + timeouts, 100);
    eprintln!("moves first: {moves}, timeouts first: {timeouts}");
}

#[tokio::test]
async fn a_tictactoe_player_who_runs_out_of_time_loses() {
    let app = TestApp::spawn().await;
    let x = app.register(&unique("x")).await;
    let o = app.register(&unique("o")).await;
    let room = app
        .create_room(
            &x,
            json!({"game": "tictactoe", "clock": {"moveSeconds": 1}}),
        )
        .await;
    assert_eq!(room["clock"], json!({"moveSeconds": 1}));
    assert_eq!(
        room["triggerTimeoutAt"],
        Value::Null,
        "no clock runs before the game starts"
    );
    let id = room["id"].as_str().unwrap().to_owned();
    let joined: Value = app.join(&o, &id).await.json().await.unwrap();
    assert!(joined["triggerTimeoutAt"].is_string(), "{joined}");
    let moved = app.play_ok(&x, &id, json!({"x": 1, "y": 1})).await;
    assert!(parse(&moved["triggerTimeoutAt"]) > parse(&joined["triggerTimeoutAt"]));

    let events = await_kind(&app, &id, "timeout", 1).await;
    // The history is read from storage, and the room from the server's memory, which takes
    // the version a moment after it is stored: wait for it there too.
    let room = await_version(&app, &id, &events.last().unwrap()["version"]).await;
    assert_eq!(room["finished"], true);
    assert_eq!(
        room["state"]["winner"]["id"], x.id,
        "O was to move and ran out of time"
    );
    assert_eq!(room["state"]["endedBy"], "timeout");
    assert_eq!(room["triggerTimeoutAt"], Value::Null);
    assert_eq!(events.last().unwrap()["kind"], "timeout");
}

#[tokio::test]
async fn bots_are_never_timed_out() {
    let app = TestApp::spawn().await;
    let human = app.register(&unique("h")).await;
    let body = json!({"game": "tictactoe", "bot": "easy", "botPlaysFirst": true, "clock": {"moveSeconds": 1}});
    let room = app.create_room(&human, body).await;
    let id = room["id"].as_str().unwrap().to_owned();
    assert_eq!(room["state"]["moveCount"], 1, "the bot opened at once");
    await_kind(&app, &id, "timeout", 1).await;
    let room = app.room(&id).await;
    assert_eq!(room["state"]["endedBy"], "timeout");
    assert_ne!(
        room["state"]["winner"]["id"], human.id,
        "the human was to move"
    );
}

#[tokio::test]
async fn quick_play_matches_only_rooms_with_the_same_clock() {
    let app = TestApp::spawn().await;
    let game = unique("qp").replace('_', "-");
    app.publish(&game, &timed()).await;
    let quick = |player: TestPlayer, clock: Value| {
        let app = &app;
        let game = game.clone();
        async move {
            let mut body = json!({"game": game});
            if !clock.is_null() {
                body["clock"] = clock;
            }
            let response = app
                .post("/rooms/quickplay", Some(&player.token), Some(&body))
                .await;
            let status = response.status();
            let room: Value = response.json().await.unwrap();
            (status, room["id"].as_str().unwrap().to_owned())
        }
    };
    let minute = json!({"moveSeconds": 60});
    let (s1, timed) = quick(app.register(&unique("a")).await, minute.clone()).await;
    let (s2, untimed) = quick(app.register(&unique("b")).await, Value::Null).await;
    let (s3, other) = quick(app.register(&unique("c")).await, json!({"moveSeconds": 30})).await;
    let (s4, joined) = quick(app.register(&unique("d")).await, minute).await;
    let (s5, joined_untimed) = quick(app.register(&unique("e")).await, Value::Null).await;
    assert_eq!([s1, s2, s3], [StatusCode::CREATED; 3]);
    assert!(timed != untimed && timed != other && untimed != other);
    assert_eq!((s4, joined), (StatusCode::OK, timed));
    assert_eq!((s5, joined_untimed), (StatusCode::OK, untimed));
}

/// Correspondence games: a week per move is a clock like another, its deadline a week out.
#[tokio::test]
async fn a_correspondence_clock_gives_each_move_days() {
    let app = TestApp::spawn().await;
    let (x, o) = (app.new_player().await, app.new_player().await);
    let week = 7 * 86_400;
    let room = app
        .create_room(
            &x,
            json!({"game": "tictactoe", "clock": {"moveSeconds": week}}),
        )
        .await;
    let id = room["id"].as_str().unwrap();
    assert_eq!(room["clock"], json!({"moveSeconds": week}));
    assert_eq!(app.join(&o, id).await.status(), StatusCode::OK);
    let room = app.room(id).await;
    let deadline =
        chrono::DateTime::parse_from_rfc3339(room["triggerTimeoutAt"].as_str().unwrap()).unwrap();
    let left = deadline.with_timezone(&chrono::Utc) - chrono::Utc::now();
    assert!(
        left > chrono::Duration::days(7) - chrono::Duration::minutes(1)
            && left <= chrono::Duration::days(7),
        "{left}"
    );
}
