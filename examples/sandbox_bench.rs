//! What running a game in the sandbox costs, and what a runaway game costs everyone else.
//!
//!     cargo run --release --example sandbox_bench [-- --games 300]
//!
//! Starts a server in this process on a fresh SQLite file (this program doubles as its sandbox
//! processes) and prints, each against a baseline measured in the same run:
//! 1. one `onPlayerMove` call of `examples/tictactoe.js` through the sandbox pool, against the
//!    built-in game's hook called in place; and one call of an 84 KB bundle, whose saved realm
//!    (its top level run once) every call starts from;
//! 2. a whole move over HTTP (hook, commit, response) in a hosted room against a built-in one;
//! 3. built-in moves while runaway hooks spin back to back, against the same moves before;
//!    and how long each runaway took to be stopped, against the time limit.
//!
//!     cargo run --release --example sandbox_bench -- --floor [--seconds 10]
//!
//! prints instead, as one JSON line, the floor under hosted games: whole games of
//! `examples/tictactoe.js` as `examples/loadgen --hosted` plays them (`onRoomStart`, two
//! `onPlayerJoin`, five `onPlayerMove`), through a sandbox pool alone with one caller and one
//! worker per core: no HTTP, no storage. No server can host more games per second than this,
//! nor spend less CPU per game on its hooks (`cpu_ms_per_game`: the callers' and the sandbox
//! processes' CPU time together). Then the process boundary alone, for half as long: calls
//! each process answers at once without running JavaScript, back to back
//! (`bare_round_trip_cpu_us`).

#[path = "support/api.rs"]
mod api;
#[path = "support/measure.rs"]
mod measure;
#[path = "support/sandbox_worker.rs"]
mod sandbox_worker;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{json, Value};
use turnhouse::config::Config;
use turnhouse::game::{BoardGame, Game, Hook, Patch, PlayerRef, RoomStartContext};
use turnhouse::sandbox::SandboxPool;

use api::Api;
use measure::{latency_row, percentile};

#[derive(Parser)]
struct Args {
    /// Games played per measurement over HTTP (five moves each).
    #[arg(long, default_value_t = 300)]
    games: usize,
    /// Direct sandbox calls measured.
    #[arg(long, default_value_t = 3000)]
    calls: usize,
    /// Measure only the floor: whole games through the pool, one JSON line.
    #[arg(long)]
    floor: bool,
    /// How long the floor is measured.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
}

fn main() -> ExitCode {
    if let Some(code) = sandbox_worker::run_if_asked() {
        return code;
    }
    let args = Args::parse();
    if args.floor {
        floor(Duration::from_secs(args.seconds));
        return ExitCode::SUCCESS;
    }
    tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(bench(args));
    ExitCode::SUCCESS
}

async fn bench(args: Args) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // Rate limits off: the benchmark signs up two players a game.
    let (base, config) = sandbox_worker::serve_here(dir.path()).await;
    let limit = config.hook_limits.limits().time;
    let api = Api::new(base);
    println!(
        "sandbox_bench: {} games per HTTP figure, {} direct calls, hook time limit {} ms",
        args.games,
        args.calls,
        limit.as_millis()
    );

    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/tictactoe.js"
    ))
    .expect("the example");
    direct_calls(&config, &source, args.calls);

    api.publish("js-tictactoe", &source).await;
    let author = api.publish("spinner", SPINNER).await;
    // Warm up both paths (sandbox processes started, games compiled, connections open).
    for _ in 0..20 {
        api.game("tictactoe").await;
        api.game("js-tictactoe").await;
    }
    let builtin = api.games("tictactoe", args.games).await;
    let hosted = api.games("js-tictactoe", args.games).await;
    println!("\n2. a move over HTTP (hook + commit + response), per move:");
    println!("{}", latency_row("built-in tictactoe", &builtin, None));
    println!(
        "{}",
        latency_row("hosted js-tictactoe", &hosted, Some(&builtin))
    );

    println!("\n3. built-in moves while runaway hooks spin back to back:");
    let calm = api.games("tictactoe", args.games).await;
    println!("{}", latency_row("no runaway", &calm, None));
    let spinning = tokio::spawn({
        let api = api.clone();
        let author = author.clone();
        async move { api.spin_until_stopped(&author).await }
    });
    let busy = api.games("tictactoe", args.games).await;
    api.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let stopped_after = spinning.await.expect("the spinner");
    println!("{}", latency_row("runaway spinning", &busy, Some(&calm)));
    println!(
        "   each runaway answered 500 hook_timeout after (n={}): p50 {}  max {}  (limit {} ms, so {:.2}x and {:.2}x the limit)",
        stopped_after.len(),
        ms(percentile(&stopped_after, 0.5)),
        ms(*stopped_after.iter().max().unwrap_or(&Duration::ZERO)),
        limit.as_millis(),
        percentile(&stopped_after, 0.5).as_secs_f64() / limit.as_secs_f64(),
        stopped_after.iter().max().unwrap_or(&Duration::ZERO).as_secs_f64() / limit.as_secs_f64(),
    );
}

/// 1: the sandbox round trip alone, against calling the built-in hook in place.
fn direct_calls(config: &Config, source: &str, calls: usize) {
    let pool = SandboxPool::new(
        config.sandbox_program.clone().unwrap(),
        config.hook_limits.limits(),
        1,
    );
    let native = turnhouse::games::tictactoe::TicTacToe::default();
    let (x, o) = (player("x"), player("o"));
    let mut room = BoardGame {
        players: vec![x.clone(), o].into(),
        version: 3,
        joinable: false,
        ..new_room("bench")
    };
    let start = native.on_room_start(&room).unwrap().validate().unwrap();
    room.state = start.state.unwrap().into();
    let joined = native
        .on_player_join(&room.players[1].clone(), &room)
        .unwrap()
        .validate()
        .unwrap();
    room.state = joined.state.unwrap().into();
    let mv = json!({"x": 1, "y": 1});
    let args = serde_json::value::to_raw_value(&json!([x, mv, room])).expect("JSON");

    let mut in_place = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        std::hint::black_box(native.on_player_move(&x, &mv, &room).unwrap());
        in_place.push(started.elapsed());
    }
    let mut sandboxed = Vec::with_capacity(calls);
    for i in 0..calls + 50 {
        let started = Instant::now();
        let result = pool.call("bench@1", source, Hook::PlayerMove, args.clone());
        let took = started.elapsed();
        assert!(result.is_ok(), "{result:?}");
        if i >= 50 {
            sandboxed.push(took);
        }
    }
    println!("\n1. one onPlayerMove call of tic-tac-toe:");
    println!("{}", latency_row("built-in, in place", &in_place, None));
    println!(
        "{}",
        latency_row("JavaScript, sandbox", &sandboxed, Some(&in_place))
    );
    let overhead = percentile(&sandboxed, 0.5).saturating_sub(percentile(&in_place, 0.5));
    println!(
        "   per-call overhead of the sandbox (p50): {} (the game's saved realm copied back in, JSON both ways, two pipe hops)",
        ms(overhead)
    );

    // Every call starts from the game's saved realm, copied back in: what a big bundle's costs.
    let bundle = large_bundle();
    let mut large = Vec::with_capacity(calls / 10);
    for i in 0..calls / 10 + 5 {
        let started = Instant::now();
        let result = pool.call(
            "bundle@1",
            &bundle,
            Hook::RoomStart,
            serde_json::value::to_raw_value(&json!([room])).expect("JSON"),
        );
        let took = started.elapsed();
        assert!(result.is_ok(), "{result:?}");
        if i >= 5 {
            large.push(took);
        }
    }
    println!(
        "{}",
        latency_row(
            &format!("{} KB bundle", bundle.len() / 1000),
            &large,
            Some(&sandboxed),
        )
    );
}

/// Whole games through a pool alone, from one caller per core for `duration`: one JSON line.
fn floor(duration: Duration) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let config = Config::for_database("unused.db");
    let pool = SandboxPool::new(
        std::env::current_exe().expect("this program"),
        config.hook_limits.limits(),
        cores,
    );
    let source: &'static str = include_str!("tictactoe.js");
    // Every worker compiles the game before the clock starts.
    std::thread::scope(|scope| {
        for _ in 0..cores {
            scope.spawn(|| play_in_pool(&pool, source));
        }
    });
    let steps = (0..cores).map(|_| || play_in_pool(&pool, source)).collect();
    let played = repeat_for(steps, duration);
    let (games, elapsed) = (played.count as usize, played.seconds);
    drop(pool);
    let bare = bare_round_trips(cores, duration / 2);
    println!(
        "{}",
        json!({
            "kind": "sandbox_floor",
            "game": "tictactoe.js",
            "callers": cores,
            "workers": cores,
            "seconds": duration.as_secs(),
            "games": games,
            "hook_calls_per_game": HOOK_CALLS_PER_GAME,
            "games_per_s": (games as f64 / elapsed * 10.0).round() / 10.0,
            "hook_calls_per_s": (games as f64 * HOOK_CALLS_PER_GAME as f64 / elapsed).round(),
            // The callers' and the workers' CPU time together.
            "cpu_ms_per_game": round3(played.cpu_ms / games as f64),
            "bare_round_trips_per_s": (bare.count as f64 / bare.seconds).round(),
            "bare_round_trip_cpu_us": round3(bare.cpu_ms * 1000.0 / bare.count as f64),
        })
    );
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// How often steps run back to back for a while: the count, the seconds they ran, and the CPU
/// time this process and its children (the sandbox processes) took meanwhile.
struct Repeated {
    count: u64,
    seconds: f64,
    cpu_ms: f64,
}

/// Runs each of `steps` on a thread of its own, again and again, for `duration`.
fn repeat_for<F: FnMut() + Send>(steps: Vec<F>, duration: Duration) -> Repeated {
    let cpu_before = measure::cpu_ms(std::process::id());
    let started = Instant::now();
    let count = std::thread::scope(|scope| {
        let threads: Vec<_> = steps
            .into_iter()
            .map(|mut step| {
                scope.spawn(move || {
                    let mut count = 0u64;
                    while started.elapsed() < duration {
                        step();
                        count += 1;
                    }
                    count
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("a caller"))
            .sum()
    });
    Repeated {
        count,
        seconds: started.elapsed().as_secs_f64(),
        cpu_ms: measure::cpu_ms(std::process::id()) - cpu_before,
    }
}

/// What the process boundary alone costs: one caller and one sandbox process per core (as in
/// the floor), each caller sending a call of a game its process does not hold, which the
/// process answers at once without running any JavaScript (`missing`), for `duration`. Each
/// trip has a hook call's two pipe writes and two wake-ups, with two small JSON lines; the
/// pool's `poll` before its read, and its read of the process's CPU clock, are left out.
fn bare_round_trips(cores: usize, duration: Duration) -> Repeated {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{ChildStdin, ChildStdout, Command, Stdio};
    use turnhouse::sandbox::protocol::{Request, Response};

    let request = Request::Call {
        key: "bare@1".into(),
        hook: Hook::PlayerMove,
        args: serde_json::value::to_raw_value(&json!([])).expect("JSON"),
    };
    let mut line = serde_json::to_vec(&request).expect("JSON");
    line.push(b'\n');
    let line = &line;
    let mut workers: Vec<_> = (0..cores)
        .map(|_| {
            Command::new(std::env::current_exe().expect("this program"))
                .arg("sandbox-worker")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("a sandbox process starts")
        })
        .collect();
    let trip =
        &|stdin: &mut ChildStdin, stdout: &mut BufReader<ChildStdout>, answer: &mut String| {
            stdin.write_all(line).expect("the process reads");
            answer.clear();
            stdout.read_line(answer).expect("the process answers");
            let response: Response = serde_json::from_str(answer).expect("a response");
            assert!(matches!(response, Response::Missing), "{response:?}");
        };
    let pipes: Vec<_> = workers
        .iter_mut()
        .map(|w| {
            let mut stdin = w.stdin.take().expect("piped");
            let mut stdout = BufReader::new(w.stdout.take().expect("piped"));
            // The first answer comes once the process has made its engine.
            trip(&mut stdin, &mut stdout, &mut String::new());
            (stdin, stdout)
        })
        .collect();
    let steps = pipes
        .into_iter()
        .map(|(mut stdin, mut stdout)| {
            let mut answer = String::new();
            move || trip(&mut stdin, &mut stdout, &mut answer)
        })
        .collect();
    let trips = repeat_for(steps, duration);
    for mut worker in workers {
        // Its stdin was dropped with its caller: it ends.
        let _ = worker.wait();
    }
    trips
}

/// The hook calls of one game as `loadgen --hosted` plays it.
const HOOK_CALLS_PER_GAME: usize = 8;

/// One game of tic-tac-toe in which X wins along the top row, each hook called through
/// `pool` with the room as the engine would hand it over, each patch applied.
fn play_in_pool(pool: &SandboxPool, source: &str) {
    let (x, o) = (player("x"), player("o"));
    let mut room = new_room("floor");
    let mut calls = 0;
    let mut call = |room: &mut BoardGame, hook: Hook, args: Value| {
        let args = serde_json::value::to_raw_value(&args).expect("JSON");
        let (outcome, _) = pool
            .call("floor@1", source, hook, args)
            .expect("the sandbox answers");
        let turnhouse::sandbox::protocol::Outcome::Patch { patch } = outcome else {
            panic!("{hook:?} gave {outcome:?}");
        };
        let patch = Patch::from_json(patch)
            .and_then(Patch::validate)
            .expect("a patch");
        if let Some(state) = patch.state {
            room.state = state.into();
        }
        room.joinable = patch.joinable.unwrap_or(room.joinable);
        room.finished = patch.finished.unwrap_or(room.finished);
        room.version += 1;
        calls += 1;
    };
    let args = json!([room]);
    call(&mut room, Hook::RoomStart, args);
    for seat in [&x, &o] {
        std::sync::Arc::make_mut(&mut room.players).push(seat.clone());
        let args = json!([seat, room]);
        call(&mut room, Hook::PlayerJoin, args);
    }
    for (n, (row, col)) in [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]
        .into_iter()
        .enumerate()
    {
        let mover = if n % 2 == 0 { &x } else { &o };
        let args = json!([mover, {"x": row, "y": col}, room]);
        call(&mut room, Hook::PlayerMove, args);
    }
    assert!(room.finished, "X won: {}", room.state);
    assert_eq!(calls, HOOK_CALLS_PER_GAME);
}

/// A bundle the size of a board game with its rules library inlined: a table built at load
/// and many small functions and classes.
fn large_bundle() -> String {
    let mut source = String::from("'use strict';\nconst table = [];\n");
    source.push_str("for (let i = 0; i < 64; i++) table.push(Array.from({ length: 8 }, (_, d) => i * 8 + d));\n");
    for i in 0..300 {
        source.push_str(&format!(
            "function rule{i}(board, from) {{ const to = table[(from + {i}) % 64]; \
             return to?.filter((square) => board[square] == null).map((square) => ({{ from, to: square, rule: {i} }})) ?? []; }}\n\
             class Piece{i} {{ constructor(at) {{ this.at = at; }} moves(board) {{ return rule{i}(board, this.at); }} }}\n"
        ));
    }
    source.push_str(
        "module.exports = { onRoomStart: () => ({ state: { moves: new Piece7(3).moves([]).length } }), \
         onPlayerJoin() {}, onPlayerQuit() {}, onPlayerMove() {} };",
    );
    source
}

/// A public room `id` as it is before its first hook: no players, no state.
fn new_room(id: &str) -> BoardGame {
    BoardGame {
        room_id: id.into(),
        players: Vec::new().into(),
        version: 0,
        joinable: true,
        finished: false,
        state: Value::Null.into(),
        room_start_context: RoomStartContext {
            private: false,
            clock: None,
        },
        trigger_timeout_at: None,
        now: Default::default(),
    }
}

fn player(name: &str) -> PlayerRef {
    PlayerRef {
        id: format!("{name:0>32}").into(),
        username: name.into(),
    }
}

/// A game whose every move spins forever.
const SPINNER: &str = "module.exports = { onRoomStart: () => ({}), onPlayerJoin: () => ({}), \
                       onPlayerQuit: () => ({}), onPlayerMove() { for (;;) {} } };";

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}
