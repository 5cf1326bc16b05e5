//! `TestApp`: the real server on a free loopback port with a fresh database (a SQLite file, or
//! a PostgreSQL database: see `databases`), driven over HTTP through its [`Api`]; and the
//! small helpers every test shares (unique names, examples, forms, problems).

use std::sync::LazyLock;

use reqwest::{Response, StatusCode};
use serde_json::Value;
use tempfile::TempDir;
use turnhouse::config::Config;
use turnhouse::game::GameRegistry;
use turnhouse::startup::Application;

pub use crate::client::{example, unique, Api, TestPlayer};

static TRACING: LazyLock<()> = LazyLock::new(|| {
    if std::env::var_os("TEST_LOG").is_some() {
        turnhouse::telemetry::init("debug");
    }
});

/// Bots decide the same way in every run.
pub const BOT_SEED: u64 = 2026;

/// A server in the test's process on a fresh database; it derefs to its [`Api`].
pub struct TestApp {
    pub api: Api,
    /// The database: a SQLite file's path or a PostgreSQL URL.
    pub database: String,
    _dir: Option<TempDir>,
}

impl std::ops::Deref for TestApp {
    type Target = Api;

    fn deref(&self) -> &Api {
        &self.api
    }
}

impl TestApp {
    pub async fn spawn() -> Self {
        Self::spawn_with(turnhouse::games::builtin()).await
    }

    pub async fn spawn_with(games: GameRegistry) -> Self {
        Self::spawn_configured(games, |_| {}).await
    }

    /// A server whose settings `adjust` changes first (hook limits, sandbox workers…).
    pub async fn spawn_configured(games: GameRegistry, adjust: impl FnOnce(&mut Config)) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let database = crate::databases::fresh_database(dir.path(), "test.db").await;
        let mut app = Self::spawn_on(database, games, adjust).await;
        app._dir = Some(dir);
        app
    }

    /// A second server instance on this one's database, as in a scaled-out deployment.
    /// A server for browser tests: browsers share two cores with the other tests, so hooks
    /// get a second or two to run (what the limit does is tested in sandbox.rs).
    pub async fn spawn_for_browsers() -> Self {
        Self::spawn_for_browsers_configured(|_| {}).await
    }

    /// The same, with its settings changed by `adjust` too.
    pub async fn spawn_for_browsers_configured(adjust: impl FnOnce(&mut Config)) -> Self {
        Self::spawn_configured(turnhouse::games::builtin(), |config| {
            config.hook_limits.time_ms = 2_000;
            adjust(config);
        })
        .await
    }

    pub async fn spawn_beside(&self, games: GameRegistry) -> Self {
        Self::spawn_on(self.database.clone(), games, |_| {}).await
    }

    /// The same, with its settings changed by `adjust` first.
    pub async fn spawn_beside_configured(
        &self,
        games: GameRegistry,
        adjust: impl FnOnce(&mut Config),
    ) -> Self {
        Self::spawn_on(self.database.clone(), games, adjust).await
    }

    /// A server listening on `ip` (a test's own private link) instead of the loopback.
    pub async fn spawn_at(ip: &str) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let database = crate::databases::fresh_database(dir.path(), "test.db").await;
        let bind = format!("{ip}:0");
        let mut app = Self::spawn_on(database, turnhouse::games::builtin(), |config| {
            config.bind = bind;
        })
        .await;
        app.api = Api::new(app.address.replace("127.0.0.1", ip));
        app._dir = Some(dir);
        app
    }

    /// A server on `database` (a file path or a PostgreSQL URL), its settings changed by `adjust`.
    pub async fn spawn_on(
        database: String,
        games: GameRegistry,
        adjust: impl FnOnce(&mut Config),
    ) -> Self {
        LazyLock::force(&TRACING);
        let mut config = Config::for_database(&database);
        config.bot_seed = Some(BOT_SEED);
        // Sandbox processes are the server binary itself, not this test program.
        config.sandbox_program = Some(env!("CARGO_BIN_EXE_turnhouse").into());
        adjust(&mut config);
        let app = Application::build(&config, games)
            .await
            .expect("the app builds");
        let address = format!("http://127.0.0.1:{}", app.port());
        tokio::spawn(app.run_until_stopped());
        Self {
            api: Api::new(address),
            database,
            _dir: None,
        }
    }
}

/// A loopback port free now, for a listener a test starts itself (a proxy, a second origin).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A form part holding `bytes` as the file `name`.
pub fn file_part(name: &str, bytes: Vec<u8>) -> reqwest::multipart::Part {
    reqwest::multipart::Part::bytes(bytes).file_name(name.to_owned())
}

/// A .zip of `entries` (path, content), deflated, as a build tool would make it.
pub fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write;
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (path, body) in entries {
        writer.start_file(*path, options).unwrap();
        writer.write_all(body).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// Every file below `dir`, as (path relative to it, content), in a stable order.
pub fn folder_files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let relative = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                files.push((relative, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// Asserts an RFC 9457 problem with this status and code; returns its body.
pub async fn assert_problem(response: Response, status: StatusCode, code: &str) -> Value {
    assert_eq!(response.status(), status, "expected {status} {code}");
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(content_type, "application/problem+json");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["status"], status.as_u16());
    assert!(
        body["detail"].as_str().is_some_and(|d| !d.is_empty()),
        "{body}"
    );
    body
}

/// Lets this test process hold as many connections as the machine allows.
pub fn raise_open_files_limit() {
    turnhouse::startup::raise_open_files_limit().expect("the open-files limit can be raised");
}
