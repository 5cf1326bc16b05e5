//! The SQLite writer's batches, stepped by the writer's own thread on the connection's handle.
//!
//! sqlx runs each SQLite connection on a thread of its own and hands it every statement, and
//! every row a statement returns, through a channel: a batch of room changes (a dozen
//! statements with their `RETURNING` rows) woke the writer's thread about thirty times, and
//! sqlx's thread as often. Here the writer takes the handle from sqlx's thread once per batch
//! (`lock_handle`) and prepares, binds and steps the batch's statements itself, keeping them
//! prepared from one batch to the next ([`Prepared`]). The statements, their transaction and
//! their errors are SQLite's own, as they were through sqlx.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ffi::{c_int, c_uint, CStr};
use std::fmt;
use std::ptr::{self, NonNull};

use libsqlite3_sys as ffi;
use sqlx::error::{DatabaseError, ErrorKind};
use sqlx::sqlite::LockedSqliteHandle;
use sqlx::SqliteConnection;

use crate::store::sql::{Arg, Exec, Statement};
use crate::store::types::StoreError;

/// Statements kept prepared: each kind of batch statement in each size it has met (sqlx's
/// default of 100 was prepared again and again under load).
const KEPT: usize = 2_000;

/// The statements the writer keeps prepared on its connection between batches, by text.
pub(in crate::store) struct Prepared {
    /// The connection they were prepared on.
    db: Option<NonNull<ffi::sqlite3>>,
    statements: HashMap<String, PreparedStatements>,
    /// How many are kept at most; the least recently used goes first.
    capacity: usize,
    /// Counts lookups, to find the least recently used when one must go.
    uses: u64,
}

impl Default for Prepared {
    fn default() -> Self {
        Self::holding(KEPT)
    }
}

struct PreparedStatements {
    statement: NonNull<ffi::sqlite3_stmt>,
    used: u64,
}

// The handles are only ever used by the writer's thread, or while it holds sqlx's lock on
// the connection.
unsafe impl Send for Prepared {}

impl Prepared {
    fn holding(capacity: usize) -> Self {
        Self {
            db: None,
            statements: HashMap::new(),
            capacity,
            uses: 0,
        }
    }

    /// The prepared statement for `sql` on `db`, prepared now if it is not kept.
    fn get(
        &mut self,
        db: NonNull<ffi::sqlite3>,
        sql: &str,
    ) -> Result<*mut ffi::sqlite3_stmt, RawError> {
        if self.db != Some(db) {
            // sqlx gave the writer another connection (it never does: the writer's pool of
            // one is not tested, timed out or recycled). The old statements went with the old
            // connection; they cannot be finalized without it.
            std::mem::forget(std::mem::take(&mut self.statements));
            self.db = Some(db);
        }
        self.uses += 1;
        if let Some(kept) = self.statements.get_mut(sql) {
            kept.used = self.uses;
            return Ok(kept.statement.as_ptr());
        }
        if self.statements.len() >= self.capacity {
            self.forget_least_used();
        }
        let mut statement = ptr::null_mut();
        let length = c_int::try_from(sql.len()).map_err(|_| RawError::too_big())?;
        // SAFETY: `db` is the open connection, held by this thread; `sql` outlives the call.
        let code = unsafe {
            ffi::sqlite3_prepare_v3(
                db.as_ptr(),
                sql.as_ptr().cast(),
                length,
                ffi::SQLITE_PREPARE_PERSISTENT as c_uint,
                &mut statement,
                ptr::null_mut(),
            )
        };
        let statement = match (code, NonNull::new(statement)) {
            (ffi::SQLITE_OK, Some(statement)) => statement,
            // SAFETY: as above.
            _ => return Err(unsafe { RawError::of(db) }),
        };
        let kept = PreparedStatements {
            statement,
            used: self.uses,
        };
        self.statements.insert(sql.to_owned(), kept);
        Ok(statement.as_ptr())
    }

    fn forget_least_used(&mut self) {
        let oldest = self
            .statements
            .iter()
            .min_by_key(|(_, kept)| kept.used)
            .map(|(sql, _)| sql.clone());
        if let Some(kept) = oldest.and_then(|sql| self.statements.remove(&sql)) {
            // SAFETY: prepared on the connection this thread holds, and no longer kept.
            unsafe { ffi::sqlite3_finalize(kept.statement.as_ptr()) };
        }
    }
}

impl Drop for Prepared {
    /// Finalizes every kept statement (sqlx refuses to close a connection that has any): the
    /// writer drops these when it stops, between batches, while sqlx's thread waits idle for a
    /// command and makes no call on the connection.
    fn drop(&mut self) {
        for (_, kept) in self.statements.drain() {
            // SAFETY: prepared on the connection, which is still open (see above).
            unsafe { ffi::sqlite3_finalize(kept.statement.as_ptr()) };
        }
    }
}

/// The writer's connection taken from sqlx's thread for one batch.
pub(in crate::store) struct RawBatch<'c> {
    db: NonNull<ffi::sqlite3>,
    prepared: &'c mut Prepared,
    /// sqlx's thread makes no call on the connection while this is held.
    _locked: LockedSqliteHandle<'c>,
}

// The handle is used by one thread at a time: whichever holds this, with sqlx's lock.
unsafe impl Send for RawBatch<'_> {}

impl<'c> RawBatch<'c> {
    /// Takes `conn` from sqlx's thread until the batch is dropped.
    pub(in crate::store) async fn lock(
        conn: &'c mut SqliteConnection,
        prepared: &'c mut Prepared,
    ) -> Result<Self, StoreError> {
        let mut locked = conn.lock_handle().await?;
        Ok(Self {
            db: locked.as_raw_handle(),
            prepared,
            _locked: locked,
        })
    }

    /// Runs `statement`, handing each row it returns to `row`.
    fn run(&mut self, statement: &Statement, mut row: impl FnMut(Row)) -> Result<(), StoreError> {
        let handle = self.prepared.get(self.db, statement.sql())?;
        // SAFETY: `handle` is a statement of this connection, which this thread holds; the
        // arguments are bound without copies (`SQLITE_STATIC`) and outlive every step, since
        // the bindings are cleared before this returns.
        let ran = unsafe {
            let ran = bind_all(handle, statement.args()).and_then(|()| loop {
                match ffi::sqlite3_step(handle) {
                    ffi::SQLITE_ROW => row(Row::read(handle)),
                    ffi::SQLITE_DONE => break Ok(()),
                    _ => break Err(()),
                }
            });
            let ran = ran.map_err(|()| RawError::of(self.db));
            ffi::sqlite3_reset(handle);
            ffi::sqlite3_clear_bindings(handle);
            ran
        };
        Ok(ran?)
    }
}

/// Binds `args` to `handle`'s parameters in order.
///
/// # Safety
/// `handle` must be a live statement, and `args` must outlive its bindings.
unsafe fn bind_all(handle: *mut ffi::sqlite3_stmt, args: &[Arg]) -> Result<(), ()> {
    for (at, arg) in args.iter().enumerate() {
        let at = c_int::try_from(at + 1).map_err(|_| ())?;
        let code = unsafe {
            match arg {
                Arg::Text(text) | Arg::MaybeText(Some(text)) => ffi::sqlite3_bind_text64(
                    handle,
                    at,
                    text.as_ptr().cast(),
                    text.len() as u64,
                    ffi::SQLITE_STATIC(),
                    ffi::SQLITE_UTF8 as u8,
                ),
                Arg::Bytes(bytes) | Arg::MaybeBytes(Some(bytes)) => ffi::sqlite3_bind_blob64(
                    handle,
                    at,
                    bytes.as_ptr().cast(),
                    bytes.len() as u64,
                    ffi::SQLITE_STATIC(),
                ),
                Arg::Int(n) | Arg::MaybeInt(Some(n)) => ffi::sqlite3_bind_int64(handle, at, *n),
                Arg::Flag(flag) => ffi::sqlite3_bind_int64(handle, at, i64::from(*flag)),
                Arg::Real(x) | Arg::MaybeReal(Some(x)) => ffi::sqlite3_bind_double(handle, at, *x),
                Arg::MaybeText(None)
                | Arg::MaybeBytes(None)
                | Arg::MaybeInt(None)
                | Arg::MaybeReal(None) => ffi::sqlite3_bind_null(handle, at),
                Arg::Column(_) => unreachable!("SQLite's batches are never merged"),
            }
        };
        if code != ffi::SQLITE_OK {
            return Err(());
        }
    }
    Ok(())
}

impl Exec for RawBatch<'_> {
    type Row = Row;

    async fn execute(&mut self, statement: Statement) -> Result<(), StoreError> {
        self.run(&statement, |_| {})
    }

    async fn fetch_all(&mut self, statement: Statement) -> Result<Vec<Row>, StoreError> {
        let mut rows = Vec::new();
        self.run(&statement, |row| rows.push(row))?;
        Ok(rows)
    }

    fn text(row: &Row, column: &str) -> Result<String, StoreError> {
        match row.get(column)? {
            Value::Text(text) => Ok(text.clone()),
            _ => Err(row.mistyped(column, "text")),
        }
    }

    fn int(row: &Row, column: &str) -> Result<i64, StoreError> {
        match row.get(column)? {
            Value::Int(n) => Ok(*n),
            _ => Err(row.mistyped(column, "an integer")),
        }
    }

    fn real(row: &Row, column: &str) -> Result<f64, StoreError> {
        match row.get(column)? {
            Value::Real(x) => Ok(*x),
            // A REAL column keeps a whole number as an integer when that is exact.
            Value::Int(n) => Ok(*n as f64),
            _ => Err(row.mistyped(column, "a number")),
        }
    }
}

/// A row a statement returned: its columns by name.
pub(in crate::store) struct Row(Vec<(String, Value)>);

enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bytes,
}

impl Row {
    /// The row `handle` stands on.
    ///
    /// # Safety
    /// `handle` must be a statement whose last step returned a row.
    unsafe fn read(handle: *mut ffi::sqlite3_stmt) -> Self {
        let columns = unsafe { ffi::sqlite3_column_count(handle) };
        let columns = (0..columns).map(|at| unsafe {
            let name = CStr::from_ptr(ffi::sqlite3_column_name(handle, at));
            let value = match ffi::sqlite3_column_type(handle, at) {
                ffi::SQLITE_INTEGER => Value::Int(ffi::sqlite3_column_int64(handle, at)),
                ffi::SQLITE_FLOAT => Value::Real(ffi::sqlite3_column_double(handle, at)),
                ffi::SQLITE_TEXT => {
                    let text = ffi::sqlite3_column_text(handle, at);
                    let length = ffi::sqlite3_column_bytes(handle, at) as usize;
                    let bytes = match text.is_null() {
                        true => &[][..],
                        false => std::slice::from_raw_parts(text, length),
                    };
                    Value::Text(String::from_utf8_lossy(bytes).into_owned())
                }
                ffi::SQLITE_BLOB => Value::Bytes,
                _ => Value::Null,
            };
            (name.to_string_lossy().into_owned(), value)
        });
        Self(columns.collect())
    }

    fn get(&self, column: &str) -> Result<&Value, StoreError> {
        self.0
            .iter()
            .find(|(name, _)| name == column)
            .map(|(_, value)| value)
            .ok_or_else(|| sqlx::Error::ColumnNotFound(column.to_owned()).into())
    }

    fn mistyped(&self, column: &str, wanted: &str) -> StoreError {
        let index = self.0.iter().position(|(name, _)| name == column);
        sqlx::Error::ColumnDecode {
            index: index.map_or_else(|| column.to_owned(), |at| at.to_string()),
            source: format!("column {column} is not {wanted}").into(),
        }
        .into()
    }
}

/// An error SQLite returned, as sqlx reports SQLite's: its extended result code, which
/// `StoreError` reads to tell a full disk or a busy lock from a broken constraint.
#[derive(Debug)]
struct RawError {
    code: c_int,
    message: String,
}

impl RawError {
    /// The connection's last error.
    ///
    /// # Safety
    /// `db` must be the open connection this thread holds.
    unsafe fn of(db: NonNull<ffi::sqlite3>) -> Self {
        unsafe {
            let code = ffi::sqlite3_extended_errcode(db.as_ptr());
            let message = CStr::from_ptr(ffi::sqlite3_errmsg(db.as_ptr()));
            Self {
                code,
                message: message.to_string_lossy().into_owned(),
            }
        }
    }

    fn too_big() -> Self {
        Self {
            code: ffi::SQLITE_TOOBIG,
            message: "statement too long".into(),
        }
    }
}

impl fmt::Display for RawError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "(code: {}) {}", self.code, self.message)
    }
}

impl std::error::Error for RawError {}

impl DatabaseError for RawError {
    fn message(&self) -> &str {
        &self.message
    }

    fn code(&self) -> Option<Cow<'_, str>> {
        Some(self.code.to_string().into())
    }

    fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        self
    }

    fn kind(&self) -> ErrorKind {
        match self.code {
            ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
                ErrorKind::UniqueViolation
            }
            ffi::SQLITE_CONSTRAINT_FOREIGNKEY => ErrorKind::ForeignKeyViolation,
            ffi::SQLITE_CONSTRAINT_NOTNULL => ErrorKind::NotNullViolation,
            ffi::SQLITE_CONSTRAINT_CHECK => ErrorKind::CheckViolation,
            _ => ErrorKind::Other,
        }
    }
}

impl From<RawError> for StoreError {
    fn from(err: RawError) -> Self {
        sqlx::Error::Database(Box::new(err)).into()
    }
}

#[cfg(test)]
mod tests {
    use sqlx::{Connection, SqliteConnection};

    use super::*;

    async fn connection(dir: &tempfile::TempDir) -> SqliteConnection {
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("raw.db").display());
        let mut conn = SqliteConnection::connect(&url).await.unwrap();
        sqlx::query("CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER, x REAL, b BLOB)")
            .execute(&mut conn)
            .await
            .unwrap();
        conn
    }

    fn insert(id: &str, n: Option<i64>, x: f64) -> Statement {
        Statement::new("INSERT INTO t (id, n, x, b) VALUES (?, ?, ?, ?) RETURNING id, n, x")
            .bind(id)
            .bind(n)
            .bind(x)
            .bind(vec![1u8, 2])
    }

    /// Statements stay prepared up to the bound, the least recently used going first, and
    /// the connection closes once they are dropped (sqlx refuses to close one with any left).
    #[tokio::test]
    async fn statements_stay_prepared_up_to_a_bound_and_go_with_the_writer() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = connection(&dir).await;
        let mut prepared = Prepared::holding(2);
        {
            let mut batch = RawBatch::lock(&mut conn, &mut prepared).await.unwrap();
            for k in 1..=3 {
                let sql = format!("SELECT {k} AS k");
                let rows = batch.fetch_all(Statement::built(sql)).await.unwrap();
                assert_eq!(RawBatch::int(&rows[0], "k").unwrap(), k);
            }
            let texts: Vec<&str> = batch
                .prepared
                .statements
                .keys()
                .map(|s| s.as_str())
                .collect();
            assert_eq!(texts.len(), 2, "{texts:?}");
            assert!(!texts.contains(&"SELECT 1 AS k"), "{texts:?}");
        }
        // sqlx's own statements still run on the connection between batches.
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM t")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(n, 0);
        drop(prepared);
        conn.close().await.unwrap();
    }

    /// Values go in and come out as bound, NULL included; a broken constraint is the error
    /// sqlx would report (its extended code and kind), and the failed statement can run again.
    #[tokio::test]
    async fn values_round_trip_and_errors_read_as_sqlx_reports_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = connection(&dir).await;
        let mut prepared = Prepared::default();
        let mut batch = RawBatch::lock(&mut conn, &mut prepared).await.unwrap();
        let rows = batch.fetch_all(insert("a", Some(7), 1.5)).await.unwrap();
        assert_eq!(RawBatch::text(&rows[0], "id").unwrap(), "a");
        assert_eq!(RawBatch::int(&rows[0], "n").unwrap(), 7);
        assert_eq!(RawBatch::real(&rows[0], "x").unwrap(), 1.5);
        let rows = batch.fetch_all(insert("b", None, 2.0)).await.unwrap();
        assert!(
            RawBatch::int(&rows[0], "n").is_err(),
            "NULL is not an integer"
        );
        assert!(RawBatch::text(&rows[0], "missing").is_err());

        let err = batch.execute(insert("a", Some(1), 0.0)).await.unwrap_err();
        let StoreError::Database(sqlx::Error::Database(db)) = &err else {
            panic!("{err:?}");
        };
        assert_eq!(db.kind(), ErrorKind::UniqueViolation);
        assert_eq!(
            db.code().as_deref(),
            Some("1555"),
            "SQLITE_CONSTRAINT_PRIMARYKEY"
        );
        assert!(
            err.fault().is_none(),
            "a broken constraint is not the storage's fault"
        );
        batch.execute(insert("c", Some(3), 3.0)).await.unwrap();
        drop(batch);
        let ids: Vec<String> =
            sqlx::query_scalar("SELECT id || ':' || length(b) FROM t ORDER BY id")
                .fetch_all(&mut conn)
                .await
                .unwrap();
        assert_eq!(ids, ["a:2", "b:2", "c:2"]);
    }
}
