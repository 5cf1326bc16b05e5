//! A game's leaderboard at 1,000 rated players and at 1,000,000: the time of a page from the
//! top, of a page from the middle (by its cursor), and of a player's profile ratings (whose
//! rank counts the places above them), each against `Store::ping` (the database's round trip)
//! timed in the same run, interleaved. It prints one JSON line.
//!
//!     cargo run --release --example leaderboard_bench -- [--sizes 1000,1000000] [--samples 400]
//!
//! Each size gets a fresh SQLite database, filled in one statement: players with ratings spread
//! like a real ladder's (1000 to 2400, deviation 45 to 350, 1 to 200 games; a tenth under five
//! games, so off the leaderboard).

#[path = "support/measure.rs"]
mod measure;

use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{json, Value};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, Row};
use turnhouse::store::Store;

#[derive(Parser)]
struct Args {
    /// Rated players, one database each.
    #[arg(long, value_delimiter = ',', default_value = "1000,1000000")]
    sizes: Vec<i64>,
    /// Timings of each kind per size.
    #[arg(long, default_value_t = 400)]
    samples: usize,
}

const GAME: &str = "tictactoe";
const PAGE: i64 = 20;

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let mut sizes = Vec::new();
    for &players in &args.sizes {
        sizes.push(measure_size(players, args.samples).await);
    }
    let p50 = |size: &Value, what: &str| size[what]["p50_ms"].as_f64().unwrap_or(0.0);
    let mut out = json!({"kind": "leaderboard", "page": PAGE, "sizes": sizes});
    if let [small, .., large] = &sizes[..] {
        let growth = |what: &str| round(p50(large, what) / p50(small, what));
        out["growth_p50"] = json!({
            "top": growth("top"),
            "middle": growth("middle"),
            "profile": growth("profile"),
            "ping": growth("ping"),
        });
    }
    println!("{out}");
}

async fn measure_size(players: i64, samples: usize) -> Value {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("leaderboard.db");
    let store = Store::open(&path.display().to_string())
        .await
        .expect("the database opens");
    let filled = Instant::now();
    let middle = fill(&path, players).await;
    let fill_s = filled.elapsed().as_secs_f64();
    let (middle, middle_rank) = ((middle.0, middle.1), middle.2);
    let profiled = middle.1.clone();
    let shown = store.player_ratings(&profiled).await.expect("a profile");
    assert_eq!(
        shown[0].rank,
        Some(middle_rank),
        "the profile's rank is the place's"
    );

    let (mut ping, mut top, mut deep, mut profile) = (vec![], vec![], vec![], vec![]);
    let mut listed = 0;
    for _ in 0..samples {
        ping.push(time(store.ping()).await.0);
        let (took, page) = time(store.leaderboard(GAME, None, PAGE)).await;
        listed = page.expect("a page").len();
        top.push(took);
        let after = Some((middle.0, middle.1.clone()));
        deep.push(time(store.leaderboard(GAME, after, PAGE)).await.0);
        profile.push(time(store.player_ratings(&profiled)).await.0);
    }
    assert_eq!(listed as i64, PAGE.min(players), "a whole page");
    let row = |samples: &mut Vec<Duration>, base: &[Duration]| {
        samples.sort();
        let ms = |q| {
            measure::quantile(samples, q)
                .unwrap_or_default()
                .as_secs_f64()
                * 1e3
        };
        let base_p50 = measure::percentile(base, 0.5).as_secs_f64() * 1e3;
        json!({"p50_ms": round(ms(0.5)), "p99_ms": round(ms(0.99)), "p50_vs_ping": round(ms(0.5) / base_p50)})
    };
    let base = ping.clone();
    json!({
        "rated_players": players,
        "fill_s": round(fill_s),
        "ping": row(&mut ping, &base),
        "top": row(&mut top, &base),
        "middle": row(&mut deep, &base),
        "profile": row(&mut profile, &base),
    })
}

/// Stores `players` rated players of [`GAME`]; the leaderboard's middle place (its conservative
/// rating, player and rank): the cursor of the middle page, and the player whose profile is
/// read.
async fn fill(path: &std::path::Path, players: i64) -> (f64, String, i64) {
    let mut conn = SqliteConnectOptions::new()
        .filename(path)
        .connect()
        .await
        .expect("a connection");
    let mut tx = conn.begin().await.expect("a transaction");
    let spread = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)";
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "{spread} INSERT INTO players (id, username, token_hash, created_at) \
         SELECT printf('%032x', i), 'p' || i, '', '2026-01-01T00:00:00.000Z' FROM n"
    )))
    .bind(players)
    .execute(&mut *tx)
    .await
    .expect("players stored");
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "{spread}, r(i, rating, deviation, games) AS (SELECT i, 1000 + abs(random()) % 1400, \
         45 + abs(random()) % 305, CASE WHEN i % 10 = 0 THEN 1 + i % 4 ELSE 5 + abs(random()) % 196 END \
         FROM n) \
         INSERT INTO ratings (game, player_id, rating, deviation, volatility, games, conservative, \
         updated_at) SELECT '{GAME}', printf('%032x', i), rating, deviation, 0.06, games, \
         rating - 2 * deviation, '2026-01-01T00:00:00.000Z' FROM r"
    )))
    .bind(players)
    .execute(&mut *tx)
    .await
    .expect("ratings stored");
    // The bands ranks are counted in (every conservative rating here is positive, so the cast
    // is the floor).
    sqlx::query(
        "INSERT INTO rating_bands (game, band, players) SELECT game, \
         CAST(conservative / 5 AS INTEGER), count(*) FROM ratings WHERE games >= 5 GROUP BY 1, 2",
    )
    .execute(&mut *tx)
    .await
    .expect("bands counted");
    tx.commit().await.expect("committed");
    sqlx::query("ANALYZE")
        .execute(&mut conn)
        .await
        .expect("analysed");
    let ranked: i64 = sqlx::query("SELECT count(*) FROM ratings WHERE game = $1 AND games >= 5")
        .bind(GAME)
        .fetch_one(&mut conn)
        .await
        .expect("counted")
        .get(0);
    let middle = sqlx::query(
        "SELECT conservative, player_id FROM ratings WHERE game = $1 AND games >= 5 \
         ORDER BY conservative DESC, player_id DESC LIMIT 1 OFFSET $2",
    )
    .bind(GAME)
    .bind(ranked / 2)
    .fetch_one(&mut conn)
    .await
    .expect("the middle place");
    (middle.get(0), middle.get(1), ranked / 2 + 1)
}

async fn time<T>(work: impl std::future::Future<Output = T>) -> (Duration, T) {
    let started = Instant::now();
    let out = work.await;
    (started.elapsed(), out)
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
