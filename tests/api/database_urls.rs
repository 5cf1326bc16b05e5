//! A database named wrong is refused at once, saying where it looked: a URL of another kind of
//! database is never taken as a file name, commands that work on a server's database never
//! create an empty one, and an unreachable PostgreSQL is named with its cause.

use std::path::Path;
use std::process::{Command, Output};

use crate::real_server::Server;

/// `turnhouse ARGS` run in `dir`: whether it succeeded, and all it printed.
fn turnhouse_in(dir: &Path, args: &[&str]) -> (bool, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new(env!("CARGO_BIN_EXE_turnhouse"))
        .args(args)
        .current_dir(dir)
        .env_remove("DATABASE_URL")
        .env("NO_COLOR", "1")
        .output()
        .expect("turnhouse runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&stdout),
        String::from_utf8_lossy(&stderr)
    );
    (status.success(), said)
}

/// Everything in `dir`, by name.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The server started in `dir` on `database`, which must fail: all it printed, which never
/// shows the URL's password (`secret`).
fn refused_start(dir: &Path, database: &str) -> String {
    let (ok, said) = turnhouse_in(dir, &["--bind", "127.0.0.1:0", "--database", database]);
    assert!(!ok, "{said}");
    assert!(!said.contains("secret"), "{said}");
    said
}

#[test]
fn a_url_of_another_database_is_refused_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let said = refused_start(dir.path(), "mysql://u:secret@127.0.0.1:1/nope");
    assert!(
        said.contains("`mysql:` databases are not supported"),
        "{said}"
    );
    assert!(listing(dir.path()).is_empty(), "{:?}", listing(dir.path()));
}

#[test]
fn commands_on_a_database_that_is_not_there_name_it_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let wrong = dir.path().join("wrong/path.db");
    let url = format!("sqlite://{}", wrong.display());
    for args in [
        vec!["--database", &url, "admin", "grant", "alice"],
        vec!["--database", &url, "ratings", "rebuild"],
        vec!["--database", &url, "backup", "copy.db"],
    ] {
        let (ok, said) = turnhouse_in(dir.path(), &args);
        assert!(!ok, "{args:?}: {said}");
        assert!(
            said.contains(&format!("there is no database at {}", wrong.display())),
            "{args:?}: {said}"
        );
        assert!(listing(dir.path()).is_empty(), "{args:?}");
    }
    // The default database, from a folder that has none, is named whole.
    let (ok, said) = turnhouse_in(dir.path(), &["admin", "grant", "alice"]);
    assert!(!ok, "{said}");
    let default = dir.path().canonicalize().unwrap().join("data/turnhouse.db");
    assert!(
        said.contains(&format!("there is no database at {}", default.display())),
        "{said}"
    );
    assert!(listing(dir.path()).is_empty());
}

#[test]
fn a_backup_onto_an_existing_file_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let url = format!("sqlite://{}", db.display());
    // A server makes the database, saying plainly where.
    let server = Server::start(&url);
    let made = server.log_lines_with(&["creating a new database", &db.display().to_string()]);
    assert_eq!(made.len(), 1, "the server says it made {}", db.display());
    server.kill();
    std::fs::write(dir.path().join("taken.db"), b"keep").unwrap();
    let (ok, said) = turnhouse_in(dir.path(), &["--database", &url, "backup", "taken.db"]);
    assert!(!ok);
    assert!(said.contains("taken.db already exists"), "{said}");
    assert!(!said.contains("bad database URL"), "{said}");
    assert_eq!(std::fs::read(dir.path().join("taken.db")).unwrap(), b"keep");
    // Started again on it, the server makes nothing new.
    let server = Server::start(&url);
    assert!(server
        .log_lines_with(&["creating a new database"])
        .is_empty());
    server.kill();
}

#[test]
fn an_unreachable_postgresql_is_named_with_its_cause() {
    let dir = tempfile::tempdir().unwrap();
    // Port 1 on loopback: nothing listens, so the connection is refused.
    let said = refused_start(dir.path(), "postgres://u:secret@127.0.0.1:1/nope");
    assert!(
        said.contains("cannot connect to PostgreSQL at 127.0.0.1:1"),
        "{said}"
    );
    assert!(said.to_lowercase().contains("refused"), "{said}");
    assert!(!said.contains("pool timed out"), "{said}");
}
