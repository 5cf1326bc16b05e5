//! What the computer opponents of uploaded games cost: the search that ships with the server,
//! run in the sandbox over the game's own hooks, exactly as a room's bot runs it.
//!
//!     cargo run --release --example bot_bench [-- --positions 12 --playouts 2000 --seed 2026 --games 300 --json]
//!
//! For `examples/tictactoe.js` and `examples/connect-four.js` it prints:
//! 1. playouts per second in the sandbox: hard searches of `--playouts` with no time cap, from
//!    positions of seeded random games, each less the same call with no playouts (the call,
//!    the realm, the game's first `enumerateMoves`); a search that proves its position stops
//!    early, so the playouts counted are the ones the search reports it ran;
//! 2. the time to choose a move at each level under the default settings, from the same
//!    positions;
//!
//! each against baselines measured in the same run: one `onPlayerMove` call through the same
//! sandbox pool, and the built-in tic-tac-toe's hard bot choosing in place; and
//! 3. the pace of other rooms while bots think: moves of built-in and hosted tic-tac-toe over
//!    HTTP, on a server started in this process with the default settings, while 0, 1 and 3
//!    players each play Connect Four against the hard bot without pause (the baseline is 0).

#[path = "support/api.rs"]
mod api;
#[path = "support/measure.rs"]
mod measure;
#[path = "support/sandbox_worker.rs"]
mod sandbox_worker;

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use turnhouse::config::Config;
use turnhouse::game::{
    BoardGame, BotLevel, Capabilities, Game, GameInfo, HookResult, PlayerRef, RoomStartContext,
};
use turnhouse::sandbox::protocol::{Outcome, SearchOptions};
use turnhouse::sandbox::{GameLogSink, HostedGame, SandboxPool};

use api::Api;
use measure::{latency_row, percentile};

#[derive(Parser)]
struct Args {
    /// Positions (from seeded random games) each figure is measured on.
    #[arg(long, default_value_t = 12)]
    positions: usize,
    /// Playouts of the searches that measure playouts per second.
    #[arg(long, default_value_t = 2000)]
    playouts: u32,
    #[arg(long, default_value_t = 2026)]
    seed: u64,
    /// Games of each tic-tac-toe per measurement of other rooms' pace (five moves each).
    #[arg(long, default_value_t = 300)]
    games: usize,
    /// Print the figures as one JSON line (for scripts/bench); the text goes to stderr.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    if let Some(code) = sandbox_worker::run_if_asked() {
        return code;
    }
    let args = Args::parse();
    let config = Config::for_database(":memory:");
    let program = std::env::current_exe().expect("this program");
    let limits = config.hook_limits.limits();
    let defaults = config.bot_search;
    let default = SandboxPool::new(program.clone(), limits, 1).with_bot_search(defaults.budget());
    let say = |line: String| {
        if args.json {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    say(format!(
        "bot_bench: {} positions per game, seed {}; defaults: medium {} playouts, hard {} playouts, searching at most {} ms",
        args.positions, args.seed, defaults.bot_medium_playouts, defaults.bot_hard_playouts, defaults.bot_search_ms
    ));

    let baseline = baselines(&default, args.positions);
    say(format!(
        "baselines: one onPlayerMove call of tictactoe.js through the sandbox p50 {}; the built-in hard tic-tac-toe bot's opening move in place p50 {}",
        ms(baseline.hook_call),
        ms(baseline.native_bot)
    ));
    let mut report = Vec::new();
    for file in ["tictactoe.js", "connect-four.js"] {
        let source: Arc<str> =
            std::fs::read_to_string(format!("{}/examples/{file}", env!("CARGO_MANIFEST_DIR")))
                .expect("the example exists")
                .into();
        let game = hosted(file, &source, &default);
        let positions = positions(&game, args.positions, args.seed);
        say(format!("\n{file} ({} positions):", positions.len()));

        let (playouts, searching) =
            playout_rate(&default, file, &source, &positions, args.playouts);
        let rate = playouts as f64 / searching.as_secs_f64();
        let per_playout = searching.as_secs_f64() / playouts as f64;
        say(format!(
            "  playouts/s in the sandbox: {rate:.0} ({playouts} playouts in {}, less a decision with no playouts each); one playout costs {:.2} sandbox hook calls",
            ms(searching),
            per_playout / baseline.hook_call.as_secs_f64(),
        ));
        let mut levels = serde_json::Map::new();
        for level in BotLevel::ALL {
            let mut times = decisions(&game, &positions, level);
            times.sort();
            let (p50, p90) = (
                median(&times),
                measure::quantile(&times, 0.9).unwrap_or_default(),
            );
            let max = *times.last().unwrap_or(&Duration::ZERO);
            say(format!(
                "  {:<6} chooses in p50 {}  p90 {}  max {}  ({:.1}x the built-in hard tic-tac-toe bot in place)",
                level.as_str(),
                ms(p50),
                ms(p90),
                ms(max),
                p50.as_secs_f64() / baseline.native_bot.as_secs_f64(),
            ));
            levels.insert(
                level.as_str().into(),
                json!({"p50_ms": millis(p50), "p90_ms": millis(p90), "max_ms": millis(max)}),
            );
        }
        report.push(json!({
            "game": file,
            "playouts_per_s": rate.round(),
            "playout_in_hook_calls": (per_playout / baseline.hook_call.as_secs_f64() * 100.0).round() / 100.0,
            "levels": levels,
        }));
    }
    let pace = tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(pace_while_bots_think(args.games, &say));
    if args.json {
        println!(
            "{}",
            json!({
                "pace": pace,
                "positions": args.positions,
                "seed": args.seed,
                "rate_playouts": args.playouts,
                "defaults": {
                    "medium_playouts": defaults.bot_medium_playouts,
                    "hard_playouts": defaults.bot_hard_playouts,
                    "search_ms": defaults.bot_search_ms,
                },
                "search_slots": SandboxPool::new(program.clone(), limits, config.sandbox_workers)
                    .with_bot_search(defaults.budget())
                    .search_slots(),
                "hook_call_ms": millis(baseline.hook_call),
                "native_bot_ms": millis(baseline.native_bot),
                "games": report,
            })
        );
    }
    ExitCode::SUCCESS
}

/// 3: moves in other rooms while `thinkers` players each play Connect Four against the hard
/// bot back to back, on a server with the default settings; their latency at each count.
async fn pace_while_bots_think(games: usize, say: &impl Fn(String)) -> Value {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (base, config) = sandbox_worker::serve_here(dir.path()).await;
    let api = Api::new(base);
    api.publish_example("tictactoe.js", "js-tictactoe").await;
    api.publish_example("connect-four.js", "connect-four").await;
    for _ in 0..20 {
        api.game("tictactoe").await;
        api.game("js-tictactoe").await;
    }
    say(format!(
        "\n3. moves in other rooms while players take on Connect Four's hard bot back to back ({games} games of each tic-tac-toe, {} sandbox workers):",
        config.sandbox_workers
    ));
    let mut calm: Option<(Vec<Duration>, Vec<Duration>)> = None;
    let mut figures = Vec::new();
    for thinkers in [0, 1, 3] {
        api.stop.store(false, Ordering::Relaxed);
        let bot_moves = Arc::new(AtomicUsize::new(0));
        let busy: Vec<_> = (0..thinkers)
            .map(|_| {
                let (api, bot_moves) = (api.clone(), bot_moves.clone());
                tokio::spawn(async move { take_on_the_hard_bot(&api, &bot_moves).await })
            })
            .collect();
        let started = Instant::now();
        let builtin = api.games("tictactoe", games).await;
        let hosted = api.games("js-tictactoe", games).await;
        let elapsed = started.elapsed();
        api.stop.store(true, Ordering::Relaxed);
        for task in busy {
            task.await.expect("a player against the bot");
        }
        let made = bot_moves.load(Ordering::Relaxed);
        let label = |kind: &str| format!("{kind}, {thinkers} thinking");
        let (base_builtin, base_hosted) = calm.as_ref().map_or((None, None), |(b, h)| {
            (Some(b.as_slice()), Some(h.as_slice()))
        });
        say(latency_row(&label("built-in"), &builtin, base_builtin));
        say(latency_row(&label("hosted"), &hosted, base_hosted));
        say(format!(
            "   (bots moved {made} times in {:.1} s)",
            elapsed.as_secs_f64()
        ));
        let row = |samples: &[Duration]| json!({"p50_ms": millis(percentile(samples, 0.5)), "p99_ms": millis(percentile(samples, 0.99))});
        figures.push(json!({
            "thinking": thinkers,
            "builtin": row(&builtin),
            "hosted": row(&hosted),
            "bot_moves_per_s": (made as f64 / elapsed.as_secs_f64() * 10.0).round() / 10.0,
        }));
        if calm.is_none() {
            calm = Some((builtin, hosted));
        }
    }
    Value::Array(figures)
}

/// Plays Connect Four against the hard bot, game after game (the leftmost column with room),
/// until told to stop; counts the bot's moves.
async fn take_on_the_hard_bot(api: &Api, bot_moves: &AtomicUsize) {
    let player = api.new_player().await;
    while !api.stop.load(Ordering::Relaxed) {
        let room = api
            .create_room(&player, json!({"game": "connect-four", "bot": "hard"}))
            .await;
        let path = format!("/rooms/{}/moves", room["id"].as_str().expect("a room"));
        let mut board = room;
        while board["finished"] == false && !api.stop.load(Ordering::Relaxed) {
            let top = board["state"]["board"][5].as_array().expect("a board");
            let column = top
                .iter()
                .position(Value::is_null)
                .expect("room for a disc");
            let version = board["version"].as_i64().unwrap_or(0);
            board = api
                .post_value(&path, Some(&player.token), json!({"column": column}))
                .await
                .1;
            if board["version"].as_i64().unwrap_or(0) > version + 1 {
                bot_moves.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Playouts run and the time they took, over hard searches of `playouts` with no time cap
/// from every position, each less the time of the same call with no playouts.
fn playout_rate(
    pool: &SandboxPool,
    file: &str,
    source: &str,
    positions: &[(BoardGame, PlayerRef)],
    playouts: u32,
) -> (u64, Duration) {
    let search = |room: &BoardGame, bot: &PlayerRef, budget: u32| {
        let options = SearchOptions {
            seed: 1,
            level: BotLevel::Hard,
            playouts: budget,
            depth: 200,
            time_ms: 600_000,
            stats: true,
        };
        let started = Instant::now();
        let outcome = pool.search(
            &format!("{file}@rate"),
            source,
            serde_json::value::to_raw_value(room).expect("a record"),
            &bot.id,
            options,
            Duration::from_secs(1200),
        );
        let took = started.elapsed();
        match outcome {
            Ok((Outcome::Patch { patch }, _)) => (patch["playouts"].as_u64().unwrap_or(0), took),
            other => panic!("the search failed: {other:?}"),
        }
    };
    let (mut run, mut time) = (0, Duration::ZERO);
    for (room, bot) in positions {
        let (_, bare) = search(room, bot, 0);
        let (done, took) = search(room, bot, playouts);
        run += done;
        time += took.saturating_sub(bare);
    }
    (run, time)
}

struct Baselines {
    hook_call: Duration,
    native_bot: Duration,
}

/// One `onPlayerMove` of the hosted tic-tac-toe through the pool, and the built-in game's hard
/// bot choosing an opening move in place.
fn baselines(pool: &SandboxPool, samples: usize) -> Baselines {
    let source: Arc<str> = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/tictactoe.js"
    ))
    .expect("the example exists")
    .into();
    let game = hosted("tictactoe.js", &source, pool);
    let room = started(&game);
    let mover = room.players[0].clone();
    let mut calls = Vec::new();
    for _ in 0..samples * 20 {
        let started = Instant::now();
        game.on_player_move(&mover, &json!({"x": 1, "y": 1}), &room)
            .expect("the move is legal");
        calls.push(started.elapsed());
    }
    let native = turnhouse::games::tictactoe::TicTacToe::default();
    let room = started(&native);
    let mut bot = Vec::new();
    for seed in 0..samples as u64 * 20 {
        let started = Instant::now();
        let choice = native.bot_move(BotLevel::Hard, &room.players[0], &room, seed);
        bot.push(started.elapsed());
        assert!(matches!(choice, Ok(Some(_))));
    }
    Baselines {
        hook_call: median(&calls),
        native_bot: median(&bot),
    }
}

fn hosted(file: &str, source: &Arc<str>, pool: &SandboxPool) -> HostedGame {
    let info = GameInfo {
        id: file.trim_end_matches(".js").to_owned().into(),
        name: file.to_owned().into(),
        min_players: 2,
        max_players: 2,
        description: "".into(),
    };
    let hooks = Capabilities {
        bots: true,
        ..Capabilities::default()
    };
    // Nothing reads the logs here: their lines are dropped.
    let (logs, _) = GameLogSink::new();
    HostedGame::new(info, 1, source.clone(), pool.clone(), hooks, logs)
}

/// A room of `game` with two players seated and the first to move.
fn started(game: &dyn Game) -> BoardGame {
    let mut room = BoardGame {
        room_id: "bench".into(),
        players: Vec::new().into(),
        version: 1,
        joinable: true,
        finished: false,
        state: Value::Null.into(),
        trigger_timeout_at: None,
        room_start_context: RoomStartContext {
            private: false,
            clock: None,
        },
        now: Default::default(),
    };
    let patch = game.on_room_start(&room);
    apply(&mut room, patch);
    for name in ["first", "second"] {
        let player = PlayerRef {
            id: format!("{name:0>32}").into(),
            username: name.into(),
        };
        std::sync::Arc::make_mut(&mut room.players).push(player.clone());
        let patch = game.on_player_join(&player, &room);
        apply(&mut room, patch);
    }
    room
}

fn apply(room: &mut BoardGame, patch: HookResult) {
    let patch = patch
        .expect("the hook succeeds")
        .validate()
        .expect("a valid patch");
    if let Some(state) = patch.state {
        room.state = state.into();
    }
    if let Some(joinable) = patch.joinable {
        room.joinable = joinable;
    }
    if let Some(finished) = patch.finished {
        room.finished = finished;
    }
    room.version += 1;
}

/// Positions with a player to move, from random games (random legal moves, as the easy bot
/// plays them), spread over every stage of a game.
fn positions(game: &HostedGame, wanted: usize, seed: u64) -> Vec<(BoardGame, PlayerRef)> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut seen = Vec::new();
    while seen.len() < wanted * 4 {
        let mut room = started(game);
        while !room.finished {
            let Some((mover, mv)) = Vec::clone(&room.players).into_iter().find_map(|player| {
                let mv = game
                    .bot_move(BotLevel::Easy, &player, &room, rng.random())
                    .expect("the search runs");
                mv.map(|mv| (player, mv))
            }) else {
                break;
            };
            seen.push((room.clone(), mover.clone()));
            let patch = game.on_player_move(&mover, &mv, &room);
            apply(&mut room, patch);
        }
    }
    let step = seen.len() / wanted;
    seen.into_iter().step_by(step.max(1)).take(wanted).collect()
}

/// How long `level` takes to choose in each position.
fn decisions(
    game: &HostedGame,
    positions: &[(BoardGame, PlayerRef)],
    level: BotLevel,
) -> Vec<Duration> {
    // Once first, so that every measured call finds the game loaded in the worker.
    let _ = game.bot_move(level, &positions[0].1, &positions[0].0, 0);
    positions
        .iter()
        .enumerate()
        .map(|(i, (room, mover))| {
            let started = Instant::now();
            let choice = game.bot_move(level, mover, room, i as u64);
            let took = started.elapsed();
            assert!(matches!(choice, Ok(Some(_))), "{choice:?}");
            took
        })
        .collect()
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    measure::quantile(&sorted, 0.5).unwrap_or_default()
}

fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e5).round() / 100.0
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}
