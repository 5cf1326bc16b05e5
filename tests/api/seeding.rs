//! `turnhouse seed-rooms` beside a running server: the rooms it adds are whole finished games,
//! and on PostgreSQL the planner's statistics describe them as soon as it is done (rather than
//! after autovacuum's next look, with every statement planned for the tables as they were).

use std::process::Command;
use std::time::{Duration, Instant};

use crate::databases::{database_rows, on_postgres};
use crate::helpers::TestApp;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeded_rooms_are_whole_games_and_postgres_plans_with_them() {
    let app = TestApp::spawn().await;
    let output = Command::new(env!("CARGO_BIN_EXE_turnhouse"))
        .args(["--database", &app.database, "seed-rooms", "--count", "30"])
        .output()
        .expect("turnhouse runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rooms: Vec<(i64, i64, i64)> = database_rows(
        &app.database,
        "SELECT count(*), min(version), max(version) FROM rooms WHERE finished = true",
    )
    .await;
    let (count, version) = (rooms[0].0, rooms[0].1);
    assert_eq!(
        (count, rooms[0].2),
        (30, version),
        "thirty finished rooms, all at one version"
    );
    let history: Vec<(i64, i64)> = database_rows(
        &app.database,
        "SELECT count(DISTINCT room_id), count(*) FROM room_events",
    )
    .await;
    assert_eq!(
        history,
        [(30, 30 * version)],
        "each copy has every version of its history"
    );

    if on_postgres() {
        // What the seed's own connections reported reaches the statistics views once they close.
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            let analyzed: Vec<(String,)> = database_rows(
                &app.database,
                "SELECT relname::text FROM pg_stat_user_tables WHERE last_analyze IS NOT NULL \
                 AND relname IN ('rooms', 'room_players', 'room_events', 'players') ORDER BY 1",
            )
            .await;
            let names: Vec<&str> = analyzed.iter().map(|(n,)| n.as_str()).collect();
            if names == ["players", "room_events", "room_players", "rooms"] {
                break;
            }
            assert!(Instant::now() < until, "analyzed after the seed: {names:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
