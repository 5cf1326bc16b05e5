//! What chat costs a busy room: 200 watchers on its stream while 10 messages a second are
//! written in its gallery and its two players keep moving.
//!
//!     cargo run --release --example chat_bench [-- --watchers 200 --rate 10 --seconds 20 --json]
//!
//! The server runs in a child process (this program, started again as `serve`) on a fresh
//! SQLite file, or is the one `--server` names (`scripts/bench --only-chat` starts the release
//! binary for it, as people run it; the child, built into this program, answered chat events
//! slower at 50 watchers than that binary does). Watchers are plain TCP connections reading the room's stream (anyone may read a
//! gallery); the messages are written by 40 other watchers in turn, each under the per-player
//! rate limit (the players' moves, as fast as the server answers, are not limited). Two phases of `--seconds` each, the same watchers throughout: the players' moves
//! alone (the baseline), then the moves with the messages. Prints:
//! 1. the delay from each message's `201` reaching its writer to its event reaching each
//!    watcher (p50, p99 and the slowest, over every watcher and message; negative: the event
//!    arrived first), and whether every watcher heard every message exactly once;
//! 2. the moves' latency (request to `200`) with the messages, against the baseline;
//! 3. the delay from each move's `200` to its version event reaching each watcher, in both
//!    phases: how far behind the streams as a whole run, chat or not.

#[path = "support/measure.rs"]
mod measure;
#[path = "support/remote.rs"]
mod remote;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use remote::Api;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader as AsyncBufReader};
use tokio::net::TcpStream;
use turnhouse::config::Config;
use turnhouse::startup::{raise_open_files_limit, Application};

/// Players who write the messages, in turn: 10 a second among 40 is 15 a minute each, under
/// the default limit of 20.
const WRITERS: usize = 40;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 200)]
    watchers: usize,
    /// Messages a second.
    #[arg(long, default_value_t = 10)]
    rate: u32,
    /// Length of each phase.
    #[arg(long, default_value_t = 20)]
    seconds: u64,
    /// One line of JSON instead of text.
    #[arg(long)]
    json: bool,
    /// A server already running (its address, `127.0.0.1:PORT`), started with the action rate
    /// off, to watch its logs during the run; without it, a fresh one on a fresh file.
    #[arg(long)]
    server: Option<String>,
}

fn main() -> ExitCode {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some("serve") {
        let database = args.next().expect("serve <database>");
        return runtime.block_on(serve(database));
    }
    runtime.block_on(bench(Args::parse()));
    ExitCode::SUCCESS
}

/// The child: a server on a free port, which it prints.
async fn serve(database: String) -> ExitCode {
    raise_open_files_limit().expect("the open-files limit");
    let mut config = Config::for_database(database);
    // The players move as fast as the server answers, beyond what one person may; the
    // writers keep to the chat's own limit.
    config.abuse_limits.action_rate = "off".parse().expect("a rate");
    let app = Application::build(&config, turnhouse::games::builtin())
        .await
        .expect("the server starts");
    println!("port {}", app.port());
    app.run_until_stopped().await.expect("the server runs");
    ExitCode::SUCCESS
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server(database: &str) -> (Server, String) {
    let mut child = Command::new(std::env::current_exe().expect("this program"))
        .args(["serve", database])
        .stdout(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .expect("the server prints its port");
    let port = line
        .trim()
        .strip_prefix("port ")
        .expect("port <n>")
        .to_owned();
    (Server(child), format!("127.0.0.1:{port}"))
}

/// When each watcher heard each message: message id → arrivals.
type Heard = Arc<Mutex<HashMap<i64, Vec<Instant>>>>;

/// When one watcher heard each version: (version, arrival).
type Versions = Arc<Mutex<Vec<(i64, Instant)>>>;

/// A watcher of the room's stream, recording each chat event's arrival in `heard` and each
/// version's in `versions`; returns once it has read the stream's first version.
async fn watch(
    address: &str,
    room: &str,
    heard: Heard,
    versions: Versions,
) -> tokio::task::JoinHandle<()> {
    let mut stream = TcpStream::connect(address).await.expect("a connection");
    let request = format!("GET /rooms/{room}/stream HTTP/1.1\r\nHost: bench\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut lines = AsyncBufReader::new(stream).lines();
    while let Some(line) = lines.next_line().await.expect("the stream reads") {
        if line == "event: version" {
            break;
        }
    }
    tokio::spawn(async move {
        let (mut version, mut id) = (None, None);
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(found) = line.strip_prefix("id: ") {
                let (v, m) = found.split_once(':').unwrap_or((found, ""));
                version = v.parse::<i64>().ok();
                id = m.parse::<i64>().ok();
            } else if line == "event: version" {
                if let Some(version) = version {
                    versions.lock().unwrap().push((version, Instant::now()));
                }
            } else if line == "event: chat" {
                if let Some(message) = id {
                    heard
                        .lock()
                        .unwrap()
                        .entry(message)
                        .or_default()
                        .push(Instant::now());
                }
            }
        }
    })
}

/// What the players' moves measured: each move's latency, and each version a move made with
/// when its `200` arrived.
#[derive(Default)]
struct Played {
    latencies: Vec<Duration>,
    answered: Vec<(i64, Instant)>,
}

/// The players' moves for `seconds`: tic-tac-toe, X wins in five, then plays again.
async fn play(api: &Api, room: &str, (x, o): (&str, &str), seconds: u64) -> Played {
    let cells = [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)];
    let until = Instant::now() + Duration::from_secs(seconds);
    let mut played = Played::default();
    while Instant::now() < until {
        for (n, (cx, cy)) in cells.iter().enumerate() {
            let player = if n % 2 == 0 { x } else { o };
            let started = Instant::now();
            let path = format!("/rooms/{room}/moves");
            let answer = api
                .send("POST", &path, player, json!({"x": cx, "y": cy}))
                .await;
            let at = Instant::now();
            played.latencies.push(at - started);
            if let Some(version) = answer["version"].as_i64() {
                played.answered.push((version, at));
            }
        }
        api.send("POST", &format!("/rooms/{room}/reset"), x, Value::Null)
            .await;
        api.send("POST", &format!("/rooms/{room}/join"), o, Value::Null)
            .await;
    }
    played
}

/// `rate` messages a second in the gallery for `seconds`, by the writers in turn: each
/// message's id and when its 201 arrived.
async fn talk(
    api: Arc<Api>,
    room: &str,
    writers: &[String],
    rate: u32,
    seconds: u64,
) -> Vec<(i64, Instant)> {
    let mut tick = tokio::time::interval(Duration::from_secs(1) / rate);
    let mut sent = Vec::new();
    for n in 0..(rate as u64 * seconds) as usize {
        tick.tick().await;
        let (api, token) = (api.clone(), writers[n % writers.len()].clone());
        let path = format!("/rooms/{room}/chat");
        sent.push(tokio::spawn(async move {
            let body = json!({"text": format!("message {n}"), "channel": "gallery"});
            let message = api.send("POST", &path, &token, body).await;
            (message["id"].as_i64().unwrap(), Instant::now())
        }));
    }
    let mut answered = Vec::new();
    for task in sent {
        answered.push(task.await.unwrap());
    }
    answered
}

fn ms(samples: &[f64], q: f64) -> f64 {
    measure::quantile(samples, q).unwrap_or(0.0)
}

fn millis(samples: &[Duration]) -> Vec<f64> {
    let mut out: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    out.sort_by(f64::total_cmp);
    out
}

/// Each version's delay from its move's `200` to each watcher (ms, sorted; negative: the event
/// came first): how far the streams as a whole lag, chat or not.
fn version_delays(answered: &[(i64, Instant)], watchers: &[Versions]) -> Vec<f64> {
    let answered: HashMap<i64, Instant> = answered.iter().copied().collect();
    let mut delays = Vec::new();
    for watcher in watchers {
        for (version, arrived) in watcher.lock().unwrap().iter() {
            if let Some(at) = answered.get(version) {
                delays.push(signed_ms(*arrived, *at));
            }
        }
    }
    delays.sort_by(f64::total_cmp);
    delays
}

/// `arrived - answered` in ms.
fn signed_ms(arrived: Instant, answered: Instant) -> f64 {
    match arrived >= answered {
        true => arrived.duration_since(answered).as_secs_f64() * 1e3,
        false => -(answered.duration_since(arrived).as_secs_f64() * 1e3),
    }
}

/// Each delivery's delay from the message's 201 (ms, sorted; negative: the event came first),
/// and how many deliveries were missing and how many came twice.
fn deliveries(
    sent: &[(i64, Instant)],
    heard: &HashMap<i64, Vec<Instant>>,
    watchers: usize,
) -> (Vec<f64>, usize, usize) {
    let mut delays = Vec::new();
    let (mut missing, mut twice) = (0usize, 0usize);
    for (id, answered) in sent {
        let arrivals = heard.get(id).map(Vec::as_slice).unwrap_or_default();
        missing += watchers.saturating_sub(arrivals.len());
        twice += arrivals.len().saturating_sub(watchers);
        for arrived in arrivals {
            delays.push(signed_ms(*arrived, *answered));
        }
    }
    delays.sort_by(f64::total_cmp);
    (delays, missing, twice)
}

async fn bench(args: Args) {
    raise_open_files_limit().expect("the open-files limit");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (_server, address) = match &args.server {
        Some(address) => (None, address.clone()),
        None => {
            let (server, address) = start_server(dir.path().join("chat.db").to_str().unwrap());
            (Some(server), address)
        }
    };
    let api = Arc::new(Api::new(format!("http://{address}")));
    let (x, o) = (api.player().await, api.player().await);
    let room = api
        .send("POST", "/rooms", &x, json!({"game": "tictactoe"}))
        .await;
    let room = room["id"].as_str().unwrap().to_owned();
    api.send("POST", &format!("/rooms/{room}/join"), &o, Value::Null)
        .await;
    let mut writers = Vec::new();
    for _ in 0..WRITERS {
        writers.push(api.player().await);
    }
    let heard: Heard = Arc::default();
    let (mut watchers, mut versions) = (Vec::new(), Vec::new());
    for _ in 0..args.watchers {
        let heard_versions = Versions::default();
        watchers.push(watch(&address, &room, heard.clone(), heard_versions.clone()).await);
        versions.push(heard_versions);
    }

    let played_alone = play(&api, &room, (&x, &o), args.seconds).await;
    let alone = millis(&played_alone.latencies);
    let versions_alone = version_delays(&played_alone.answered, &versions);
    let talking = talk(api.clone(), &room, &writers, args.rate, args.seconds);
    let (sent, played) = tokio::join!(talking, play(&api, &room, (&x, &o), args.seconds));
    let moves = millis(&played.latencies);
    // The last messages' events are on their way: wait for them, a little.
    let expected = sent.len() * args.watchers;
    let deadline = Instant::now() + Duration::from_secs(10);
    while heard.lock().unwrap().values().map(Vec::len).sum::<usize>() < expected
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let heard = heard.lock().unwrap().clone();
    for watcher in watchers {
        watcher.abort();
    }
    let (delays, missing, twice) = deliveries(&sent, &heard, args.watchers);
    let version_delays = version_delays(&played.answered, &versions);
    let result = json!({
        "watchers": args.watchers,
        "rate": args.rate,
        "seconds": args.seconds,
        "messages": sent.len(),
        "deliveries": delays.len(),
        "missing": missing,
        "duplicates": twice,
        "delivery_ms": {"p50": ms(&delays, 0.5), "p99": ms(&delays, 0.99), "max": delays.last().copied().unwrap_or(0.0)},
        "move_ms": {"p50": ms(&moves, 0.5), "p99": ms(&moves, 0.99), "moves": moves.len()},
        "move_ms_alone": {"p50": ms(&alone, 0.5), "p99": ms(&alone, 0.99), "moves": alone.len()},
        "version_delivery_ms": {"p50": ms(&version_delays, 0.5), "p99": ms(&version_delays, 0.99)},
        "version_delivery_ms_alone": {"p50": ms(&versions_alone, 0.5), "p99": ms(&versions_alone, 0.99)},
    });
    match args.json {
        true => println!("{result}"),
        false => print_report(&result),
    }
}

/// The figures of [`bench`]'s result as text.
fn print_report(r: &Value) {
    let f = |v: &Value| v.as_f64().unwrap_or(0.0);
    let (d, m, a) = (&r["delivery_ms"], &r["move_ms"], &r["move_ms_alone"]);
    let (v, va) = (&r["version_delivery_ms"], &r["version_delivery_ms_alone"]);
    println!(
        "chat_bench: {} watchers, {} messages a second for {} s ({} messages)",
        r["watchers"], r["rate"], r["seconds"], r["messages"]
    );
    println!(
        "1. message 201 to each watcher (ms): p50 {:.3}  p99 {:.3}  max {:.3}; {} deliveries, {} missing, {} twice",
        f(&d["p50"]), f(&d["p99"]), f(&d["max"]), r["deliveries"], r["missing"], r["duplicates"]
    );
    println!(
        "2. moves (ms): with the messages p50 {:.3}  p99 {:.3} ({} moves); alone p50 {:.3}  p99 {:.3} ({} moves); p99 ratio {:.2}",
        f(&m["p50"]), f(&m["p99"]), m["moves"], f(&a["p50"]), f(&a["p99"]), a["moves"],
        f(&m["p99"]) / f(&a["p99"]).max(f64::MIN_POSITIVE)
    );
    println!(
        "3. a move's 200 to each watcher's version event (ms): with the messages p50 {:.3}  p99 {:.3}; alone p50 {:.3}  p99 {:.3}",
        f(&v["p50"]), f(&v["p99"]), f(&va["p50"]), f(&va["p99"])
    );
}
