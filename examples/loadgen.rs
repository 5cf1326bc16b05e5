//! A load generator: plays whole tic-tac-toe games against a running server and prints one JSON
//! line of figures.
//!
//!     cargo run --release --example loadgen -- --url http://127.0.0.1:8080 --in-flight 64 \
//!         [--seconds 10] [--pid <server pid>] [--rooms N] [--hosted] [--accept-gzip]
//!         [--heavy-player <id>]
//!
//! Several servers on one database: `--url` lists them, comma-separated, and every request goes
//! to the next one in turn (a round-robin load balancer); `--pid` then lists their processes.
//!
//! It starts nothing itself. Each game is create, join and five moves (X wins along the top
//! row), with `--in-flight` games at once over keep-alive connections; every game must end with
//! X the winner, or it counts as an error. With `--hosted` the game is `examples/tictactoe.js`,
//! uploaded first and run in the sandbox. With `--boardgameio BUNDLE` it is boardgame.io's
//! tic-tac-toe bundled with `turnhouse-boardgameio/server` (see docs/boardgameio.md), uploaded
//! first: the moves are `{"type": "clickCell", "args": [cell]}`, and seat "0" must win. In the same run and with the same client and
//! concurrency it measures `GET /healthz`, the baseline the action rate is compared with, and
//! `GET /time` (nothing asked of the database or the engine: the HTTP path alone).
//! Then, one request at a time, it times the reads a frontend makes most: lobby listings, a
//! player's rooms (one with a single room, one of its own with many, and `--heavy-player`,
//! say a seeded player in every stored room), quick play, one room and a history page.
//! `--rooms N` first plays N games (uncounted) so the figures are taken with N rooms stored;
//! for millions, fill the database with `turnhouse seed-rooms` instead.
//! With `--pid`, the server's CPU time per game, the bytes it had written to storage per game
//! (`write_bytes` of `/proc/<pid>/io`: for SQLite, its log and its checkpoints) and its
//! resident memory are reported too. CPU time and memory count the processes the server
//! started with it (the sandbox processes that run hosted games' hooks). With
//! `--database-pid <postmaster pid>` as well, PostgreSQL's own CPU time per game (every process
//! of the cluster) is reported beside it, and the two added up as `total_cpu_ms_per_game`.
//!
//! `--sign-ins-per-sec N` measures the games again, for twice as long, in one-second windows
//! that alternate: in one, N password sign-ins a second run beside the games (a right
//! password, a wrong one and a name nobody has, in turn; each costs the server one Argon2id
//! hash); in the next, none. The action p99 of the windows with sign-ins is compared with that
//! of the windows without: alternating keeps the database's growth and the machine's drift
//! out of the comparison.
//!
//! `--deadlines N` measures clocks under that load: it uploads `examples/timed.js`, leaves N
//! rooms with a deadline a day ahead (pending, never due), and while the games run, 32 rooms
//! of it each set a deadline 300–600 ms ahead, again and again, and watch their own stream:
//! the firing lag is from the deadline to the `timeout` version reaching the stream (so it
//! includes the commit and the delivery).

#[path = "support/measure.rs"]
mod measure;
#[path = "support/pg_statements.rs"]
mod pg_statements;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{json, Value};

#[derive(Parser)]
struct Args {
    /// The server's base URL; several, comma-separated, to spread requests over servers.
    #[arg(long, default_value = "http://127.0.0.1:8080", value_delimiter = ',')]
    url: Vec<String>,
    /// Games played at the same time.
    #[arg(long, default_value_t = 64)]
    in_flight: usize,
    /// How long each measurement runs.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// The servers' process ids (comma-separated), for their CPU time and memory, added up.
    #[arg(long, value_delimiter = ',')]
    pid: Vec<u32>,
    /// The database server's main process (PostgreSQL's postmaster), whose processes' CPU
    /// time is reported per game too, and added to the servers' in `total_cpu_ms_per_game`.
    #[arg(long)]
    database_pid: Option<u32>,
    /// A PostgreSQL database the servers use: what it ran while the games were played
    /// (`pg_stat_statements`, which the cluster must load) goes in the report.
    #[arg(long)]
    database_url: Option<String>,
    /// Finished rooms to store first (played through the API, not measured).
    #[arg(long, default_value_t = 0)]
    rooms: usize,
    /// Play the JavaScript tic-tac-toe of `examples/tictactoe.js` instead of the built-in one.
    #[arg(long)]
    hosted: bool,
    /// Play boardgame.io's tic-tac-toe from this bundle (its hooks, built as
    /// docs/boardgameio.md says) instead of the built-in one.
    #[arg(long)]
    boardgameio: Option<std::path::PathBuf>,
    /// Send `Accept-Encoding: gzip` with every action, as browsers and most HTTP libraries
    /// do, and read gzipped answers.
    #[arg(long)]
    accept_gzip: bool,
    /// A player whose rooms are listed among the timed reads (one with very many rooms).
    #[arg(long)]
    heavy_player: Option<String>,
    /// How many times each read is timed.
    #[arg(long, default_value_t = 200)]
    read_repeats: usize,
    /// Rooms with a pending deadline (a day ahead) to store first; with any, the firing lag
    /// of deadlines set during the games is measured.
    #[arg(long, default_value_t = 0)]
    deadlines: usize,
    /// Password sign-ins a second to run beside a second measurement of the games.
    #[arg(long, default_value_t = 0.0)]
    sign_ins_per_sec: f64,
    /// Web push: this many players turn notifications on in a browser whose push endpoint is
    /// `--push-endpoint` (a receiver that answers at once): every player of the games (so each
    /// turn is pushed), and as many more, who never play, as it takes to reach the number.
    #[arg(long, default_value_t = 0)]
    push_subscribers: usize,
    #[arg(long, default_value = "http://127.0.0.1:18302")]
    push_endpoint: String,
}

/// The game of `examples/timed.js`, when `--deadlines`.
const TIMED_GAME: &str = "loadgen-timed";
/// Rooms whose deadlines are timed while the games run.
const PROBES: usize = 32;

/// The hosted game's id, when `--hosted`.
const HOSTED_GAME: &str = "loadgen-tictactoe";
/// The boardgame.io game's id, when `--boardgameio`.
const BOARDGAMEIO_GAME: &str = "loadgen-boardgameio";

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(args.in_flight * 2)
        .build()
        .unwrap();
    let mut api = Api {
        servers: args
            .url
            .iter()
            .map(|url| url.trim_end_matches('/').to_owned())
            .collect(),
        next: AtomicUsize::new(0),
        client,
        game: "tictactoe".to_owned(),
        accept_gzip: args.accept_gzip,
    };
    if args.hosted {
        api.upload_hosted_game().await;
        api.game = HOSTED_GAME.to_owned();
    }
    if let Some(bundle) = &args.boardgameio {
        let source = std::fs::read_to_string(bundle).expect("the boardgame.io bundle");
        api.upload(BOARDGAMEIO_GAME, source.leak()).await;
        api.game = BOARDGAMEIO_GAME.to_owned();
    }
    let api = Arc::new(api);
    let players: Vec<(Player, Player)> = {
        let mut all = Vec::new();
        for _ in 0..args.in_flight {
            all.push((api.player().await, api.player().await));
        }
        all
    };
    if args.push_subscribers > 0 {
        let playing = players.iter().flat_map(|(x, o)| [x.clone(), o.clone()]);
        let mut subscribed = 0;
        for player in playing.take(args.push_subscribers) {
            api.subscribe(&player, &args.push_endpoint).await;
            subscribed += 1;
        }
        for _ in subscribed..args.push_subscribers {
            let idle = api.player().await;
            api.subscribe(&idle, &args.push_endpoint).await;
        }
    }
    if args.rooms > 0 {
        let seeded = Arc::new(AtomicUsize::new(0));
        let tasks = players.iter().cloned().map(|(x, o)| {
            let (api, seeded, total) = (api.clone(), seeded.clone(), args.rooms);
            tokio::spawn(async move {
                while seeded.fetch_add(1, Ordering::Relaxed) < total {
                    api.game(&x.token, &o.token, &mut Vec::new())
                        .await
                        .expect("a seeding game");
                }
            })
        });
        for task in tasks.collect::<Vec<_>>() {
            task.await.unwrap();
        }
    }

    if args.deadlines > 0 {
        api.upload(TIMED_GAME, include_str!("timed.js")).await;
        pend_deadlines(&api, args.deadlines).await;
    }

    let duration = Duration::from_secs_f64(args.seconds);
    let servers_cpu_ms = || args.pid.iter().copied().map(measure::cpu_ms).sum::<f64>();
    let database_cpu_ms = || args.database_pid.map_or(0.0, measure::cpu_ms);
    let cpu_before = servers_cpu_ms();
    let database_cpu_before = database_cpu_ms();
    let servers_written = || {
        args.pid
            .iter()
            .map(|&pid| measure::written_bytes(pid))
            .sum::<u64>()
    };
    let written_before = servers_written();
    let own_cpu_before = measure::cpu_ms(std::process::id());
    let statements = match &args.database_url {
        Some(url) => Some(pg_statements::PgStatements::reset(url).await),
        None => None,
    };
    let probes = (args.deadlines > 0).then(|| {
        let api = api.clone();
        tokio::spawn(async move { probe_deadlines(&api, duration).await })
    });
    let games = run_games(&api, &players, duration).await;
    let cpu_after = servers_cpu_ms();
    let database_cpu = database_cpu_ms() - database_cpu_before;
    let own_cpu = measure::cpu_ms(std::process::id()) - own_cpu_before;
    let written = servers_written() - written_before;
    let lags = match probes {
        Some(probes) => Some(probes.await.unwrap()),
        None => None,
    };
    let statements = match statements {
        Some(statements) => Some(statements.report(games.games).await),
        None => None,
    };
    let health_cpu_before = servers_cpu_ms();
    let health = run_health(&api, args.in_flight, duration).await;
    let health_cpu = servers_cpu_ms() - health_cpu_before;
    // And `GET /time`, which asks nothing of the database or the engine: the HTTP path alone.
    let bare_cpu_before = servers_cpu_ms();
    let bare = run_gets(&api, "/time", args.in_flight, duration / 2).await;
    let bare_cpu = servers_cpu_ms() - bare_cpu_before;
    let mut bare_latencies = bare.latencies;
    bare_latencies.sort();
    let beside_sign_ins = match args.sign_ins_per_sec > 0.0 {
        true => Some(games_beside_sign_ins(&api, &players, args.sign_ins_per_sec, duration).await),
        false => None,
    };
    let reads = time_reads(&api, &players[0].0, args.heavy_player, args.read_repeats).await;

    let mut latencies = games.latencies;
    latencies.sort();
    let actions_per_s = latencies.len() as f64 / games.elapsed.as_secs_f64();
    let mut health_latencies = health.latencies;
    health_latencies.sort();
    let health_per_s = health_latencies.len() as f64 / health.elapsed.as_secs_f64();
    let mut report = json!({
        "game": api.game,
        "servers": api.servers.len(),
        "in_flight": args.in_flight,
        "rooms_seeded": args.rooms,
        "games": games.games,
        "games_per_s": round(games.games as f64 / games.elapsed.as_secs_f64()),
        "actions_per_s": round(actions_per_s),
        "action_ms": {"p50": ms(&latencies, 0.5), "p99": ms(&latencies, 0.99), "max": ms(&latencies, 1.0)},
        "errors": games.errors,
        "healthz_per_s": round(health_per_s),
        "healthz_ms": {"p50": ms(&health_latencies, 0.5), "p99": ms(&health_latencies, 0.99)},
        "actions_per_healthz": round(actions_per_s / health_per_s),
        "bare_per_s": round(bare_latencies.len() as f64 / bare.elapsed.as_secs_f64()),
        "bare_ms": {"p50": ms(&bare_latencies, 0.5), "p99": ms(&bare_latencies, 0.99)},
        "actions_per_game": round(latencies.len() as f64 / games.games.max(1) as f64),
        // This client's own CPU time while the games ran: on a shared machine, the cores it
        // takes are not the server's.
        "client_cpu_ms_per_game": round(own_cpu / games.games.max(1) as f64),
        "reads_ms": reads,
    });
    if let Some((with, mut sign_ins, without)) = beside_sign_ins {
        let mut with_latencies = with.latencies;
        with_latencies.sort();
        sign_ins.latencies.sort();
        let mut without_latencies = without.latencies;
        without_latencies.sort();
        let p99 = ms(&without_latencies, 0.99);
        report["beside_sign_ins"] = json!({
            "sign_ins_per_s_asked": args.sign_ins_per_sec,
            "sign_ins_per_s": round(sign_ins.latencies.len() as f64 / with.elapsed.as_secs_f64()),
            "sign_in_ms": {"p50": ms(&sign_ins.latencies, 0.5), "p99": ms(&sign_ins.latencies, 0.99)},
            "sign_in_statuses": sign_ins.statuses,
            // A wrong password and a name nobody has are meant to take the same time.
            "sign_in_p50_ms_by_kind": sign_ins.by_kind.iter_mut().map(|(kind, took)| {
                took.sort();
                (kind.to_string(), json!(ms(took, 0.5)))
            }).collect::<serde_json::Map<_, _>>(),
            "games_per_s": round(with.games as f64 / with.elapsed.as_secs_f64()),
            "action_ms": {"p50": ms(&with_latencies, 0.5), "p99": ms(&with_latencies, 0.99), "max": ms(&with_latencies, 1.0)},
            "action_p99_ratio": round(ms(&with_latencies, 0.99) / p99.max(1e-9)),
            "errors": with.errors + without.errors,
            "without": {
                "games_per_s": round(without.games as f64 / without.elapsed.as_secs_f64()),
                "action_ms": {"p50": ms(&without_latencies, 0.5), "p99": p99, "max": ms(&without_latencies, 1.0)},
            },
        });
    }
    if let Some(mut lags) = lags {
        lags.sort();
        report["deadlines_pending"] = json!(args.deadlines);
        report["deadline_lag_ms"] = json!({
            "n": lags.len(),
            "p50": ms(&lags, 0.5),
            "p99": ms(&lags, 0.99),
            "max": ms(&lags, 1.0),
        });
    }
    if !args.pid.is_empty() {
        report["server_cpu_ms_per_game"] =
            json!(round((cpu_after - cpu_before) / games.games.max(1) as f64));
        // What the server spends on a request that makes one `SELECT 1`, and on one that asks
        // nothing of the engine or the database (`GET /time`): the HTTP path's floor.
        report["server_cpu_us_per_healthz"] = json!(round(
            health_cpu * 1000.0 / health_latencies.len().max(1) as f64
        ));
        report["server_cpu_us_per_bare"] = json!(round(
            bare_cpu * 1000.0 / bare_latencies.len().max(1) as f64
        ));
        report["server_written_kib_per_game"] =
            json!(round(written as f64 / 1024.0 / games.games.max(1) as f64));
        let rss: u64 = args.pid.iter().map(|&pid| measure::rss_bytes(pid)).sum();
        report["server_rss_mib"] = json!(round(rss as f64 / (1 << 20) as f64));
        if args.database_pid.is_some() {
            let per_game = |ms: f64| json!(round(ms / games.games.max(1) as f64));
            report["database_cpu_ms_per_game"] = per_game(database_cpu);
            report["total_cpu_ms_per_game"] = per_game(cpu_after - cpu_before + database_cpu);
        }
    }
    if let Some(statements) = statements {
        report["database_statements"] = statements;
    }
    println!("{report}");
}

/// Password sign-ins, timed, with what each was answered.
#[derive(Default)]
struct SignIns {
    latencies: Vec<Duration>,
    statuses: std::collections::BTreeMap<String, u64>,
    /// The latencies of each kind: `right` password, `wrong` password, `unknown` name.
    by_kind: std::collections::BTreeMap<&'static str, Vec<Duration>>,
}

/// The games played again in one-second windows, `duration` in all of each kind, alternating:
/// in one, `rate` password sign-ins a second run beside them (a player's right password, a
/// wrong one, and a name nobody has, in turn); in the next, none. The games with sign-ins
/// beside them, the sign-ins, and the games without.
async fn games_beside_sign_ins(
    api: &Arc<Api>,
    players: &[(Player, Player)],
    rate: f64,
    duration: Duration,
) -> (Measured, SignIns, Measured) {
    let (name, password) = api.player_with_password().await;
    let window = Duration::from_secs(1);
    let windows = duration.as_secs_f64().round().max(1.0) as u32;
    let mut with = Measured::default();
    let mut without = Measured::default();
    let mut sign_ins = SignIns::default();
    let mut n = 0usize;
    for _ in 0..windows {
        let stop = Instant::now() + window;
        let side = {
            let (api, name, password) = (api.clone(), name.clone(), password.clone());
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
                let mut attempts = Vec::new();
                while Instant::now() < stop {
                    tick.tick().await;
                    n += 1;
                    let (kind, body) = match n % 3 {
                        0 => ("right", json!({"username": name, "password": password})),
                        1 => (
                            "wrong",
                            json!({"username": name, "password": "not the password"}),
                        ),
                        _ => {
                            let nobody = format!("nobody-{n}");
                            (
                                "unknown",
                                json!({"username": nobody, "password": "not the password"}),
                            )
                        }
                    };
                    let api = api.clone();
                    // Each on its own: a slow answer never holds up the next attempt's turn.
                    attempts.push((kind, tokio::spawn(async move { api.sign_in(body).await })));
                }
                (n, attempts)
            })
        };
        with.add(run_games(api, players, window).await);
        let (counted, attempts) = side.await.unwrap();
        n = counted;
        for (kind, attempt) in attempts {
            let (status, took) = attempt.await.unwrap();
            *sign_ins.statuses.entry(status).or_default() += 1;
            sign_ins.latencies.push(took);
            sign_ins.by_kind.entry(kind).or_default().push(took);
        }
        without.add(run_games(api, players, window).await);
    }
    (with, sign_ins, without)
}

/// `count` rooms of the timed game, each with a deadline a day ahead.
async fn pend_deadlines(api: &Arc<Api>, count: usize) {
    let owner = api.player().await;
    let made = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..64)
        .map(|_| {
            let (api, owner, made) = (api.clone(), owner.clone(), made.clone());
            tokio::spawn(async move {
                while made.fetch_add(1, Ordering::Relaxed) < count {
                    let room = api
                        .send("/rooms", &owner.token, json!({"game": TIMED_GAME}))
                        .await
                        .expect("a timed room");
                    let id = room["id"].as_str().unwrap();
                    let day = json!({"arm": 86_400_000});
                    api.send(&format!("/rooms/{id}/moves"), &owner.token, day)
                        .await
                        .expect("a pending deadline");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
}

/// [`PROBES`] rooms, each setting a deadline 300–600 ms ahead and waiting for its `timeout`
/// version on the room's stream, for `duration`: every lag from deadline to arrival.
async fn probe_deadlines(api: &Arc<Api>, duration: Duration) -> Vec<Duration> {
    let started = Instant::now();
    let tasks: Vec<_> = (0..PROBES)
        .map(|probe| {
            let api = api.clone();
            tokio::spawn(async move {
                let owner = api.player().await;
                let room = api
                    .send("/rooms", &owner.token, json!({"game": TIMED_GAME}))
                    .await
                    .expect("a probe room");
                let id = room["id"].as_str().unwrap().to_owned();
                let mut lags = Vec::new();
                let mut n = 0;
                while started.elapsed() < duration {
                    n += 1;
                    let ahead = 300 + (probe * 37 + n * 53) % 300;
                    let path = format!("/rooms/{id}/moves");
                    let armed = api
                        .send(&path, &owner.token, json!({"arm": ahead}))
                        .await
                        .expect("a deadline");
                    let at = armed["triggerTimeoutAt"].as_str().expect("a deadline set");
                    let at = chrono::DateTime::parse_from_rfc3339(at).unwrap();
                    let version = armed["version"].as_i64().unwrap();
                    api.await_timeout(&id, version).await;
                    let lag = chrono::Utc::now().signed_duration_since(at);
                    lags.push(lag.to_std().unwrap_or_default());
                }
                lags
            })
        })
        .collect();
    joined(tasks).await
}

#[derive(Default)]
struct Measured {
    games: u64,
    errors: u64,
    latencies: Vec<Duration>,
    elapsed: Duration,
}

impl Measured {
    /// Adds another measurement's figures to these.
    fn add(&mut self, other: Measured) {
        self.games += other.games;
        self.errors += other.errors;
        self.latencies.extend(other.latencies);
        self.elapsed += other.elapsed;
    }
}

async fn run_games(api: &Arc<Api>, players: &[(Player, Player)], duration: Duration) -> Measured {
    let games = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let tasks: Vec<_> = players
        .iter()
        .cloned()
        .map(|(x, o)| {
            let (api, games, errors) = (api.clone(), games.clone(), errors.clone());
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                while start.elapsed() < duration {
                    match api.game(&x.token, &o.token, &mut latencies).await {
                        Ok(()) => games.fetch_add(1, Ordering::Relaxed),
                        Err(err) => {
                            eprintln!("loadgen: {err}");
                            errors.fetch_add(1, Ordering::Relaxed)
                        }
                    };
                }
                latencies
            })
        })
        .collect();
    let latencies = joined(tasks).await;
    Measured {
        games: games.load(Ordering::Relaxed),
        errors: errors.load(Ordering::Relaxed),
        latencies,
        elapsed: start.elapsed(),
    }
}

/// `GET /healthz` (one `SELECT 1`) as fast as `in_flight` callers can.
async fn run_health(api: &Arc<Api>, in_flight: usize, duration: Duration) -> Measured {
    run_gets(api, "/healthz", in_flight, duration).await
}

/// `GET path` as fast as `in_flight` callers can, timing each answer read whole.
async fn run_gets(
    api: &Arc<Api>,
    path: &'static str,
    in_flight: usize,
    duration: Duration,
) -> Measured {
    let start = Instant::now();
    let tasks: Vec<_> = (0..in_flight)
        .map(|_| {
            let api = api.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                while start.elapsed() < duration {
                    let sent = Instant::now();
                    let response = api.client.get(format!("{}{path}", api.base())).send().await;
                    let ok = match response {
                        Ok(response) => {
                            response.status().is_success() && response.bytes().await.is_ok()
                        }
                        Err(_) => false,
                    };
                    if ok {
                        latencies.push(sent.elapsed());
                    }
                }
                latencies
            })
        })
        .collect();
    let latencies = joined(tasks).await;
    Measured {
        games: 0,
        errors: 0,
        latencies,
        elapsed: start.elapsed(),
    }
}

/// p50 and p99 of each read a frontend makes most, one request at a time, `repeats` times.
async fn time_reads(
    api: &Api,
    busy: &Player,
    heavy_player: Option<String>,
    repeats: usize,
) -> Value {
    let newcomer = api.player().await;
    let newcomer_room = api
        .send("/rooms", &newcomer.token, json!({"game": api.game}))
        .await
        .expect("a room");
    let room = newcomer_room["id"].as_str().unwrap();
    let game = &api.game;
    let mut reads = vec![
        (
            "lobby_open",
            format!("/rooms?game={game}&joinable=true&limit=50"),
        ),
        (
            "lobby_finished",
            format!("/rooms?game={game}&finished=true&limit=50"),
        ),
        ("lobby_all", "/rooms?limit=50".to_owned()),
        (
            "lobby_empty_game",
            "/rooms?game=tictactoe3d&joinable=true&limit=50".to_owned(),
        ),
        ("player_one_room", format!("/rooms?player={}", newcomer.id)),
        ("player_busy", format!("/rooms?player={}&limit=50", busy.id)),
        ("room", format!("/rooms/{room}")),
        ("history_page", format!("/rooms/{room}/events?limit=50")),
    ];
    if let Some(heavy) = &heavy_player {
        reads.push(("player_heavy", format!("/rooms?player={heavy}&limit=50")));
        reads.push((
            "player_heavy_open",
            format!("/rooms?player={heavy}&joinable=true&limit=50"),
        ));
    }
    let mut figures = serde_json::Map::new();
    for (name, path) in reads {
        let mut latencies = Vec::with_capacity(repeats);
        for _ in 0..repeats {
            let sent = Instant::now();
            let response = api.client.get(format!("{}{path}", api.base())).send().await;
            let ok = match response {
                Ok(response) => response.status().is_success() && response.bytes().await.is_ok(),
                Err(_) => false,
            };
            assert!(ok, "GET {path} failed");
            latencies.push(sent.elapsed());
        }
        latencies.sort();
        figures.insert(
            name.into(),
            json!({"p50": ms(&latencies, 0.5), "p99": ms(&latencies, 0.99)}),
        );
    }
    // Quick play: each new player either joins the open room or opens one.
    let mut latencies = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let player = api.player().await;
        let sent = Instant::now();
        api.send("/rooms/quickplay", &player.token, json!({"game": api.game}))
            .await
            .expect("quick play");
        latencies.push(sent.elapsed());
    }
    latencies.sort();
    figures.insert(
        "quickplay".into(),
        json!({"p50": ms(&latencies, 0.5), "p99": ms(&latencies, 0.99)}),
    );
    Value::Object(figures)
}

/// Every task's latencies, together.
async fn joined(tasks: Vec<tokio::task::JoinHandle<Vec<Duration>>>) -> Vec<Duration> {
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap());
    }
    latencies
}

struct Api {
    /// Every server; requests take turns.
    servers: Vec<String>,
    next: AtomicUsize,
    client: reqwest::Client,
    /// The game played: `tictactoe`, or the hosted one.
    game: String,
    /// Whether actions say they take gzip.
    accept_gzip: bool,
}

#[derive(Clone)]
struct Player {
    id: String,
    token: String,
}

impl Api {
    /// The server the next request goes to.
    fn base(&self) -> &str {
        &self.servers[self.next.fetch_add(1, Ordering::Relaxed) % self.servers.len()]
    }

    async fn send(&self, path: &str, token: &str, body: Value) -> Result<Value, String> {
        let mut request = self.client.post(format!("{}{path}", self.base()));
        if !token.is_empty() {
            request = request.bearer_auth(token);
        }
        if !body.is_null() {
            request = request.body(body.to_string());
        }
        if self.accept_gzip {
            request = request.header("accept-encoding", "gzip");
        }
        let response = request.send().await.map_err(|e| e.to_string())?;
        let status = response.status();
        let gzipped = response
            .headers()
            .get("content-encoding")
            .is_some_and(|e| e == "gzip");
        let bytes = response.bytes().await.map_err(|e| e.to_string())?;
        let body: Value = if gzipped {
            serde_json::from_reader(flate2::read::GzDecoder::new(&bytes[..]))
        } else {
            serde_json::from_slice(&bytes)
        }
        .map_err(|e| e.to_string())?;
        if status.is_success() {
            Ok(body)
        } else {
            Err(format!("{path}: {status} {body}"))
        }
    }

    async fn player(&self) -> Player {
        let player = self
            .send("/players", "", json!({}))
            .await
            .expect("a player");
        Player {
            id: player["id"].as_str().unwrap().to_owned(),
            token: player["token"].as_str().unwrap().to_owned(),
        }
    }

    /// Turns notifications on for `player` in a browser of theirs whose pushes go to
    /// `endpoint`: a fresh P-256 key and auth secret, as a browser makes them.
    async fn subscribe(&self, player: &Player, endpoint: &str) {
        use base64::Engine as _;
        use p256::elliptic_curve::sec1::ToEncodedPoint;
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        let key = p256::SecretKey::random(&mut p256::elliptic_curve::rand_core::OsRng);
        let point = key.public_key().to_encoded_point(false);
        let auth: [u8; 16] = rand::random();
        let body = json!({
            "endpoint": format!("{endpoint}/push/{}", player.id),
            "keys": {"p256dh": b64(point.as_bytes()), "auth": b64(&auth)},
        });
        self.send("/players/me/push-subscriptions", &player.token, body)
            .await
            .expect("a push subscription");
    }

    /// A new player with a password: their name and the password.
    async fn player_with_password(&self) -> (String, String) {
        let player = self
            .send("/players", "", json!({}))
            .await
            .expect("a player");
        let password = "a password for the benchmark".to_owned();
        let response = self
            .client
            .put(format!("{}/players/me/password", self.base()))
            .bearer_auth(player["token"].as_str().unwrap())
            .body(json!({"password": password}).to_string())
            .send()
            .await
            .expect("the server answers");
        assert!(
            response.status().is_success(),
            "setting a password: {}",
            response.status()
        );
        (player["username"].as_str().unwrap().to_owned(), password)
    }

    /// One sign-in: its status and how long it took to be answered.
    async fn sign_in(&self, body: Value) -> (String, Duration) {
        let started = Instant::now();
        let status = match self
            .client
            .post(format!("{}/sessions", self.base()))
            .body(body.to_string())
            .send()
            .await
        {
            Ok(response) => response.status().as_u16().to_string(),
            Err(_) => "no answer".to_owned(),
        };
        (status, started.elapsed())
    }

    /// Publishes `examples/tictactoe.js` as [`HOSTED_GAME`].
    async fn upload_hosted_game(&self) {
        self.upload(HOSTED_GAME, include_str!("tictactoe.js")).await;
    }

    /// Publishes `source` as `game`, by a new author (or, if an earlier run published it,
    /// plays that).
    async fn upload(&self, game: &str, source: &'static str) {
        let author = self.player().await;
        let response = self
            .client
            .put(format!("{}/games/{game}", self.base()))
            .bearer_auth(&author.token)
            .header("content-type", "application/javascript")
            .body(source)
            .send()
            .await
            .expect("the server answers");
        let status = response.status();
        assert!(
            status.is_success() || status == reqwest::StatusCode::FORBIDDEN,
            "uploading {game}: {status} {}",
            response.text().await.unwrap_or_default()
        );
    }

    /// Reads the room's stream after `version` until a `timeout` version arrives.
    async fn await_timeout(&self, room: &str, version: i64) {
        let url = format!("{}/rooms/{room}/stream?after={version}", self.base());
        let mut response = self.client.get(url).send().await.expect("a stream");
        let mut seen = String::new();
        while let Some(chunk) = response.chunk().await.expect("the stream goes on") {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.contains("\"kind\":\"timeout\"") {
                return;
            }
        }
        panic!("the stream of {room} ended before its timeout");
    }

    /// One whole game, each action's latency recorded; an error if it does not end with X
    /// (the first player) the winner.
    async fn game(&self, x: &str, o: &str, latencies: &mut Vec<Duration>) -> Result<(), String> {
        let mut timed = async |path: String, token: &str, body: Value| {
            let sent = Instant::now();
            let answer = self.send(&path, token, body).await;
            latencies.push(sent.elapsed());
            answer
        };
        let room = timed("/rooms".into(), x, json!({"game": self.game})).await?;
        let id = room["id"].as_str().ok_or("a room id")?.to_owned();
        timed(format!("/rooms/{id}/join"), o, Value::Null).await?;
        let mut last = Value::Null;
        let boardgameio = self.game == BOARDGAMEIO_GAME;
        for (n, (row, col)) in [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]
            .into_iter()
            .enumerate()
        {
            let player = if n % 2 == 0 { x } else { o };
            let mv = match boardgameio {
                false => json!({"x": row, "y": col}),
                true => json!({"type": "clickCell", "args": [row * 3 + col]}),
            };
            last = timed(format!("/rooms/{id}/moves"), player, mv).await?;
        }
        let winner_seat = match boardgameio {
            false => last["players"].as_array().and_then(|players| {
                players
                    .iter()
                    .position(|p| p["id"] == last["state"]["winner"]["id"])
            }),
            true => (last["state"]["match"]["ctx"]["gameover"]["winner"] == "0").then_some(0),
        };
        if last["finished"] == true && winner_seat == Some(0) {
            Ok(())
        } else {
            Err(format!(
                "game {id} did not end with X winning: {}",
                last["state"]
            ))
        }
    }
}

fn ms(sorted: &[Duration], q: f64) -> f64 {
    let at = measure::quantile(sorted, q).unwrap_or_default();
    round(at.as_secs_f64() * 1e3)
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
