//! `turnhouse backup`: a consistent copy of a SQLite database taken while the server keeps
//! writing, and a server started on the copy.

use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::client::Api;
use crate::databases::{database_rows, on_postgres};
use crate::real_server::Server;

/// One whole tic-tac-toe game through `api`; whether every action succeeded.
async fn game(api: &Api, x: &str, o: &str) -> bool {
    let (status, room) = api
        .post_value("/rooms", Some(x), json!({"game": "tictactoe"}))
        .await;
    if status != StatusCode::CREATED {
        return false;
    }
    let id = room["id"].as_str().unwrap();
    let (status, _) = api
        .post_value(&format!("/rooms/{id}/join"), Some(o), json!(null))
        .await;
    if status != StatusCode::OK {
        return false;
    }
    for (n, (row, col)) in [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]
        .into_iter()
        .enumerate()
    {
        let token = if n % 2 == 0 { x } else { o };
        let path = format!("/rooms/{id}/moves");
        let (status, _) = api
            .post_value(&path, Some(token), json!({"x": row, "y": col}))
            .await;
        if status != StatusCode::OK {
            return false;
        }
    }
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_under_load_is_a_consistent_database_a_server_starts_on() {
    if on_postgres() {
        return; // PostgreSQL is backed up with pg_dump.
    }
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("live.db").display().to_string();
    let copy = dir.path().join("copy.db");
    let server = Server::start_with(&database, &["--rate-limits", "off"]);
    let api = server.api.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let (played, failed, after_backup) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let backed_up = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for _ in 0..64 {
        let api = api.clone();
        let (stop, played, failed, after, backed_up) = (
            stop.clone(),
            played.clone(),
            failed.clone(),
            after_backup.clone(),
            backed_up.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let (x, o) = (api.new_player().await.token, api.new_player().await.token);
            while !stop.load(Ordering::Relaxed) {
                match game(&api, &x, &o).await {
                    true => played.fetch_add(1, Ordering::Relaxed),
                    false => failed.fetch_add(1, Ordering::Relaxed),
                };
                if backed_up.load(Ordering::Relaxed) {
                    after.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let output = tokio::task::spawn_blocking({
        let (database, copy) = (database.clone(), copy.clone());
        move || {
            Command::new(env!("CARGO_BIN_EXE_turnhouse"))
                .args(["--database", &database, "backup"])
                .arg(&copy)
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    backed_up.store(true, Ordering::Relaxed);
    let during = played.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await.unwrap();
    }
    assert!(during > 0, "games were played while the backup ran");
    assert!(
        after_backup.load(Ordering::Relaxed) > 0,
        "the original kept serving"
    );
    assert_eq!(failed.load(Ordering::Relaxed), 0, "no action failed");

    // The copy: every room's version is its number of history entries, SQLite finds nothing
    // wrong, and a server starts on it and serves its rooms.
    let copy_path = copy.display().to_string();
    let integrity: Vec<(String,)> = database_rows(&copy_path, "PRAGMA integrity_check").await;
    assert_eq!(integrity, vec![("ok".to_owned(),)]);
    let rooms: Vec<(i64,)> = database_rows(&copy_path, "SELECT count(*) FROM rooms").await;
    assert!(rooms[0].0 > 0);
    let torn: Vec<(i64,)> = database_rows(
        &copy_path,
        "SELECT count(*) FROM rooms r \
         WHERE r.version <> (SELECT count(*) FROM room_events e WHERE e.room_id = r.id)",
    )
    .await;
    assert_eq!(torn[0].0, 0, "rooms whose version is not their history");
    let restored = Server::start(&copy_path);
    let page = restored.get_value("/rooms?limit=5").await;
    let first = page["rooms"][0]["id"].as_str().unwrap().to_owned();
    let room = restored.get_value(&format!("/rooms/{first}")).await;
    assert_eq!(room["id"], first.as_str());
    restored.kill();

    // A second backup to the same file is refused rather than overwriting it (settings may
    // also follow the command).
    let again = Command::new(env!("CARGO_BIN_EXE_turnhouse"))
        .args(["backup", "--database", &database])
        .arg(&copy)
        .output()
        .unwrap();
    assert!(!again.status.success());
    let said = String::from_utf8_lossy(&again.stderr).to_string()
        + &String::from_utf8_lossy(&again.stdout);
    assert!(said.contains("already exists"), "{said}");
    server.kill();
}
