//! The real binary, killed without warning and started again on the same file: everything that
//! was acknowledged is still there.

use crate::databases::{database_rows, fresh_database};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::client::Api;
use crate::real_server::Server;
use crate::sessions::ends_within;
use crate::sse_client::EventStream;

/// How long a client waits for a server that may have just been killed.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The setup every test here shares: a fresh database at `path` (under a directory of its
/// own, which must outlive the test), the server binary on it, and a client of it that gives
/// up after [`TIMEOUT`].
async fn started(path: &str) -> (tempfile::TempDir, String, Server, Api) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(path);
    let database = fresh_database(
        path.parent().unwrap(),
        path.file_name().unwrap().to_str().unwrap(),
    )
    .await;
    let server = Server::start(&database);
    let api = server.api.with_timeout(TIMEOUT);
    (dir, database, server, api)
}

#[tokio::test]
async fn a_killed_server_loses_nothing_it_acknowledged() {
    let (_dir, database, server, api) = started("nested/rooms.db").await;
    let (id, x, o) = api.started_game("tictactoe").await;
    let (x_token, o_token) = (x.token.as_str(), o.token.as_str());
    let (status, before) = api
        .post_value(
            &format!("/rooms/{id}/moves"),
            Some(x_token),
            json!({"x": 1, "y": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let events_before = api.get_value(&format!("/rooms/{id}/events")).await;
    server.kill();

    let server = Server::start(&database);
    let api = server.api.with_timeout(TIMEOUT);
    let after = api.get_value(&format!("/rooms/{id}")).await;
    assert_eq!(after, before, "the room is exactly as acknowledged");
    let events_after = api.get_value(&format!("/rooms/{id}/events")).await;
    assert_eq!(events_after, events_before);
    // The players' tokens still work, and the game goes on.
    let (status, next) = api
        .post_value(
            &format!("/rooms/{id}/moves"),
            Some(o_token),
            json!({"x": 0, "y": 0}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{next}");
    assert_eq!(next["version"], 5);
    let listed = api.get_value("/rooms").await;
    assert_eq!(listed["rooms"][0]["id"], id.as_str());
    server.kill();
}

/// One acknowledged version: the room, its version, and the state the client was shown.
type Acknowledged = (String, i64, Value);

/// Plays tic-tac-toe games one after another until the server stops answering, keeping every
/// version it acknowledged.
async fn play_until_killed(
    api: Api,
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
            api.client
                .post(format!("{}{path}", api.address))
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
    let (_dir, database, server, api) = started("load.db").await;
    let mut pairs = Vec::new();
    for _ in 0..64 {
        pairs.push((api.new_player().await.token, api.new_player().await.token));
    }
    server.kill();
    let acked = Arc::new(Mutex::new(Vec::new()));
    for _ in 0..KILLS {
        let server = Server::start(&database);
        let api = server.api.with_timeout(TIMEOUT);
        let target = acked.lock().unwrap().len() + 200;
        let players: Vec<_> = pairs
            .iter()
            .map(|pair| {
                let (api, acked) = (api.clone(), acked.clone());
                tokio::spawn(play_until_killed(api, pair.clone(), acked))
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
    let api = server.api.clone();
    let acked = std::mem::take(&mut *acked.lock().unwrap());
    let mut rooms: std::collections::BTreeMap<String, Vec<(i64, Value)>> = Default::default();
    for (room, version, state) in acked {
        rooms.entry(room).or_default().push((version, state));
    }
    for (room, shown) in &rooms {
        let current = api.get_value(&format!("/rooms/{room}")).await;
        let events: Value = api
            .get_value(&format!("/rooms/{room}/events?limit=1000"))
            .await;
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
    let (_dir, database, server, api) = started("hosted.db").await;
    let author = api.new_player().await;
    let source = crate::helpers::example("connect-four.js");
    let upload = api.upload(&author, "connect-four", &source).await;
    assert_eq!(upload.status(), StatusCode::CREATED);
    let (id, red, yellow) = api.started_game("connect-four").await;
    let (red, yellow) = (red.token, yellow.token);
    let (red, yellow) = (red.as_str(), yellow.as_str());
    let (status, _) = api
        .post_value(
            &format!("/rooms/{id}/moves"),
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

    // The owner's log has it too, once stored (a moment after the move).
    let owners_log = |api: Api| {
        let token = author.token.clone();
        async move {
            for _ in 0..250 {
                let response = api
                    .request(Method::GET, "/games/connect-four/logs", Some(&token), None)
                    .await;
                let page: Value = response.json().await.unwrap();
                let texts: Vec<String> = page["lines"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|line| line["text"].as_str().unwrap().to_owned())
                    .collect();
                if texts.iter().any(|t| t.contains("sits down (2 of 2)")) {
                    return texts;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            panic!("the owner's log never held the join");
        }
    };
    let before = owners_log(api.clone()).await;

    // Killed and started again: the room, its game version and fresh sandbox processes, and
    // the owner's log as it was.
    server.kill();
    let server = Server::start(&database);
    let api = server.api.with_timeout(TIMEOUT);
    assert_eq!(owners_log(api.clone()).await, before);
    let (status, after) = api
        .post_value(
            &format!("/rooms/{id}/moves"),
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
    let database = fresh_database(dir.path(), "streams.db").await;
    // A thousand streams from this one address: no cap on connections per address.
    let mut server = Server::start_with(&database, &["--max-connections-per-address", "0"]);
    let api = server.api.with_timeout(TIMEOUT);
    let (id, _, _) = api.started_game("tictactoe").await;

    let mut streams = Vec::new();
    for n in 0..1000 {
        let url = if n % 2 == 0 {
            format!("/rooms/{id}/stream")
        } else {
            "/rooms/stream".to_owned()
        };
        let mut response = server.get(&url).await;
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
        // Whatever was pending, then the end of the body, not a broken connection; the last
        // frame asks the browser to reconnect at once (to another server behind the address).
        let mut last = Vec::new();
        while let Some(frame) = stream.chunk().await.expect("the stream ends cleanly") {
            last = frame.to_vec();
        }
        let last = String::from_utf8(last).unwrap();
        let retry: u64 = (last.strip_prefix("retry: "))
            .and_then(|rest| rest.trim_end().parse().ok())
            .unwrap_or_else(|| panic!("the last frame is a retry line: {last:?}"));
        assert!(retry < 500, "{last:?}");
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
    assert_eq!(
        server.final_log_lines_with(&["stopping", "SIGTERM"]).len(),
        1
    );
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

/// A second server on the same file that comes, acts and is gone between two requests to the
/// first (which never saw it running): the first trusts none of what it kept from before, so
/// it answers with the other's move, refuses the session the other ended, and closes that
/// session's stream.
#[tokio::test]
async fn a_server_sees_what_another_did_on_its_file_while_it_was_not_asked() {
    let (_dir, database, _server, api) = started("shared.db").await;
    let (id, x, o) = api.started_game("tictactoe").await;
    let room = format!("/rooms/{id}");
    let me = |token: &str| {
        let token = token.to_owned();
        let api = api.clone();
        async move {
            let response = api
                .request(Method::GET, "/players/me", Some(&token), None)
                .await;
            response.status()
        }
    };
    // Both are held in the first server's memory now.
    let before = api.get_value(&room).await;
    assert_eq!(me(&o.token).await, StatusCode::OK);
    let watching = format!("{}{room}/stream?access_token={}", api.address, o.token);
    let mut stream = EventStream::open(&reqwest::Client::new(), &watching, None).await;
    stream.event().await;

    let other = Server::start(&database);
    let there = other.api.with_timeout(TIMEOUT);
    let (status, moved) = there
        .post_value(
            &format!("{room}/moves"),
            Some(&x.token),
            json!({"x": 1, "y": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(moved["version"], before["version"]);
    let signed_out = there
        .request(Method::DELETE, "/sessions/current", Some(&o.token), None)
        .await;
    assert_eq!(signed_out.status(), StatusCode::NO_CONTENT);
    other.kill();

    // As the other answered it, but for who has the room open on each server.
    let without_online = |mut room: Value| {
        room.as_object_mut().unwrap().remove("online");
        room
    };
    assert_eq!(
        without_online(api.get_value(&room).await),
        without_online(moved)
    );
    assert_eq!(me(&o.token).await, StatusCode::UNAUTHORIZED);
    assert_eq!(me(&x.token).await, StatusCode::OK);
    let took = ends_within(&mut stream, Duration::from_millis(2_500)).await;
    println!("the ended session's stream closed after {took:?}");
}
