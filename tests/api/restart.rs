//! The real binary, killed without warning and started again on the same file: everything that
//! was acknowledged is still there.

use crate::databases::{database_rows, fresh_database};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::real_server::{get_json, post, register, started_room, Server};

#[tokio::test]
async fn a_killed_server_loses_nothing_it_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let database = fresh_database(&dir.path().join("nested"), "rooms.db").await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();

    let server = Server::start(&database);
    let base = server.address.clone();
    let (x_token, o_token, id) = started_room(&client, &base, "tictactoe").await;
    let (x_token, o_token) = (x_token.as_str(), o_token.as_str());
    let (status, before) = post(
        &client,
        format!("{base}/rooms/{id}/moves"),
        Some(x_token),
        json!({"x": 1, "y": 1}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let events_before = get_json(&client, format!("{base}/rooms/{id}/events")).await;
    server.kill();

    let server = Server::start(&database);
    let base = server.address.clone();
    let after = get_json(&client, format!("{base}/rooms/{id}")).await;
    assert_eq!(after, before, "the room is exactly as acknowledged");
    let events_after = get_json(&client, format!("{base}/rooms/{id}/events")).await;
    assert_eq!(events_after, events_before);
    // The players' tokens still work, and the game goes on.
    let (status, next) = post(
        &client,
        format!("{base}/rooms/{id}/moves"),
        Some(o_token),
        json!({"x": 0, "y": 0}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{next}");
    assert_eq!(next["version"], 5);
    let listed = get_json(&client, format!("{base}/rooms")).await;
    assert_eq!(listed["rooms"][0]["id"], id.as_str());
    server.kill();
}

/// One acknowledged version: the room, its version, and the state the client was shown.
type Acknowledged = (String, i64, Value);

/// Plays tic-tac-toe games one after another until the server stops answering, keeping every
/// version it acknowledged.
async fn play_until_killed(
    client: reqwest::Client,
    base: String,
    (x, o): (String, String),
    acked: Arc<Mutex<Vec<Acknowledged>>>,
) {
    let keep = |room: &Value| {
        acked.lock().unwrap().push((
            room["id"].as_str().unwrap().to_owned(),
            room["version"].as_i64().unwrap(),
            room["state"].clone(),
        ));
    };
    loop {
        let send = |path: String, token: &str, body: Value| {
            client
                .post(format!("{base}{path}"))
                .bearer_auth(token)
                .body(body.to_string())
                .send()
        };
        let Ok(created) = send("/rooms".into(), &x, json!({"game": "tictactoe"})).await else {
            return;
        };
        let Ok(room) = created.json::<Value>().await else {
            return;
        };
        keep(&room);
        let id = room["id"].as_str().unwrap().to_owned();
        let mut steps = vec![(o.as_str(), format!("/rooms/{id}/join"), Value::Null)];
        for (n, (row, col)) in [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]
            .into_iter()
            .enumerate()
        {
            let player = if n % 2 == 0 { x.as_str() } else { o.as_str() };
            steps.push((
                player,
                format!("/rooms/{id}/moves"),
                json!({"x": row, "y": col}),
            ));
        }
        for (token, path, body) in steps {
            let Ok(response) = send(path, token, body).await else {
                return;
            };
            if response.status() != StatusCode::OK {
                return;
            }
            let Ok(room) = response.json::<Value>().await else {
                return;
            };
            keep(&room);
        }
    }
}

/// Group commit under load, killed twenty times: 64 games in flight, the server killed with
/// `kill -9` mid-batch and started again, over and over. Afterwards every version any client
/// was shown is in the history exactly as shown, and every room's version equals its number of
/// events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_kills_under_load_lose_no_acknowledged_version() {
    const KILLS: usize = 20;
    let dir = tempfile::tempdir().unwrap();
    let database = fresh_database(dir.path(), "load.db").await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .pool_max_idle_per_host(128)
        .build()
        .unwrap();
    let acked = Arc::new(Mutex::new(Vec::new()));
    let mut pairs = Vec::new();
    for round in 0..KILLS {
        let server = Server::start(&database);
        if round == 0 {
            for _ in 0..64 {
                pairs.push((
                    register(&client, &server.address).await,
                    register(&client, &server.address).await,
                ));
            }
        }
        let target = acked.lock().unwrap().len() + 200;
        let players: Vec<_> = pairs
            .iter()
            .map(|pair| {
                let (client, base, acked) = (client.clone(), server.address.clone(), acked.clone());
                tokio::spawn(play_until_killed(client, base, pair.clone(), acked))
            })
            .collect();
        while acked.lock().unwrap().len() < target {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        server.kill();
        for player in players {
            player.await.unwrap();
        }
    }

    let server = Server::start(&database);
    let base = server.address.clone();
    let acked = std::mem::take(&mut *acked.lock().unwrap());
    let mut rooms: std::collections::BTreeMap<String, Vec<(i64, Value)>> = Default::default();
    for (room, version, state) in acked {
        rooms.entry(room).or_default().push((version, state));
    }
    for (room, shown) in &rooms {
        let current = get_json(&client, format!("{base}/rooms/{room}")).await;
        let events: Value =
            get_json(&client, format!("{base}/rooms/{room}/events?limit=1000")).await;
        let history = events["events"].as_array().unwrap();
        let versions: Vec<i64> = history
            .iter()
            .map(|e| e["version"].as_i64().unwrap())
            .collect();
        assert_eq!(
            versions,
            (1..=current["version"].as_i64().unwrap()).collect::<Vec<_>>(),
            "{room}: one event per version, no gap"
        );
        for (version, state) in shown {
            assert_eq!(
                &history[*version as usize - 1]["state"],
                state,
                "{room} v{version} as acknowledged"
            );
        }
    }
    assert!(rooms.len() >= 64, "every player got at least one room in");
    assert_versions_match_events(&database).await;
    server.kill();
}

#[tokio::test]
async fn hosted_games_log_through_the_server_and_survive_a_kill() {
    let dir = tempfile::tempdir().unwrap();
    let database = fresh_database(dir.path(), "hosted.db").await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let server = Server::start(&database);
    let base = server.address.clone();
    let author = register(&client, &base).await;
    let source = crate::helpers::example("connect-four.js");
    let upload = client
        .put(format!("{base}/games/connect-four"))
        .bearer_auth(&author)
        .header("content-type", "application/javascript")
        .body(source)
        .send()
        .await
        .unwrap();
    assert_eq!(upload.status(), StatusCode::CREATED);
    let (red, yellow, id) = started_room(&client, &base, "connect-four").await;
    let (red, yellow) = (red.as_str(), yellow.as_str());
    let (status, _) = post(
        &client,
        format!("{base}/rooms/{id}/moves"),
        Some(red),
        json!({"column": 3}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    // `room.logger.info` in onPlayerJoin, tagged with where it came from.
    let room_tag = format!("room=\"{id}\"");
    let tags = [
        "sits down (2 of 2)",
        "game=\"connect-four\"",
        "version=1",
        &room_tag,
        "hook=\"onPlayerJoin\"",
    ];
    let mut logged = Vec::new();
    for _ in 0..50 {
        logged = server.log_lines_with(&tags);
        if !logged.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        logged.len(),
        1,
        "{:?}",
        server.log_lines_with(&["sits down"])
    );

    // Killed and started again: the room, its game version and fresh sandbox processes.
    server.kill();
    let server = Server::start(&database);
    let base = server.address.clone();
    let (status, after) = post(
        &client,
        format!("{base}/rooms/{id}/moves"),
        Some(yellow),
        json!({"column": 4}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{after}");
    assert_eq!(after["version"], 5);
    assert_eq!(after["gameVersion"], 1);
    assert_eq!(after["state"]["board"][0][4], "yellow");
    server.kill();
}

/// A thousand open streams do not hold up a SIGTERM: each ends cleanly (the body simply
/// finishes, so clients reconnect with Last-Event-ID) and the process exits well before the
/// 10 s it would otherwise give open requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_open_streams_and_the_server_exits_promptly() {
    turnhouse::startup::raise_open_files_limit().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(fresh_database(dir.path(), "streams.db").await);
    let base = server.address.clone();
    let client = reqwest::Client::new();
    let (_, _, id) = started_room(&client, &base, "tictactoe").await;

    let mut streams = Vec::new();
    for n in 0..1000 {
        let url = if n % 2 == 0 {
            format!("{base}/rooms/{id}/stream")
        } else {
            format!("{base}/rooms/stream")
        };
        let mut response = client.get(url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        response.chunk().await.unwrap().expect("the retry line");
        streams.push(response);
    }

    let stopping = std::time::Instant::now();
    // SAFETY: signalling the server this test started.
    assert_eq!(
        unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) },
        0
    );
    for mut stream in streams {
        // Whatever was pending, then the end of the body, not a broken connection.
        while let Some(_frame) = stream.chunk().await.expect("the stream ends cleanly") {}
    }
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            stopping.elapsed() < Duration::from_secs(8),
            "still running with its streams closed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(status.success(), "{status:?}");
    assert_eq!(server.log_lines_with(&["stopping", "SIGTERM"]).len(), 1);
}

/// Every room's version is its number of events: no version lost, none written twice.
pub async fn assert_versions_match_events(database: &str) {
    let uneven: Vec<(String, i64, i64)> = database_rows(
        database,
        "SELECT r.id, r.version, (SELECT count(*) FROM room_events e WHERE e.room_id = r.id) \
         FROM rooms r \
         WHERE r.version != (SELECT count(*) FROM room_events e WHERE e.room_id = r.id)",
    )
    .await;
    assert_eq!(uneven, [], "every room's version is its number of events");
}
