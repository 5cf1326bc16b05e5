//! A batch's writes merged into one statement on PostgreSQL (`store::merging`) take effect as
//! they would one after the other: held until the batch needs an answer, and never merged with
//! a write whose table they read or write.
//!
//! Runs on the cluster `scripts/test` starts, as the plan tests do.

use sqlx::postgres::PgConnection;
use sqlx::{Connection, Executor, Row};

use super::plan_tests::{drop_database, fresh_database};
use crate::store::dialect::SetSql;
use crate::store::merging::Merging;
use crate::store::sets::execute_set;

const ADD_A: SetSql = SetSql {
    columns: "id, n, note",
    statement: "INSERT INTO a (id, n, note) SELECT v.id, v.n, v.note FROM v",
};

const DOUBLE_A: SetSql = SetSql {
    columns: "id",
    statement: "UPDATE a SET n = a.n * 2 FROM v WHERE a.id = v.id",
};

/// Reads `a`, which `ADD_A` writes.
const COPY_A_TO_B: SetSql = SetSql {
    columns: "id",
    statement: "INSERT INTO b (id, n) SELECT a.id, a.n FROM v JOIN a ON a.id = v.id",
};

const ADD_C: SetSql = SetSql {
    columns: "id, flag, x",
    statement: "INSERT INTO c (id, flag, x) SELECT v.id, v.flag, v.x FROM v",
};

/// A `SELECT` run for its effect: a number from the sequence for each row.
const COUNT: SetSql = SetSql {
    columns: "id",
    statement: "SELECT nextval('counted') FROM v",
};

async fn values(conn: &mut PgConnection, sql: &'static str) -> Vec<String> {
    sqlx::query(sql)
        .fetch_all(conn)
        .await
        .unwrap()
        .iter()
        .map(|row| row.get::<String, _>(0))
        .collect()
}

#[tokio::test]
async fn merged_writes_take_effect_as_they_would_one_after_the_other() {
    let Some((admin, name, options)) = fresh_database().await else {
        return;
    };
    let mut conn = PgConnection::connect_with(&options).await.unwrap();
    let mut other = PgConnection::connect_with(&options).await.unwrap();
    conn.execute(
        "CREATE TABLE a (id text PRIMARY KEY, n bigint, note text); \
         CREATE TABLE b (id text PRIMARY KEY, n bigint); \
         CREATE TABLE c (id text PRIMARY KEY, flag boolean, x double precision); \
         CREATE SEQUENCE counted",
    )
    .await
    .unwrap();

    let mut merging = Merging::<sqlx::Postgres, _>::new(&mut conn);
    let rows = [("r1", 3, Some("a \"quoted\" \\ note")), ("r2", 5, None)];
    execute_set::<sqlx::Postgres, _>(&mut merging, ADD_A, &rows, |row, (id, n, note)| {
        row.put("id", *id);
        row.put("n", *n as i64);
        row.put("note", note.map(str::to_owned));
    })
    .await
    .unwrap();
    let flags = [("c1", true, 0.1), ("c2", false, -2.5e-300)];
    execute_set::<sqlx::Postgres, _>(&mut merging, ADD_C, &flags, |row, (id, flag, x)| {
        row.put("id", *id);
        row.put("flag", *flag);
        row.put("x", *x);
    })
    .await
    .unwrap();
    // Held: not sent yet, so not on the database (each statement commits on its own here).
    assert!(values(&mut other, "SELECT id FROM a").await.is_empty());

    // It changes `a`, which a held write changes: the held ones go first, and it sees them.
    execute_set::<sqlx::Postgres, _>(&mut merging, DOUBLE_A, &["r1"], |row, id| {
        row.put("id", *id)
    })
    .await
    .unwrap();
    // It reads `a`, which a held write changes: the same.
    execute_set::<sqlx::Postgres, _>(&mut merging, COPY_A_TO_B, &["r1", "r2"], |row, id| {
        row.put("id", *id)
    })
    .await
    .unwrap();
    // A `SELECT` for its effect is the main query of what is held.
    execute_set::<sqlx::Postgres, _>(&mut merging, COUNT, &["x", "y", "z"], |row, id| {
        row.put("id", *id)
    })
    .await
    .unwrap();
    merging.flush().await.unwrap();

    assert_eq!(
        values(
            &mut other,
            "SELECT id || ' ' || n || ' ' || coalesce(note, '-') FROM a ORDER BY id"
        )
        .await,
        ["r1 6 a \"quoted\" \\ note", "r2 5 -"]
    );
    assert_eq!(
        values(&mut other, "SELECT id || ' ' || n FROM b ORDER BY id").await,
        ["r1 6", "r2 5"]
    );
    assert_eq!(
        values(
            &mut other,
            "SELECT id || ' ' || flag || ' ' || x FROM c ORDER BY id"
        )
        .await,
        ["c1 true 0.1", "c2 false -2.5e-300"]
    );
    assert_eq!(
        values(&mut other, "SELECT last_value::text FROM counted").await,
        ["3"]
    );
    other.close().await.unwrap();
    conn.close().await.unwrap();
    drop_database(admin, &name).await;
}
