//! The write path on its own: the store's group-committing writer, with no HTTP, no engine and
//! no hooks, fed room changes by tasks in this process. It prints one JSON line of figures.
//!
//!     cargo run --release --example writebench -- [--database PATH_OR_URL] [--in-flight 64]
//!         [--seconds 5] [--rooms 1000] [--indexes]
//!
//! Moves: each task plays its own room, one version at a time (compare-and-set, one history
//! row), as fast as the writer acknowledges them. In the same run and with the same
//! concurrency it times `Store::ping` (one `SELECT 1` on the read pool: the database round
//! trip `GET /healthz` makes), the baseline the write rate is compared with. This is the floor
//! under `examples/loadgen`'s figures: what the database and the writer cost a write when
//! nothing else does.
//!
//! `--indexes` (SQLite) also weighs each lobby index: with it dropped, the rate of writes that
//! move rooms in the lobby (a room created with its creator seated, then finished: two
//! listing-changing writes) and the time of a listing that without it walks rooms it does
//! not list, against both with every index in place. Each is measured twice, interleaved with the
//! baseline, and the median kept. The stored rooms are the case the indexes exist for: a lobby
//! flooded with open rooms of one game (`tictactoe3d`, the newest 97%), with the rooms those
//! listings find (`tictactoe` open, in play and finished, 1% each) older than all of them, so
//! that without its index a listing walks or sorts the flood.

#[path = "support/measure.rs"]
mod measure;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{json, Value};
use sqlx::sqlite::SqlitePoolOptions;
use turnhouse::domain::records::{Account, EventKind, Room, RoomEvent};
use turnhouse::game::PlayerRef;
use turnhouse::store::{RoomCommit, RoomQuery, Store};

#[derive(Parser)]
struct Args {
    /// A SQLite file (created) or a PostgreSQL URL; a fresh temporary file by default.
    #[arg(long)]
    database: Option<String>,
    #[arg(long, default_value_t = 64)]
    in_flight: usize,
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Rooms stored before measuring.
    #[arg(long, default_value_t = 1000)]
    rooms: i64,
    /// Weigh each lobby index (SQLite only).
    #[arg(long)]
    indexes: bool,
}

/// A listing's filters: by game, joinable, finished.
type Filters = (bool, Option<bool>, Option<bool>);

/// Each lobby index, its columns, and a listing that without it walks rooms it does not list:
/// the finished rooms whatever their game (older than the flood), and one game's open rooms
/// (another game's flood fills the other index's range of open rooms).
const INDEXES: [(&str, &str, Filters); 2] = [
    (
        "rooms_public_by_joinable_finished",
        "(joinable, finished, seq)",
        (false, None, Some(true)),
    ),
    (
        "rooms_public_by_game_joinable_finished",
        "(game, joinable, finished, seq)",
        (true, Some(true), None),
    ),
];

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let database = args
        .database
        .clone()
        .unwrap_or_else(|| dir.path().join("writes.db").display().to_string());
    let store = Store::open(&database).await.expect("the database opens");
    let players = [player(&store, "x").await, player(&store, "o").await];
    store_rooms(&store, &players, args.rooms).await;

    let seconds = Duration::from_secs_f64(args.seconds);
    let cpu_before = measure::cpu_ms(std::process::id());
    let (moves, latencies) = run_moves(&store, &players, args.in_flight, seconds).await;
    let cpu = measure::cpu_ms(std::process::id()) - cpu_before;
    let pings = run_pings(&store, args.in_flight, seconds).await;
    let mut out = json!({
        "database": if database.starts_with("postgres") { "postgres" } else { "sqlite" },
        "in_flight": args.in_flight,
        "rooms_stored": args.rooms,
        "writes_per_s": round(moves),
        "write_ms": {
            "p50": round(measure::quantile(&latencies, 0.5).unwrap_or(0.0)),
            "p99": round(measure::quantile(&latencies, 0.99).unwrap_or(0.0)),
        },
        // This process's CPU time per write: with SQLite, the whole write path (the tasks'
        // share is building each commit); PostgreSQL's own processes are not in it.
        "cpu_us_per_write": round(cpu * 1000.0 / latencies.len().max(1) as f64),
        "pings_per_s": round(pings),
        "writes_per_ping": round(moves / pings),
    });
    if args.indexes {
        out["indexes"] = weigh_indexes(&store, &database, &players, &args, seconds).await;
    }
    println!("{out}");
}

/// `rooms` rooms: `tictactoe` open, in play and finished (1% each, oldest), then a flood of
/// open `tictactoe3d` rooms.
async fn store_rooms(store: &Store, players: &[PlayerRef; 2], rooms: i64) {
    let few = (rooms / 100).max(1);
    let open = new_room(store, players, "open", "tictactoe").await;
    store.copy_room(&open.id, few).await.expect("rooms copied");
    let playing = new_room(store, players, "playing", "tictactoe").await;
    let playing = seat_second(store, playing, players).await;
    store
        .copy_room(&playing.id, few)
        .await
        .expect("rooms copied");
    let finished = new_room(store, players, "finished", "tictactoe").await;
    finish(store, finished).await;
    store
        .copy_room("finished", few)
        .await
        .expect("rooms copied");
    let flood = new_room(store, players, "flood", "tictactoe3d").await;
    let rest = (rooms - 3 * few - 4).max(0);
    store
        .copy_room(&flood.id, rest)
        .await
        .expect("rooms copied");
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

async fn player(store: &Store, name: &str) -> PlayerRef {
    let id = format!("{:032x}", rand::random::<u128>());
    let username = format!("{name}-{}", &id[..8]);
    let account = Account {
        id: id.clone().into(),
        username: username.clone(),
        created_at: turnhouse::domain::time::Timestamp::parse("2026-01-01T00:00:00Z").unwrap(),
    };
    let session = turnhouse::domain::records::Session {
        id: id.clone().into(),
        player: account.player_ref(),
        label: "writebench".into(),
        token_hash: String::new(),
        created_at: account.created_at,
        last_used_at: account.created_at,
    };
    store
        .create_account(&account, &session)
        .await
        .expect("an account");
    PlayerRef {
        id: id.into(),
        username,
    }
}

fn event(version: i64, kind: EventKind, player: &PlayerRef, room: &Room) -> RoomEvent {
    RoomEvent {
        trigger_timeout_at: None,
        version,
        kind,
        player: Some(player.clone()),
        mv: (kind == EventKind::Move).then(|| json!(version).into()),
        state: room.state.clone(),
        joinable: room.joinable,
        finished: room.finished,
        players: room.players.clone(),
        created_at: room.updated_at,
        rating_changes: Vec::new(),
        to_move: room.to_move.clone(),
    }
}

/// A change of `room` from version `expected` (`None` creates it, with its memberships).
fn commit(room: Room, expected: Option<i64>, events: Vec<RoomEvent>) -> Box<RoomCommit> {
    let members = expected.is_none();
    Box::new(RoomCommit {
        listing_changed: members,
        room,
        expected_version: expected,
        events,
        members_changed: members,
        finished_changed: false,
        quick_play: None,
        lobby_change: None,
        audit: None,
        rated_result: None,
        joinable_before: true,
        finished_before: false,
        winners: None,
        turns_begun: Vec::new(),
    })
}

/// A public room of two seats, its first player seated: two versions, one commit.
async fn new_room(store: &Store, players: &[PlayerRef; 2], id: &str, game: &str) -> Room {
    let room = Room {
        trigger_timeout_at: None,
        to_move: Some(vec![players[0].id.clone()]),
        turns: Default::default(),
        clock: None,
        rematch: None,
        score: Default::default(),
        rated: false,
        id: id.into(),
        game: game.into(),
        game_version: None,
        private: false,
        version: 2,
        joinable: true,
        finished: false,
        state: json!({"board": [null, null, null, null, null, null, null, null, null]}).into(),
        players: vec![players[0].clone()].into(),
        inactive_players: Vec::new(),
        created_at: turnhouse::domain::time::Timestamp::parse("2026-01-01T00:00:00Z").unwrap(),
        updated_at: turnhouse::domain::time::Timestamp::parse("2026-01-01T00:00:00Z").unwrap(),
    };
    let events = vec![
        event(1, EventKind::RoomStart, &players[0], &room),
        event(2, EventKind::Join, &players[0], &room),
    ];
    store
        .commit(commit(room, None, events))
        .await
        .expect("a room")
        .0
        .room
}

/// The room's next version, its second seat taken and closed: a listing change.
async fn seat_second(store: &Store, mut room: Room, players: &[PlayerRef; 2]) -> Room {
    room.version += 1;
    room.joinable = false;
    std::sync::Arc::make_mut(&mut room.players).push(players[1].clone());
    let events = vec![event(room.version, EventKind::Join, &players[1], &room)];
    let expected = room.version - 1;
    let mut change = commit(room, Some(expected), events);
    change.listing_changed = true;
    change.members_changed = true;
    store.commit(change).await.expect("seated").0.room
}

/// The room's next version, finished: a listing change.
async fn finish(store: &Store, mut room: Room) {
    room.version += 1;
    room.joinable = false;
    room.finished = true;
    let events = vec![event(
        room.version,
        EventKind::Move,
        &room.players[0],
        &room,
    )];
    let expected = room.version - 1;
    let mut change = commit(room, Some(expected), events);
    change.listing_changed = true;
    change.finished_changed = true;
    store.commit(change).await.expect("finished");
}

/// Each task plays moves in its own room for `duration`: the rate, and every latency in ms
/// (sorted).
async fn run_moves(
    store: &Store,
    players: &[PlayerRef; 2],
    in_flight: usize,
    duration: Duration,
) -> (f64, Vec<f64>) {
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for task in 0..in_flight {
        let (store, players, done) = (store.clone(), players.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            let mut room = new_room(
                &store,
                &players,
                &format!("moves-{task}-{}", rand::random::<u32>()),
                "tictactoe",
            )
            .await;
            let mut latencies = Vec::new();
            while started.elapsed() < duration {
                let expected = room.version;
                room.version += 1;
                room.state = json!({"turn": room.version}).into();
                // Seat 0's turn every other move (the second seat is empty here).
                let turn = (room.version % 2 == 0).then(|| players[0].id.clone());
                room.to_move = Some(turn.into_iter().collect());
                // As a game's move does: the turn passes, and the room says since when.
                room.turns = room.turns_after(turnhouse::domain::time::Timestamp::now());
                let events = vec![event(room.version, EventKind::Move, &players[0], &room)];
                let sent = Instant::now();
                room = store
                    .commit(commit(room, Some(expected), events))
                    .await
                    .expect("a move")
                    .0
                    .room;
                latencies.push(sent.elapsed().as_secs_f64() * 1e3);
                done.fetch_add(1, Ordering::Relaxed);
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.expect("a task"));
    }
    let rate = done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    (rate, latencies)
}

async fn run_pings(store: &Store, in_flight: usize, duration: Duration) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..in_flight)
        .map(|_| {
            let (store, done) = (store.clone(), done.clone());
            tokio::spawn(async move {
                while started.elapsed() < duration {
                    store.ping().await.expect("a ping");
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a task");
    }
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

/// Rooms created and finished per second (each two listing-changing writes), for `duration`.
/// They are rooms of a game no listing here asks for, deleted afterwards so that the listings
/// read the same rooms every round.
async fn run_lobby_churn(
    store: &Store,
    players: &[PlayerRef; 2],
    in_flight: usize,
    duration: Duration,
) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..in_flight)
        .map(|_| {
            let (store, players, done) = (store.clone(), players.clone(), done.clone());
            tokio::spawn(async move {
                while started.elapsed() < duration {
                    // As the server makes them: ids that sort by time.
                    let id = turnhouse::domain::ids::new_room_id();
                    let room = new_room(&store, &players, &id, CHURN).await;
                    finish(&store, room).await;
                    done.fetch_add(2, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a task");
    }
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

/// The listing's query string, as `GET /rooms` takes it.
fn listing_query((game, joinable, finished): Filters) -> String {
    let mut terms = Vec::new();
    if game {
        terms.push("game=tictactoe".to_owned());
    }
    terms.extend(joinable.map(|j| format!("joinable={j}")));
    terms.extend(finished.map(|f| format!("finished={f}")));
    if terms.is_empty() {
        "(none)".to_owned()
    } else {
        terms.join("&")
    }
}

/// The game of the rooms `run_lobby_churn` makes.
const CHURN: &str = "churn";

/// Deletes the rooms `run_lobby_churn` made, with their memberships and history.
async fn delete_churn(admin: &sqlx::SqlitePool) {
    for table in ["room_events", "room_players"] {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DELETE FROM {table} WHERE room_id IN (SELECT id FROM rooms WHERE game = ?)"
        )))
        .bind(CHURN)
        .execute(admin)
        .await
        .expect("churn history deleted");
    }
    sqlx::query("DELETE FROM rooms WHERE game = ?")
        .bind(CHURN)
        .execute(admin)
        .await
        .expect("churn rooms deleted");
}

/// The median time of the listing `filters` asks for, in ms.
async fn time_listing(store: &Store, filters: Filters) -> f64 {
    let query = RoomQuery {
        game: filters.0.then(|| "tictactoe".into()),
        joinable: filters.1,
        finished: filters.2,
        limit: 51,
        ..RoomQuery::default()
    };
    let mut times = Vec::new();
    for _ in 0..31 {
        let started = Instant::now();
        store.rooms(&query).await.expect("a listing");
        times.push(started.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    measure::quantile(&times, 0.5).unwrap_or(0.0)
}

async fn weigh_indexes(
    store: &Store,
    database: &str,
    players: &[PlayerRef; 2],
    args: &Args,
    duration: Duration,
) -> Value {
    let admin = SqlitePoolOptions::new()
        .max_connections(1)
        .connect(&format!("sqlite://{database}"))
        .await
        .expect("a second connection to the file");
    let median = |mut xs: Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        xs[xs.len() / 2]
    };
    let mut rows = Vec::new();
    for (name, columns, filters) in INDEXES {
        let (mut with, mut without, mut read_with, mut read_without) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..2 {
            with.push(run_lobby_churn(store, players, args.in_flight, duration).await);
            delete_churn(&admin).await;
            read_with.push(time_listing(store, filters).await);
            sqlx::query(sqlx::AssertSqlSafe(format!("DROP INDEX {name}")))
                .execute(&admin)
                .await
                .expect("index dropped");
            without.push(run_lobby_churn(store, players, args.in_flight, duration).await);
            delete_churn(&admin).await;
            read_without.push(time_listing(store, filters).await);
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "CREATE INDEX {name} ON rooms {columns} WHERE private = 0"
            )))
            .execute(&admin)
            .await
            .expect("index restored");
        }
        let (with, without) = (median(with), median(without));
        rows.push(json!({
            "index": name,
            "listing": listing_query(filters),
            "lobby_writes_per_s_with": round(with),
            "lobby_writes_per_s_without": round(without),
            "write_cost_us": round((1.0 / with - 1.0 / without) * 1e6),
            "listing_ms_with": round(median(read_with)),
            "listing_ms_without": round(median(read_without)),
        }));
    }
    Value::Array(rows)
}
