//! How generic code runs a statement on either database: sqlx's trait bounds for that, stated
//! once.
//!
//! sqlx implements running a statement per driver (`&mut SqliteConnection` and
//! `&mut PgConnection` are each an `Executor`), and binding or decoding per type and driver.
//! A function generic over the database would have to repeat all those bounds, and so would
//! every caller. Instead [`Sql`] is implemented once for every database that meets them, and
//! generic code asks only for `D: Sql` (through [`super::dialect::Dialect`]). Arguments are
//! the few kinds of value the store binds ([`Arg`]); rows are read column by column.

use std::future::Future;

use sqlx::{
    AssertSqlSafe, ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Row, SqlSafeStr,
    Type,
};

use super::types::StoreError;
use crate::domain::game_id::GameId;
use crate::domain::ids::{PlayerId, RoomId, SessionId};
use crate::domain::time::Timestamp;

/// A value bound to a statement.
#[derive(Debug, Clone)]
pub(super) enum Arg {
    Text(String),
    MaybeText(Option<String>),
    Int(i64),
    MaybeInt(Option<i64>),
    Flag(bool),
    Real(f64),
    MaybeReal(Option<f64>),
    Bytes(Vec<u8>),
    MaybeBytes(Option<Vec<u8>>),
    /// A column of a merged batch's rows, as one array ([`super::merging`]): PostgreSQL only.
    Column(Column),
}

/// The values of one column of rows, bound as an array (`text[]`, `bigint[]`…).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Column {
    Texts(Vec<Option<String>>),
    Ints(Vec<Option<i64>>),
    Flags(Vec<bool>),
    Reals(Vec<Option<f64>>),
}

/// Binding a [`Column`], which only PostgreSQL takes: SQLite's batches are never merged
/// ([`super::dialect::Dialect::MERGES_WRITES`]).
pub(super) trait BindColumn: Database {
    fn bind_column<'q>(
        query: sqlx::query::Query<'q, Self, Self::Arguments>,
        column: Column,
    ) -> sqlx::query::Query<'q, Self, Self::Arguments>;
}

impl BindColumn for sqlx::Postgres {
    fn bind_column<'q>(
        query: sqlx::query::Query<'q, Self, Self::Arguments>,
        column: Column,
    ) -> sqlx::query::Query<'q, Self, Self::Arguments> {
        match column {
            Column::Texts(values) => query.bind(values),
            Column::Ints(values) => query.bind(values),
            Column::Flags(values) => query.bind(values),
            Column::Reals(values) => query.bind(values),
        }
    }
}

impl BindColumn for sqlx::Sqlite {
    fn bind_column<'q>(
        _: sqlx::query::Query<'q, Self, Self::Arguments>,
        _: Column,
    ) -> sqlx::query::Query<'q, Self, Self::Arguments> {
        unreachable!("SQLite's batches are never merged")
    }
}

impl From<Vec<u8>> for Arg {
    fn from(value: Vec<u8>) -> Self {
        Arg::Bytes(value)
    }
}

impl From<Option<Vec<u8>>> for Arg {
    fn from(value: Option<Vec<u8>>) -> Self {
        Arg::MaybeBytes(value)
    }
}

impl From<Timestamp> for Arg {
    /// Written as its text, which sorts as time does.
    fn from(value: Timestamp) -> Self {
        Arg::Text(value.text())
    }
}

impl From<Option<Timestamp>> for Arg {
    fn from(value: Option<Timestamp>) -> Self {
        Arg::MaybeText(value.map(|at| at.text()))
    }
}

/// Ids are written as their text.
macro_rules! id_args {
    ($($id:ty),*) => {$(
        impl From<$id> for Arg {
            fn from(value: $id) -> Self {
                Arg::Text(value.into())
            }
        }

        impl From<&$id> for Arg {
            fn from(value: &$id) -> Self {
                Arg::Text(value.as_str().to_owned())
            }
        }

        impl From<Option<$id>> for Arg {
            fn from(value: Option<$id>) -> Self {
                Arg::MaybeText(value.map(Into::into))
            }
        }
    )*};
}

id_args!(RoomId, PlayerId, SessionId, GameId);

impl From<&str> for Arg {
    fn from(value: &str) -> Self {
        Arg::Text(value.to_owned())
    }
}

impl From<String> for Arg {
    fn from(value: String) -> Self {
        Arg::Text(value)
    }
}

impl From<Option<String>> for Arg {
    fn from(value: Option<String>) -> Self {
        Arg::MaybeText(value)
    }
}

impl From<i64> for Arg {
    fn from(value: i64) -> Self {
        Arg::Int(value)
    }
}

impl From<Option<i64>> for Arg {
    fn from(value: Option<i64>) -> Self {
        Arg::MaybeInt(value)
    }
}

impl From<bool> for Arg {
    fn from(value: bool) -> Self {
        Arg::Flag(value)
    }
}

impl From<f64> for Arg {
    fn from(value: f64) -> Self {
        Arg::Real(value)
    }
}

impl From<Option<f64>> for Arg {
    fn from(value: Option<f64>) -> Self {
        Arg::MaybeReal(value)
    }
}

/// A connection to either database, for a write whose queue does not know which (see
/// [`super::queue::QueuedStep`]).
pub(super) enum AnyConnection<'c> {
    Sqlite(&'c mut sqlx::SqliteConnection),
    Postgres(&'c mut sqlx::PgConnection),
}

/// A statement over a set of rows: `WITH v (<columns>) AS (VALUES (…), (…)) <statement>`, the
/// statement reading each row's values as `v.<column>`. One statement serves a whole batch,
/// whatever its size; each row binds its values in the order `columns` names them (see
/// [`super::dialect::SetRow`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct SetSql {
    /// The row's column names, separated by `, `.
    pub(super) columns: &'static str,
    pub(super) statement: &'static str,
}

impl SetSql {
    pub(super) fn width(&self) -> usize {
        self.columns.bytes().filter(|&b| b == b',').count() + 1
    }

    /// The statement's text for `rows` rows, with placeholders `$1`, `$2`… when `numbered`,
    /// else `?` each (which SQLite binds in order without looking each one up by name, a cost
    /// that grows with the square of the placeholders).
    pub(super) fn text(&self, rows: usize, numbered: bool) -> String {
        let width = self.width();
        let mut sql = String::with_capacity(self.statement.len() + rows * width * 5 + 160);
        sql.push_str("WITH v (");
        sql.push_str(self.columns);
        sql.push_str(") AS (VALUES ");
        for row in 0..rows {
            sql.push_str(if row == 0 { "(" } else { ", (" });
            for column in 0..width {
                if column > 0 {
                    sql.push_str(", ");
                }
                match numbered {
                    true => {
                        sql.push('$');
                        sql.push_str(&(row * width + column + 1).to_string());
                    }
                    false => sql.push('?'),
                }
            }
            sql.push(')');
        }
        sql.push_str(") ");
        sql.push_str(self.statement);
        sql
    }
}

/// SQL with its arguments, `$1` onwards in order (SQLite reads `$n` as the n-th argument too).
pub(super) struct Statement {
    sql: SqlText,
    args: Vec<Arg>,
    /// The set statement this is, rows bound in order, when it is one.
    set: Option<SetSql>,
}

/// A statement's text: a constant, or built for a batch of a given size.
enum SqlText {
    Fixed(&'static str),
    Built(String),
}

impl Statement {
    pub(super) fn new(sql: &'static str) -> Self {
        Self {
            sql: SqlText::Fixed(sql),
            args: Vec::new(),
            set: None,
        }
    }

    /// A statement whose text was put together at run time from constant parts (a batch's
    /// `VALUES` rows, a listing's filters); its values are still only ever bound.
    pub(super) fn built(sql: String) -> Self {
        Self {
            sql: SqlText::Built(sql),
            args: Vec::new(),
            set: None,
        }
    }

    /// `sql` over `rows` rows, to be bound row by row (see [`super::dialect::SetRow`]).
    pub(super) fn of_set(sql: SetSql, rows: usize, numbered: bool) -> Self {
        Self {
            set: Some(sql),
            ..Self::built(sql.text(rows, numbered))
        }
    }

    /// The same values bound to `sql`, built at run time as [`Statement::built`] is.
    pub(super) fn with_sql(self, sql: String) -> Self {
        Self {
            sql: SqlText::Built(sql),
            ..self
        }
    }

    /// The set statement this is, when it is one.
    pub(super) fn set(&self) -> Option<SetSql> {
        self.set
    }

    pub(super) fn bind(mut self, arg: impl Into<Arg>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub(super) fn push(&mut self, arg: impl Into<Arg>) {
        self.args.push(arg.into());
    }

    pub(super) fn sql(&self) -> &str {
        match &self.sql {
            SqlText::Fixed(sql) => sql,
            SqlText::Built(sql) => sql,
        }
    }

    pub(super) fn args(&self) -> &[Arg] {
        &self.args
    }

    pub(super) fn into_args(self) -> Vec<Arg> {
        self.args
    }
}

/// Somewhere statements run: sqlx's connection to either database, or the raw SQLite handle
/// the writer's own thread steps a batch's room changes through (`super::sqlite::raw`), so
/// that the code of a batch is written once for both. Its rows are read by column name.
pub(super) trait Exec: Send {
    type Row: Send;

    /// Runs `statement` for its effect.
    fn execute(
        &mut self,
        statement: Statement,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    fn fetch_all(
        &mut self,
        statement: Statement,
    ) -> impl Future<Output = Result<Vec<Self::Row>, StoreError>> + Send;

    fn text(row: &Self::Row, column: &str) -> Result<String, StoreError>;
    fn int(row: &Self::Row, column: &str) -> Result<i64, StoreError>;
    fn real(row: &Self::Row, column: &str) -> Result<f64, StoreError>;
}

/// [`Exec`] for a sqlx connection to database `$db`, through its [`Sql`].
macro_rules! sqlx_exec {
    ($connection:ty, $db:ty) => {
        impl Exec for $connection {
            type Row = <$db as Database>::Row;

            fn execute(
                &mut self,
                statement: Statement,
            ) -> impl Future<Output = Result<(), StoreError>> + Send {
                <$db as Sql>::execute(self, statement)
            }

            fn fetch_all(
                &mut self,
                statement: Statement,
            ) -> impl Future<Output = Result<Vec<Self::Row>, StoreError>> + Send {
                <$db as Sql>::fetch_all(self, statement)
            }

            fn text(row: &Self::Row, column: &str) -> Result<String, StoreError> {
                <$db as Sql>::text(row, column)
            }

            fn int(row: &Self::Row, column: &str) -> Result<i64, StoreError> {
                <$db as Sql>::int(row, column)
            }

            fn real(row: &Self::Row, column: &str) -> Result<f64, StoreError> {
                <$db as Sql>::real(row, column)
            }
        }
    };
}

sqlx_exec!(sqlx::SqliteConnection, sqlx::Sqlite);
sqlx_exec!(sqlx::PgConnection, sqlx::Postgres);

impl<E: Exec> Exec for &mut E {
    type Row = E::Row;

    fn execute(
        &mut self,
        statement: Statement,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        (**self).execute(statement)
    }

    fn fetch_all(
        &mut self,
        statement: Statement,
    ) -> impl Future<Output = Result<Vec<Self::Row>, StoreError>> + Send {
        (**self).fetch_all(statement)
    }

    fn text(row: &Self::Row, column: &str) -> Result<String, StoreError> {
        E::text(row, column)
    }

    fn int(row: &Self::Row, column: &str) -> Result<i64, StoreError> {
        E::int(row, column)
    }

    fn real(row: &Self::Row, column: &str) -> Result<f64, StoreError> {
        E::real(row, column)
    }
}

/// Running statements and reading rows on database `Self`.
pub(super) trait Sql: Database {
    /// Runs `statement` for its effect.
    fn execute(
        conn: &mut Self::Connection,
        statement: Statement,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    fn fetch_all(
        conn: &mut Self::Connection,
        statement: Statement,
    ) -> impl Future<Output = Result<Vec<Self::Row>, StoreError>> + Send;

    fn fetch_optional(
        conn: &mut Self::Connection,
        statement: Statement,
    ) -> impl Future<Output = Result<Option<Self::Row>, StoreError>> + Send;

    fn text(row: &Self::Row, column: &str) -> Result<String, StoreError>;
    fn maybe_text(row: &Self::Row, column: &str) -> Result<Option<String>, StoreError>;
    fn int(row: &Self::Row, column: &str) -> Result<i64, StoreError>;
    fn maybe_int(row: &Self::Row, column: &str) -> Result<Option<i64>, StoreError>;
    fn flag(row: &Self::Row, column: &str) -> Result<bool, StoreError>;
    fn real(row: &Self::Row, column: &str) -> Result<f64, StoreError>;
    fn bytes(row: &Self::Row, column: &str) -> Result<Vec<u8>, StoreError>;

    fn time(row: &Self::Row, column: &str) -> Result<Timestamp, StoreError> {
        as_time(column, &Self::text(row, column)?)
    }

    fn maybe_time(row: &Self::Row, column: &str) -> Result<Option<Timestamp>, StoreError> {
        Self::maybe_text(row, column)?
            .map(|text| as_time(column, &text))
            .transpose()
    }
}

/// A time as stored; anything else in a time's column is a corrupt row.
fn as_time(column: &str, text: &str) -> Result<Timestamp, StoreError> {
    Timestamp::parse(text)
        .ok_or_else(|| StoreError::Corrupt(format!("`{column}` holds `{text}`, not a time")))
}

impl<D> Sql for D
where
    D: BindColumn,
    for<'c> &'c mut D::Connection: Executor<'c, Database = D>,
    D::Arguments: IntoArguments<D>,
    for<'q> String: Encode<'q, D> + Type<D>,
    for<'q> Option<String>: Encode<'q, D> + Type<D>,
    for<'q> i64: Encode<'q, D> + Type<D>,
    for<'q> Option<i64>: Encode<'q, D> + Type<D>,
    for<'q> Option<f64>: Encode<'q, D> + Type<D>,
    for<'q> bool: Encode<'q, D> + Type<D>,
    for<'q> f64: Encode<'q, D> + Type<D>,
    for<'q> Vec<u8>: Encode<'q, D> + Type<D>,
    for<'q> Option<Vec<u8>>: Encode<'q, D> + Type<D>,
    for<'r> f64: Decode<'r, D>,
    for<'r> Vec<u8>: Decode<'r, D>,
    for<'r> String: Decode<'r, D>,
    for<'r> i64: Decode<'r, D>,
    for<'r> bool: Decode<'r, D>,
    for<'a> &'a str: ColumnIndex<D::Row>,
{
    async fn execute(conn: &mut Self::Connection, statement: Statement) -> Result<(), StoreError> {
        query::<D>(statement).execute(conn).await?;
        Ok(())
    }

    async fn fetch_all(
        conn: &mut Self::Connection,
        statement: Statement,
    ) -> Result<Vec<Self::Row>, StoreError> {
        Ok(query::<D>(statement).fetch_all(conn).await?)
    }

    async fn fetch_optional(
        conn: &mut Self::Connection,
        statement: Statement,
    ) -> Result<Option<Self::Row>, StoreError> {
        Ok(query::<D>(statement).fetch_optional(conn).await?)
    }

    fn text(row: &Self::Row, column: &str) -> Result<String, StoreError> {
        Ok(row.try_get(column)?)
    }

    fn maybe_text(row: &Self::Row, column: &str) -> Result<Option<String>, StoreError> {
        Ok(row.try_get(column)?)
    }

    fn int(row: &Self::Row, column: &str) -> Result<i64, StoreError> {
        Ok(row.try_get(column)?)
    }

    fn maybe_int(row: &Self::Row, column: &str) -> Result<Option<i64>, StoreError> {
        Ok(row.try_get(column)?)
    }

    fn flag(row: &Self::Row, column: &str) -> Result<bool, StoreError> {
        Ok(row.try_get(column)?)
    }

    fn real(row: &Self::Row, column: &str) -> Result<f64, StoreError> {
        Ok(row.try_get(column)?)
    }

    fn bytes(row: &Self::Row, column: &str) -> Result<Vec<u8>, StoreError> {
        Ok(row.try_get(column)?)
    }
}

/// The sqlx query for `statement`, every argument bound.
fn query<'q, D>(statement: Statement) -> sqlx::query::Query<'q, D, D::Arguments>
where
    D: BindColumn,
    for<'a> String: Encode<'a, D> + Type<D>,
    for<'a> Option<String>: Encode<'a, D> + Type<D>,
    for<'a> i64: Encode<'a, D> + Type<D>,
    for<'a> Option<i64>: Encode<'a, D> + Type<D>,
    for<'a> bool: Encode<'a, D> + Type<D>,
    for<'a> f64: Encode<'a, D> + Type<D>,
    for<'a> Option<f64>: Encode<'a, D> + Type<D>,
    for<'a> Vec<u8>: Encode<'a, D> + Type<D>,
    for<'a> Option<Vec<u8>>: Encode<'a, D> + Type<D>,
{
    let sql = match statement.sql {
        SqlText::Fixed(sql) => sql.into_sql_str(),
        SqlText::Built(sql) => AssertSqlSafe(sql).into_sql_str(),
    };
    let mut query = sqlx::query(sql);
    for arg in statement.args {
        query = match arg {
            Arg::Text(value) => query.bind(value),
            Arg::MaybeText(value) => query.bind(value),
            Arg::Int(value) => query.bind(value),
            Arg::MaybeInt(value) => query.bind(value),
            Arg::Flag(value) => query.bind(value),
            Arg::Real(value) => query.bind(value),
            Arg::MaybeReal(value) => query.bind(value),
            Arg::Bytes(value) => query.bind(value),
            Arg::MaybeBytes(value) => query.bind(value),
            Arg::Column(column) => D::bind_column(query, column),
        };
    }
    query
}
