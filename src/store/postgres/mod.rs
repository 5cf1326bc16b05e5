//! PostgreSQL, for running several servers on one database.
//!
//! Each server writes through its own group-committing writer and reads through its own pool;
//! the database's row locks, the version compare-and-set and an advisory lock for quick play
//! keep the servers from stepping on each other (see [`writes`]). Every room commit sends a
//! `NOTIFY` (delivered only once it is durable), and each server keeps one connection
//! listening (see [`listener`]), so live streams on one server hear of moves made on another.

mod listener;
mod writes;

use std::str::FromStr;
use std::time::Duration;

use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::Postgres;

use super::reads::impl_reads;
use super::writer::Backend;
use super::StoreError;
use crate::domain::ids::new_id;

pub use listener::Change;

/// The channel every room commit is announced on.
const CHANNEL: &str = "turnhouse";
const READ_CONNECTIONS: u32 = 8;

pub(super) fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

pub(super) struct PgStore {
    read: PgPool,
    /// This server among those on the database: its commits' notifications carry it.
    instance: String,
}

impl_reads!(PgStore, Postgres, "false", "true");

pub(super) struct PgWriter {
    write: PgPool,
}

impl Backend for PgWriter {
    type Db = Postgres;
    /// READ COMMITTED, PostgreSQL's default: each statement sees what other servers committed
    /// before it began, which is what the compare-and-set and the quick-play check need.
    const BEGIN: &'static str = "BEGIN";

    async fn acquire(&self) -> Result<PoolConnection<Postgres>, sqlx::Error> {
        self.write.acquire().await
    }
}

impl PgStore {
    /// Connects to the database at `url` and brings its schema up to date (migrations run
    /// under PostgreSQL's advisory lock, so servers starting together apply them once). A
    /// statement waits up to `busy_timeout` for a lock another connection holds.
    pub(super) async fn open(
        url: &str,
        busy_timeout: Duration,
    ) -> Result<(Self, PgWriter), StoreError> {
        let instance = new_id();
        let options = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::BadUrl(e.to_string()))?
            .application_name("turnhouse")
            .options([
                ("lock_timeout", busy_timeout.as_millis().to_string()),
                ("turnhouse.instance", instance.clone()),
            ]);
        // One writing connection per server: its batches already carry every write waiting.
        let write = PgPoolOptions::new()
            .max_connections(1)
            .connect_with(options.clone())
            .await?;
        sqlx::migrate!("./migrations/postgres").run(&write).await?;
        let read = PgPoolOptions::new()
            .max_connections(READ_CONNECTIONS)
            .connect_with(options)
            .await?;
        Ok((Self { read, instance }, PgWriter { write }))
    }
}
