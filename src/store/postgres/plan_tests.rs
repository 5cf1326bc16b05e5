//! The writer's plans on PostgreSQL: made once per statement and kept for the life of its
//! connection, they must find rows by key whatever the tables held when they were made.
//!
//! Runs on the cluster `scripts/test` starts (pg_virtualenv sets `PGHOST` and the rest; its
//! first pass, `cargo test --all-targets`, runs inside it); outside it, on a machine with no
//! cluster, there is nothing to run on.

use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::{AssertSqlSafe, Connection, Executor, Row};

use super::writer_options;
use crate::store::batch::SET_MEMBERS_FINISHED;

/// The test cluster, on database `name`; `None` when there is none.
fn cluster(name: &str) -> Option<PgConnectOptions> {
    std::env::var_os("PGHOST")?;
    Some(PgConnectOptions::new().database(name))
}

/// The plan `conn` makes, generic, for a batch finishing two memberships.
async fn plan_of_finishing_two(conn: &mut PgConnection) -> String {
    let prepare = format!(
        "PREPARE finishing (text, text, boolean, text, text, boolean) AS {}",
        SET_MEMBERS_FINISHED.text(2, true)
    );
    conn.execute(AssertSqlSafe(prepare)).await.unwrap();
    let rows = sqlx::query("EXPLAIN EXECUTE finishing ('r1', 'p1', true, 'r2', 'p2', true)")
        .fetch_all(&mut *conn)
        .await
        .unwrap();
    rows.iter()
        .map(|row| row.get::<String, _>(0))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn the_writer_finds_memberships_by_key_though_it_planned_on_a_small_table() {
    let Some(admin) = cluster("postgres") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "in CI this runs inside scripts/test's PostgreSQL cluster"
        );
        eprintln!("skipped: no PostgreSQL cluster here (scripts/test starts one)");
        return;
    };
    let name = format!("t_plans_{:016x}", rand::random::<u64>());
    let mut admin = PgConnection::connect_with(&admin).await.unwrap();
    admin
        .execute(AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .await
        .unwrap();
    let options = cluster(&name).unwrap();
    let mut plain = PgConnection::connect_with(&options).await.unwrap();
    sqlx::migrate!("./migrations/postgres")
        .run(&mut plain)
        .await
        .unwrap();

    // A young server's memberships: a few dozen, and the statistics say so.
    plain
        .execute(
            "INSERT INTO room_players (room_id, player_id, active, room_seq, game, finished) \
             SELECT 'r' || g, 'p' || g, true, g, 'tictactoe', false \
             FROM generate_series(1, 60) AS g; ANALYZE room_players",
        )
        .await
        .unwrap();

    // Planned once by default, that plan scans the whole table for every batch: kept while
    // the table grows, it costs more with every room played.
    plain
        .execute("SET plan_cache_mode = force_generic_plan")
        .await
        .unwrap();
    let default = plan_of_finishing_two(&mut plain).await;
    assert!(default.contains("Seq Scan on room_players"), "{default}");

    let mut writer = PgConnection::connect_with(&writer_options(options))
        .await
        .unwrap();
    let writers = plan_of_finishing_two(&mut writer).await;
    assert!(
        writers.contains("Index Scan using room_players_pkey on room_players"),
        "{writers}"
    );
    assert!(!writers.contains("Seq Scan"), "{writers}");

    for conn in [plain, writer] {
        conn.close().await.unwrap();
    }
    admin
        .execute(AssertSqlSafe(format!("DROP DATABASE {name} WITH (FORCE)")))
        .await
        .unwrap();
}
