//! PostgreSQL's plans: the writer's, made once per statement and kept for the life of its
//! connection, must find rows by key whatever the tables held when they were made; a room
//! listing's, whether planned for its values or once for any, must read its index ranges only
//! as far as the page goes.
//!
//! Runs on the cluster `scripts/test` starts (pg_virtualenv sets `PGHOST` and the rest; its
//! first pass, `cargo test --all-targets`, runs inside it); outside it, on a machine with no
//! cluster, there is nothing to run on.

use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::{AssertSqlSafe, Connection, Executor, Row};

use super::writer_options;
use crate::store::batch::SET_MEMBERS_FINISHED;
use crate::store::dialect::Dialect;
use crate::store::reads::{every_listing_query, listing, test_ranges};
use crate::store::sql::Arg;

/// The test cluster, on database `name`; `None` when there is none.
fn cluster(name: &str) -> Option<PgConnectOptions> {
    std::env::var_os("PGHOST")?;
    Some(PgConnectOptions::new().database(name))
}

/// A new database in the test cluster, migrated: the cluster's admin connection (to drop it
/// after), its name and its options. `None`, and the test skipped, where there is no cluster.
pub(super) async fn fresh_database() -> Option<(PgConnection, String, PgConnectOptions)> {
    let Some(admin) = cluster("postgres") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "in CI this runs inside scripts/test's PostgreSQL cluster"
        );
        eprintln!("skipped: no PostgreSQL cluster here (scripts/test starts one)");
        return None;
    };
    let name = format!("t_plans_{:016x}", rand::random::<u64>());
    let mut admin = PgConnection::connect_with(&admin).await.unwrap();
    admin
        .execute(AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .await
        .unwrap();
    let options = cluster(&name).unwrap();
    let mut conn = PgConnection::connect_with(&options).await.unwrap();
    sqlx::migrate!("./migrations/postgres")
        .run(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    Some((admin, name, options))
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
    let Some((admin, name, options)) = fresh_database().await else {
        return;
    };
    let mut plain = PgConnection::connect_with(&options).await.unwrap();

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
    drop_database(admin, &name).await;
}

/// Rooms in the listings' test: a lobby flooded with open rooms, as the lobby's indexes are
/// there for.
const ROOMS: i64 = 20_000;

/// Fills the rooms: of every hundred, 96 open (joinable), two in play and two finished; every
/// 97th private; every 50th of a second game. Player `p` is in every tenth room, player `q`
/// in every room not open: a join that walks the rooms' key to find theirs reads ten or
/// twenty-five rooms for each of theirs.
async fn fill_rooms(conn: &mut PgConnection) {
    conn.execute(AssertSqlSafe(format!(
        "INSERT INTO players (id, username, token_hash, created_at) \
         VALUES ('p', 'p', '', ''), ('q', 'q', '', ''); \
         INSERT INTO rooms (id, game, private, version, joinable, finished, state, players, \
         inactive_players, created_at, updated_at) \
         SELECT 'r' || g, CASE WHEN g % 50 = 0 THEN 'connect4' ELSE 'tictactoe' END, \
         g % 97 = 0, 1, g % 100 < 96, g % 100 >= 98, '{{}}', '[]', '[]', '', '' \
         FROM generate_series(1, {ROOMS}) AS g; \
         INSERT INTO room_players (room_id, player_id, active, room_seq, game, finished) \
         SELECT r.id, p.id, true, r.seq, r.game, r.finished FROM rooms r, players p \
         WHERE (p.id = 'p' AND r.seq % 10 = 0) OR (p.id = 'q' AND NOT r.joinable); \
         ANALYZE"
    )))
    .await
    .unwrap();
}

/// A fresh database filled by [`fill_rooms`]: the admin connection, its name and a connection
/// to it; `None` where there is no cluster.
async fn flooded_lobby() -> Option<(PgConnection, String, PgConnection)> {
    let (admin, name, options) = fresh_database().await?;
    let mut conn = PgConnection::connect_with(&options).await.unwrap();
    fill_rooms(&mut conn).await;
    Some((admin, name, conn))
}

pub(super) async fn drop_database(mut admin: PgConnection, name: &str) {
    admin
        .execute(AssertSqlSafe(format!("DROP DATABASE {name} WITH (FORCE)")))
        .await
        .unwrap();
}

/// `arg` as a literal, for `EXECUTE`.
fn literal(arg: &Arg) -> String {
    match arg {
        Arg::Text(text) => format!("'{}'", text.replace('\'', "''")),
        Arg::Int(n) => n.to_string(),
        Arg::Flag(flag) => flag.to_string(),
        other => panic!("a listing binds no {other:?}"),
    }
}

/// How many rows the plan in `node` (`EXPLAIN`'s JSON) read from tables and indexes: those it
/// returned from each scan, and those a scan's filter then dropped.
fn rows_read(node: &serde_json::Value) -> f64 {
    let number = |key: &str| {
        node.get(key)
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(0.0)
    };
    let kind = node["Node Type"].as_str().unwrap_or_default();
    let own = match kind.contains("Scan") && !kind.contains("Subquery") {
        true => (number("Actual Rows") + number("Rows Removed by Filter")) * number("Actual Loops"),
        false => 0.0,
    };
    let children = node
        .get("Plans")
        .and_then(serde_json::Value::as_array)
        .map_or(0.0, |plans| plans.iter().map(rows_read).sum());
    own + children
}

#[tokio::test]
async fn every_listing_reads_its_ranges_only_as_far_as_the_page_planned_either_way() {
    let Some((admin, name, mut conn)) = flooded_lobby().await else {
        return;
    };
    let mut off = Vec::new();
    let queries = every_listing_query();
    for query in &queries {
        for player in ["p", "q"] {
            let mut query = query.clone();
            if query.player.is_some() {
                query.player = Some(player.into());
            } else if player == "q" {
                continue;
            }
            if query.player.is_some() && query.joinable.is_some() {
                // Whether a room is open is not in the memberships' index: a player's rooms
                // that are not (or are) open are read and skipped, on both databases.
                continue;
            }
            let (ranges, parts) = test_ranges(&query);
            let statement = listing::<sqlx::Postgres>(&query, &ranges);
            let values: Vec<String> = statement.args().iter().map(literal).collect();
            // A page from each part, and each of its rooms looked up by key; a plan that reads
            // a range past the page, or scans, reads thousands.
            let most = 2.0 * (parts as f64) * (query.limit as f64 + 1.0);
            for mode in ["force_custom_plan", "force_generic_plan"] {
                let read = rows_read_by(&mut conn, mode, statement.sql(), &values).await;
                if read > most {
                    off.push(format!(
                        "{mode}, {query:?}: read {read} rows, more than {most}\n{}",
                        statement.sql()
                    ));
                }
            }
        }
    }
    assert!(
        off.is_empty(),
        "{} listings:\n{}",
        off.len(),
        off.join("\n\n")
    );
    conn.close().await.unwrap();
    drop_database(admin, &name).await;
}

/// `EXPLAIN ANALYZE` of `sql` with `values` (literals), prepared on `conn` and planned for them
/// (`force_custom_plan`) or once for any (`force_generic_plan`): how many rows it read.
async fn rows_read_by(conn: &mut PgConnection, mode: &str, sql: &str, values: &[String]) -> f64 {
    conn.execute(AssertSqlSafe(format!(
        "SET plan_cache_mode = {mode}; PREPARE measured AS {sql}"
    )))
    .await
    .unwrap();
    let explained: serde_json::Value = sqlx::query_scalar(AssertSqlSafe(format!(
        "EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE measured ({})",
        values.join(", ")
    )))
    .fetch_one(&mut *conn)
    .await
    .unwrap();
    conn.execute("DEALLOCATE measured").await.unwrap();
    rows_read(&explained[0]["Plan"])
}

/// Quick play's search in a lobby flooded with open rooms stops at the first that is open to
/// the player, whether they are in some of them (`p`) or in none (`n`), planned either way.
#[tokio::test]
async fn quick_play_walks_the_open_rooms_oldest_first_and_stops_at_the_first_it_can_join() {
    let Some((admin, name, mut conn)) = flooded_lobby().await else {
        return;
    };
    let sql = <sqlx::Postgres as Dialect>::OLDEST_OPEN_ROOM;
    for player in ["p", "n"] {
        // No clock, no seats held, every room changed since `$5`, no rating.
        let values = [
            "'tictactoe'",
            &format!("'{player}'"),
            "NULL",
            "'9'",
            "''",
            "1500",
            "0",
        ]
        .map(str::to_owned);
        for mode in ["force_custom_plan", "force_generic_plan"] {
            let read = rows_read_by(&mut conn, mode, sql, &values).await;
            // The oldest open room is open to both: a room, and a look for the player in it.
            assert!(read <= 10.0, "{mode}, player {player}: read {read} rows");
        }
    }
    conn.close().await.unwrap();
    drop_database(admin, &name).await;
}
