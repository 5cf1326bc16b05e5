//! A stop that drains: three servers on one database, restarted one after the other with
//! SIGTERM while 64 games are played through them. Clients see nothing but reconnects (a
//! refused or closed connection, after which they go to another server), and every version
//! any of them was shown is in the history.

use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::client::Api;
use crate::databases::fresh_database;
use crate::real_server::Server;
use crate::restart::assert_versions_match_events;

/// The servers' addresses as clients know them: those running.
type Addresses = Arc<RwLock<Vec<String>>>;

/// What clients saw: every version acknowledged (room, version), how many times they had to
/// reconnect, and any answer that was not a success.
#[derive(Default)]
struct Seen {
    acked: Vec<(String, i64)>,
    reconnects: usize,
    errors: Vec<String>,
}

/// Sends `body` to `path` as `token` on some running server, again on another after a
/// connection that was refused or closed: the answer, once one comes.
async fn send(
    client: &reqwest::Client,
    addresses: &Addresses,
    seen: &Mutex<Seen>,
    (path, token, body): (&str, &str, &Value),
) -> Option<(StatusCode, Value)> {
    for attempt in 0..400usize {
        let address = {
            let live = addresses.read().unwrap();
            live[attempt % live.len()].clone()
        };
        let sent = client
            .post(format!("{address}{path}"))
            .bearer_auth(token)
            .body(body.to_string())
            .send()
            .await;
        match sent {
            Ok(response) => {
                let status = response.status();
                match response.json::<Value>().await {
                    Ok(value) => return Some((status, value)),
                    Err(err) => seen.lock().unwrap().errors.push(format!("{path}: {err}")),
                }
                return None;
            }
            Err(_) => {
                seen.lock().unwrap().reconnects += 1;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
    seen.lock()
        .unwrap()
        .errors
        .push(format!("{path}: no server answered"));
    None
}

/// Plays tic-tac-toe games between `x` and `o` until `until`, keeping what it saw.
async fn play(
    addresses: Addresses,
    (x, o): (String, String),
    seen: Arc<Mutex<Seen>>,
    until: Arc<Mutex<bool>>,
) {
    let client = reqwest::Client::new();
    while !*until.lock().unwrap() {
        let created = send(
            &client,
            &addresses,
            &seen,
            ("/rooms", &x, &json!({"game": "tictactoe"})),
        )
        .await;
        let Some((StatusCode::CREATED, room)) = created else {
            if let Some((status, body)) = created {
                seen.lock()
                    .unwrap()
                    .errors
                    .push(format!("create: {status} {body}"));
            }
            return;
        };
        let id = room["id"].as_str().unwrap().to_owned();
        seen.lock().unwrap().acked.push((id.clone(), 1));
        let mut steps = vec![(o.clone(), format!("/rooms/{id}/join"), Value::Null)];
        for (n, (row, col)) in [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]
            .into_iter()
            .enumerate()
        {
            let player = if n % 2 == 0 { &x } else { &o };
            steps.push((
                player.clone(),
                format!("/rooms/{id}/moves"),
                json!({"x": row, "y": col}),
            ));
        }
        for (token, path, body) in &steps {
            match send(&client, &addresses, &seen, (path, token, body)).await {
                Some((StatusCode::OK, room)) => {
                    let version = room["version"].as_i64().unwrap();
                    seen.lock().unwrap().acked.push((id.clone(), version));
                }
                Some((status, body)) => {
                    seen.lock()
                        .unwrap()
                        .errors
                        .push(format!("{path}: {status} {body}"));
                    return;
                }
                None => return,
            }
        }
    }
}

/// SIGTERM to `server`; its exit status once it has gone, and how long it took.
async fn terminate(mut server: Server) -> (std::process::ExitStatus, Duration, Server) {
    let began = Instant::now();
    // SAFETY: signalling the server this test started.
    assert_eq!(
        unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) },
        0
    );
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            return (status, began.elapsed(), server);
        }
        assert!(
            began.elapsed() < Duration::from_secs(20),
            "still running after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_under_load_loses_no_move_and_shows_clients_only_reconnects() {
    let dir = tempfile::tempdir().unwrap();
    let database = fresh_database(dir.path(), "rolling.db").await;
    let flags = ["--shutdown-timeout", "5", "--rate-limits", "off"];
    let mut servers: Vec<Server> = (0..3)
        .map(|_| Server::start_with(&database, &flags))
        .collect();
    let addresses: Addresses = Arc::new(RwLock::new(
        servers.iter().map(|s| s.api.address.clone()).collect(),
    ));
    let api: Api = servers[0].api.clone();
    let mut pairs = Vec::new();
    for _ in 0..64 {
        pairs.push((api.new_player().await.token, api.new_player().await.token));
    }
    let seen = Arc::new(Mutex::new(Seen::default()));
    let until = Arc::new(Mutex::new(false));
    let clients: Vec<_> = pairs
        .into_iter()
        .map(|pair| tokio::spawn(play(addresses.clone(), pair, seen.clone(), until.clone())))
        .collect();

    for turn in 0..3 {
        // Games under way on every server, then this one drains.
        let target = seen.lock().unwrap().acked.len() + 300;
        while seen.lock().unwrap().acked.len() < target {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let stopping = servers.remove(0);
        let address = stopping.api.address.clone();
        addresses.write().unwrap().retain(|a| *a != address);
        let (status, took, stopped) = terminate(stopping).await;
        assert!(status.success(), "server {turn} exited with {status:?}");
        assert!(
            took < Duration::from_secs(8),
            "server {turn} took {took:?} to stop"
        );
        assert_eq!(
            stopped
                .final_log_lines_with(&["stopping", "every write is committed"])
                .len(),
            1,
            "server {turn} committed its queue"
        );
        let started = Server::start_with(&database, &flags);
        addresses.write().unwrap().push(started.api.address.clone());
        servers.push(started);
    }
    let target = seen.lock().unwrap().acked.len() + 300;
    while seen.lock().unwrap().acked.len() < target {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    *until.lock().unwrap() = true;
    for client in clients {
        client.await.unwrap();
    }

    let seen = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(
        seen.errors,
        Vec::<String>::new(),
        "clients saw only reconnects"
    );
    println!(
        "{} versions acknowledged across three restarts, {} reconnects",
        seen.acked.len(),
        seen.reconnects
    );
    let api = servers[0].api.clone();
    let mut latest: std::collections::BTreeMap<String, i64> = Default::default();
    for (room, version) in &seen.acked {
        let at = latest.entry(room.clone()).or_default();
        *at = (*at).max(*version);
    }
    for (room, version) in &latest {
        let current = api.get_value(&format!("/rooms/{room}")).await;
        assert!(
            current["version"].as_i64().unwrap() >= *version,
            "{room}: v{version} was acknowledged, the room is at {}",
            current["version"]
        );
    }
    assert_versions_match_events(&database).await;
}
