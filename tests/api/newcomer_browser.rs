//! The page as someone new to it reads it: players named by their names whatever a game keeps
//! in its state, a replay that tells the past as the past, every field labelled, and a lobby
//! that fits a wide screen and a phone, with every leaderboard whole and ratings current.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{unique, TestApp, TestPlayer};
use crate::replay_browser::open_as;
use crate::webdriver::{Browser, Driver};

/// A game that keeps its winner as an id, and names its winners by id.
const WINNER_BY_ID: &str = "module.exports = {
  onRoomStart: () => ({ state: { winner: null } }),
  onPlayerJoin: () => ({}),
  onPlayerQuit: () => ({}),
  onPlayerMove: (player) => ({ state: { winner: player.id }, finished: true }),
  winners: (room) => (room.state.winner ? [room.state.winner] : []),
};
";

/// X (`x`) takes the top row while O plays the middle one.
async fn x_wins(app: &TestApp, room: &str, x: &TestPlayer, o: &TestPlayer) {
    for (player, cell) in [
        (x, [0, 0]),
        (o, [1, 0]),
        (x, [0, 1]),
        (o, [1, 1]),
        (x, [0, 2]),
    ] {
        app.play_ok(player, room, json!({"x": cell[0], "y": cell[1]}))
            .await;
    }
}

/// Every field on screen without a name a screen reader can say: its id or class.
async fn unlabelled(browser: &Browser) -> Value {
    browser
        .eval(
            "return [...document.querySelectorAll('input, select, textarea')] \
             .filter((f) => f.type !== 'hidden' && !(f.labels && f.labels.length) \
               && !f.getAttribute('aria-label') && !f.getAttribute('aria-labelledby')) \
             .map((f) => f.id || f.className);",
            json!([]),
        )
        .await
}

/// How far down the page `css` begins, in pixels.
async fn top_of(browser: &Browser, css: &str) -> f64 {
    browser
        .eval(
            "return document.querySelector(arguments[0]).getBoundingClientRect().top + window.scrollY;",
            json!([css]),
        )
        .await
        .as_f64()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newcomer_reads_names_a_true_replay_labelled_fields_and_a_lobby_that_fits() {
    let app = TestApp::spawn_for_browsers().await;
    let driver = Driver::start().await;
    let browser = driver.browser("newcomer").await;

    // Signed out, at 1280 and at 390 pixels: every field has a name, the password fields a
    // visible one; the lobby's columns leave no hole, and a phone reaches the open rooms soon.
    browser.resize(1280, 900).await;
    browser.goto(&format!("{}/#/", app.address)).await;
    browser.find("#open-rooms li").await;
    assert_eq!(unlabelled(&browser).await, json!([]));
    let visible = "return ['signin-name', 'signin-password'].every((id) => { \
                   const f = document.getElementById(id); \
                   return f.placeholder || [...f.labels].some((l) => l.offsetWidth > 1); });";
    assert_eq!(browser.eval(visible, json!([])).await, true);
    let empty = browser.text("#open-rooms").await;
    assert!(
        empty.contains("No open rooms") && !empty.contains("above"),
        "{empty}"
    );
    let gap = "const open = document.getElementById('open-rooms').closest('.card').getBoundingClientRect(); \
               const next = document.getElementById('live-rooms').closest('.card').getBoundingClientRect(); \
               const games = document.getElementById('games').closest('.card').getBoundingClientRect(); \
               return [next.top - open.bottom, open.left > games.left];";
    let [hole, right] = <[Value; 2]>::try_from(
        browser
            .eval(gap, json!([]))
            .await
            .as_array()
            .unwrap()
            .clone(),
    )
    .unwrap();
    assert!(
        hole.as_f64().unwrap() < 40.0,
        "a hole under the open rooms: {hole}"
    );
    assert_eq!(
        right, true,
        "the games are on the left, the rooms on the right"
    );
    browser.resize(390, 844).await;
    let open_at = top_of(&browser, "#open-rooms").await;
    assert!(
        open_at < 1200.0,
        "on a phone the open rooms begin {open_at} px down"
    );
    assert_eq!(unlabelled(&browser).await, json!([]));
    browser.screenshot("newcomer-lobby-phone").await;
    browser.resize(1280, 900).await;

    // A game that keeps ids: the page names the winner, and names its owner by the game.
    let author = app.publish("winner-by-id", WINNER_BY_ID).await;
    let (room, alice, bob) = app.started_game("winner-by-id").await;
    app.play_ok(&bob, &room, json!({"say": "done"})).await;
    browser
        .goto(&format!("{}/#/room/{room}", app.address))
        .await;
    browser
        .wait_for_text("#status", &format!("Game over: {} wins!", bob.username))
        .await;
    let title = browser.text("h1").await;
    assert!(
        title.contains(&format!("(by {})", author.username)),
        "{title}"
    );

    // A finished tic-tac-toe game, replayed by X: the past is told as the past, and moves as
    // the board labels its cells.
    let (ttt, x, o) = app.started_tictactoe().await;
    x_wins(&app, &ttt, &x, &o).await;
    open_as(&browser, &app, &x, &format!("#/room/{ttt}/v/3")).await;
    browser
        .wait_for_text("#replay-step", "Version 3 of 8")
        .await;
    let status = browser.text("#status").await;
    assert!(status.contains("It was your move."), "{status}");
    assert!(!status.contains("Your turn"), "{status}");
    browser.click("#replay-next").await;
    browser
        .wait_for_text(
            "#replay-step",
            &format!("{} played row 1, column 1.", x.username),
        )
        .await;
    assert!(browser
        .text("#status")
        .await
        .contains(&format!("It was {}'s move.", o.username)));

    // Against the computer, version 1 is an open room, not an invitation to wait.
    let response = app
        .post(
            "/rooms",
            Some(&x.token),
            Some(&json!({"game": "tictactoe", "bot": "easy"})),
        )
        .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let bot_room: Value = response.json().await.unwrap();
    let bot_room = bot_room["id"].as_str().unwrap().to_owned();
    browser
        .goto(&format!("{}/#/room/{bot_room}/v/1", app.address))
        .await;
    browser.wait_for_text("#replay-step", "Version 1 of").await;
    let status = browser.text("#status").await;
    assert!(!status.contains("Waiting for another player"), "{status}");
    assert!(
        status.contains("The room was waiting for players."),
        "{status}"
    );
    // Live, before anyone has moved: no talk of versions.
    browser.click("#replay-live").await;
    browser.wait_for_text("#replay-step", "Live").await;
    let live = browser.text("#replay-step").await;
    assert!(!live.contains("version"), "{live}");
    assert!(live.contains("no moves yet"), "{live}");

    // Six players, each with five rated games: the leaderboard's card shows five, and its own
    // screen all six, each with the "?" explained where ratings are provisional.
    let players: Vec<TestPlayer> = {
        let mut players = Vec::new();
        for _ in 0..6 {
            players.push(app.register(&unique("ranked")).await);
        }
        players
    };
    for a in 0..6 {
        for b in a + 1..6 {
            let opened = app
                .create_room(&players[a], json!({"game": "tictactoe"}))
                .await;
            let id = opened["id"].as_str().unwrap().to_owned();
            assert_eq!(app.join(&players[b], &id).await.status(), StatusCode::OK);
            x_wins(&app, &id, &players[a], &players[b]).await;
        }
    }
    browser.goto(&format!("{}/#/", app.address)).await;
    let card = "[data-game=\"tictactoe\"] .leaderboard-list li";
    browser.find(card).await;
    assert_eq!(crate::browser::count(&browser, card).await, 5);
    let legend = browser.text("#rating-legend").await;
    assert!(legend.contains("provisional"), "{legend}");
    browser
        .click("[data-game=\"tictactoe\"] .whole-leaderboard")
        .await;
    browser.find("#leaderboard li").await;
    assert_eq!(crate::browser::count(&browser, "#leaderboard li").await, 6);

    // Ratings stay current: a rated game finished elsewhere shows once the lobby is opened
    // again, without a reload.
    let opened = app.create_room(&alice, json!({"game": "tictactoe"})).await;
    let again = opened["id"].as_str().unwrap().to_owned();
    open_as(&browser, &app, &alice, "#/").await;
    let mine = format!(
        "#my-rooms .rating[data-game=\"tictactoe\"][data-player=\"{}\"]",
        alice.id
    );
    browser.wait_for_text(&mine, "1500?").await;
    browser.screenshot("newcomer-lobby-wide").await;
    let shown = browser.text("main").await;
    assert!(!shown.contains("null"), "{shown}");
    assert_eq!(app.join(&bob, &again).await.status(), StatusCode::OK);
    x_wins(&app, &again, &alice, &bob).await;
    browser.goto(&format!("{}/#/account", app.address)).await;
    browser.find("#sessions").await;
    browser.goto(&format!("{}/#/", app.address)).await;
    let rating = browser
        .wait_for(
            "alice's new rating",
            "const r = document.querySelector(arguments[0]); \
             return r && r.textContent && !r.textContent.includes('1500') ? r.textContent : null;",
            json!([mine]),
        )
        .await;
    assert!(rating.as_str().unwrap().contains('?'), "{rating}");
    browser.close().await;
}
