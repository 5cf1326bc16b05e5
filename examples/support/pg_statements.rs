//! What PostgreSQL ran while the games were played: `pg_stat_statements` (the cluster must
//! load it: `shared_preload_libraries=pg_stat_statements`) and `pg_stat_user_tables`, both
//! reset just before the games and read just after, so nothing else the measurement does
//! (its reads, `/healthz`) is counted.

use serde_json::{json, Value};
use sqlx::{Connection, PgConnection, Row};

/// Statements whose texts differ only by their number of rows (a batch's `VALUES` lists)
/// are one kind, named by what they do with the rows: the text after `WITH v (…) AS (VALUES
/// …)`, up to 160 characters, with `$` for each placeholder.
fn kind(query: &str) -> String {
    let query = query.split_whitespace().collect::<Vec<_>>().join(" ");
    let body = match query.find(" AS (VALUES ") {
        Some(start) => ["SELECT", "UPDATE", "INSERT", "DELETE"]
            .iter()
            .filter_map(|verb| query[start..].find(&format!(") {verb}")))
            .min()
            .map_or(query.as_str(), |end| &query[start + end + 2..]),
        None => query.as_str(),
    };
    // pg_stat_statements numbers the constants it took out after the parameters (`ELSE NULL`
    // becomes `ELSE $241` in a statement of 60 rows): every number is left out.
    let mut kind = String::with_capacity(body.len());
    let mut after_dollar = false;
    for c in body.chars() {
        if !(after_dollar && c.is_ascii_digit()) {
            kind.push(c);
            after_dollar = c == '$';
        }
    }
    kind.chars().take(160).collect()
}

pub struct PgStatements(PgConnection);

impl PgStatements {
    /// Connects to `url` and clears both views' counts.
    pub async fn reset(url: &str) -> Self {
        let mut conn = PgConnection::connect(url)
            .await
            .expect("the database's statistics can be reached");
        for statement in [
            "CREATE EXTENSION IF NOT EXISTS pg_stat_statements",
            "SELECT pg_stat_statements_reset()",
            "SELECT pg_stat_reset()",
        ] {
            sqlx::raw_sql(statement)
                .execute(&mut conn)
                .await
                .expect("pg_stat_statements is loaded (shared_preload_libraries)");
        }
        Self(conn)
    }

    /// Each kind of statement run since the reset, by its total execution time, per game;
    /// and how many of the rooms' and memberships' updates stayed in their page.
    pub async fn report(mut self, games: u64) -> Value {
        // The table statistics reach the view when each connection reports them, at most
        // every second or so; this waits for the writer's last batches to be counted.
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        let rows = sqlx::query(
            "SELECT query, calls, rows, total_exec_time \
             FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database \
             WHERE datname = current_database())",
        )
        .fetch_all(&mut self.0)
        .await
        .expect("pg_stat_statements can be read");
        let mut kinds: std::collections::BTreeMap<String, [f64; 3]> = Default::default();
        for row in rows {
            let query: String = row.get("query");
            if query.contains("pg_stat") {
                continue;
            }
            let figures = kinds.entry(kind(&query)).or_default();
            figures[0] += row.get::<i64, _>("calls") as f64;
            figures[1] += row.get::<i64, _>("rows") as f64;
            figures[2] += row.get::<f64, _>("total_exec_time");
        }
        let games = games.max(1) as f64;
        let mut statements: Vec<Value> = kinds
            .into_iter()
            .map(|(kind, [calls, rows, exec])| {
                json!({
                    "statement": kind,
                    "calls_per_game": round(calls / games),
                    "rows_per_call": round(rows / calls.max(1.0)),
                    "exec_ms_per_game": round(exec / games),
                })
            })
            .collect();
        statements.sort_by(|a, b| {
            b["exec_ms_per_game"]
                .as_f64()
                .partial_cmp(&a["exec_ms_per_game"].as_f64())
                .unwrap()
        });
        let tables = sqlx::query(
            "SELECT relname, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables \
             WHERE relname IN ('rooms', 'room_players') ORDER BY relname",
        )
        .fetch_all(&mut self.0)
        .await
        .expect("pg_stat_user_tables can be read");
        let updates_in_place: serde_json::Map<String, Value> = tables
            .iter()
            .map(|row| {
                let updated = row.get::<i64, _>("n_tup_upd") as f64;
                let hot = row.get::<i64, _>("n_tup_hot_upd") as f64;
                let share = if updated > 0.0 { hot / updated } else { 0.0 };
                (row.get::<String, _>("relname"), json!(round(share)))
            })
            .collect();
        json!({"statements": statements, "updates_in_place": updates_in_place})
    }
}

fn round(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}
