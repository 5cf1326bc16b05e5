//! `turnhouse dev`, the binary, as an author runs it, with its dev page in Chromium: seats side
//! by side, each with its own view; the truth and its history; live reload; the hooks' logs.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::client::example;
use crate::webdriver::{Browser, Driver};

/// `turnhouse dev` on a free loopback port, its terminal kept.
pub struct DevServer {
    child: Child,
    pub page: String,
    terminal: Arc<Mutex<Vec<String>>>,
}

impl DevServer {
    pub fn start(args: &[&Path]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_turnhouse"))
            .arg("dev")
            .args(args)
            .args(["--bind", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("turnhouse dev starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let terminal = Arc::new(Mutex::new(Vec::new()));
        let page = loop {
            let line = lines
                .next()
                .expect("turnhouse dev prints its page's address")
                .unwrap();
            terminal.lock().unwrap().push(line.clone());
            if let Some(rest) = line.split("the dev page: ").nth(1) {
                break rest.trim().to_owned();
            }
        };
        let kept = terminal.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                kept.lock().unwrap().push(line);
            }
        });
        Self {
            child,
            page,
            terminal,
        }
    }

    /// Waits for a line of the terminal holding `text`.
    pub async fn wait_for_terminal(&self, text: &str) -> String {
        let started = Instant::now();
        loop {
            if let Some(line) = self
                .terminal
                .lock()
                .unwrap()
                .iter()
                .find(|line| line.contains(text))
            {
                return line.clone();
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the terminal never said {text:?}: {:?}",
                self.terminal.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for DevServer {
    fn drop(&mut self) {
        // SIGTERM, as Ctrl-C would: the server stops and removes its throwaway database.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

/// `examples/<name>` copied into `dir`, to be edited there.
pub fn copy_example(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name.rsplit('/').next().unwrap());
    std::fs::write(&path, example(name)).unwrap();
    path
}

/// Writes `text` as the file's new content, as an editor saves.
fn save(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

/// Runs `script` inside the game's own page of seat `seat`.
async fn in_game_frame(browser: &Browser, seat: usize, script: &str) -> Value {
    browser
        .enter_frame(&format!(".seat-frame[data-seat=\"{seat}\"]"))
        .await;
    browser.enter_frame("#game-frame").await;
    let value = browser
        .wait_for(&format!("seat {seat}'s game page"), script, json!([]))
        .await;
    browser.leave_frame().await;
    value
}

/// Seat `seat` drops a disc in `column`, by clicking in the game's own page.
async fn drop_disc(browser: &Browser, seat: usize, column: usize) {
    browser
        .enter_frame(&format!(".seat-frame[data-seat=\"{seat}\"]"))
        .await;
    browser.enter_frame("#game-frame").await;
    browser
        .click(&format!(".drop[data-column=\"{column}\"]"))
        .await;
    browser.leave_frame().await;
}

/// The version the truth panel shows, once it shows `version`.
async fn truth_at(browser: &Browser, version: i64) -> Value {
    let text = browser
        .wait_for(
            &format!("the truth at version {version}"),
            "const t = document.getElementById('truth'); \
             return t.dataset.version === String(arguments[0]) ? t.textContent : null;",
            json!([version]),
        )
        .await;
    serde_json::from_str(text.as_str().unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_author_plays_both_seats_reloads_scrubs_and_reads_the_logs_on_one_page() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = copy_example(dir.path(), "connect-four.js");
    let page = copy_example(dir.path(), "frontends/connect-four.html");
    let dev = DevServer::start(&[&hooks, Path::new("--frontend"), &page]);
    assert!(dev.page.ends_with("/dev/connect-four"), "{}", dev.page);
    let driver = Driver::start().await;
    let browser = driver.browser("dev-connect-four").await;
    browser.goto(&dev.page).await;

    // Two seats, each the game's own page signed in as its own local player.
    browser.find(".seat-frame[data-seat=\"2\"]").await;
    assert_eq!(crate::browser::count(&browser, ".seat-frame").await, 2);
    let status = "const s = document.getElementById('status').textContent; \
                  return s.includes('turn') ? s : null;";
    assert_eq!(
        in_game_frame(&browser, 1, status).await,
        "Your turn: pick a column."
    );
    assert_eq!(in_game_frame(&browser, 2, status).await, "dev-1's turn.");

    // Two seats play by clicking; each seat and the truth follow. Versions 1 to 3 opened
    // the room and seated dev-1 and dev-2.
    truth_at(&browser, 3).await;
    drop_disc(&browser, 1, 3).await;
    let truth = truth_at(&browser, 4).await;
    assert_eq!(truth["state"]["board"][0][3], "red");
    assert_eq!(truth["made"]["move"], json!({"column": 3}));
    let red =
        "return document.querySelector('[data-cell=\"0,3\"]').classList.contains('red') || null;";
    in_game_frame(&browser, 2, red).await;
    drop_disc(&browser, 2, 4).await;
    assert_eq!(
        truth_at(&browser, 5).await["state"]["board"][0][4],
        "yellow"
    );

    // The scrubber shows version 3 in both seats (an empty board) and in the truth.
    browser
        .eval(
            "const s = document.getElementById('scrubber'); s.value = '3'; \
             s.dispatchEvent(new Event('input')); return true;",
            json!([]),
        )
        .await;
    assert_eq!(truth_at(&browser, 3).await["state"]["moves"], 0);
    // No seat is offered a turn in a replay: both pages show it as a watcher would.
    let empty = "return (document.querySelectorAll('.slot.red, .slot.yellow').length === 0 \
                 && document.getElementById('status').textContent === \"dev-1's turn.\" \
                 && [...document.querySelectorAll('.drop')].every((d) => d.disabled)) || null;";
    for seat in [1, 2] {
        browser
            .enter_frame(&format!(".seat-frame[data-seat=\"{seat}\"]"))
            .await;
        browser
            .wait_for_text("#replay-step", "Version 3 of 5")
            .await;
        browser.leave_frame().await;
        in_game_frame(&browser, seat, empty).await;
    }
    browser.screenshot("scrubbed-to-3").await;
    browser.click("#scrub-live").await;
    truth_at(&browser, 5).await;
    in_game_frame(&browser, 1, red).await;

    // The hooks' logger lines are in the log panel, with hook, version and level.
    let logged = "const l = [...document.querySelectorAll('#dev-logs li')] \
                  .find((li) => li.textContent.includes(arguments[0])); \
                  return l ? [l.dataset.hook, l.dataset.version, l.dataset.level] : null;";
    let line = browser
        .wait_for("a log line", logged, json!(["dev-2 sits down (2 of 2)"]))
        .await;
    assert_eq!(line, json!(["onPlayerJoin", "3", "info"]));

    // An edit to a message and a console.log: published at once; the room restarts on it.
    let source = std::fs::read_to_string(&hooks).unwrap();
    let edited = source.replace("sits down", "takes a seat").replace(
        "onPlayerMove(",
        "onPlayerMove(player, move, room) { console.log('dropping in', move.column); return this.move(player, move, room); },\n  move(",
    );
    assert_ne!(edited, source);
    save(&hooks, &edited);
    dev.wait_for_terminal("published version 2").await;
    browser
        .wait_for_text("#dev-newer-text", "Version 2 is published")
        .await;
    browser.click("#restart-room").await;
    browser
        .wait_for(
            "the new version's message",
            logged,
            json!(["dev-2 takes a seat (2 of 2)"]),
        )
        .await;
    // The two rooms' lines, opened a moment apart, are told apart by the room they name.
    let rooms_named = "const named = [...document.querySelectorAll('#dev-logs li')] \
                       .filter((li) => li.dataset.hook === 'onPlayerJoin') \
                       .map((li) => li.querySelector('.log-where').textContent.split(' ')[2]); \
                       const rooms = [...new Set(named)]; return rooms.length >= 2 ? rooms : null;";
    browser
        .wait_for("two rooms named apart", rooms_named, json!([]))
        .await;
    truth_at(&browser, 3).await;
    drop_disc(&browser, 1, 6).await;
    let line = browser
        .wait_for("a console.log", logged, json!(["dropping in 6"]))
        .await;
    assert_eq!(line, json!(["onPlayerMove", "4", "info"]));

    // A syntax error on line 3: its line shows in the terminal and on the page, and the game
    // keeps being served on version 2.
    let mut lines: Vec<&str> = edited.lines().collect();
    lines.insert(2, "const = ;");
    save(&hooks, &lines.join("\n"));
    let said = dev.wait_for_terminal("connect-four.js:3:").await;
    assert!(said.contains("still serving"), "{said}");
    browser
        .wait_for_text("#dev-error", "connect-four.js:3:")
        .await;
    browser.screenshot("syntax-error").await;
    drop_disc(&browser, 2, 0).await;
    assert_eq!(
        truth_at(&browser, 5).await["state"]["board"][0][0],
        "yellow"
    );
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_game_shows_each_seat_its_own_view_and_the_author_the_whole_truth() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = copy_example(dir.path(), "secret-words.js");
    let dev = DevServer::start(&[&hooks, Path::new("--seats"), Path::new("3")]);
    let driver = Driver::start().await;
    let browser = driver.browser("dev-secret-words").await;
    browser.goto(&dev.page).await;
    browser.find(".seat-frame[data-seat=\"3\"]").await;
    // Three joins after the room opened: version 4 holds the three words.
    let truth = truth_at(&browser, 4).await;
    let words: Vec<String> = truth["state"]["words"]
        .as_object()
        .unwrap()
        .values()
        .map(|w| w.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(words.len(), 3);
    assert!(words.iter().all(|w| w.starts_with("secret-")), "{words:?}");
    for seat in 1..=3 {
        browser
            .enter_frame(&format!(".seat-frame[data-seat=\"{seat}\"]"))
            .await;
        let board = browser
            .wait_for(
                "the generic view",
                "const b = document.getElementById('board'); \
                 return b && b.textContent.includes('hidden') ? b.textContent : null;",
                json!([]),
            )
            .await;
        let board = board.as_str().unwrap();
        let shown: Vec<&String> = words
            .iter()
            .filter(|w| board.contains(w.as_str()))
            .collect();
        assert_eq!(
            shown.len(),
            1,
            "seat {seat} sees exactly its own word: {board}"
        );
        browser.leave_frame().await;
    }
    browser.close().await;
}
