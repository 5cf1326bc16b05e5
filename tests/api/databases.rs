//! Which database the black-box tests run on. SQLite files by default; with
//! `TURNHOUSE_TEST_DATABASE=postgres`, a fresh PostgreSQL database per test, on the cluster the
//! libpq variables (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`) name. `scripts/test` runs the
//! suite both ways, inside a throwaway cluster that `pg_virtualenv` starts.

use std::path::Path;

use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use sqlx::{Connection, Executor, FromRow};

pub fn on_postgres() -> bool {
    std::env::var("TURNHOUSE_TEST_DATABASE").is_ok_and(|db| db == "postgres")
}

/// The cluster's URL, on database `name`.
pub fn postgres_url(name: &str) -> String {
    postgres_url_as(&cluster_var("PGUSER"), &cluster_var("PGPASSWORD"), name)
}

/// The cluster's URL, on database `name`, signing in as `user` with `password`.
pub fn postgres_url_as(user: &str, password: &str, name: &str) -> String {
    format!(
        "postgres://{user}:{password}@{}:{}/{name}",
        cluster_var("PGHOST"),
        cluster_var("PGPORT")
    )
}

fn cluster_var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: the PostgreSQL tests run inside `scripts/test`, which starts a cluster")
    })
}

/// A new, empty PostgreSQL database; its URL.
pub async fn fresh_postgres() -> String {
    let name = format!("t_{:016x}", rand::random::<u64>());
    let mut admin = sqlx::PgConnection::connect(&postgres_url("postgres"))
        .await
        .expect("the test cluster answers");
    admin
        .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .await
        .expect("a test database is created");
    postgres_url(&name)
}

/// A fresh database for one test: the file `name` in `dir`, or a PostgreSQL database when the
/// suite runs on PostgreSQL.
pub async fn fresh_database(dir: &Path, name: &str) -> String {
    match on_postgres() {
        true => fresh_postgres().await,
        false => dir.join(name).display().to_string(),
    }
}

/// Rows of `sql`, read directly from the database at `database` (a PostgreSQL URL or a SQLite
/// file), as an operator inspecting it would.
pub async fn database_rows<T>(database: &str, sql: &'static str) -> Vec<T>
where
    T: for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow> + Send + Unpin,
{
    if database.starts_with("postgres") {
        let mut conn = sqlx::PgConnection::connect(database).await.unwrap();
        sqlx::query_as(sql).fetch_all(&mut conn).await.unwrap()
    } else {
        let url = format!("sqlite://{database}");
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        sqlx::query_as(sql).fetch_all(&mut conn).await.unwrap()
    }
}

/// Runs `sql` directly on the database at `database`, as an operator at a shell would (a test
/// standing in for time passing, say).
pub async fn database_execute(database: &str, sql: &'static str) {
    if database.starts_with("postgres") {
        let mut conn = sqlx::PgConnection::connect(database).await.unwrap();
        sqlx::query(sql).execute(&mut conn).await.unwrap();
    } else {
        let url = format!("sqlite://{database}");
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        sqlx::query(sql).execute(&mut conn).await.unwrap();
    }
}
