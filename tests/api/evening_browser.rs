//! A player's evening on the page, the papercuts: an unknown room says so, signing out and
//! forfeiting ask first, the tab's title calls you back on your turn, and rooms say what they
//! are and how they ended.

use std::path::Path;

use serde_json::json;

use crate::browser::{
    click_cell, count, room_in_view, sign_up, wait_for_mark, x_takes_the_top_row,
};
use crate::helpers::{example, file_part, unique, TestApp};
use crate::webdriver::Driver;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_says_what_is_what_and_asks_before_what_cannot_be_undone() {
    let app = TestApp::spawn_for_browsers().await;
    let driver = Driver::start().await;
    let browser = driver.browser("evening").await;
    let name = sign_up(&browser, &app, "eve").await;

    // A room address that names no room says so, instead of showing the lobby.
    browser
        .goto(&format!("{}/#/room/not-a-room", app.address))
        .await;
    browser
        .wait_for_text("#no-room", "There is no room at this address")
        .await;

    // The lobby describes games in words, not in JSON.
    browser.goto(&format!("{}/#/", app.address)).await;
    let card = browser.text("[data-game=\"battleship\"]").await;
    assert!(!card.contains('{'), "{card}");

    // A game against the computer says so, in its title and its share card.
    browser.click("[data-game=\"tictactoe\"] .play-bot").await;
    browser
        .wait_for_text("#room-kind", "Against the easy bot")
        .await;
    let share = browser.text(".share-card").await;
    assert!(!share.contains("friend can join"), "{share}");
    browser.wait_for_text("#status", "Your turn").await;

    // While it is your turn and the tab is hidden, its title says so.
    let hide =
        "Object.defineProperty(document, 'hidden', {value: arguments[0], configurable: true}); \
                document.dispatchEvent(new Event('visibilitychange')); return document.title;";
    // (The count of rooms waiting on the player may come first, once the page has asked.)
    let hidden = browser.eval(hide, json!([true])).await;
    assert!(
        hidden.as_str().unwrap().ends_with("Your turn · Turnhouse"),
        "{hidden}"
    );
    let shown = browser.eval(hide, json!([false])).await;
    assert!(
        matches!(shown.as_str().unwrap(), "Turnhouse" | "(1) Turnhouse"),
        "{shown}"
    );

    // Forfeiting asks first; then the page speaks to the player who left.
    browser.click("#forfeit").await;
    browser
        .wait_for_text("#forfeit-warning", "The game goes to easy bot")
        .await;
    browser.click("#forfeit-cancel").await;
    browser.find("#forfeit").await;
    browser.click("#forfeit").await;
    browser.click("#forfeit-confirm").await;
    browser
        .wait_for_text("#status", "You left the game. Game over: easy bot wins!")
        .await;
    let status = browser.text("#status").await;
    assert!(!status.contains("watching"), "{status}");

    // "Copy link" says what it did.
    browser.click("#copy-link").await;
    browser
        .wait_for(
            "the copy button's answer",
            "const t = document.getElementById('copy-link').textContent; return t !== 'Copy link' ? t : null;",
            json!([]),
        )
        .await;

    // Your rooms: how each ended, and when.
    browser.goto(&format!("{}/#/", app.address)).await;
    browser
        .wait_for_text("#my-rooms .room-when", "won by easy bot")
        .await;
    assert!(browser.text("#my-rooms .room-when").await.contains("today"));

    // Signing out asks first, and says why it matters; staying keeps the player.
    browser.click("#sign-out").await;
    browser.wait_for_text("#sign-out-warning", "only key").await;
    browser.click("#sign-out-cancel").await;
    browser.wait_for_text("#me", &name).await;
    browser.click("#sign-out").await;
    browser.click("#sign-out-confirm").await;
    browser.wait_for_text("#signed-out", "Not signed in").await;
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_that_stopped_working_is_said_in_plain_words() {
    let app = TestApp::spawn_for_browsers().await;
    let driver = Driver::start().await;
    let browser = driver.browser("stale-key").await;
    let name = sign_up(&browser, &app, "stale").await;
    // The server forgets the key (as a fresh database would): the next call finds out.
    browser
        .eval(
            "const p = JSON.parse(localStorage.getItem('turnhouse.player')); \
             p.token = p.id + '.' + '0'.repeat(64); \
             localStorage.setItem('turnhouse.player', JSON.stringify(p)); return true;",
            json!([]),
        )
        .await;
    browser.goto(&format!("{}/healthz", app.address)).await;
    browser.goto(&format!("{}/#/", app.address)).await;
    browser
        .wait_for_text("#signed-out", "no longer works")
        .await;
    let said = browser.text("#signed-out").await;
    assert!(said.contains(&name), "{said}");
    // The lobby is drawn again for someone signed out: a way to pick a name, no buttons
    // that would fail.
    browser.find("#username").await;
    assert_eq!(crate::browser::count(&browser, ".new-room").await, 0);
    browser.close().await;
}

/// Connect Four with its own page, the build folder in `examples/frontends/connect-four/`.
async fn publish_connect_four(app: &TestApp) {
    // A long name, as the badge "uploaded by …" must fit a phone whatever the name.
    let author = app.register(&unique("a-very-long-author-name")).await;
    let page = crate::urturn_browser::zipped(Path::new("examples/frontends/connect-four"));
    let form = reqwest::multipart::Form::new()
        .part(
            "source",
            file_part("index.js", example("connect-four.js").into_bytes()),
        )
        .part("frontend", file_part("build.zip", page));
    let upload = app
        .upload_form(&author, "connect-four", "?minPlayers=2&maxPlayers=2", form)
        .await;
    assert!(upload.status().is_success());
}

/// Whether the page (or the frame the browser is in) scrolls sideways: its content is wider
/// than its window.
const SCROLLS_SIDEWAYS: &str = "const d = document.documentElement; \
    return d.scrollWidth > d.clientWidth + 1 ? `${d.scrollWidth} > ${d.clientWidth}` : 'fits';";

/// Waits, while the page settles, until `what` does not scroll sideways. A frame still loading
/// its game can be wider for a moment, and on a busy machine that moment lasts: only a page
/// that stays too wide for 20 s fails.
async fn fits(browser: &crate::webdriver::Browser, what: impl std::fmt::Display) {
    let started = std::time::Instant::now();
    loop {
        let width = browser.eval(SCROLLS_SIDEWAYS, json!([])).await;
        if width == "fits" {
            return;
        }
        if started.elapsed() > std::time::Duration::from_secs(20) {
            let wide = browser
                .eval(
                    "const w = document.documentElement.clientWidth; \
                     return [...document.querySelectorAll('*')] \
                     .filter((e) => e.getBoundingClientRect().right > w + 1) \
                     .map((e) => `${e.tagName}.${e.className}#${e.id}: ${e.getBoundingClientRect().right}`);",
                    json!([]),
                )
                .await;
            browser.screenshot("too-wide").await;
            panic!("{what} scrolls sideways: {width}; too wide: {wide}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_phone_nothing_scrolls_sideways_in_the_lobby_or_any_game() {
    let app = TestApp::spawn_for_browsers().await;
    publish_connect_four(&app).await;
    let driver = Driver::start().await;
    let phone = driver.browser("phone").await;
    phone.resize(390, 844).await;
    sign_up(&phone, &app, "phone").await;
    phone.find("[data-game=\"connect-four\"] .new-room").await;
    fits(&phone, "the lobby").await;
    phone.screenshot("lobby").await;

    for (game, button) in [
        ("tictactoe", ".play-bot"),
        ("tictactoe3d", ".play-bot"),
        ("battleship", ".play-bot"),
        ("connect-four", ".play-bot"),
    ] {
        phone.goto(&format!("{}/#/", app.address)).await;
        phone
            .click(&format!("[data-game=\"{game}\"] {button}"))
            .await;
        phone.find("#board > *").await;
        fits(&phone, game).await;
        if game == "connect-four" {
            // The status appears once: the game's own page says it, not the page around it.
            crate::browser::status_left_to_the_frame(&phone).await;
            phone.enter_frame("#game-frame").await;
            phone.find(".drop[data-column=\"6\"]").await;
            // The frame took the height the page asked for: nothing scrolls inside it.
            phone
                .wait_for(
                    "the frame to fit its page",
                    "const d = document.documentElement; return d.scrollHeight <= d.clientHeight + 1;",
                    json!([]),
                )
                .await;
            fits(&phone, "connect-four's own page").await;
            phone.leave_frame().await;
        }
        phone.screenshot(game).await;
    }
    phone.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_time_from_five_seconds_to_fourteen_days_and_the_board_does_not_jump() {
    let app = TestApp::spawn_for_browsers().await;
    let driver = Driver::start().await;
    let browser = driver.browser("clocks").await;
    sign_up(&browser, &app, "timer").await;
    let card = "[data-game=\"tictactoe\"]";
    // The amount and unit show only for "other…".
    let shown = "return document.querySelector(arguments[0]).offsetParent !== null;";
    let amount = format!("{card} .clock-amount");
    browser.find(&format!("{card} .clock")).await;
    assert_eq!(browser.eval(shown, json!([amount])).await, false);
    browser.select(&format!("{card} .clock"), "custom").await;
    assert_eq!(browser.eval(shown, json!([amount])).await, true);
    browser
        .type_into(&format!("{card} .clock-amount"), "3")
        .await;
    browser
        .select(&format!("{card} .clock-unit"), "seconds")
        .await;
    browser.click(&format!("{card} .new-room")).await;
    browser
        .wait_for_text("#lobby-message", "from 5 seconds to 14 days")
        .await;
    browser
        .select(&format!("{card} .clock-unit"), "minutes")
        .await;
    browser.click(&format!("{card} .new-room")).await;
    browser
        .wait_for_text("#time-control", "Time control: 3 min a move.")
        .await;
    let room = crate::browser::room_in_view(&browser).await;
    assert_eq!(app.room(&room).await["clock"], json!({"moveSeconds": 180}));

    // The countdown keeps its place whether it runs or not: what is below it never jumps.
    let top = "return Math.round(document.getElementById('players').getBoundingClientRect().top \
               - document.getElementById('status').getBoundingClientRect().bottom);";
    browser.wait_for_text("#status", "Waiting").await;
    let before = browser.eval(top, json!([])).await;
    let bob = app.new_player().await;
    app.join(&bob, &room).await;
    browser.wait_for_text("#countdown", "You have 2:5").await;
    assert_eq!(browser.eval(top, json!([])).await, before);
    app.quit(&bob, &room).await;
    browser.wait_for_text("#status", "You win").await;
    assert_eq!(browser.eval(top, json!([])).await, before);

    // The lobby shows the time control on the room's entry.
    browser.goto(&format!("{}/#/", app.address)).await;
    browser
        .wait_for_text(
            &format!("#my-rooms [data-room=\"{room}\"] .clock-badge"),
            "3 min a move",
        )
        .await;
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_move_is_marked_and_a_thinking_bot_says_so() {
    let app = TestApp::spawn_for_browsers().await;
    publish_connect_four(&app).await;
    let driver = Driver::start().await;
    let browser = driver.browser("last-move").await;
    sign_up(&browser, &app, "marker").await;

    // Tic-tac-toe against the bot: after its reply, its cell is the one marked.
    browser.click("[data-game=\"tictactoe\"] .play-bot").await;
    browser.wait_for_text("#status", "Your turn").await;
    browser.click(".cell[data-cell=\"1,1\"]").await;
    let marked = browser
        .wait_for(
            "the bot's reply marked",
            "const l = document.querySelectorAll('.cell.last'); \
             return l.length === 1 && l[0].textContent === 'O' ? l[0].dataset.cell : null;",
            json!([]),
        )
        .await;
    assert_ne!(marked, "1,1");
    let label = browser.eval(
        "return document.querySelector('.cell.last').getAttribute('aria-label');",
        json!([]),
    );
    assert!(label.await.as_str().unwrap().ends_with("the last move"));
    // Stepping back to the version of X's move marks X's move.
    browser.click("#replay-prev").await;
    browser
        .wait_for_text("#replay-step", "played row 2, column 2.")
        .await;
    assert_eq!(
        browser
            .eval(
                "return document.querySelector('.cell.last').dataset.cell;",
                json!([])
            )
            .await,
        "1,1"
    );

    // The hard bot of an uploaded game searches for up to a second: the page says it thinks.
    browser.goto(&format!("{}/#/", app.address)).await;
    browser
        .select("[data-game=\"connect-four\"] .bot-level", "hard")
        .await;
    browser
        .click("[data-game=\"connect-four\"] .play-bot")
        .await;
    browser.enter_frame("#game-frame").await;
    browser.click(".drop[data-column=\"3\"]").await;
    browser.leave_frame().await;
    browser
        .wait_for_text("#status", "The hard bot is thinking…")
        .await;
    browser.close().await;
}

/// Two people finish a game and play a rematch (offered, accepted, scored); a second rematch
/// is declined, and the one who declined joins anyway; then one stops playing and the other
/// claims the game; and the room, left waiting for anyone, closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rematches_claims_and_rooms_nobody_joins_on_the_page() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.hook_limits.time_ms = 2_000;
        config.idle_rooms.claim_after_secs = 2;
        config.idle_rooms.waiting_room_idle_secs = 6;
    })
    .await;
    let driver = Driver::start().await;
    let alice = driver.browser("rematch-alice").await;
    let bob = driver.browser("rematch-bob").await;
    let alice_name = sign_up(&alice, &app, "alice").await;
    let bob_name = sign_up(&bob, &app, "bob").await;
    alice.click("[data-game=\"tictactoe\"] .new-room").await;
    let room = room_in_view(&alice).await;
    bob.goto(&format!("{}/#/room/{room}", app.address)).await;
    bob.click("#join").await;
    let score = |games: &str, alice_wins: u32| {
        format!("Score after {games}: {alice_name} {alice_wins} · {bob_name} 0")
    };
    let x_wins = || async {
        for (mover, other, cell, mark) in x_takes_the_top_row(&alice, &bob) {
            mover.wait_for_text("#status", "Your turn").await;
            click_cell(mover, cell).await;
            wait_for_mark(other, cell, mark).await;
        }
        alice.wait_for_text("#status", "You win!").await;
    };
    x_wins().await;
    alice.wait_for_text("#score", &score("1 game", 1)).await;

    // Play again offers Bob his seat; nobody else may take it meanwhile.
    alice.click("#play-again").await;
    alice
        .wait_for_text(
            "#status",
            &format!("Waiting for {bob_name} to accept the rematch"),
        )
        .await;
    bob.wait_for_text("#status", &format!("{alice_name} wants a rematch"))
        .await;
    assert_eq!(count(&bob, "#join").await, 0);
    bob.screenshot("rematch-offered").await;
    let stranger = app.new_player().await;
    assert_eq!(app.join(&stranger, &room).await.status(), 409);
    bob.click("#rematch-accept").await;
    x_wins().await;
    bob.wait_for_text("#score", &score("2 games", 2)).await;

    // The next offer Bob declines: Alice hears of it, the seat is anyone's, and Bob takes it
    // after all.
    alice.click("#play-again").await;
    bob.wait_for_text("#status", "wants a rematch").await;
    bob.click("#rematch-decline").await;
    alice
        .wait_for_text("#status", &format!("{bob_name} declined the rematch"))
        .await;
    bob.click("#join").await;
    alice.wait_for_text("#status", "Your turn").await;

    // Alice moves; Bob never answers. Once the game has stood still long enough, Alice (not
    // Bob, whose move it is) may claim it.
    click_cell(&alice, "1,1").await;
    wait_for_mark(&bob, "1,1", "X").await;
    alice.find("#claim").await;
    assert_eq!(
        count(&bob, "#claim").await,
        0,
        "the player the room waits on cannot claim"
    );
    alice.screenshot("claim-the-win").await;
    alice.click("#claim").await;
    alice
        .wait_for_text(
            "#status",
            &format!("{bob_name} stopped playing, and the game was claimed. You win!"),
        )
        .await;
    bob.wait_for_text("#status", "You stopped playing, and the game was claimed.")
        .await;
    alice.wait_for_text("#score", &score("3 games", 3)).await;

    // Bob, who stopped, is offered nothing; the room waits for anyone, then closes.
    alice.click("#play-again").await;
    alice
        .wait_for_text("#status", "Waiting for another player")
        .await;
    alice
        .wait_for_text("#status", "This room was closed: nobody joined it")
        .await;
    alice.screenshot("room-closed").await;
    alice.close().await;
    bob.close().await;
}
