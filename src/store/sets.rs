//! Set-based statements: one statement over many rows (`INSERT … VALUES (…), (…)`, `WITH v
//! (…) AS (VALUES …)`), split only where a database's limit on arguments asks. The batch of room
//! changes, the ratings and the profiles all write and read this way.

use super::dialect::{Dialect, SetRow, SetSql};
use super::sql::{Exec, Statement};
use super::types::StoreError;

/// Arguments in one statement at most: below SQLite's limit (32,766) and PostgreSQL's (65,535),
/// so a large set is split into a few statements.
const MAX_ARGS: usize = 30_000;

/// `sql` over `rows`, each bound by `bind`: as few statements as the argument limit allows
/// (none for no rows).
pub(super) fn set_statements<D: Dialect, T>(
    sql: SetSql,
    rows: &[T],
    mut bind: impl FnMut(&mut SetRow, &T),
) -> Vec<Statement> {
    rows.chunks(MAX_ARGS / sql.width())
        .map(|chunk| {
            let mut statement = Statement::of_set(sql, chunk.len(), D::NUMBERED_PLACEHOLDERS);
            for value in chunk {
                let mut row = SetRow::new(&mut statement, &sql);
                bind(&mut row, value);
                debug_assert!(row.complete(), "a row binds every column");
            }
            statement
        })
        .collect()
}

/// Runs `sql` over `rows`, each bound by `bind`, for its effect.
pub(super) async fn execute_set<D: Dialect, T>(
    conn: &mut impl Exec,
    sql: SetSql,
    rows: &[T],
    bind: impl FnMut(&mut SetRow, &T),
) -> Result<(), StoreError> {
    for statement in set_statements::<D, _>(sql, rows, bind) {
        conn.execute(statement).await?;
    }
    Ok(())
}
