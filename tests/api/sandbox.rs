//! Hostile game code, over HTTP against the real server and its real sandbox processes. Every
//! case must be contained: a named error, the room unchanged, the room still playable, and
//! the server (health, a built-in game) untouched.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_problem, unique, TestApp, TestPlayer};

/// One game, many attacks: the move's `do` picks one; any other move counts up by one.
const HOSTILE: &str = r#"'use strict';
module.exports = {
  onRoomStart: () => ({ state: { count: 0 } }),
  onPlayerJoin: () => ({}),
  onPlayerQuit: () => ({}),
  onPlayerMove(player, move, room) {
    switch (move.do) {
      case 'spin': while (true) {}
      case 'native-loop': Array.prototype.reverse.call({ length: 2 ** 53 - 1 }); return {};
      case 'spin-and-catch': try { while (true) {} } catch (e) { return { state: { escaped: true } }; }
      case 'grow': { const all = []; for (;;) all.push(new Array(100000).fill(7)); }
      case 'double': { let s = 'xy'; for (;;) s = s + s; }
      case 'recurse': { const down = (n) => down(n + 1) + 1; return down(0); }
      case 'cycle': { const state = {}; state.self = state; return { state }; }
      case 'function': return () => ({ state: 1 });
      case 'function-in-state': return { state: { f() {} } };
      case 'bigint': return { state: { n: 10n } };
      case 'huge': return { state: { blob: 'x'.repeat(10 * 1024 * 1024) } };
      case 'deep': { let v = 0; for (let i = 0; i < 1000; i++) v = [v]; return { state: v }; }
      case 'throw-42': throw 42;
      case 'throw-null': throw null;
      case 'require': return { state: require('fs').readFileSync('/etc/passwd', 'utf8') };
      case 'process': process.exit(1);
      case 'import': return import('fs').then(() => ({ state: 'escaped' }));
      case 'never': return new Promise(() => {});
      case 'logs': for (let i = 0; i < 2000; i++) console.log('x'.repeat(1000)); return {};
      case 'tamper':
        globalThis.leaked = 'yes';
        Math.random = () => 4;
        Array.prototype.push = function () { throw new Error('sabotaged'); };
        Object.prototype.polluted = true;
        JSON.stringify = () => '{"state":"forged"}';
        return {};
      case 'inspect':
        return { state: {
          count: room.state.count,
          leaked: typeof globalThis.leaked,
          random: Math.random() < 1,
          push: [].push(1),
          polluted: ({}).polluted === undefined,
        } };
      default:
        return { state: { count: room.state.count + 1 } };
    }
  },
};
"#;

/// Each attack and the problem it must produce.
const ATTACKS: &[(&str, u16, &str)] = &[
    ("spin", 500, "hook_timeout"),
    ("spin-and-catch", 500, "hook_timeout"),
    // A loop inside the engine's own code, which never reaches the engine's checks: the
    // watchdog stops it by the worker's CPU time.
    ("native-loop", 500, "hook_timeout"),
    ("grow", 500, "hook_out_of_memory"),
    ("double", 500, "hook_out_of_memory"),
    ("recurse", 500, "hook_crashed"),
    ("cycle", 500, "invalid_patch"),
    ("function", 500, "invalid_patch"),
    ("function-in-state", 500, "invalid_patch"),
    ("bigint", 500, "invalid_patch"),
    ("huge", 500, "invalid_patch"),
    ("deep", 500, "invalid_patch"),
    ("throw-42", 422, "game_refused"),
    ("throw-null", 422, "game_refused"),
    ("require", 422, "game_refused"),
    ("process", 500, "hook_failed"),
    ("import", 500, "hook_failed"),
    ("never", 500, "invalid_patch"),
];

/// The server answers its health check and a move in a built-in room.
async fn assert_server_unharmed(app: &TestApp) {
    let health = app.get("/healthz").await;
    assert_eq!(health.status(), StatusCode::OK);
    let (room, x, _) = app.started_tictactoe().await;
    let moved = app.play_ok(&x, &room, json!({"x": 1, "y": 1})).await;
    assert_eq!(moved["state"]["board"][1][1], "X");
}

async fn hostile_room(app: &TestApp) -> (String, TestPlayer) {
    let author = app.publish("hostile", HOSTILE).await;
    let room = app.create_room(&author, json!({"game": "hostile"})).await;
    (room["id"].as_str().unwrap().to_owned(), author)
}

#[tokio::test]
async fn every_attack_is_contained_and_the_room_plays_on() {
    // Room enough that building a 10 MB state on a busy machine ends by its size, not the clock.
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.hook_limits.time_ms = 500;
    })
    .await;
    let (room, author) = hostile_room(&app).await;
    let mut count = 0;
    for &(attack, status, code) in ATTACKS {
        let before = app.room(&room).await;
        let response = app.play(&author, &room, json!({"do": attack})).await;
        let status = StatusCode::from_u16(status).unwrap();
        let problem = assert_problem(response, status, code).await;
        assert_eq!(app.room(&room).await, before, "{attack} changed the room");
        // The next action on the same room works.
        count += 1;
        let after = app.play_ok(&author, &room, json!({})).await;
        assert_eq!(after["state"]["count"], count, "after {attack}: {problem}");
        assert_server_unharmed(&app).await;

        let detail = problem["detail"].as_str().unwrap();
        match attack {
            "throw-42" => assert_eq!(detail, "42"),
            "throw-null" => assert_eq!(detail, "null"),
            "require" => assert!(
                detail.contains("require(\"fs\") is not available"),
                "{detail}"
            ),
            "process" => assert!(detail.contains("process"), "{detail}"),
            "huge" => assert!(detail.contains("bytes of JSON"), "{detail}"),
            "function" | "function-in-state" => assert!(detail.contains("function"), "{detail}"),
            "bigint" => assert!(detail.contains("bigint"), "{detail}"),
            "spin" => assert!(
                detail.contains("onPlayerMove") && detail.contains("500 ms"),
                "{detail}"
            ),
            _ => {}
        }
    }
    // Each fault is counted for the operator, by kind.
    let of_code = |wanted: &str| {
        ATTACKS
            .iter()
            .filter(|(_, _, code)| *code == wanted)
            .count()
    };
    for (fault, code) in [
        ("timeout", "hook_timeout"),
        ("memory", "hook_out_of_memory"),
    ] {
        let sample = format!("turnhouse_hook_faults_total{{fault=\"{fault}\"}}");
        assert_eq!(
            app.metric(&sample).await,
            Some(of_code(code) as f64),
            "{sample}"
        );
    }
}

#[tokio::test]
async fn a_log_flood_does_not_stop_the_call() {
    let app = TestApp::spawn().await;
    let (room, author) = hostile_room(&app).await;
    let after = app.play_ok(&author, &room, json!({"do": "logs"})).await;
    assert_eq!(after["version"], 3);
    assert_server_unharmed(&app).await;
}

#[tokio::test]
async fn tampering_with_globals_does_not_reach_the_next_call() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        // One process, so both calls surely run in the same one.
        config.sandbox_workers = 1;
    })
    .await;
    let (room, author) = hostile_room(&app).await;
    app.play_ok(&author, &room, json!({"do": "tamper"})).await;
    let seen = app.play_ok(&author, &room, json!({"do": "inspect"})).await;
    assert_eq!(
        seen["state"],
        json!({"count": 0, "leaked": "undefined", "random": true, "push": 1, "polluted": true})
    );
}

#[tokio::test]
async fn an_endless_room_start_creates_no_room() {
    let app = TestApp::spawn().await;
    let author = app
        .publish(
            "spin-start",
            "module.exports = { onRoomStart() { for (;;) {} }, onPlayerJoin() {}, \
             onPlayerQuit() {}, onPlayerMove() {} };",
        )
        .await;
    let response = app
        .post(
            "/rooms",
            Some(&author.token),
            Some(&json!({"game": "spin-start"})),
        )
        .await;
    let problem = assert_problem(response, StatusCode::INTERNAL_SERVER_ERROR, "hook_timeout").await;
    assert!(problem["detail"].as_str().unwrap().contains("onRoomStart"));
    assert_eq!(
        app.get_json("/rooms?game=spin-start").await["rooms"],
        json!([])
    );
    assert_server_unharmed(&app).await;
}

#[tokio::test]
async fn uploads_that_misbehave_while_loading_are_refused() {
    let app = TestApp::spawn().await;
    let author = app.register(&unique("author")).await;
    let hooks = "module.exports = { onRoomStart() {}, onPlayerJoin() {}, onPlayerQuit() {}, onPlayerMove() {} };";
    let cases = [
        (format!("while (true) {{}}\n{hooks}"), "time limit of 50 ms"),
        (
            format!("const a = []; for (;;) a.push(new Array(1e5).fill(1));\n{hooks}"),
            "out of memory",
        ),
        (
            format!("require('fs');\n{hooks}"),
            "require(\"fs\") is not available",
        ),
        (
            format!("process.exit(0);\n{hooks}"),
            "process is not defined",
        ),
        (
            "import fs from 'fs';\nexport default {};".to_owned(),
            "imports are not available",
        ),
        (format!("import('fs');\n{hooks}"), ""),
    ];
    for (index, (source, says)) in cases.iter().enumerate() {
        let id = format!("bad-load-{index}");
        let response = app.upload(&author, &id, source).await;
        if says.is_empty() {
            // An unawaited dynamic import fails quietly; the game loads and can never import.
            assert!(response.status().is_success(), "{source}");
            continue;
        }
        let problem = assert_problem(
            response,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_game_code",
        )
        .await;
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.contains(says), "{source}: {detail}");
        let stored = app.get(&format!("/games/{id}")).await;
        assert_eq!(stored.status(), StatusCode::NOT_FOUND, "{source}");
        assert_server_unharmed(&app).await;
    }
}

#[tokio::test]
async fn a_runaway_hook_holds_up_no_other_room() {
    // A long limit, so the runaway is surely still running while the other games play.
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.hook_limits.time_ms = 3000;
        config.sandbox_workers = 2;
    })
    .await;
    let (room, author) = hostile_room(&app).await;
    let game = app.publish_example("tictactoe.js", "js-tictactoe").await;
    let runaway = {
        let (client, url, token) = (
            app.client.clone(),
            format!("{}/rooms/{room}/moves", app.address),
            author.token.clone(),
        );
        tokio::spawn(async move {
            let response = client
                .post(url)
                .bearer_auth(token)
                .body(json!({"do": "spin"}).to_string())
                .send()
                .await
                .unwrap();
            let status = response.status();
            let body: Value = response.json().await.unwrap();
            (status, body)
        })
    };
    // A whole built-in game and a whole hosted game while the runaway spins.
    for game in ["tictactoe", game.as_str()] {
        let (other, x, o) = app.started_game(game).await;
        for (turn, (row, col)) in [(0, 0), (1, 1), (0, 1), (2, 2), (0, 2)].iter().enumerate() {
            let player = if turn % 2 == 0 { &x } else { &o };
            app.play_ok(player, &other, json!({"x": row, "y": col}))
                .await;
        }
        assert_eq!(app.room(&other).await["finished"], true);
    }
    assert!(
        !runaway.is_finished(),
        "both games finished while the runaway ran"
    );
    let (status, body) = runaway.await.unwrap();
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(body["code"], "hook_timeout");
}

#[tokio::test]
async fn a_stalled_sandbox_process_is_killed_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let (app, program, worker, (room, author)) = with_one_sandbox_process(dir.path()).await;

    // Frozen: it can no longer answer, which only the watchdog can notice.
    signal(worker, libc::SIGSTOP);
    let response = app.play(&author, &room, json!({})).await;
    assert_problem(response, StatusCode::INTERNAL_SERVER_ERROR, "hook_timeout").await;
    assert_eq!(app.room(&room).await["version"], 2);
    let after = app.play_ok(&author, &room, json!({})).await;
    assert_eq!(after["state"]["count"], 1);
    let now = processes_running(&program);
    assert_eq!(now.len(), 1);
    assert_ne!(now[0], worker, "the frozen process was replaced");

    // Killed while idle: the next call gets a fresh one, not an error.
    signal(now[0], libc::SIGKILL);
    let after = app.play_ok(&author, &room, json!({})).await;
    assert_eq!(after["state"]["count"], 2);
    assert_server_unharmed(&app).await;

    // The operator sees both: one killed past its deadline, one found dead; three started.
    for (sample, count) in [
        (
            "turnhouse_sandbox_processes_stopped_total{reason=\"timeout\"}",
            1.0,
        ),
        (
            "turnhouse_sandbox_processes_stopped_total{reason=\"died\"}",
            1.0,
        ),
        ("turnhouse_sandbox_processes_started_total", 3.0),
        ("turnhouse_hook_faults_total{fault=\"timeout\"}", 1.0),
    ] {
        assert_eq!(app.metric(sample).await, Some(count), "{sample}");
    }
}

/// A sandbox process killed from outside (by the kernel's OOM killer, by an operator) costs
/// no call and fails no upload, whether either reaches it just before or just after it dies:
/// hooks are pure functions of their arguments, so the call goes once to a fresh process, and
/// so does the upload's check.
#[tokio::test]
async fn a_sandbox_process_killed_from_outside_costs_no_call() {
    let dir = tempfile::tempdir().unwrap();
    let (app, program, _, (room, author)) = with_one_sandbox_process(dir.path()).await;
    // Not waited for: the call comes while the process may still be dying.
    let kill_the_process = || {
        let workers = processes_running(&program);
        assert_eq!(workers.len(), 1, "one sandbox process: {workers:?}");
        send(workers[0], libc::SIGKILL);
    };
    for count in 1..=8 {
        kill_the_process();
        let after = app.play_ok(&author, &room, json!({})).await;
        assert_eq!(after["state"]["count"], count);
    }
    // An upload's check, likewise: the author's module is not blamed for it.
    for version in 2..=5 {
        kill_the_process();
        let response = app.upload(&author, "hostile", HOSTILE).await;
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["version"], version, "{body}");
    }
    assert_eq!(
        app.metric("turnhouse_sandbox_processes_stopped_total{reason=\"died\"}")
            .await,
        Some(12.0)
    );
    assert_eq!(
        app.metric("turnhouse_hook_faults_total{fault=\"crash\"}")
            .await,
        Some(0.0)
    );
    assert_server_unharmed(&app).await;
}

/// A sandbox process keeps its data segment within the limit it set itself (`RLIMIT_DATA`, the
/// second line behind the engine's own) while it serves calls. The binary's allocator, mimalloc,
/// makes its first arena of a gigabyte writable at once unless told not to: started any other
/// way than the server starts it, a sandbox process could not even load a game. Like the
/// server, it runs without transparent huge pages.
#[tokio::test]
async fn a_sandbox_process_stays_within_its_data_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (app, _, worker, (room, author)) = with_one_sandbox_process(dir.path()).await;
    app.play_ok(&author, &room, json!({})).await;
    let proc = PathBuf::from(format!("/proc/{}", worker));
    let limits = std::fs::read_to_string(proc.join("limits")).unwrap();
    let limit: u64 = limits
        .lines()
        .find_map(|line| line.strip_prefix("Max data size"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|soft| soft.parse().ok())
        .expect("the sandbox limits its data segment");
    let status = std::fs::read_to_string(proc.join("status")).unwrap();
    let data_kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmData:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap();
    assert!(
        data_kib * 1024 < limit,
        "data segment {data_kib} KiB, limit {limit} bytes"
    );
    let huge_pages = status
        .lines()
        .find_map(|line| line.strip_prefix("THP_enabled:"))
        .map(str::trim);
    assert_eq!(huge_pages, Some("0"), "transparent huge pages are off");
}

/// A server with one sandbox process, started from a path of its own under `dir` (see
/// [`own_program`]), and a hostile room in it: the server, that path, the process's pid, and
/// the room with its author.
async fn with_one_sandbox_process(dir: &Path) -> (TestApp, PathBuf, u32, (String, TestPlayer)) {
    let program = own_program(dir);
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.sandbox_program = Some(program.clone());
        config.sandbox_workers = 1;
    })
    .await;
    let room = hostile_room(&app).await;
    let workers = processes_running(&program);
    assert_eq!(workers.len(), 1, "one sandbox process: {workers:?}");
    (app, program, workers[0], room)
}

/// A path of its own for the server binary, so this test's sandbox processes can be told
/// from those of tests running beside it.
fn own_program(dir: &Path) -> PathBuf {
    let link = dir.join("turnhouse-under-test");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_turnhouse"), &link).unwrap();
    link
}

/// Pids of live processes whose first argument is `program`.
fn processes_running(program: &Path) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let zombie = process_state(pid) == Some('Z');
        let first = cmdline.split(|b| *b == 0).next().unwrap_or_default();
        if !zombie && first == program.as_os_str().as_encoded_bytes() {
            pids.push(pid);
        }
    }
    pids
}

/// The state letter of process `pid` (`/proc/<pid>/stat`: `T` stopped, `Z` exited and not
/// yet waited for), `None` once it is gone.
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim_start().chars().next()
}

/// Whether process `pid` has exited, every thread of it: gone, or a zombie with no thread
/// left. Its first thread turns zombie while the others are still exiting, and until the last
/// has, the process cannot be waited for: its parent (the server) rightly takes it for alive.
fn exited(pid: u32) -> bool {
    let threads = std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |t| t.count());
    process_state(pid).is_none() || (process_state(pid) == Some('Z') && threads <= 1)
}

/// Sends `signal` (`SIGSTOP` or `SIGKILL`) to `pid` and waits until it has taken effect: the
/// process stopped, or exited (see [`exited`]). A killed process is not gone the moment
/// `kill` returns.
fn signal(pid: u32, signal: libc::c_int) {
    send(pid, signal);
    let done = || match signal {
        libc::SIGSTOP => process_state(pid) == Some('T'),
        _ => exited(pid),
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "signal {signal} to {pid} did not take effect"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Sends `signal` to `pid`, and nothing more: the process may take a moment to act on it.
fn send(pid: u32, signal: libc::c_int) {
    // SAFETY: sending a signal to a process this test started; no memory is involved.
    let sent = unsafe { libc::kill(pid as libc::pid_t, signal) };
    assert_eq!(sent, 0, "signal {signal} to {pid}");
}
