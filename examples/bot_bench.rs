//! What the computer opponents of uploaded games cost: the search that ships with the server,
//! run in the sandbox over the game's own hooks, exactly as a room's bot runs it.
//!
//!     cargo run --release --example bot_bench [-- --positions 12 --seed 2026]
//!
//! For `examples/tictactoe.js` and `examples/connect-four.js` it prints:
//! 1. playouts per second in the sandbox: hard searches of a fixed number of playouts with no
//!    time cap, from positions of seeded random games, less the cost of a decision with no
//!    playouts (an easy one: the call, the realm, the game's first `enumerateMoves`);
//! 2. the time to choose a move at each level under the default settings, from the same
//!    positions;
//!
//! each against baselines measured in the same run: one `onPlayerMove` call through the same
//! sandbox pool, and the built-in tic-tac-toe's hard bot choosing in place.

#[path = "support/measure.rs"]
mod measure;
#[path = "support/sandbox_worker.rs"]
mod sandbox_worker;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use turnhouse::config::{BotSearch, Config};
use turnhouse::game::{
    BoardGame, BotLevel, Game, GameInfo, HookResult, OptionalHooks, PlayerRef, RoomStartContext,
};
use turnhouse::sandbox::{HostedGame, SandboxPool};

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
}

fn main() -> ExitCode {
    if let Some(code) = sandbox_worker::run_if_asked() {
        return code;
    }
    let args = Args::parse();
    let config = Config::for_database(":memory:");
    let program = std::env::current_exe().expect("this program");
    let limits = config.hook_limits.limits();
    let pool =
        |budget: BotSearch| SandboxPool::new(program.clone(), limits, 1).with_bot_search(budget);
    let defaults = config.bot_search;
    // No time cap: the playout count alone ends each search.
    let uncapped = pool(BotSearch {
        bot_search_ms: 600_000,
        bot_medium_playouts: 0,
        bot_hard_playouts: args.playouts,
    });
    let default = pool(defaults);
    println!(
        "bot_bench: {} positions per game, seed {}; defaults: medium {} playouts, hard {} playouts, searching at most {} ms",
        args.positions, args.seed, defaults.bot_medium_playouts, defaults.bot_hard_playouts, defaults.bot_search_ms
    );

    let baseline = baselines(&default, args.positions);
    for file in ["tictactoe.js", "connect-four.js"] {
        let source: Arc<str> =
            std::fs::read_to_string(format!("{}/examples/{file}", env!("CARGO_MANIFEST_DIR")))
                .expect("the example exists")
                .into();
        let game = |pool: &SandboxPool| hosted(file, &source, pool);
        let positions = positions(&game(&default), args.positions, args.seed);
        println!("\n{file} ({} positions):", positions.len());

        let easy = decisions(&game(&uncapped), &positions, BotLevel::Easy);
        let searched = decisions(&game(&uncapped), &positions, BotLevel::Hard);
        let per_playout = (median(&searched).saturating_sub(median(&easy))).as_secs_f64()
            / f64::from(args.playouts);
        println!(
            "  playouts/s in the sandbox: {:.0} ({} playouts: p50 {}; a decision with no playouts: p50 {}); one playout = {:.2} sandbox hook calls",
            1.0 / per_playout,
            args.playouts,
            ms(median(&searched)),
            ms(median(&easy)),
            per_playout / baseline.hook_call.as_secs_f64(),
        );
        for level in BotLevel::ALL {
            let times = decisions(&game(&default), &positions, level);
            let mut sorted = times.clone();
            sorted.sort();
            println!(
                "  {:<6} chooses in p50 {}  p90 {}  max {}  ({:.1}x the built-in hard tic-tac-toe bot in place)",
                level.as_str(),
                ms(median(&times)),
                ms(measure::quantile(&sorted, 0.9).unwrap_or_default()),
                ms(*sorted.last().unwrap_or(&Duration::ZERO)),
                median(&times).as_secs_f64() / baseline.native_bot.as_secs_f64(),
            );
        }
    }
    ExitCode::SUCCESS
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
    let baseline = Baselines {
        hook_call: median(&calls),
        native_bot: median(&bot),
    };
    println!(
        "baselines: one onPlayerMove call of tictactoe.js through the sandbox p50 {}; the built-in hard tic-tac-toe bot's opening move in place p50 {}",
        ms(baseline.hook_call),
        ms(baseline.native_bot)
    );
    baseline
}

fn hosted(file: &str, source: &Arc<str>, pool: &SandboxPool) -> HostedGame {
    let info = GameInfo {
        id: file.trim_end_matches(".js").to_owned().into(),
        name: file.to_owned().into(),
        min_players: 2,
        max_players: 2,
        bots: true,
        description: "".into(),
    };
    let hooks = OptionalHooks {
        enumerate_moves: true,
        ..OptionalHooks::default()
    };
    HostedGame::new(info, 1, source.clone(), pool.clone(), hooks)
}

/// A room of `game` with two players seated and the first to move.
fn started(game: &dyn Game) -> BoardGame {
    let mut room = BoardGame {
        room_id: "bench".into(),
        players: Vec::new(),
        version: 1,
        joinable: true,
        finished: false,
        state: Value::Null,
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
            id: format!("{name:0>32}"),
            username: name.into(),
        };
        room.players.push(player.clone());
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
        room.state = state;
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
            let Some((mover, mv)) = room.players.clone().into_iter().find_map(|player| {
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

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}
