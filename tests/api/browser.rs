//! The web page in a real browser (Debian's Chromium, headless, through chromedriver): people
//! sign up, find each other in the lobby, play by clicking and see each other's moves live.
//! Screenshots of the key screens land in `target/browser-screenshots/`.

use serde_json::{json, Value};

use crate::helpers::{unique, TestApp};
use crate::webdriver::{Browser, Driver};

/// Opens the page and signs up; returns the username.
pub async fn sign_up(browser: &Browser, app: &TestApp, name: &str) -> String {
    let username = unique(name);
    browser.goto(&format!("{}/", app.address)).await;
    browser.type_into("#username", &username).await;
    browser.click("#signup").await;
    browser.wait_for_text("#me", &username).await;
    username
}

/// The room the browser shows, from its address.
pub async fn room_in_view(browser: &Browser) -> String {
    let id = browser
        .wait_for(
            "a room page",
            "const m = location.hash.match(/^#\\/room\\/([0-9a-f]{32})$/); return m && m[1];",
            json!([]),
        )
        .await;
    id.as_str().unwrap().to_owned()
}

/// Tic-tac-toe in which X takes the top row while O plays the middle one: (mover, other
/// player, cell, mark) for each move.
pub(crate) fn x_takes_the_top_row<'a>(
    x: &'a Browser,
    o: &'a Browser,
) -> [(&'a Browser, &'a Browser, &'static str, &'static str); 5] {
    [
        (x, o, "0,0", "X"),
        (o, x, "1,0", "O"),
        (x, o, "0,1", "X"),
        (o, x, "1,1", "O"),
        (x, o, "0,2", "X"),
    ]
}

pub(crate) async fn click_cell(browser: &Browser, cell: &str) {
    browser.click(&format!(".cell[data-cell=\"{cell}\"]")).await;
}

pub(crate) async fn wait_for_mark(browser: &Browser, cell: &str, mark: &str) {
    browser
        .wait_for_text(&format!(".cell[data-cell=\"{cell}\"]"), mark)
        .await;
}

/// Checks that the page leaves a framed game's status to the frame: it appears once.
pub(crate) async fn status_left_to_the_frame(browser: &Browser) {
    let hidden = browser
        .eval(
            "return document.getElementById('status').hidden;",
            json!([]),
        )
        .await;
    assert_eq!(hidden, true, "the page says the status a second time");
}

pub(crate) async fn count(browser: &Browser, css: &str) -> i64 {
    browser
        .eval(
            "return document.querySelectorAll(arguments[0]).length;",
            json!([css]),
        )
        .await
        .as_i64()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_people_play_tictactoe_in_their_browsers_while_a_third_watches() {
    let app = TestApp::spawn().await;
    let driver = Driver::start().await;
    let alice = driver.browser("tictactoe-alice").await;
    let bob = driver.browser("tictactoe-bob").await;
    let carol = driver.browser("tictactoe-spectator").await;
    let alice_name = sign_up(&alice, &app, "alice").await;
    sign_up(&bob, &app, "bob").await;

    // Alice opens a room; Bob, already in the lobby, sees it appear and joins from the list.
    alice.click("[data-game=\"tictactoe\"] .new-room").await;
    let room = room_in_view(&alice).await;
    alice.wait_for_text("#status", "Waiting").await;
    let join = format!("#open-rooms [data-room=\"{room}\"] .join");
    bob.find(&join).await;
    bob.screenshot("lobby-with-open-room").await;
    bob.click(&join).await;
    assert_eq!(room_in_view(&bob).await, room);

    // Alice learns of it without reloading; the spectator, not signed up, opens the link.
    alice.wait_for_text("#status", "Your turn").await;
    bob.wait_for_text("#status", &format!("{alice_name}'s turn"))
        .await;
    carol.resize(390, 844).await;
    carol.goto(&format!("{}/#/room/{room}", app.address)).await;
    carol.wait_for_text("#status", "watching").await;

    // X takes the top row; each move shows up on the other screens by itself.
    for (n, (mover, other, cell, mark)) in x_takes_the_top_row(&alice, &bob).into_iter().enumerate()
    {
        // Not this player's turn: the board does not take a click.
        assert_eq!(count(other, ".cell:not(:disabled)").await, 0);
        if n == 1 {
            // By keyboard: a cell is a button.
            mover
                .press_enter(&format!(".cell[data-cell=\"{cell}\"]"))
                .await;
        } else {
            click_cell(mover, cell).await;
        }
        wait_for_mark(other, cell, mark).await;
        wait_for_mark(&carol, cell, mark).await;
        if n == 2 {
            alice.screenshot("mid-game").await;
        }
    }

    alice.wait_for_text("#status", "You win!").await;
    bob.wait_for_text("#status", &format!("{alice_name} wins!"))
        .await;
    carol
        .wait_for_text("#status", &format!("{alice_name} wins!"))
        .await;
    // A public room of people is rated: each player sees what the game did to their rating
    // (from 1500, by Glicko-2); the spectator sees no rating of theirs.
    alice
        .wait_for_text("#status", "Your rating: 1662 (+162).")
        .await;
    bob.wait_for_text("#status", "Your rating: 1338 (−162).")
        .await;
    assert!(!carol.text("#status").await.contains("rating"));
    // Ratings stand by the names, provisional ("?") until five games.
    carol.wait_for_text("#players", "(1662?)").await;
    carol.wait_for_text("#players", "(1338?)").await;
    for browser in [&alice, &bob, &carol] {
        assert_eq!(
            count(browser, ".cell.win").await,
            3,
            "the winning line is marked"
        );
    }
    assert_eq!(
        count(&carol, ".cell:not(:disabled)").await,
        0,
        "a spectator cannot move"
    );
    assert_eq!(count(&carol, "#actions button").await, 0);
    let fits = carol
        .eval(
            "return document.documentElement.scrollWidth <= window.innerWidth;",
            json!([]),
        )
        .await;
    assert_eq!(
        fits, true,
        "on a phone-sized screen nothing scrolls sideways"
    );
    alice.screenshot("winner").await;
    bob.screenshot("loser").await;
    carol.screenshot("spectator").await;

    // Play again: Alice restarts, Bob joins again, then forfeits, handing Alice the game.
    alice.click("#play-again").await;
    alice.wait_for_text("#status", "Waiting").await;
    bob.click("#join").await;
    alice.wait_for_text("#status", "Your turn").await;
    // Forfeiting asks first, then speaks to Bob as the player who left, not as a watcher.
    bob.click("#forfeit").await;
    bob.wait_for_text(
        "#forfeit-warning",
        &format!("The game goes to {alice_name}"),
    )
    .await;
    bob.click("#forfeit-confirm").await;
    alice.wait_for_text("#status", "You win!").await;
    bob.wait_for_text(
        "#status",
        &format!("You left the game. Game over: {alice_name} wins!"),
    )
    .await;
    let stored = app.room(&room).await;
    assert_eq!(stored["finished"], true);
    assert_eq!(stored["state"]["winner"]["username"], alice_name.as_str());

    for browser in [alice, bob, carol] {
        browser.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uploaded_game_is_published_and_played_in_a_private_room_from_the_page() {
    // Three browsers share two cores with the other tests: hooks get room to run. What the
    // limit does is tested in sandbox.rs.
    let app = TestApp::spawn_for_browsers().await;
    let driver = Driver::start().await;
    let author = driver.browser("hosted-author").await;
    let friend = driver.browser("hosted-friend").await;
    sign_up(&author, &app, "author").await;
    let friend_name = sign_up(&friend, &app, "friend").await;

    // A broken file first: the page shows where the code is wrong.
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.js");
    std::fs::write(
        &broken,
        "module.exports = {\n  onRoomStart() { return {state: 1} },\n  onPlayerMove( {}\n};\n",
    )
    .unwrap();
    author.type_into("#upload-id", "connect-four").await;
    author
        .type_into("#upload-file", broken.to_str().unwrap())
        .await;
    author.click("#upload").await;
    author.wait_for_text("#upload-message", "Line 4").await;
    // The parser noticed the mistake on line 4; the page shows it with the line before it,
    // where it is.
    author
        .wait_for_text("#upload-error-lines", "3 |   onPlayerMove( {}")
        .await;
    author.screenshot("upload-error").await;

    let good =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/connect-four.js");
    author
        .type_into("#upload-file", good.to_str().unwrap())
        .await;
    author
        .type_into(
            "#upload-description",
            "Four in a row, dropped down seven columns.",
        )
        .await;
    author
        .type_into("#upload-move-example", "{\"column\": 3}")
        .await;
    author.click("#upload").await;
    author.wait_for_text("#upload-message", "version 1").await;
    author
        .wait_for_text(
            "[data-game=\"connect-four\"] .muted",
            "Four in a row, dropped down seven columns.",
        )
        .await;
    author
        .find("[data-game=\"connect-four\"] .new-private")
        .await;

    // A private room, shared by its link.
    author
        .click("[data-game=\"connect-four\"] .new-private")
        .await;
    let room = room_in_view(&author).await;
    // The room's address shows before its page is drawn: wait for the link.
    let link = author
        .wait_for(
            "the share link",
            "const link = document.getElementById('share-link'); return link && link.value;",
            json!([]),
        )
        .await;
    assert_eq!(link, format!("{}/#/room/{room}", app.address));
    friend.goto(link.as_str().unwrap()).await;
    friend.click("#join").await;

    // The generic view: the state as JSON, whose turn it is, and a move box; the author
    // moves once the friend is seated.
    author.wait_for_text("#players", &friend_name).await;
    author.wait_for_text("#players li.turn", "author").await;
    assert_eq!(
        author.text("#board h2").await,
        "State at version 3",
        "the state is shown"
    );
    // The board reads as a grid (six rows of seven), and the move box suggests the example
    // the author gave.
    assert_eq!(count(&author, "#board .json-grid tr").await, 6);
    let placeholder = author
        .eval(
            "return document.getElementById('move-json').placeholder;",
            json!([]),
        )
        .await;
    assert!(
        placeholder.as_str().unwrap().contains("column"),
        "{placeholder}"
    );
    author.type_into("#move-json", "{\"column\": 3}").await;
    author.click("#send-move").await;
    friend.wait_for_text("#board h2", "version 4").await;
    friend.wait_for_text("#players li.turn", &friend_name).await;
    // A move the game refuses: its own message, inline.
    friend.type_into("#move-json", "{\"column\": 99}").await;
    friend.click("#send-move").await;
    friend
        .wait_for_text("#room-message", "a move looks like {\"column\": 0..6}")
        .await;
    friend.screenshot("hosted-refusal").await;
    let stored = app.room(&room).await;
    assert_eq!(stored["version"], 4, "the refused move changed nothing");
    assert_eq!(stored["private"], true);

    // The game exports enumerateMoves, so its card offers the computer, as a built-in's does:
    // the hard bot answers the author's move.
    author.goto(&format!("{}/", app.address)).await;
    let card = "[data-game=\"connect-four\"]";
    author.select(&format!("{card} .bot-level"), "hard").await;
    author.click(&format!("{card} .play-bot")).await;
    let against_bot = room_in_view(&author).await;
    author.wait_for_text("#players", "hard bot").await;
    author.wait_for_text("#players li.turn", "author").await;
    author.type_into("#move-json", "{\"column\": 3}").await;
    author.click("#send-move").await;
    author.wait_for_text("#board h2", "version 5").await;
    author.wait_for_text("#players li.turn", "author").await;
    author.screenshot("hosted-against-bot").await;
    let events = app.events(&against_bot).await;
    let last = events.last().unwrap();
    assert_eq!(last["player"]["username"], "hard bot", "{last}");
    assert!(last["move"]["column"].is_i64(), "{last}");

    for browser in [author, friend] {
        browser.close().await;
    }
}

/// Text that users choose (a hosted game's name and description, a game's state and its
/// refusals) is shown as text: markup in it is never parsed, and no script in it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markup_in_names_states_and_refusals_is_shown_as_text_and_never_runs() {
    let app = TestApp::spawn_for_browsers().await;
    let author = app.register(&unique("author")).await;
    let hostile = |n: u32| {
        format!("<img src=x onerror=\"window.__pwned={n}\"><script>window.__pwned={n}</script>")
    };
    let source = format!(
        "module.exports = {{
          onRoomStart: () => ({{ state: {{ note: {note:?}, turn: 0 }} }}),
          onPlayerJoin: () => ({{}}),
          onPlayerQuit: () => ({{}}),
          onPlayerMove: () => {{ throw new Error({refusal:?}); }},
        }};",
        note = hostile(2),
        refusal = hostile(3),
    );
    let upload = app
        .client
        .put(format!("{}/games/markup", app.address))
        .bearer_auth(&author.token)
        .body(json!({"source": source, "name": hostile(1), "description": hostile(4)}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(upload.status(), reqwest::StatusCode::CREATED);

    let driver = Driver::start().await;
    let browser = driver.browser("markup").await;
    sign_up(&browser, &app, "viewer").await;
    browser
        .wait_for_text("[data-game=\"markup\"]", "<img src=x")
        .await;
    browser.click("[data-game=\"markup\"] .new-private").await;
    room_in_view(&browser).await;
    browser.wait_for_text("#board", "onerror").await;
    browser.type_into("#move-json", "{\"any\": 1}").await;
    browser.click("#send-move").await;
    browser.wait_for_text("#room-message", "<script>").await;
    browser.screenshot("markup-as-text").await;

    let injected = browser
        .eval(
            "return { imgs: document.querySelectorAll('img[src=\"x\"], main script').length, \
                      pwned: window.__pwned === undefined ? null : window.__pwned };",
            json!([]),
        )
        .await;
    assert_eq!(injected, json!({"imgs": 0, "pwned": null}));
    browser.close().await;
}

/// The page follows the session another tab of the same browser signs in or out of: the
/// header, and what the room offers, change at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_follows_a_sign_in_or_out_in_another_tab() {
    let app = TestApp::spawn_for_browsers().await;
    let host = app.register(&unique("host")).await;
    let room = app.create_room(&host, json!({"game": "tictactoe"})).await;
    let other = app.register(&unique("other")).await;

    let driver = Driver::start().await;
    let browser = driver.browser("tabs").await;
    browser
        .goto(&format!(
            "{}/#/room/{}",
            app.address,
            room["id"].as_str().unwrap()
        ))
        .await;
    browser.wait_for_text("#account", "Not signed in").await;
    // Another document of the same origin writes the shared storage, as another tab does (a
    // storage event reaches every document but the one that wrote).
    let from_another_tab = "const frame = document.createElement('iframe');         frame.src = '/healthz'; document.body.append(frame);         await new Promise((done) => frame.addEventListener('load', done));         const player = arguments[0];         if (player) frame.contentWindow.localStorage.setItem('turnhouse.player', JSON.stringify(player));         else frame.contentWindow.localStorage.removeItem('turnhouse.player');         return true;";
    let signed_in = json!({"id": other.id, "username": other.username, "token": other.token});
    browser
        .eval(
            &format!("return (async () => {{ {from_another_tab} }})();"),
            json!([signed_in]),
        )
        .await;
    browser.wait_for_text("#me", &other.username).await;
    browser.wait_for_text("main", "Join").await;
    browser
        .eval(
            &format!("return (async () => {{ {from_another_tab} }})();"),
            json!([null]),
        )
        .await;
    browser.wait_for_text("#account", "Not signed in").await;
    browser.close().await;
}

/// A room created with a clock from the lobby; on a clocked room's page the player to move
/// sees their time run down, and then who ran out of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clock_counts_down_on_the_page_and_the_player_who_runs_out_loses() {
    let app = TestApp::spawn().await;
    let driver = Driver::start().await;
    let alice = driver.browser("clock-alice").await;
    let watcher = driver.browser("clock-watcher").await;
    sign_up(&alice, &app, "alice").await;
    let card = "[data-game=\"tictactoe\"]";
    alice.select(&format!("{card} .clock"), "60").await;
    alice.click(&format!("{card} .new-room")).await;
    let room = room_in_view(&alice).await;
    assert_eq!(app.room(&room).await["clock"], json!({"moveSeconds": 60}));

    // A game on an eight-second clock, Alice (X) to move once Bob has joined: long enough for
    // both pages to show the countdown on a busy machine.
    let token = alice
        .eval(
            "return JSON.parse(localStorage.getItem('turnhouse.player')).token;",
            json!([]),
        )
        .await;
    let body = json!({"game": "tictactoe", "clock": {"moveSeconds": 8}});
    let response = app
        .post("/rooms", Some(token.as_str().unwrap()), Some(&body))
        .await;
    let timed: Value = response.json().await.unwrap();
    let timed = timed["id"].as_str().unwrap().to_owned();
    alice.goto(&format!("{}/#/room/{timed}", app.address)).await;
    watcher
        .goto(&format!("{}/#/room/{timed}", app.address))
        .await;
    let bob = app.register(&unique("bob")).await;
    app.join(&bob, &timed).await;
    alice.wait_for_text("#countdown", "You have 0:0").await;
    watcher.wait_for_text("#countdown", "Time left for").await;
    alice.screenshot("clock-countdown").await;

    alice.wait_for_text("#status", "You ran out of time.").await;
    let status = alice.text("#status").await;
    let lost = format!("You ran out of time. {} wins! Your rating: ", bob.username);
    assert!(status.starts_with(&lost), "{status}");
    watcher.wait_for_text("#status", "Time ran out for").await;
    let seen = watcher.text("#status").await;
    assert!(seen.contains(&format!("{} wins!", bob.username)), "{seen}");
    let hidden = alice
        .eval(
            "const c = document.getElementById('countdown'); return c.hidden || c.classList.contains('idle');",
            json!([]),
        )
        .await;
    assert_eq!(hidden, true, "no countdown once the game is over");
    alice.screenshot("clock-ran-out").await;
    for browser in [alice, watcher] {
        browser.close().await;
    }
}

/// A screen left before its first answer came gives up on that answer: a room asked for and
/// left for the lobby at once (or a signed-out device sent back to the lobby) must not have
/// the room drawn over the lobby when its answer finally arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_answer_for_a_screen_left_meanwhile_does_not_draw_over_the_next() {
    let app = TestApp::spawn_for_browsers().await;
    let host = app.register(&unique("host")).await;
    let room = app.create_room(&host, json!({"game": "tictactoe"})).await;
    let room = room["id"].as_str().unwrap();

    let driver = Driver::start().await;
    let browser = driver.browser("slow-answer").await;
    browser.goto(&format!("{}/#/", app.address)).await;
    browser.wait_for_text("#games", "Tic-tac-toe").await;
    // The room's read is held back until released; `answered` is set once everything its
    // answer set going (in the same turn of the page's event loop) has run.
    browser
        .eval(
            "const room = arguments[0]; const real = window.fetch;
             window.fetch = (url, init) => {
               if (window.held || !String(url).endsWith(`/rooms/${room}`)) return real(url, init);
               window.held = true;
               return new Promise((resolve) => {
                 window.release = async () => {
                   const response = await real(url, init);
                   const text = response.text.bind(response);
                   response.text = async () => {
                     const body = await text();
                     setTimeout(() => { window.answered = true; });
                     return body;
                   };
                   resolve(response);
                 };
               });
             };
             location.hash = `#/room/${room}`;
             return true;",
            json!([room]),
        )
        .await;
    browser
        .wait_for("the room's read", "return window.held === true;", json!([]))
        .await;
    browser
        .eval("location.hash = '#/'; return true;", json!([]))
        .await;
    browser.wait_for_text("#games", "Tic-tac-toe").await;
    browser
        .eval("window.release(); return true;", json!([]))
        .await;
    browser
        .wait_for(
            "the room's answer",
            "return window.answered === true;",
            json!([]),
        )
        .await;
    let shown = browser
        .eval(
            "return [document.querySelector('main h1').textContent, !!document.getElementById('board')];",
            json!([]),
        )
        .await;
    assert_eq!(
        shown,
        json!(["Lobby", false]),
        "the room was drawn over the lobby"
    );
    browser.close().await;
}
