//! Frontends in a real browser (Debian's Chromium, headless): the README's page on another
//! origin plays a whole game through `/client.js`; an uploaded game is played by clicking in
//! its own framed page; a hostile page in that frame gets nothing outside its sandbox.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::browser::{room_in_view, sign_up};
use crate::helpers::{example, unique, TestApp, TestPlayer};
use crate::readme::blocks;
use crate::webdriver::{Browser, Driver};

/// A tiny HTTP server on another port (so another origin) that answers every request with
/// `page`, and counts the connections it gets.
pub struct OtherOrigin {
    pub address: String,
    connections: Arc<AtomicUsize>,
}

impl OtherOrigin {
    pub fn serve(page: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = format!("http://{}", listener.local_addr().unwrap());
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = connections.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                counted.fetch_add(1, Ordering::SeqCst);
                let mut head = [0u8; 4096];
                let _ = stream.read(&mut head);
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = stream.write_all(response.as_bytes());
            }
        });
        Self {
            address,
            connections,
        }
    }

    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// Console entries that mean something went wrong: errors, and any word of CORS.
fn complaints(console: &[Value]) -> Vec<Value> {
    console
        .iter()
        .filter(|entry| {
            let message = entry["message"].as_str().unwrap_or_default();
            entry["level"] == "SEVERE" || message.contains("CORS")
        })
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_frontend_on_another_origin_plays_a_whole_game_through_the_client_module() {
    let app = TestApp::spawn().await;
    let page = blocks("html")
        .into_iter()
        .next()
        .expect("the README shows a frontend");
    assert!(page.lines().count() <= 30, "about twenty lines");
    // The one change: the address of this test's server instead of the default one.
    let page = page.replace("http://127.0.0.1:8080", &app.address);
    let origin = OtherOrigin::serve(page);
    assert_ne!(origin.address, app.address);

    let driver = Driver::start().await;
    let browser = driver.browser("frontend-other-origin").await;
    browser.goto(&format!("{}/", origin.address)).await;
    browser
        .wait_for_text("#status", "waiting for an opponent")
        .await;
    browser.screenshot("waiting").await;

    // A second player quick-plays from elsewhere and lands in the page's room.
    let bob = app.register(&unique("bob")).await;
    let joined = app
        .post(
            "/rooms/quickplay",
            Some(&bob.token),
            Some(&json!({"game": "tictactoe"})),
        )
        .await;
    assert_eq!(joined.status(), StatusCode::OK, "joined the page's room");
    let room: Value = joined.json().await.unwrap();
    let id = room["id"].as_str().unwrap().to_owned();
    let page_player = room["players"][0]["username"].as_str().unwrap().to_owned();
    browser
        .wait_for_text("#status", &format!("{page_player} to move (you)"))
        .await;

    // X by clicking on the page, O over HTTP; each of Bob's moves reaches the page live.
    let cell = |x: usize, y: usize| format!("#board button:nth-child({})", 3 * x + y + 1);
    for (n, (x, y)) in [(0, 0), (0, 1), (0, 2)].into_iter().enumerate() {
        browser
            .wait_for_text("#status", &format!("{page_player} to move"))
            .await;
        browser.click(&cell(x, y)).await;
        browser.wait_for_text(&cell(x, y), "X").await;
        if n < 2 {
            browser
                .wait_for_text("#status", &format!("{} to move", bob.username))
                .await;
            app.play_ok(&bob, &id, json!({"x": 1, "y": n})).await;
            browser.wait_for_text(&cell(1, n), "O").await;
        }
    }
    browser
        .wait_for_text("#status", &format!("Game over: {page_player} wins"))
        .await;
    browser.screenshot("won").await;
    let stored = app.room(&id).await;
    assert_eq!(stored["finished"], true);
    assert_eq!(stored["state"]["winner"]["username"], page_player.as_str());

    let console = browser.console().await;
    assert_eq!(complaints(&console), Vec::<Value>::new(), "{console:?}");
    browser.close().await;
}

/// Uploads `examples/tictactoe.js` as `id` with `page` as its frontend.
pub(crate) async fn publish_with_page(app: &TestApp, id: &str, page: &str) -> TestPlayer {
    let author = app.register(&unique("author")).await;
    let response = app
        .client
        .put(format!("{}/games/{id}", app.address))
        .bearer_auth(&author.token)
        .body(
            json!({"source": example("tictactoe.js"), "frontend": page, "name": "Framed"})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    author
}

async fn click_in_frame(browser: &Browser, css: &str) {
    browser.enter_frame("#game-frame").await;
    browser.click(css).await;
    browser.leave_frame().await;
}

async fn frame_says(browser: &Browser, text: &str) {
    browser.enter_frame("#game-frame").await;
    browser.wait_for_text("#status", text).await;
    browser.leave_frame().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uploaded_game_is_played_by_clicking_on_its_own_page() {
    // Two browsers share two cores with the other tests: hooks get room to run.
    let app = TestApp::spawn_for_browsers().await;
    publish_with_page(&app, "framed", &example("frontends/tictactoe.html")).await;
    let driver = Driver::start().await;
    let alice = driver.browser("own-page-alice").await;
    let bob = driver.browser("own-page-bob").await;
    let alice_name = sign_up(&alice, &app, "alice").await;
    sign_up(&bob, &app, "bob").await;
    alice
        .wait_for_text("[data-game=\"framed\"]", "with its own page")
        .await;
    alice.click("[data-game=\"framed\"] .new-private").await;
    let room = room_in_view(&alice).await;
    bob.goto(&format!("{}/#/room/{room}", app.address)).await;
    bob.find("#join").await;
    // Focus moved to the main area for screen readers, without a visible frame around it.
    let focus = bob
        .eval(
            "const main = document.getElementById('main'); \
             return [document.activeElement === main, getComputedStyle(main).outlineStyle];",
            json!([]),
        )
        .await;
    assert_eq!(focus, json!([true, "none"]));
    bob.click("#join").await;

    frame_says(&alice, "Your turn").await;
    frame_says(&bob, &format!("{alice_name}'s turn")).await;
    alice.screenshot("framed-start").await;
    let moves = [
        (&alice, &bob, "0,0"),
        (&bob, &alice, "1,0"),
        (&alice, &bob, "0,1"),
        (&bob, &alice, "1,1"),
        (&alice, &bob, "0,2"),
    ];
    for (mover, other, cell) in moves {
        let css = format!("[data-cell=\"{cell}\"]");
        click_in_frame(mover, &css).await;
        other.enter_frame("#game-frame").await;
        other
            .wait_for(
                "the move to show",
                "return document.querySelector(arguments[0]).textContent !== '';",
                json!([css]),
            )
            .await;
        other.leave_frame().await;
    }
    frame_says(&alice, "You win!").await;
    frame_says(&bob, &format!("{alice_name} wins!")).await;
    // The page around the frame leaves the status to it: it appears once.
    crate::browser::status_left_to_the_frame(&alice).await;
    alice.screenshot("framed-won").await;
    bob.screenshot("framed-lost").await;
    let stored = app.room(&room).await;
    assert_eq!(stored["finished"], true);
    assert_eq!(stored["state"]["winner"]["username"], alice_name.as_str());
    assert!(
        !alice.text("#board").await.contains("State at version"),
        "a game with its own page is not shown as JSON"
    );
    for browser in [alice, bob] {
        browser.close().await;
    }
}

/// A frontend written to escape: every attempt's outcome goes into `#report` for the test
/// to read from inside the frame, and every message it is sent is kept there too.
fn hostile_page(api: &str, elsewhere: &str) -> String {
    format!(
        r#"<!doctype html><pre id="report">running</pre><script>
const report = {{ attempts: {{}}, seen: [], results: {{}}, flood: 0 }};
const show = () => {{ document.getElementById('report').textContent = JSON.stringify(report); }};
const attempt = (name, fn) => {{
  try {{ report.attempts[name] = {{ ok: true, value: String(fn()) }}; }}
  catch (e) {{ report.attempts[name] = {{ ok: false, error: e.name }}; }}
}};
attempt('parentStorage', () => parent.localStorage.getItem('turnhouse.player'));
attempt('topDocument', () => top.document.body.innerHTML);
attempt('parentApp', () => JSON.stringify(parent.location.href));
attempt('cookie', () => document.cookie);
attempt('ownStorage', () => localStorage.getItem('turnhouse.player'));
attempt('popup', () => window.open('{elsewhere}/popup'));
attempt('topLocation', () => {{ top.location = '{elsewhere}/navigated'; return 'set'; }});
attempt('form', () => {{
  const form = document.createElement('form');
  form.method = 'post'; form.action = '{elsewhere}/form'; form.target = '_top';
  document.body.append(form); form.submit(); return 'submitted';
}});
Promise.allSettled([
  fetch('{api}/players', {{ method: 'POST', body: JSON.stringify({{ username: 'stolen_by_frame' }}) }}),
  fetch('{elsewhere}/fetch'),
]).then((outcomes) => {{ report.fetches = outcomes.map((o) => o.status); show(); }});
window.addEventListener('message', (event) => {{
  if (event.source !== parent) return;
  report.seen.push(event.data);
  if (event.data.type === 'turnhouse:result') {{
    const code = event.data.ok ? 'ok' : event.data.problem.code;
    report.results[code] = (report.results[code] || 0) + 1;
  }}
  show();
}});
// One honest move when asked, then a flood: 1,000 move messages a second for at least 3 s,
// and on until the server's limit has answered one of them. (The page lets only a few moves
// through at a time, so on a loaded machine 3 s alone may not reach the limit.)
window.playCentre = () => parent.postMessage({{ type: 'turnhouse:move', move: {{ x: 1, y: 1 }} }}, '*');
window.startFlood = () => {{
  const started = Date.now();
  const timer = setInterval(() => {{
    for (let i = 0; i < 10; i += 1) {{
      parent.postMessage({{ type: 'turnhouse:move', move: {{ x: 0, y: 0 }} }}, '*');
      report.flood += 1;
    }}
    const elapsed = Date.now() - started;
    if ((elapsed > 3000 && report.results.rate_limited) || elapsed > 50000) {{
      clearInterval(timer); report.floodDone = true; show();
    }}
  }}, 10);
}};
parent.postMessage({{ type: 'turnhouse:ready' }}, '*');
show();
</script>"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_frontend_gets_neither_the_token_nor_anything_outside_its_sandbox() {
    // A low action limit, so the flood meets it within its first moments.
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.hook_limits.time_ms = 2_000;
        config.abuse_limits.action_rate = "40/min".parse().unwrap();
    })
    .await;
    let elsewhere = OtherOrigin::serve("<p>elsewhere</p>".into());
    publish_with_page(
        &app,
        "hostile",
        &hostile_page(&app.address, &elsewhere.address),
    )
    .await;

    let driver = Driver::start().await;
    let browser = driver.browser("hostile-frontend").await;
    sign_up(&browser, &app, "victim").await;
    browser.click("[data-game=\"hostile\"] .new-private").await;
    let room = room_in_view(&browser).await;
    let page_url = browser.url().await;
    let token = browser
        .eval(
            "return JSON.parse(localStorage.getItem('turnhouse.player')).token;",
            json!([]),
        )
        .await;
    let token = token.as_str().unwrap().to_owned();
    let opponent = app.register(&unique("opponent")).await;
    assert_eq!(
        app.join(&opponent, &room).await.status(),
        StatusCode::OK,
        "a second player is seated"
    );

    // The frame has seen the seated room, and run every attempt.
    browser.enter_frame("#game-frame").await;
    browser
        .wait_for(
            "the attempts and the state",
            "const r = JSON.parse(document.getElementById('report').textContent || '{}'); \
             return r.fetches && r.seen && r.seen.some((m) => m.type === 'turnhouse:state' \
               && m.room.players.length === 2);",
            json!([]),
        )
        .await;
    browser.leave_frame().await;

    // The page takes moves only from the frame's window: one posted by the page itself is
    // ignored, the frame's own goes through. (Were the first taken, it would be applied
    // first, and the frame's refused as out of turn.)
    browser
        .eval(
            "window.postMessage({type: 'turnhouse:move', move: {x: 2, y: 2}}, '*');",
            json!([]),
        )
        .await;
    browser.enter_frame("#game-frame").await;
    browser.eval("window.playCentre();", json!([])).await;
    browser
        .wait_for(
            "the frame's move to be answered",
            "return JSON.parse(document.getElementById('report').textContent).results.ok === 1;",
            json!([]),
        )
        .await;
    browser.leave_frame().await;
    let events = app.events(&room).await;
    let moves: Vec<&Value> = events.iter().filter(|e| e["kind"] == "move").collect();
    assert_eq!(moves.len(), 1, "{events:?}");
    assert_eq!(moves[0]["move"], json!({"x": 1, "y": 1}));

    // The flood: it meets the action limit, and the page around it keeps answering.
    browser.enter_frame("#game-frame").await;
    browser.eval("window.startFlood();", json!([])).await;
    let report = browser
        .wait_for(
            "the flood to meet the rate limit",
            "const t = document.getElementById('report').textContent; \
             const r = JSON.parse(t); return r.results.rate_limited > 0 ? t : null;",
            json!([]),
        )
        .await;
    browser.leave_frame().await;
    let players = browser.text("#players").await;
    assert!(!players.is_empty(), "the page answers mid-flood");
    let report: Value = serde_json::from_str(report.as_str().unwrap()).unwrap();
    let attempts = &report["attempts"];
    for blocked in [
        "parentStorage",
        "topDocument",
        "parentApp",
        "cookie",
        "ownStorage",
    ] {
        assert_eq!(attempts[blocked]["ok"], false, "{blocked}: {attempts}");
        assert_eq!(attempts[blocked]["error"], "SecurityError", "{blocked}");
    }
    assert_eq!(attempts["popup"]["value"], "null", "no popup: {attempts}");
    assert_eq!(
        report["fetches"],
        json!(["rejected", "rejected"]),
        "no network at all"
    );
    assert!(
        !report.to_string().contains(&token),
        "the token never reaches the frame"
    );
    let state = report["seen"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["type"] == "turnhouse:state")
        .unwrap();
    let me = &state["room"]["players"][0];
    assert_eq!(
        state["you"],
        json!({"id": me["id"], "username": me["username"]})
    );

    // Mid-flood, the page still navigates: back to the lobby, which loads.
    browser.click("a[href=\"#/\"]").await;
    browser.wait_for_text("h1", "Lobby").await;
    browser.screenshot("after-flood").await;
    assert_eq!(browser.url().await, format!("{}/#/", app.address));
    assert!(page_url.starts_with(&app.address));
    assert_eq!(browser.windows().await, 1, "no popup opened");
    assert_eq!(
        elsewhere.connections(),
        0,
        "no request left the sandbox: no fetch, form, navigation or popup"
    );
    let stolen = app
        .post(
            "/players",
            None,
            Some(&json!({"username": "stolen_by_frame"})),
        )
        .await;
    assert_eq!(
        stolen.status(),
        StatusCode::CREATED,
        "the frame's sign-up never reached the API"
    );
    browser.close().await;
}
