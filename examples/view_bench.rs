//! What a view hook costs a watched room.
//!
//!     cargo run --release --example view_bench [-- --watchers 100 --moves 40]
//!
//! Starts a server in this process on a fresh SQLite file (this program doubles as its sandbox
//! processes), publishes `examples/secret-words.js` twice, with its `onPlayerView` and without
//! it (the baseline, measured in the same run), and in a room of each, with two players
//! streaming their own view and `--watchers` anonymous streams, times the delay from a move's
//! answer to its version reaching every stream, and counts the view hook's calls per version
//! (`turnhouse_view_hook_calls_total`).

#[path = "support/measure.rs"]
mod measure;
#[path = "support/sandbox_worker.rs"]
mod sandbox_worker;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use futures::future::join_all;
use serde_json::{json, Value};
use turnhouse::startup::raise_open_files_limit;

#[derive(Parser)]
struct Args {
    /// Anonymous streams of the room, besides its two players' own.
    #[arg(long, default_value_t = 100)]
    watchers: usize,
    /// Moves timed per game.
    #[arg(long, default_value_t = 40)]
    moves: usize,
}

fn main() -> ExitCode {
    if let Some(code) = sandbox_worker::run_if_asked() {
        return code;
    }
    let args = Args::parse();
    tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(bench(args));
    ExitCode::SUCCESS
}

async fn bench(args: Args) {
    raise_open_files_limit().expect("the open-files limit");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (base, _) = sandbox_worker::serve_here(dir.path()).await;
    let client = reqwest::Client::new();
    let source = include_str!("secret-words.js");
    let start = source.find("  onPlayerView").expect("the view hook");
    let end = source.rfind("  },").expect("its end") + 4;
    let unviewed = format!("{}{}", &source[..start], &source[end..]);
    println!(
        "view_bench: 2 players and {} watchers streaming one room, {} moves",
        args.watchers, args.moves
    );
    let mut baseline = None;
    for (game, source, label) in [
        ("words-unviewed", unviewed, "without onPlayerView"),
        ("words-viewed", source.to_owned(), "with onPlayerView   "),
    ] {
        let author = player(&client, &base).await;
        let response = client
            .put(format!("{base}/games/{game}"))
            .bearer_auth(&author)
            .header("content-type", "application/javascript")
            .body(source)
            .send()
            .await
            .expect("the server answers");
        assert!(response.status().is_success(), "publishing {game}");
        let (delays, calls) = play(&client, &base, game, &args).await;
        let p50 = measure::quantile(&delays, 0.5).unwrap_or(0.0);
        let p99 = measure::quantile(&delays, 0.99).unwrap_or(0.0);
        let (base50, base99) = *baseline.get_or_insert((p50, p99));
        println!(
            "   {label}: delay to every stream p50 {p50:>7.3} ms  p99 {p99:>7.3} ms   ratio p50 {:.2}x  p99 {:.2}x   view hook calls per version {calls:.2}",
            p50 / base50,
            p99 / base99
        );
    }
}

async fn player(client: &reqwest::Client, base: &str) -> String {
    let body: Value = client
        .post(format!("{base}/players"))
        .body("{}")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    body["token"].as_str().unwrap().to_owned()
}

async fn post(client: &reqwest::Client, url: String, token: &str, body: Value) -> Value {
    let response = client
        .post(url)
        .bearer_auth(token)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success());
    response.json().await.unwrap()
}

async fn calls(client: &reqwest::Client, base: &str) -> f64 {
    let text = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix("turnhouse_view_hook_calls_total "))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0.0)
}

/// A room of `game` with two players, every stream open; then `args.moves` moves, each
/// delivered to every stream before the next. Every delay in ms (sorted), and the view hook
/// calls per move.
async fn play(client: &reqwest::Client, base: &str, game: &str, args: &Args) -> (Vec<f64>, f64) {
    let (alice, bob) = (player(client, base).await, player(client, base).await);
    let room = post(
        client,
        format!("{base}/rooms"),
        &alice,
        json!({"game": game}),
    )
    .await;
    let id = room["id"].as_str().unwrap().to_owned();
    let joined = post(client, format!("{base}/rooms/{id}/join"), &bob, Value::Null).await;
    let version = joined["version"].as_i64().unwrap();
    let tokens: Vec<Option<&str>> = [Some(alice.as_str()), Some(bob.as_str())]
        .into_iter()
        .chain(std::iter::repeat_n(None, args.watchers))
        .collect();
    let mut streams = Vec::new();
    for token in tokens {
        let query = token.map_or_else(String::new, |t| format!("&access_token={t}"));
        let url = format!("{base}/rooms/{id}/stream?after={version}{query}");
        streams.push(client.get(url).send().await.expect("a stream"));
    }
    let before = calls(client, base).await;
    let mut delays = Vec::new();
    for n in 0..args.moves {
        let speaker = if n % 2 == 0 { &alice } else { &bob };
        let said = post(
            client,
            format!("{base}/rooms/{id}/moves"),
            speaker,
            json!({"say": n}),
        )
        .await;
        let answered = Instant::now();
        let marker = format!("\"version\":{}", said["version"]);
        let arrivals = join_all(streams.iter_mut().map(|stream| {
            let marker = marker.clone();
            async move {
                let mut seen = String::new();
                loop {
                    let chunk = tokio::time::timeout(Duration::from_secs(30), stream.chunk())
                        .await
                        .expect("a version within 30 s")
                        .expect("the stream reads")
                        .expect("the stream stays open");
                    seen.push_str(&String::from_utf8_lossy(&chunk));
                    if seen.contains(&marker) {
                        return Instant::now();
                    }
                }
            }
        }))
        .await;
        delays.extend(
            arrivals
                .iter()
                .map(|at| at.saturating_duration_since(answered).as_secs_f64() * 1e3),
        );
    }
    let per_move = (calls(client, base).await - before) / args.moves as f64;
    delays.sort_by(f64::total_cmp);
    (delays, per_move)
}
