//! What the docs tell an author to run in their game's folder, run as written: the boardgame.io
//! entry file and esbuild line of `docs/boardgameio.md`, its curl session, and the TypeScript
//! game of `docs/hosting.md` type-checked against `/hooks.d.ts` and built with one esbuild
//! line. Each runs in a fresh folder holding the game's files, with the test project's
//! `node_modules` (boardgame.io, esbuild, typescript and turnhouse-boardgameio, installed as the
//! docs say) beside them. Also: the adapter's own declarations type-check a typed game.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::boardgameio::project;
use crate::helpers::{unique, TestApp, TestPlayer};
use crate::readme::fenced;

const BOARDGAMEIO_DOC: &str = include_str!("../../docs/boardgameio.md");
const HOSTING_DOC: &str = include_str!("../../docs/hosting.md");

/// Each `shell` block of `page` with the bare block right after it: what it prints.
fn shell_examples(page: &str) -> Vec<(String, String)> {
    let blocks = fenced(page);
    blocks
        .iter()
        .enumerate()
        .filter(|(_, (language, _))| language == "shell")
        .map(|(i, (_, script))| {
            let output = match blocks.get(i + 1) {
                Some((language, output)) if language.is_empty() => output.clone(),
                _ => String::new(),
            };
            (script.clone(), output)
        })
        .collect()
}

/// The one block of `language` in `page` that contains `marker`.
fn block_with(page: &str, language: &str, marker: &str) -> String {
    let found: Vec<String> = fenced(page)
        .into_iter()
        .filter(|(l, body)| l == language && body.contains(marker))
        .map(|(_, body)| body)
        .collect();
    assert_eq!(found.len(), 1, "one {language} block holds {marker}");
    found.into_iter().next().unwrap()
}

/// A fresh folder with `files`, and the test project's node_modules beside them.
fn author_folder(files: &[(&str, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in files {
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    std::os::unix::fs::symlink(
        project().join("node_modules"),
        dir.path().join("node_modules"),
    )
    .unwrap();
    dir
}

/// Runs `script` with bash in `dir`, as Alice and Bob against `app`; returns what it printed.
async fn run_in(dir: &Path, script: &str, app: &TestApp, players: &[TestPlayer]) -> String {
    let mut command = Command::new("bash");
    command
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(dir)
        .env("API", &app.address)
        .env("ALICE", &players[0].token)
        .env("BOB", &players[1].token)
        .env("npm_config_yes", "false");
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{script} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[tokio::test]
async fn the_boardgameio_page_builds_uploads_and_plays_a_game_as_written() {
    let app = TestApp::spawn().await;
    let players = [
        app.register(&unique("alice")).await,
        app.register(&unique("bob")).await,
    ];
    let game = std::fs::read_to_string(project().join("games/tictactoe.js")).unwrap();
    let entry = block_with(BOARDGAMEIO_DOC, "js", "export default hooks(");
    let dir = author_folder(&[("game.js", game), ("turnhouse-entry.js", entry)]);
    let examples = shell_examples(BOARDGAMEIO_DOC);
    assert_eq!(examples.len(), 2, "the build, then the curl session");
    for (script, expected) in examples {
        let printed = run_in(dir.path(), &script, &app, &players).await;
        assert_eq!(printed, expected, "{script}");
    }
    let bundle = std::fs::read(dir.path().join("tictactoe.js")).unwrap();
    assert!(
        bundle.len() < 200_000,
        "the bundle is {} bytes",
        bundle.len()
    );

    // The page's query reads the match just played from the database.
    let printed = match crate::databases::on_postgres() {
        false => {
            let query = block_with(BOARDGAMEIO_DOC, "sql", "FROM rooms");
            let mut command = Command::new("sqlite3");
            command
                .args(["-readonly", "-header"])
                .arg(&app.database)
                .arg(query);
            command.output().unwrap()
        }
        true => {
            let query = block_with(BOARDGAMEIO_DOC, "postgresql", "FROM rooms");
            let mut command = Command::new("psql");
            command
                .args(["-X", "-v", "ON_ERROR_STOP=1", "-A", "-d"])
                .arg(&app.database);
            command.args(["-c", &query]).output().unwrap()
        }
    };
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    let printed = String::from_utf8_lossy(&printed.stdout);
    let row = printed.lines().nth(1).unwrap_or_default();
    assert!(
        row.contains("\"cells\"") && row.contains("\"0\""),
        "{printed}"
    );
}

#[tokio::test]
async fn a_typescript_game_is_typed_by_hooks_d_ts_and_built_with_one_esbuild_line() {
    let app = TestApp::spawn().await;
    let players = [
        app.register(&unique("alice")).await,
        app.register(&unique("bob")).await,
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let nim = std::fs::read_to_string(root.join("examples/nim.ts")).unwrap();
    assert_eq!(
        block_with(HOSTING_DOC, "ts", "const nim: Game<Nim, Take>"),
        nim,
        "docs/hosting.md shows examples/nim.ts as it is"
    );
    // The types served, the copy in the repo and the adapter's copy are one file.
    let served = app.get("/hooks.d.ts").await.text().await.unwrap();
    let repo = std::fs::read_to_string(root.join("src/web/hooks.d.ts")).unwrap();
    let adapter = std::fs::read_to_string(root.join("clients/boardgameio/hooks.d.ts")).unwrap();
    assert_eq!(served, repo);
    assert_eq!(
        adapter, repo,
        "clients/boardgameio/hooks.d.ts is a copy of src/web/hooks.d.ts"
    );

    let dir = author_folder(&[("nim.ts", nim.clone())]);
    let examples = shell_examples(HOSTING_DOC);
    assert_eq!(examples.len(), 1);
    let (script, expected) = &examples[0];
    assert_eq!(&run_in(dir.path(), script, &app, &players).await, expected);

    // tsc refuses a game that breaks the types: a move read as what it is not.
    let broken = nim.replace("move.take < 1", "move.take.length < 1");
    std::fs::write(dir.path().join("nim.ts"), broken).unwrap();
    let check = "npx tsc --noEmit --strict --target ES2022 --module ES2022 --moduleResolution bundler nim.ts";
    let failed = Command::new("bash")
        .args(["-c", check])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!failed.status.success(), "tsc sees the mistake");
    assert!(String::from_utf8_lossy(&failed.stdout).contains("length"));

    // The game it built plays, refuses with its own reasons, and has bots.
    let (alice, bob) = (&players[0], &players[1]);
    let room = app.create_room(alice, json!({"game": "nim"})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    app.join(bob, &room).await;
    let (status, problem) = app
        .post_value(
            &format!("/rooms/{room}/moves"),
            Some(&bob.token),
            json!({"take": 1}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(problem["reason"], "not_your_turn");
    let (_, problem) = app
        .post_value(
            &format!("/rooms/{room}/moves"),
            Some(&alice.token),
            json!({"take": 4}),
        )
        .await;
    assert_eq!(problem["reason"], "bad_take");
    let taken = app.play_ok(alice, &room, json!({"take": 3})).await;
    assert_eq!(taken["state"]["pile"], 12);
    assert_eq!(taken["toMove"], json!([bob.id]));
}

#[test]
fn the_adapters_declarations_type_check_a_typed_game_and_its_client() {
    // tests/boardgameio/typed.ts uses every export of turnhouse-boardgameio's .d.ts files.
    let output = Command::new("npx")
        .args(["tsc", "-p", "tsconfig.json"])
        .current_dir(project())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "tsc: {}",
        String::from_utf8_lossy(&output.stdout)
    );
}
