//! A batch's writes merged into fewer statements where the database runs each statement as a
//! round trip of its own (PostgreSQL): each statement the writer waits for costs the database
//! process a read, a reply and its executor's set-up, whatever it writes (profiled at 64 games
//! in flight, the process serving the writer spent a fifth of its time in system calls,
//! mostly sending and receiving: docs/benchmarks.md, "Where the time goes").
//!
//! [`Merging`] stands between a batch's steps and the connection. A set statement that writes
//! (`INSERT`, `UPDATE`, `DELETE`) and whose result nobody reads is held back; the held ones go
//! to the database together, as data-modifying `WITH` queries of one statement, when the batch
//! next needs an answer (a read, a statement of another kind) or ends its round. A set statement
//! that is a `SELECT` run for its effect (a `NOTIFY`, a lock) is the main query of that one
//! statement.
//!
//! What makes that the same as running them one after the other: every part of one statement
//! sees the database as it was when the statement began, not what the other parts write. So a
//! write is held back only while no write already held changes a table it names, and it names
//! no table they change (reading or writing); otherwise those go first. Each part fails the
//! whole statement as it would have failed its own, and the batch's transaction with it.
//!
//! Merged, a part's rows travel as an array for each column (bound in PostgreSQL's binary
//! form), read back by `unnest`, rather than as a `VALUES` list of placeholders, so the merged
//! statement's text depends only on which parts it has, not on their sizes: the writer's
//! connection prepares and plans each such text once. (Rows as text, a JSON document for
//! `json_to_recordset` or an array's text for each column, were tried first: PostgreSQL then
//! spent on reading that text, escapes and all, much of what the round trips saved.)
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::future::Future;
use std::marker::PhantomData;

use super::dialect::{Dialect, SetSql};
use super::sql::{Arg, Column, Exec, Statement};
use super::types::StoreError;

/// The connection `conn`, merging writes when the dialect asks for it
/// ([`Dialect::MERGES_WRITES`]). [`Merging::flush`] sends what is held; dropping it unflushed
/// would lose those writes, so a batch's round ends with it.
pub(super) struct Merging<'a, D, E> {
    conn: &'a mut E,
    held: Vec<Part>,
    dialect: PhantomData<D>,
}

/// A write held back, with the tables it changes and names.
struct Part {
    statement: Statement,
    sql: SetSql,
    tables: Tables,
}

impl<'a, D: Dialect, E: Exec> Merging<'a, D, E> {
    pub(super) fn new(conn: &'a mut E) -> Self {
        Self {
            conn,
            held: Vec::new(),
            dialect: PhantomData,
        }
    }

    /// Sends the writes held, with `main`, a `SELECT` run for its effect, as their main query.
    async fn flush_with(&mut self, main: Option<Statement>) -> Result<(), StoreError> {
        let mut held = std::mem::take(&mut self.held);
        match (held.len(), main) {
            (0, None) => Ok(()),
            (0, Some(main)) => self.conn.execute(main).await,
            (1, None) => self.conn.execute(held.remove(0).statement).await,
            (_, main) => self.conn.execute(merged(held, main)).await,
        }
    }

    /// Sends the writes held.
    pub(super) async fn flush(&mut self) -> Result<(), StoreError> {
        self.flush_with(None).await
    }

    /// Holds `statement` back, runs it as the main query of what is held, or runs it after
    /// them: whichever keeps the order of their effects.
    async fn run(&mut self, statement: Statement) -> Result<(), StoreError> {
        let Some(sql) = statement.set().filter(|_| D::MERGES_WRITES) else {
            self.flush().await?;
            return self.conn.execute(statement).await;
        };
        if !columns_agree(sql, &statement) {
            self.flush().await?;
            return self.conn.execute(statement).await;
        }
        let tables = Tables::of(sql.statement);
        let meets_held = self.held.iter().any(|part| part.tables.meets(&tables));
        match (tables.changed.is_some(), meets_held) {
            (true, true) => {
                self.flush().await?;
                self.hold(statement, sql, tables);
                Ok(())
            }
            (true, false) => {
                self.hold(statement, sql, tables);
                Ok(())
            }
            (false, true) => {
                self.flush().await?;
                self.conn.execute(statement).await
            }
            (false, false) => self.flush_with(Some(statement)).await,
        }
    }

    fn hold(&mut self, statement: Statement, sql: SetSql, tables: Tables) {
        self.held.push(Part {
            statement,
            sql,
            tables,
        });
    }
}

impl<D: Dialect, E: Exec> Exec for Merging<'_, D, E> {
    type Row = E::Row;

    fn execute(
        &mut self,
        statement: Statement,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        self.run(statement)
    }

    async fn fetch_all(&mut self, statement: Statement) -> Result<Vec<Self::Row>, StoreError> {
        self.flush().await?;
        self.conn.fetch_all(statement).await
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

/// The tables a set statement's text changes (its `INSERT INTO`, `UPDATE` or `DELETE FROM`
/// target; none for a `SELECT`) and names anywhere (after `FROM`, `JOIN`, `INTO`, `UPDATE`),
/// its rows `v` aside.
#[derive(Debug, PartialEq)]
struct Tables {
    changed: Option<&'static str>,
    named: Vec<&'static str>,
}

impl Tables {
    fn of(statement: &'static str) -> Self {
        let mut words = statement
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .filter(|word| !word.is_empty());
        let first = words.clone().next().unwrap_or_default();
        let mut named = Vec::new();
        let mut after_keyword = false;
        for word in words.by_ref() {
            let keyword = ["from", "join", "into", "update"]
                .iter()
                .any(|k| word.eq_ignore_ascii_case(k));
            let not_a_table = ["v", "select", "set", "lateral", "only"]
                .iter()
                .any(|k| word.eq_ignore_ascii_case(k));
            if after_keyword && !keyword && !not_a_table {
                named.push(word);
            }
            after_keyword = keyword;
        }
        let changed = ["insert", "update", "delete"]
            .iter()
            .any(|k| first.eq_ignore_ascii_case(k))
            .then(|| named.first().copied())
            .flatten();
        Self { changed, named }
    }

    /// Whether the two, run as parts of one statement, could see the database differently from
    /// one after the other: one changes a table the other names.
    fn meets(&self, other: &Tables) -> bool {
        let changes = |a: &Tables, b: &Tables| a.changed.is_some_and(|t| b.named.contains(&t));
        changes(self, other) || changes(other, self)
    }
}

/// The held writes as the data-modifying `WITH` queries of one statement, with `main` (a
/// `SELECT`) as its main query, or an empty one.
fn merged(held: Vec<Part>, main: Option<Statement>) -> Statement {
    let mut text = String::from("WITH ");
    let mut merged = Statement::built(String::new());
    for (at, part) in held.into_iter().enumerate() {
        if at > 0 {
            text.push_str(", ");
        }
        text.push_str(&format!("w{at} AS (WITH "));
        push_rows(&mut text, &mut merged, part.sql, part.statement);
        text.push_str(part.sql.statement);
        text.push(')');
    }
    match main {
        Some(main) => {
            let sql = main.set().expect("the main query is a set statement");
            text.push_str(", ");
            // Its rows `v` are a query of the top level's, beside the writes.
            push_rows(&mut text, &mut merged, sql, main);
            text.push_str(sql.statement);
        }
        None => text.push_str(" SELECT 1"),
    }
    merged.with_sql(text)
}

/// `v (<columns>) AS (…) `: `statement`'s rows, as `unnest` reads them from an array for each
/// column, typed as its values were bound; the arrays bound to `merged`.
fn push_rows(text: &mut String, merged: &mut Statement, sql: SetSql, statement: Statement) {
    text.push_str("v (");
    text.push_str(sql.columns);
    text.push_str(") AS (SELECT * FROM unnest(");
    let width = sql.width();
    let mut columns: Vec<Vec<Arg>> = (0..width).map(|_| Vec::new()).collect();
    for (at, arg) in statement.into_args().into_iter().enumerate() {
        columns[at % width].push(arg);
    }
    for (at, values) in columns.into_iter().enumerate() {
        if at > 0 {
            text.push_str(", ");
        }
        let (column, kind) = column(values);
        merged.push(Arg::Column(column));
        text.push_str(&format!("CAST(${} AS {kind}[])", merged.args().len()));
    }
    text.push_str(") AS x (");
    text.push_str(sql.columns);
    text.push_str(")) ");
}

/// What a value is bound as, for the array it can be one of.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Text,
    Int,
    Flag,
    Real,
}

impl Kind {
    /// None for bytes, which no array here holds.
    fn of(arg: &Arg) -> Option<Self> {
        match arg {
            Arg::Text(_) | Arg::MaybeText(_) => Some(Kind::Text),
            Arg::Int(_) | Arg::MaybeInt(_) => Some(Kind::Int),
            Arg::Flag(_) => Some(Kind::Flag),
            Arg::Real(_) | Arg::MaybeReal(_) => Some(Kind::Real),
            Arg::Bytes(_) | Arg::MaybeBytes(_) | Arg::Column(_) => None,
        }
    }

    /// PostgreSQL's type for a value sqlx binds as this.
    fn sql_type(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Int => "bigint",
            Kind::Flag => "boolean",
            Kind::Real => "double precision",
        }
    }
}

/// Whether every column of `statement`'s rows can be one array: values of one kind, not bytes.
fn columns_agree(sql: SetSql, statement: &Statement) -> bool {
    let width = sql.width();
    let args = statement.args();
    args.iter().enumerate().all(|(at, arg)| {
        let first = Kind::of(&args[at % width]);
        first.is_some() && Kind::of(arg) == first
    })
}

/// A column's `values` (checked by [`columns_agree`]) as an array, and PostgreSQL's type of it.
fn column(values: Vec<Arg>) -> (Column, &'static str) {
    let kind = Kind::of(&values[0]).expect("checked before holding");
    let values = values.into_iter();
    let column = match kind {
        Kind::Text => Column::Texts(
            values
                .map(|value| match value {
                    Arg::Text(text) => Some(text),
                    Arg::MaybeText(text) => text,
                    _ => unreachable!("checked before holding"),
                })
                .collect(),
        ),
        Kind::Int => Column::Ints(
            values
                .map(|value| match value {
                    Arg::Int(n) => Some(n),
                    Arg::MaybeInt(n) => n,
                    _ => unreachable!("checked before holding"),
                })
                .collect(),
        ),
        Kind::Flag => Column::Flags(
            values
                .map(|value| match value {
                    Arg::Flag(flag) => flag,
                    _ => unreachable!("checked before holding"),
                })
                .collect(),
        ),
        Kind::Real => Column::Reals(
            values
                .map(|value| match value {
                    Arg::Real(x) => Some(x),
                    Arg::MaybeReal(x) => x,
                    _ => unreachable!("checked before holding"),
                })
                .collect(),
        ),
    };
    (column, kind.sql_type())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_names_the_table_it_changes_and_those_it_reads() {
        let tables = Tables::of(
            "INSERT INTO turn_pushes (room_id) SELECT v.room_id FROM v \
             WHERE EXISTS (SELECT 1 FROM push_subscriptions s WHERE s.player_id = v.player_id) \
             AND NOT EXISTS (SELECT 1 FROM muted_rooms m WHERE m.room_id = v.room_id)",
        );
        assert_eq!(tables.changed, Some("turn_pushes"));
        assert_eq!(
            tables.named,
            ["turn_pushes", "push_subscriptions", "muted_rooms"]
        );
        let update = Tables::of("UPDATE room_players SET finished = v.finished FROM v WHERE true");
        assert_eq!(update.changed, Some("room_players"));
        let select = Tables::of("SELECT pg_notify('turnhouse', v.room_id) FROM v");
        assert_eq!(select.changed, None);
        assert!(select.named.is_empty());
    }

    #[test]
    fn writes_meet_when_one_changes_what_the_other_names() {
        let members = Tables::of("INSERT INTO room_players SELECT v.a FROM v JOIN rooms r ON true");
        let finished = Tables::of("UPDATE room_players SET finished = v.f FROM v");
        let rooms = Tables::of("UPDATE rooms SET version = v.version FROM v");
        let events = Tables::of("INSERT INTO room_events SELECT v.a FROM v");
        assert!(members.meets(&finished));
        assert!(members.meets(&rooms));
        assert!(rooms.meets(&members));
        assert!(!events.meets(&finished));
        assert!(!events.meets(&members));
    }

    #[test]
    fn merged_parts_read_their_rows_from_arrays_and_a_select_is_the_main_query() {
        let events = SetSql {
            columns: "room_id, version",
            statement:
                "INSERT INTO room_events (room_id, version) SELECT v.room_id, v.version FROM v",
        };
        let notify = SetSql {
            columns: "room_id, lobby, won",
            statement: "SELECT pg_notify('turnhouse', v.room_id) FROM v",
        };
        let mut first = Statement::of_set(events, 2, true);
        for (room, version) in [("a\"b\\", 3), ("c", 4)] {
            first.push(room);
            first.push(version as i64);
        }
        let mut main = Statement::of_set(notify, 1, true);
        main.push("NULL");
        main.push(None::<String>);
        main.push(true);
        let part = Part {
            tables: Tables::of(events.statement),
            statement: first,
            sql: events,
        };
        let statement = merged(vec![part], Some(main));
        assert_eq!(
            statement.sql(),
            "WITH w0 AS (WITH v (room_id, version) AS (SELECT * FROM \
             unnest(CAST($1 AS text[]), CAST($2 AS bigint[])) AS x (room_id, version)) \
             INSERT INTO room_events (room_id, version) SELECT v.room_id, v.version FROM v), \
             v (room_id, lobby, won) AS (SELECT * FROM unnest(CAST($3 AS text[]), \
             CAST($4 AS text[]), CAST($5 AS boolean[])) AS x (room_id, lobby, won)) \
             SELECT pg_notify('turnhouse', v.room_id) FROM v"
        );
        let columns: Vec<&Column> = statement
            .args()
            .iter()
            .map(|arg| match arg {
                Arg::Column(column) => column,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            columns,
            [
                &Column::Texts(vec![Some("a\"b\\".into()), Some("c".into())]),
                &Column::Ints(vec![Some(3), Some(4)]),
                &Column::Texts(vec![Some("NULL".into())]),
                &Column::Texts(vec![None]),
                &Column::Flags(vec![true]),
            ]
        );
    }
}
