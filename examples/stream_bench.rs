//! What live streams cost: memory per idle subscriber, and how long a committed move takes to
//! reach 1, 100 and 10,000 subscribers of its room.
//!
//!     cargo run --release --example stream_bench [-- --subscribers 1,100,10000 --moves 40]
//!
//! The server runs in a child process (this program, started again as `serve`) on a fresh
//! SQLite file, so its memory is measured alone. Subscribers are plain TCP connections reading
//! the event stream. Prints:
//! 1. the server's resident memory per idle subscriber, against an idle keep-alive connection
//!    that made one ordinary request (the baseline, measured in the same run);
//! 2. for each subscriber count, the delay from the move's `200` reaching the player to the
//!    event reaching each subscriber (p50/p99 over every subscriber and move, and the slowest),
//!    against the delay to a single subscriber. Negative: the event arrived before the 200.

#[path = "support/measure.rs"]
mod measure;
#[path = "support/remote.rs"]
mod remote;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use remote::Api;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader as AsyncBufReader};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use turnhouse::config::Config;
use turnhouse::startup::{raise_open_files_limit, Application};

#[derive(Parser)]
struct Args {
    /// Subscriber counts to measure, smallest first (the first is the baseline).
    #[arg(long, value_delimiter = ',', default_values_t = [1, 100, 10_000])]
    subscribers: Vec<usize>,
    /// Moves timed at each subscriber count.
    #[arg(long, default_value_t = 40)]
    moves: usize,
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
    let app = Application::build(&Config::for_database(database), turnhouse::games::builtin())
        .await
        .expect("the server starts");
    println!("port {}", app.port());
    app.run_until_stopped().await.expect("the server runs");
    ExitCode::SUCCESS
}

struct Server {
    child: Child,
    address: String,
}

impl Server {
    fn start(database: &str) -> Self {
        let mut child = Command::new(std::env::current_exe().expect("this program"))
            .args(["serve", database])
            .stdout(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("the server prints its port");
        let port = line.trim().strip_prefix("port ").expect("port <n>");
        Self {
            child,
            address: format!("127.0.0.1:{port}"),
        }
    }

    /// Resident memory, in bytes.
    fn rss(&self) -> u64 {
        measure::rss_bytes(self.child.id())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Connections opened at once: the listen backlog must not overflow.
const CONNECTING: usize = 128;

async fn bench(args: Args) {
    let limit = raise_open_files_limit().expect("the open-files limit");
    let largest = args.subscribers.iter().copied().max().unwrap_or(1);
    assert!(
        largest as u64 + 100 < limit,
        "{largest} subscribers need more open files than the limit of {limit}"
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    // Two fresh servers, so neither figure reuses memory the other freed.
    let plain = Server::start(dir.path().join("plain.db").to_str().unwrap());
    let server = Server::start(dir.path().join("bench.db").to_str().unwrap());
    let api = Api::new(format!("http://{}", server.address));
    let mut game = Game::start(&api).await;
    println!(
        "stream_bench: subscribers {:?}, {} moves each, server pid {}",
        args.subscribers,
        args.moves,
        server.child.id()
    );

    // 1. Memory: idle keep-alive connections on one server, idle subscribers on the other.
    let before = plain.rss();
    let idle = open_idle_connections(&plain.address, largest).await;
    let per_connection = plain.rss().saturating_sub(before) as f64 / largest as f64;
    drop(idle);
    drop(plain);
    let before = server.rss();
    let (subscribers, seen) = open_subscribers(&server.address, &game.room, largest).await;
    let with_streams = server.rss();
    let per_subscriber = with_streams.saturating_sub(before) as f64 / largest as f64;
    println!("1. server memory, {largest} connections held open:");
    println!(
        "   idle keep-alive connection (baseline): {:.1} KiB each",
        per_connection / 1024.0
    );
    println!(
        "   idle stream subscriber:                {:.1} KiB each ({:.2}x the baseline); server RSS {:.0} MiB with them",
        per_subscriber / 1024.0,
        per_subscriber / per_connection.max(1.0),
        with_streams as f64 / (1 << 20) as f64
    );
    drop(seen);
    subscribers.finish().await;
    tokio::time::sleep(Duration::from_millis(500)).await;

    // 2. Delivery delay.
    println!("2. delay from a move's 200 to its event at each subscriber (ms):");
    let mut baseline = None;
    for &count in &args.subscribers {
        let (subscribers, seen) = open_subscribers(&server.address, &game.room, count).await;
        // Untimed: connections and caches warm before the first figure.
        for _ in 0..6 {
            let (version, _, _) = game.step(&api).await;
            seen.wait_for(version, count).await;
        }
        let mut answered = Vec::new();
        while answered.len() < args.moves {
            let (version, at, is_move) = game.step(&api).await;
            // Every subscriber has this version before the next step is taken.
            seen.wait_for(version, count).await;
            if is_move {
                answered.push((version, at));
            }
        }
        let arrivals = subscribers.finish().await;
        let mut delays = Vec::new();
        for (version, answered_at) in &answered {
            for subscriber in &arrivals {
                let arrived = subscriber
                    .iter()
                    .find(|(v, _)| v == version)
                    .map(|(_, at)| *at)
                    .expect("every subscriber saw every version");
                delays.push(signed_ms(arrived, *answered_at));
            }
        }
        delays.sort_by(f64::total_cmp);
        let p50 = measure::quantile(&delays, 0.5).unwrap_or(0.0);
        let p99 = measure::quantile(&delays, 0.99).unwrap_or(0.0);
        let base = *baseline.get_or_insert(p50);
        println!(
            "   {count:>6} subscribers: p50 {p50:>7.3}  p99 {p99:>7.3}  max {:>7.3}   p50 vs 1 subscriber: {:+.3} ms",
            delays.last().copied().unwrap_or(0.0),
            p50 - base
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

fn signed_ms(later: Instant, earlier: Instant) -> f64 {
    if later >= earlier {
        later.duration_since(earlier).as_secs_f64() * 1e3
    } else {
        -(earlier.duration_since(later).as_secs_f64() * 1e3)
    }
}

/// Connections that made one `GET /healthz` and then stay open, idle.
async fn open_idle_connections(address: &str, count: usize) -> Vec<TcpStream> {
    let gate = Arc::new(Semaphore::new(CONNECTING));
    let tasks = (0..count).map(|_| {
        let (address, gate) = (address.to_owned(), gate.clone());
        tokio::spawn(async move {
            let _permit = gate.acquire().await.unwrap();
            let mut stream = TcpStream::connect(&address).await.expect("a connection");
            stream
                .write_all(b"GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n")
                .await
                .unwrap();
            let mut buffer = [0u8; 1024];
            let read = stream.read(&mut buffer).await.unwrap();
            assert!(buffer[..read].starts_with(b"HTTP/1.1 200"));
            stream
        })
    });
    let mut streams = Vec::with_capacity(count);
    for task in tasks.collect::<Vec<_>>() {
        streams.push(task.await.unwrap());
    }
    streams
}

/// Which versions subscribers have seen, to pace the moves.
#[derive(Default)]
struct Seen {
    /// Subscribers that have seen `version`, per version; the latest only matters.
    latest: std::sync::Mutex<(i64, usize)>,
    changed: tokio::sync::Notify,
}

impl Seen {
    fn saw(&self, version: i64) {
        let mut latest = self.latest.lock().unwrap();
        if version > latest.0 {
            *latest = (version, 0);
        }
        if version == latest.0 {
            latest.1 += 1;
        }
        self.changed.notify_waiters();
    }

    async fn wait_for(&self, version: i64, count: usize) {
        loop {
            let notified = self.changed.notified();
            {
                let latest = self.latest.lock().unwrap();
                if latest.0 > version || (latest.0 == version && latest.1 >= count) {
                    return;
                }
            }
            tokio::time::timeout(Duration::from_secs(30), notified)
                .await
                .expect("subscribers keep receiving");
        }
    }
}

struct Subscribers {
    tasks: Vec<tokio::task::JoinHandle<Vec<(i64, Instant)>>>,
    stop: tokio::sync::watch::Sender<bool>,
}

impl Subscribers {
    /// Every subscriber's arrivals: (version, when).
    async fn finish(self) -> Vec<Vec<(i64, Instant)>> {
        self.stop.send_replace(true);
        let mut all = Vec::with_capacity(self.tasks.len());
        for task in self.tasks {
            all.push(task.await.unwrap());
        }
        all
    }
}

/// `count` subscribers of the room, each past its first event when this returns.
async fn open_subscribers(address: &str, room: &str, count: usize) -> (Subscribers, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let gate = Arc::new(Semaphore::new(CONNECTING));
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let ready = Arc::new(AtomicUsize::new(0));
    let request = format!("GET /rooms/{room}/stream HTTP/1.1\r\nHost: bench\r\n\r\n");
    let tasks = (0..count)
        .map(|_| {
            let (address, gate, request) = (address.to_owned(), gate.clone(), request.clone());
            let (seen, ready, mut stopped) = (seen.clone(), ready.clone(), stopped.clone());
            tokio::spawn(async move {
                // Held until the first event, so connections arrive in waves the listen
                // backlog can take.
                let mut permit = Some(gate.acquire().await.unwrap());
                let mut stream = TcpStream::connect(&address).await.expect("a connection");
                stream.write_all(request.as_bytes()).await.unwrap();
                let mut lines = AsyncBufReader::new(stream).lines();
                let mut arrivals = Vec::new();
                let mut first = true;
                loop {
                    let line = tokio::select! {
                        line = lines.next_line() => line.expect("the stream reads"),
                        _ = stopped.wait_for(|stop| *stop) => break,
                    };
                    let Some(line) = line else { break };
                    // Chunk sizes arrive as lines of their own; event ids start with "id: ",
                    // `<version>:<message>` in a room with chat.
                    if let Some(id) = line.strip_prefix("id: ") {
                        let version = id.trim().split(':').next().unwrap_or_default();
                        let version: i64 = version.parse().expect("a version");
                        arrivals.push((version, Instant::now()));
                        if first {
                            first = false;
                            ready.fetch_add(1, Ordering::SeqCst);
                            permit.take();
                        } else {
                            seen.saw(version);
                        }
                    }
                }
                arrivals
            })
        })
        .collect();
    while ready.load(Ordering::SeqCst) < count {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    (Subscribers { tasks, stop }, seen)
}

/// The room moves are timed in: two players, tic-tac-toe, X wins in five moves, then plays again.
struct Game {
    room: String,
    x: String,
    o: String,
    moves: std::iter::Cycle<std::vec::IntoIter<usize>>,
}

impl Game {
    async fn start(api: &Api) -> Self {
        let x = api.player().await;
        let o = api.player().await;
        let room = api
            .send("POST", "/rooms", &x, json!({"game": "tictactoe"}))
            .await;
        let room = room["id"].as_str().unwrap().to_owned();
        api.send("POST", &format!("/rooms/{room}/join"), &o, Value::Null)
            .await;
        Self {
            room,
            x,
            o,
            // Move n of each game; 5 is "play again".
            moves: (0..6).collect::<Vec<_>>().into_iter().cycle(),
        }
    }

    /// One action; returns the last version it made, when its 200 arrived, and whether it
    /// was a move (play again makes several versions and is not timed).
    async fn step(&mut self, api: &Api) -> (i64, Instant, bool) {
        let n = self.moves.next().unwrap();
        let room = &self.room;
        let (player, path, body, is_move) = match n {
            0..=4 => {
                let cells = [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)];
                let player = if n.is_multiple_of(2) {
                    &self.x
                } else {
                    &self.o
                };
                let (x, y) = cells[n];
                (
                    player,
                    format!("/rooms/{room}/moves"),
                    json!({"x": x, "y": y}),
                    true,
                )
            }
            _ => (&self.x, format!("/rooms/{room}/reset"), Value::Null, false),
        };
        let answer = api.send("POST", &path, player, body).await;
        let at = Instant::now();
        if !is_move {
            let joined = api
                .send("POST", &format!("/rooms/{room}/join"), &self.o, Value::Null)
                .await;
            return (joined["version"].as_i64().unwrap(), Instant::now(), false);
        }
        (answer["version"].as_i64().unwrap(), at, true)
    }
}
