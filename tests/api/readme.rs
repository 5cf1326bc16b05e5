//! The README's walk-through and every docs page's shell blocks and SQL queries, run as
//! written against a live server; and the settings table against `turnhouse --help`.

use std::process::Command;

use crate::databases::on_postgres;
use crate::helpers::TestApp;

/// The README and the docs pages, in the order their shell blocks run: each page's examples
/// continue the README's walk-through.
const PAGES: [(&str, &str); 6] = [
    ("README.md", include_str!("../../README.md")),
    ("docs/api.md", include_str!("../../docs/api.md")),
    ("docs/hosting.md", include_str!("../../docs/hosting.md")),
    ("docs/webhooks.md", include_str!("../../docs/webhooks.md")),
    (
        "docs/operations.md",
        include_str!("../../docs/operations.md"),
    ),
    ("docs/internals.md", include_str!("../../docs/internals.md")),
];

/// The fenced blocks of `page`, in order, each with its language (empty for a bare fence). A
/// fence may be indented, as in a list; the block's lines are kept as they are.
pub fn fenced(page: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in page.lines() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut current, fence) {
            (None, Some(language)) => current = Some((language.trim().to_owned(), String::new())),
            (Some(_), Some(_)) => blocks.push(current.take().expect("a block is open")),
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    blocks
}

/// The fenced blocks of `language` in every page, in order.
pub fn blocks(language: &str) -> Vec<String> {
    PAGES
        .iter()
        .flat_map(|(_, page)| fenced(page))
        .filter(|(found, _)| found == language)
        .map(|(_, body)| body)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_walkthrough_plays_a_whole_game() {
    // Its webhooks go to a receiver on this machine, as docs/webhooks.md says.
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.webhooks.allow_private_destinations = true;
    })
    .await;
    let script = blocks("sh").join("\n");
    assert!(
        script.contains("API=http://127.0.0.1:8080"),
        "the walk-through sets its address first"
    );
    // The one change: the address of this test's server instead of the default one.
    let script = script.replace("API=http://127.0.0.1:8080", &format!("API={}", app.address));
    // Moderation runs the server's binary on its database, as an operator would: on the PATH,
    // with DATABASE_URL set.
    let binary = std::path::Path::new(env!("CARGO_BIN_EXE_turnhouse"));
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = run(Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .env("PATH", path)
        .env("DATABASE_URL", &app.database))
    .await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the walk-through failed:\n{stdout}\n{stderr}"
    );
    // A command that failed inside a pipeline whose status is not checked (`… | jq … || true`)
    // still says so on its error output: every block must run without a word there.
    assert!(
        stderr.trim().is_empty(),
        "the walk-through wrote errors:\n{stderr}"
    );
    for expected in [
        "\"status\": \"endGame\"",
        "\"username\": \"alice\"",
        "\"code\": \"game_refused\"",
        // A clock that ran out.
        r#"{"clock":{"moveSeconds":1},"armed":true}"#,
        r#"{"finished":true,"winner":"alice","endedBy":"timeout","triggerTimeoutAt":null}"#,
        r#"{"version":5,"kind":"timeout","player":null}"#,
        // Battleship: your fleet, none of theirs; a watcher sees no ship.
        r#"{"status":"inGame","mine":5,"theirs":0}"#,
        r#"{"shots":[1,1]}"#,
        r#"{"watcher_sees":[0,0]}"#,
        // The hosted Connect Four game: uploaded, refused out of turn, won by Alice.
        r#"{"id":"connect-four","name":"Connect Four","description":"Four in a row: drop discs down seven columns.","moveExample":{"column":3},"version":1,"owner":"alice","hasFrontend":true}"#,
        r#"<script src="board.js">"#,
        r#""reason":"not_your_turn""#,
        r#"{"finished":true,"winner":"alice","line":[[0,3],[1,3],[2,3],[3,3]]}"#,
        r#"{"status":422,"code":"invalid_game_code","line":4"#,
        // Against the hard bot: it answers each move, and wins.
        r#"{"version":5,"discs":2,"next":"bob","finished":false}"#,
        r#"["bob","hard bot","bob","hard bot"]"#,
        r#"{"finished":true,"winner":"hard bot"}"#,
        // The stream, resumed twice: the last two versions, then only the last.
        "id: 7:0\nevent: version\nid: 8:0\nevent: version\n",
        r#"{"version":8,"kind":"move","player":"alice","move":{"x":0,"y":2},"finished":true,"players":["alice","bob"]}"#,
        // Chat at the table: kept as plain text, and closed to anyone else.
        r#"{"player":"bob","text":"<b>rematch?</b>"}"#,
        r#"{"status":403,"code":"chat_not_allowed"}"#,
        // The same messages on the room's stream.
        "{\"player\":\"alice\",\"text\":\"good game\"}\n{\"player\":\"bob\",\"text\":\"<b>rematch?</b>\"}\n",
        // A rotated token: the old one refused, the new one working.
        "{\"status\":401,\"code\":\"invalid_token\"}\n20",
        r#"{"code":"missing_token","requestId":"trace-42"}"#,
        "allow: POST, GET, HEAD, OPTIONS",
        // Version 2 of Connect Four keeps its page, and how its files are served.
        r#"{"version":2,"hasFrontend":true,"moveExample":{"column":3},"frontendHeight":520}"#,
        "content-security-policy: sandbox allow-scripts; default-src 'none';",
        "cache-control: public, max-age=31536000, immutable",
        // A page on another origin may call the API.
        "access-control-allow-origin: *",
        "access-control-allow-methods: POST, OPTIONS",
        // The README's game, rated.
        r#"[{"player":"alice","before":1500,"after":1662},{"player":"bob","before":1500,"after":1338}]"#,
        // Alice's profile, and the two players' ratings in the README's game.
        r#"{"player":"alice","ratings":[{"game":"connect-four","rating":1662,"games":1,"rank":null},{"game":"tictactoe","rating":1662,"games":1,"rank":null}],"last":{"game":"connect-four","ratingChange":{"after":1662,"before":1500,"won":true},"replay":true}}"#,
        "[1338,1662]\n",
        // Moderation: refused to a player, a suspension, a closed room, all on the record.
        r#"{"status":403,"code":"not_admin"}"#,
        r#"{"suspended":true,"sessionsEnded":1}"#,
        r#"{"status":403,"code":"player_suspended","reason":"spam in room names"}"#,
        "\"spam in room names\"\n",
        r#"[{"action":"close_room","actorName":"alice","client":"127.0.0.1","reason":"opened by mistake"},{"action":"suspend","actorName":"alice","client":"127.0.0.1","reason":"spam in room names"},{"action":"grant","actorName":"turnhouse admin","client":null,"reason":""}]"#,
        // Webhooks: an owner's endpoint, its events signed and verified, its log and actions.
        r#"{"events":["room.created","room.started","player.joined"],"status":"active","secret":true}"#,
        r#"{"status":403,"code":"not_your_game"}"#,
        "{\"type\":\"player.joined\",\"room\":true,\"player\":\"alice\"}\n{\"type\":\"player.joined\",\"room\":true,\"player\":\"bob\"}\n{\"type\":\"room.created\",\"room\":true,\"player\":null}\n{\"type\":\"room.started\",\"room\":true,\"player\":null}\n",
        "signature verified",
        r#"{"type":"ping","state":"delivered","attemptCount":1,"status":200}"#,
        "the ping, delivered again",
        r#"{"status":"paused"}"#,
        r#"{"rotated":true,"oldSecretSigns":true}"#,
        "events: room.finished,game.published",
        "active\thttps://hooks.example.org/turnhouse\troom.finished,game.published",
        "removed\n",
        // The server's figures.
        "turnhouse_store_commits_total ",
        "turnhouse_rooms_cached ",
    ] {
        assert!(
            stdout.contains(expected),
            "the walk-through shows {expected}:\n{stdout}"
        );
    }

    // The SQL queries, on the database the walk-through filled: SQLite's through the sqlite3
    // shell, PostgreSQL's through psql.
    let queries = match on_postgres() {
        false => blocks("sql"),
        true => blocks("postgresql"),
    };
    assert!(queries.len() >= 3);
    for query in queries {
        let output = match on_postgres() {
            false => {
                run(Command::new("sqlite3")
                    .args(["-readonly", "-header"])
                    .arg(&app.database)
                    .arg(&query))
                .await
            }
            true => {
                run(Command::new("psql")
                    .args(["-X", "-v", "ON_ERROR_STOP=1", "-A", "-d"])
                    .arg(&app.database)
                    .args(["-c", &query]))
                .await
            }
        };
        let printed = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{query}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            printed.lines().count() >= 2,
            "{query} printed a header and at least one row:\n{printed}"
        );
    }
}

/// Runs a command to completion off the async workers (the server shares this runtime).
async fn run(command: &mut Command) -> std::process::Output {
    let mut command = std::mem::replace(command, Command::new("true"));
    tokio::task::spawn_blocking(move || command.output().expect("the command runs"))
        .await
        .unwrap()
}

/// The settings table in docs/operations.md says what `turnhouse --help` says: the same
/// flags, each with its environment variable and default.
#[test]
fn the_settings_table_matches_turnhouse_help() {
    let help = Command::new(env!("CARGO_BIN_EXE_turnhouse"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    // `--flag <VALUE>` lines, each followed by a description with `[env: NAME=]` and maybe
    // `[default: X]`.
    let mut from_help = std::collections::BTreeMap::new();
    let lines: Vec<&str> = help.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let line = line.trim();
        let Some(flag) = line
            .strip_prefix("--")
            .and_then(|rest| rest.split(' ').next())
        else {
            continue;
        };
        if !line.contains('<') {
            continue; // --help, --version
        }
        let description = lines[i + 1];
        let between = |open: &str| {
            description
                .split_once(open)
                .and_then(|(_, rest)| rest.split_once(']'))
                .map(|(value, _)| value.trim_end_matches('=').to_owned())
        };
        from_help.insert(
            format!("--{flag}"),
            (between("[env: ").unwrap(), between("[default: ")),
        );
    }
    let operations = PAGES
        .iter()
        .find(|(name, _)| *name == "docs/operations.md")
        .unwrap()
        .1;
    let mut from_docs = std::collections::BTreeMap::new();
    for row in operations.lines().filter(|l| l.starts_with("| `--")) {
        let cells: Vec<&str> = row.split(" | ").collect();
        let flag = cells[0]
            .trim_start_matches("| ")
            .trim_matches('`')
            .to_owned();
        let env = cells[1].trim_matches('`').to_owned();
        from_docs.insert(flag, (env, cells[2].to_owned()));
    }
    assert_eq!(
        from_help.keys().collect::<Vec<_>>(),
        from_docs.keys().collect::<Vec<_>>(),
        "the same flags"
    );
    for (flag, (env, default)) in &from_help {
        let (doc_env, doc_default) = &from_docs[flag];
        assert_eq!(env, doc_env, "{flag}'s environment variable");
        if let Some(default) = default {
            assert!(
                doc_default.starts_with(&format!("`{default}`")),
                "{flag}: --help says the default is {default}, the table says {doc_default}"
            );
        }
    }
}

/// `--help` names both databases, and `turnhouse dev --help` the throwaway file dev uses, not
/// the server's default.
#[test]
fn the_help_says_which_database_each_command_uses() {
    let help = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_turnhouse"))
            .args(args)
            .output()
            .unwrap();
        let text = String::from_utf8(output.stdout).unwrap();
        let at = text.find("--database <").expect("--database is listed");
        text[at..].lines().take(2).collect::<Vec<_>>().join(" ")
    };
    let server = help(&["--help"]);
    assert!(server.contains("postgres://"), "{server}");
    assert!(
        server.contains("[default: sqlite://data/turnhouse.db]"),
        "{server}"
    );
    let dev = help(&["dev", "--help"]);
    assert!(dev.contains("throwaway"), "{dev}");
    assert!(!dev.contains("data/turnhouse.db"), "{dev}");
}
