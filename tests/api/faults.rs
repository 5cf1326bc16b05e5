//! Faults real deployments meet, against the real binary: a write lock held from `sqlite3`, a
//! full disk, a server frozen mid-load, thousands of connections that never finish a request,
//! a PostgreSQL that stops taking the server's password.
//! In each, nothing acknowledged is lost, nothing is applied twice, nothing answers 500, and
//! the server recovers by itself.

use crate::databases::{database_rows, fresh_database, on_postgres, postgres_url, postgres_url_as};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};
use sqlx::{Connection, Executor};

use crate::client::{Api, TestPlayer};
use crate::helpers::TestApp;
use crate::real_server::Server;

fn client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(timeout)
        .pool_max_idle_per_host(64)
        .build()
        .unwrap()
}

/// What `GET /healthz` says about writes.
async fn writes_health(api: &Api) -> String {
    let response = api.get("/healthz").await;
    assert_eq!(response.status(), StatusCode::OK, "healthz answers");
    let body: Value = response.json().await.unwrap();
    body["writes"].as_str().unwrap().to_owned()
}

/// One event per version, from 1 to the room's version: nothing lost, nothing twice.
async fn assert_history_is_whole(api: &Api, room: &str) -> Value {
    let current = api.get_value(&format!("/rooms/{room}")).await;
    let events = api
        .get_value(&format!("/rooms/{room}/events?limit=1000"))
        .await;
    let versions: Vec<i64> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["version"].as_i64().unwrap())
        .collect();
    let version = current["version"].as_i64().unwrap();
    assert_eq!(versions, (1..=version).collect::<Vec<_>>(), "{room}");
    current
}

/// `sqlite3` with a transaction open on `database`, holding its write lock until dropped.
struct WriteLock {
    shell: std::process::Child,
}

impl WriteLock {
    fn take(database: &Path) -> Self {
        let mut shell = Command::new("sqlite3")
            .arg(database)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("sqlite3 is installed (scripts/test installs it)");
        let stdin = shell.stdin.as_mut().unwrap();
        stdin
            .write_all(b".timeout 5000\nBEGIN EXCLUSIVE;\nSELECT 'locked';\n")
            .unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        BufReader::new(shell.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "locked", "sqlite3 holds the write lock");
        Self { shell }
    }

    fn release(mut self) {
        let mut stdin = self.shell.stdin.take().unwrap();
        stdin.write_all(b"COMMIT;\n").unwrap();
        drop(stdin);
        assert!(self.shell.wait().unwrap().success());
    }
}

#[tokio::test]
async fn a_write_lock_held_in_sqlite3_answers_503_storage_busy_until_released() {
    if on_postgres() {
        return; // a SQLite file's lock and disk; PostgreSQL's server has its own
    }
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("locked.db");
    let server = Server::start_with(&database, &["--database-busy-timeout-ms", "300"]);
    let api = Api {
        client: client(Duration::from_secs(10)),
        ..server.api.clone()
    };
    let (id, x, o) = api.started_game("tictactoe").await;
    let (x, o) = (x.token, o.token);
    let moves = format!("/rooms/{id}/moves");
    let (status, before) = api
        .post_value(&moves, Some(&x), json!({"x": 1, "y": 1}))
        .await;
    assert_eq!(status, StatusCode::OK);

    let lock = WriteLock::take(&database);
    // Longer than the busy timeout: each write waits 300 ms for the lock, then gives up.
    for _ in 0..3 {
        let response = api
            .client
            .post(format!("{}{moves}", api.address))
            .bearer_auth(&o)
            .header("If-Match", format!("\"{}\"", before["version"]))
            .body(json!({"x": 0, "y": 0}).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(response.headers().contains_key("retry-after"));
        let problem: Value = response.json().await.unwrap();
        assert_eq!(problem["code"], "storage_busy", "{problem}");
        let (status, problem) = api.post_value("/players", None, json!({})).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{problem}");
        assert_eq!(problem["code"], "storage_busy");
    }
    // Reads and the health check go on, and say what is wrong.
    assert_eq!(api.get_value(&format!("/rooms/{id}")).await, before);
    assert_eq!(writes_health(&api).await, "busy");
    let listed = api.get_value("/rooms").await;
    assert_eq!(listed["rooms"][0]["id"], id.as_str());
    assert_eq!(
        server
            .log_lines_with(&["database writes are failing", "write lock"])
            .len(),
        1,
        "one log line when writes start failing, not one per request"
    );

    lock.release();
    let (status, after) = api
        .post_value(&moves, Some(&o), json!({"x": 0, "y": 0}))
        .await;
    assert_eq!(status, StatusCode::OK, "{after}");
    assert_eq!(after["version"], before["version"].as_i64().unwrap() + 1);
    assert_eq!(writes_health(&api).await, "ok");
    assert_eq!(
        server
            .log_lines_with(&["database writes succeed again"])
            .len(),
        1
    );
    assert_history_is_whole(&api, &id).await;
    server.kill();
}

/// A small tmpfs mounted for one test, unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(megabytes: u32) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("mount runs");
        assert!(
            mounted.success(),
            "this test fills a small tmpfs, which needs permission to mount one (run as root)"
        );
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file until the disk is full; returns it.
    fn fill(&self) -> PathBuf {
        let filler = self.path().join("filler");
        let mut file = std::fs::File::create(&filler).unwrap();
        let block = vec![0u8; 64 * 1024];
        loop {
            if let Err(err) = file.write_all(&block).and_then(|_| file.sync_all()) {
                assert_eq!(err.raw_os_error(), Some(libc::ENOSPC), "{err}");
                break;
            }
        }
        // What is left is less than one block: let it go too.
        let mut byte = 0u64;
        while file.write_all(&[0]).is_ok() && byte < 64 * 1024 {
            byte += 1;
        }
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

#[tokio::test]
async fn a_full_disk_answers_503_storage_unavailable_and_writes_come_back_with_space() {
    if on_postgres() {
        return; // a SQLite file's lock and disk; PostgreSQL's server has its own
    }
    let disk = SmallDisk::mount(16);
    let database = disk.path().join("full.db");
    // Filling the disk takes many sign-ups from one address.
    let server = Server::start_with(&database, &["--signup-rate", "off"]);
    let api = Api {
        client: client(Duration::from_secs(10)),
        ..server.api.clone()
    };
    // A one-player game that takes any number of moves: the disk fills between them.
    let author = api.new_player().await;
    upload_ledger(&api, &author).await;
    let token = api.new_player().await.token;
    let (status, room) = api
        .post_value("/rooms", Some(&token), json!({"game": "ledger"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{room}");
    let id = room["id"].as_str().unwrap().to_owned();
    let mut version = room["version"].as_i64().unwrap();
    let filler = disk.fill();
    let pinned_move = |version: i64, n: usize| {
        let (api, path, token) = (&api, format!("/rooms/{id}/moves"), &token);
        async move {
            let response = api
                .client
                .post(format!("{}{path}", api.address))
                .bearer_auth(token)
                .header("If-Match", format!("\"{version}\""))
                .json(&json!({"id": format!("move-{n}")}))
                .send()
                .await
                .unwrap();
            let status = response.status();
            (status, response.json::<Value>().await.unwrap())
        }
    };

    // Writes go on while they fit in pages SQLite already has: a sign-up can be refused and the
    // next, smaller write still fit in log pages a checkpoint has freed. So keep signing up
    // until one is refused, then move, until a move is refused too. Every answer is a success
    // or a 503, never a 500, and a refused write changes nothing.
    let mut acknowledged = Vec::new();
    let mut refusals = 0;
    let mut moved = Vec::new();
    let mut n = 0;
    let move_refused = loop {
        n += 1;
        assert!(n < 5000, "the disk filled up");
        let (status, body) = api
            .post_value(
                "/players",
                None,
                json!({"username": format!("filler-{n}-{}", "x".repeat(20))}),
            )
            .await;
        match status {
            StatusCode::CREATED => {
                acknowledged.push(body["id"].as_str().unwrap().to_owned());
                continue;
            }
            StatusCode::SERVICE_UNAVAILABLE => {
                assert_eq!(body["code"], "storage_unavailable", "{body}");
                refusals += 1;
            }
            other => panic!("{other}: {body}"),
        }
        let (status, body) = pinned_move(version, n).await;
        match status {
            StatusCode::OK => {
                version = body["version"].as_i64().unwrap();
                moved.push(format!("move-{n}"));
            }
            StatusCode::SERVICE_UNAVAILABLE => break body,
            other => panic!("{other}: {body}"),
        }
    };
    assert_eq!(
        move_refused["code"], "storage_unavailable",
        "{move_refused}"
    );
    assert_eq!(writes_health(&api).await, "unavailable");
    assert_eq!(
        api.get_value(&format!("/rooms/{id}")).await["version"],
        version,
        "a refused move changes nothing"
    );
    // One clear line each time writes start failing, however many are refused meanwhile.
    let failing = server.log_lines_with(&["database writes are failing", "disk is full"]);
    let recovered = server.log_lines_with(&["database writes succeed again"]);
    assert_eq!(failing.len(), recovered.len() + 1, "{failing:?}");
    assert!(failing.len() <= refusals, "{failing:?}");

    std::fs::remove_file(filler).unwrap();
    for n in [n, n + 1] {
        let (status, answer) = pinned_move(version, n).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert_eq!(answer["version"], version + 1);
        version += 1;
    }
    moved.extend([format!("move-{n}"), format!("move-{}", n + 1)]);
    assert_eq!(writes_health(&api).await, "ok");
    let room = assert_history_is_whole(&api, &id).await;
    assert_eq!(
        room["state"]["moves"],
        json!(moved),
        "each accepted move once, no refused one"
    );
    server.kill();

    // Everything acknowledged while the disk was filling is there after a restart.
    let server = Server::start(&database);
    let (status, _) = server.post_value("/players", None, json!({})).await;
    assert_eq!(status, StatusCode::CREATED);
    let count = Command::new("sqlite3")
        .arg(&database)
        .arg("SELECT count(*) FROM players WHERE username LIKE 'filler-%'")
        .output()
        .unwrap();
    let stored: usize = String::from_utf8_lossy(&count.stdout)
        .trim()
        .parse()
        .unwrap();
    assert_eq!(stored, acknowledged.len());
    server.kill();
}

/// An uploaded game that writes down every move it is given: a move applied twice would show.
const LEDGER: &str = "'use strict';
module.exports = {
  onRoomStart: () => ({ state: { moves: [] } }),
  onPlayerJoin: () => ({}),
  onPlayerQuit: () => ({}),
  onPlayerMove: (player, move, room) => ({ state: { moves: room.state.moves.concat([move.id]) } }),
};";

/// Publishes [`LEDGER`] as the one-player game `ledger`.
pub async fn upload_ledger(api: &Api, author: &TestPlayer) {
    let upload = api
        .upload(author, "ledger?minPlayers=1&maxPlayers=1", LEDGER)
        .await;
    assert_eq!(upload.status(), StatusCode::CREATED);
}

/// Sends moves `0..count` to a ledger room, each pinned with `If-Match` to the version it was
/// computed from, and retried after a timeout with the same pin until the server answers. A
/// `412` on a retry means an earlier attempt was applied. Returns how many retries got 412.
async fn send_pinned_moves(
    api: Api,
    token: String,
    (room, mut version): (String, i64),
    count: usize,
) -> usize {
    let client = client(Duration::from_millis(400));
    let base = api.address;
    let mut applied_earlier = 0;
    for n in 0..count {
        let id = format!("{room}-{n}");
        let mut attempt = 0;
        loop {
            let response = client
                .post(format!("{base}/rooms/{room}/moves"))
                .bearer_auth(&token)
                .header("If-Match", format!("\"{version}\""))
                .body(json!({"id": id}).to_string())
                .send()
                .await;
            let Ok(response) = response else {
                attempt += 1;
                assert!(attempt < 200, "the server answers again");
                continue;
            };
            match response.status() {
                StatusCode::OK => {
                    let room: Value = response.json().await.unwrap();
                    version = room["version"].as_i64().unwrap();
                    break;
                }
                StatusCode::PRECONDITION_FAILED => {
                    assert!(attempt > 0, "only a retry can find the room moved on");
                    let problem: Value = response.json().await.unwrap();
                    assert_eq!(
                        problem["currentVersion"],
                        version + 1,
                        "moved on by one move"
                    );
                    version += 1;
                    applied_earlier += 1;
                    break;
                }
                other => panic!("{other}: {}", response.text().await.unwrap()),
            }
        }
    }
    applied_earlier
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_server_never_applies_a_retried_move_twice() {
    let dir = tempfile::tempdir().unwrap();
    let database = fresh_database(dir.path(), "frozen.db").await;
    // Other tests share the two cores: the hooks get room to run (their limit is not the point).
    let server = Server::start_with(&database, &["--hook-time-limit-ms", "2000"]);
    let api = Api {
        client: client(Duration::from_secs(10)),
        ..server.api.clone()
    };
    let author = api.new_player().await;
    upload_ledger(&api, &author).await;
    const MOVES: usize = 60;
    let mut players = Vec::new();
    for _ in 0..16 {
        let token = api.new_player().await.token;
        let (status, room) = api
            .post_value("/rooms", Some(&token), json!({"game": "ledger"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{room}");
        let version = room["version"].as_i64().unwrap();
        let room = room["id"].as_str().unwrap().to_owned();
        let task = send_pinned_moves(api.clone(), token, (room.clone(), version), MOVES);
        players.push((room, tokio::spawn(task)));
    }
    // Freeze the server three times while the moves are under way.
    let pid = server.child.id() as libc::pid_t;
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        // SAFETY: signals to the child process this test started.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        tokio::time::sleep(Duration::from_millis(1000)).await;
        unsafe { libc::kill(pid, libc::SIGCONT) };
    }
    let mut found_applied = 0;
    for (room, task) in players {
        found_applied += task.await.unwrap();
        let current = assert_history_is_whole(&api, &room).await;
        let expected: Vec<String> = (0..MOVES).map(|n| format!("{room}-{n}")).collect();
        assert_eq!(
            current["state"]["moves"],
            json!(expected),
            "every move exactly once, in order"
        );
    }
    println!("retries that found their move already applied: {found_applied}");
    server.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_slow_connections_do_not_stop_others_being_served() {
    crate::helpers::raise_open_files_limit();
    let dir = tempfile::tempdir().unwrap();
    let database = fresh_database(dir.path(), "slowloris.db").await;
    let server = Server::start(&database);
    let api = server.api.clone();
    let address: std::net::SocketAddr = api.address.trim_start_matches("http://").parse().unwrap();

    // Half never send a byte; half send a request head one byte at a time, never finishing.
    let mut idle = Vec::new();
    for _ in 0..1000 {
        idle.push(tokio::net::TcpStream::connect(address).await.unwrap());
    }
    let trickled = Arc::new(Mutex::new(0usize));
    let mut tricklers = Vec::new();
    for _ in 0..1000 {
        let stream = tokio::net::TcpStream::connect(address).await.unwrap();
        let trickled = trickled.clone();
        tricklers.push(tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let mut stream = stream;
            for byte in b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "
                .iter()
                .cycle()
                .take(40)
            {
                if stream.write_all(&[*byte]).await.is_err() {
                    return; // the server closed it: that is its defence
                }
                *trickled.lock().unwrap() += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }));
    }

    // Meanwhile, everyone else (another address: the slow one meets its connection cap) is
    // served: sign-ups, a game, reads.
    let api = Api {
        client: reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .local_address("127.0.0.2".parse::<std::net::IpAddr>().unwrap())
            .build()
            .unwrap(),
        ..api.clone()
    };
    let mut answered: BTreeMap<u16, usize> = BTreeMap::new();
    for _ in 0..5 {
        let (id, x, o) = api.started_game("tictactoe").await;
        let (x, o) = (x.token, o.token);
        for (token, cell) in [(&x, (1, 1)), (&o, (0, 0)), (&x, (2, 2))] {
            let (status, _) = api
                .post_value(
                    &format!("/rooms/{id}/moves"),
                    Some(token),
                    json!({"x": cell.0, "y": cell.1}),
                )
                .await;
            *answered.entry(status.as_u16()).or_default() += 1;
        }
        let response = api.get("/healthz").await;
        *answered.entry(response.status().as_u16()).or_default() += 1;
    }
    assert_eq!(answered, BTreeMap::from([(200, 20)]));
    assert!(
        *trickled.lock().unwrap() > 1000,
        "the slow connections were trickling"
    );
    for trickler in tricklers {
        trickler.abort();
    }
    drop(idle);
    server.kill();
}

/// PostgreSQL refusing the server's password (rotated under it, say): what needs the database
/// answers 503 storage_unavailable and changes nothing, never a 500; once the password works
/// again, so does the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_refusing_the_password_answers_503_until_it_takes_it_again() {
    if !on_postgres() {
        return;
    }
    let suffix = format!("{:016x}", rand::random::<u64>());
    let (role, database) = (format!("r_{suffix}"), format!("d_{suffix}"));
    let mut admin = sqlx::PgConnection::connect(&postgres_url("postgres"))
        .await
        .unwrap();
    let url = database_of_its_own(&mut admin, &role, &database).await;
    let app = TestApp::spawn_on(url, turnhouse::games::builtin(), |_| {}).await;
    let (room, x, _o) = app.started_tictactoe().await;
    let stored_version = || stored_room_version(postgres_url(&database), &room);
    let before = stored_version().await;

    // The password changes, and every connection the server holds is cut.
    admin
        .execute(sqlx::AssertSqlSafe(format!(
            "ALTER ROLE {role} PASSWORD 'second'"
        )))
        .await
        .unwrap();
    sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1")
        .bind(&role)
        .execute(&mut admin)
        .await
        .unwrap();
    let mv = json!({"x": 0, "y": 0});
    for _ in 0..3 {
        let response = app.play(&x, &room, mv.clone()).await;
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert_eq!(body["code"], "storage_unavailable", "{body}");
    }
    assert_eq!(
        stored_version().await,
        before,
        "a refused move changes nothing"
    );

    // The password works again: so does the server, and the move is made once.
    admin
        .execute(sqlx::AssertSqlSafe(format!(
            "ALTER ROLE {role} PASSWORD 'first'"
        )))
        .await
        .unwrap();
    for attempt in 1.. {
        let response = app.play(&x, &room, mv.clone()).await;
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        if status == StatusCode::OK {
            break;
        }
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(attempt < 100, "the server never came back: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(stored_version().await, before + 1);
}

/// A role `role` (password `first`) owning a new database `database`: its URL, as that role.
async fn database_of_its_own(admin: &mut sqlx::PgConnection, role: &str, database: &str) -> String {
    for sql in [
        format!("CREATE ROLE {role} LOGIN PASSWORD 'first'"),
        format!("CREATE DATABASE {database} OWNER {role}"),
    ] {
        admin.execute(sqlx::AssertSqlSafe(sql)).await.unwrap();
    }
    postgres_url_as(role, "first", database)
}

/// The version of `room` in the database at `url`, read there directly.
async fn stored_room_version(url: String, room: &str) -> i64 {
    let rooms: Vec<(String, i64)> = database_rows(&url, "SELECT id, version FROM rooms").await;
    let found = rooms.into_iter().find(|(id, _)| id == room);
    found.expect("the room is stored").1
}
