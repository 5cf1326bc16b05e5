//! What each hook of a game costs in the sandbox, call by call: a whole tic-tac-toe game (X
//! wins along the top row) played through a sandbox pool, with every hook the server would
//! call (the hooks, `toMove` on every version, `winners` on the last, `onPlayerView` for the
//! player who acted), each timed; no HTTP, no storage.
//!
//!     cargo run --release --example hook_costs -- BUNDLE [--games 300] [--boardgameio]
//!
//! `BUNDLE` is the game's one file; `--boardgameio` plays boardgame.io's tic-tac-toe moves
//! (`{"type": "clickCell", "args": [cell]}`) instead of `{x, y}`. Prints the p50 and mean of
//! each hook and the sandbox time of a whole game.

#[path = "support/sandbox_worker.rs"]
mod sandbox_worker;

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{json, Value};
use turnhouse::config::Config;
use turnhouse::game::{Hook, PlayerRef};
use turnhouse::sandbox::protocol::Outcome;
use turnhouse::sandbox::SandboxPool;

#[derive(Parser)]
struct Args {
    bundle: std::path::PathBuf,
    #[arg(long, default_value_t = 300)]
    games: usize,
    #[arg(long)]
    boardgameio: bool,
}

fn main() -> ExitCode {
    if let Some(code) = sandbox_worker::run_if_asked() {
        return code;
    }
    let args = Args::parse();
    let source = std::fs::read_to_string(&args.bundle).expect("the bundle");
    let mut config = Config::for_database("unused.db");
    config.sandbox_program = Some(std::env::current_exe().expect("this program"));
    let pool = SandboxPool::new(
        config.sandbox_program.clone().unwrap(),
        config.hook_limits.limits(),
        1,
    );
    let mut times: BTreeMap<&str, Vec<Duration>> = BTreeMap::new();
    let started = Instant::now();
    for _ in 0..args.games {
        play(&pool, &source, args.boardgameio, &mut times);
    }
    let total = started.elapsed();
    for (hook, took) in &mut times {
        took.sort();
        let mean = took.iter().sum::<Duration>() / took.len() as u32;
        println!(
            "{hook:<14} n={:<6} p50 {:>8.3} ms  mean {:>8.3} ms",
            took.len(),
            took[took.len() / 2].as_secs_f64() * 1e3,
            mean.as_secs_f64() * 1e3
        );
    }
    println!(
        "a whole game: {:.3} ms ({} calls)",
        total.as_secs_f64() * 1e3 / args.games as f64,
        times.values().map(Vec::len).sum::<usize>() / args.games
    );
    ExitCode::SUCCESS
}

fn player(name: &str) -> PlayerRef {
    PlayerRef {
        id: format!("{name:0>32}").into(),
        username: name.into(),
    }
}

fn play(pool: &SandboxPool, source: &str, bgio: bool, times: &mut BTreeMap<&str, Vec<Duration>>) {
    let (x, o) = (player("x"), player("o"));
    let mut room = json!({
        "players": [], "version": 1, "joinable": true, "finished": false, "state": null,
        "triggerTimeoutAt": null, "roomStartContext": {"private": false},
    });
    let mut call = |name: &'static str, hook: Hook, args: Value| -> Value {
        let raw = serde_json::value::to_raw_value(&args).unwrap();
        let started = Instant::now();
        let (outcome, _) = pool.call("bench@1", source, hook, raw).expect("the call");
        times.entry(name).or_default().push(started.elapsed());
        match outcome {
            Outcome::Patch { patch } => patch,
            other => panic!("{name}: {other:?}"),
        }
    };
    let apply = |room: &mut Value, patch: &Value| {
        for key in ["state", "joinable", "finished"] {
            if let Some(value) = patch.get(key) {
                room[key] = value.clone();
            }
        }
        room["version"] = json!(room["version"].as_i64().unwrap() + 1);
    };
    let patch = call("onRoomStart", Hook::RoomStart, json!([room]));
    apply(&mut room, &patch);
    call("toMove", Hook::ToMove, json!([room]));
    for joining in [&x, &o] {
        room["players"].as_array_mut().unwrap().push(json!(joining));
        let patch = call("onPlayerJoin", Hook::PlayerJoin, json!([joining, room]));
        apply(&mut room, &patch);
        call("toMove", Hook::ToMove, json!([room]));
        call("onPlayerView", Hook::PlayerView, json!([joining, room]));
    }
    for (n, (row, col)) in [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]
        .into_iter()
        .enumerate()
    {
        let mover = if n % 2 == 0 { &x } else { &o };
        let mv = match bgio {
            false => json!({"x": row, "y": col}),
            true => json!({"type": "clickCell", "args": [row * 3 + col]}),
        };
        let patch = call("onPlayerMove", Hook::PlayerMove, json!([mover, mv, room]));
        apply(&mut room, &patch);
        call("toMove", Hook::ToMove, json!([room]));
        call("onPlayerView", Hook::PlayerView, json!([mover, room]));
    }
    assert_eq!(room["finished"], true, "{room}");
    call("winners", Hook::Winners, json!([room]));
}
