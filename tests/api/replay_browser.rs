//! Replays on the page: any room, step by step, each version as this viewer saw it.

use serde_json::{json, Value};

use crate::browser::count;
use crate::client::TestPlayer;
use crate::helpers::TestApp;
use crate::webdriver::{Browser, Driver};

/// Signs the browser in as `player` (as the page itself keeps a player) and opens `hash`.
pub(crate) async fn open_as(browser: &Browser, app: &TestApp, player: &TestPlayer, hash: &str) {
    browser.goto(&format!("{}/healthz", app.address)).await;
    browser
        .eval(
            "localStorage.setItem('turnhouse.player', JSON.stringify(arguments[0])); return true;",
            json!([{"id": player.id, "username": player.username, "token": player.token}]),
        )
        .await;
    browser.goto(&format!("{}/{hash}", app.address)).await;
}

/// The version the replay shows, once the page shows version `version`.
async fn wait_for_version(browser: &Browser, version: i64) {
    browser
        .wait_for_text("#replay-step", &format!("Version {version} of"))
        .await;
}

/// Ships drawn in the waters of seat `side`.
async fn ships(browser: &Browser, side: usize) -> i64 {
    count(browser, &format!(".spot.ship[data-side=\"{side}\"]")).await
}

/// Five ships across, on rows 0, 2, 4, 6 and 8, or down, on those columns.
fn fleet(across: bool) -> Value {
    let ships: Vec<Value> = (0..5)
        .map(|i| match across {
            true => json!({"row": i * 2, "col": 0, "across": true}),
            false => json!({"row": 0, "col": i * 2, "across": false}),
        })
        .collect();
    json!({ "fleet": ships })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_battleship_room_replays_each_version_as_each_player_saw_it() {
    let app = TestApp::spawn_for_browsers().await;
    let (room, alice, bob) = app.started_game("battleship").await;
    // Versions 1 to 3 opened the room and seated them; 4 and 5 place the fleets; 6 to 8 are
    // shots (alice hits at 6 and 8, bob misses at 7).
    app.play_ok(&alice, &room, fleet(true)).await;
    app.play_ok(&bob, &room, fleet(false)).await;
    app.play_ok(&alice, &room, json!({"row": 0, "col": 0}))
        .await;
    app.play_ok(&bob, &room, json!({"row": 9, "col": 9})).await;
    app.play_ok(&alice, &room, json!({"row": 1, "col": 0}))
        .await;

    let driver = Driver::start().await;
    let browser = driver.browser("replay-battleship").await;
    // While the game is on, bob's replay hides alice's fleet, and her move that placed it.
    open_as(&browser, &app, &bob, &format!("#/room/{room}/v/4")).await;
    wait_for_version(&browser, 4).await;
    let step = browser.text("#replay-step").await;
    assert!(step.contains("moved (hidden)"), "{step}");
    assert_eq!((ships(&browser, 0).await, ships(&browser, 1).await), (0, 0));
    assert!(browser.text("#status").await.starts_with("Replay"));
    assert_eq!(
        count(&browser, ".spot:not([disabled])").await,
        0,
        "a replay takes no moves"
    );

    // Bob forfeits: version 9 finishes the room.
    let response = app.quit(&bob, &room).await;
    assert!(response.status().is_success());

    for (player, seat) in [(&alice, 0), (&bob, 1)] {
        open_as(&browser, &app, player, &format!("#/room/{room}/v/1")).await;
        for version in 1..=9 {
            if version > 1 {
                browser.click("#replay-next").await;
            }
            wait_for_version(&browser, version).await;
            assert_eq!(
                browser.url().await,
                format!("{}/#/room/{room}/v/{version}", app.address)
            );
            let (own, other) = (ships(&browser, seat).await, ships(&browser, 1 - seat).await);
            // Each fleet is placed at the version its owner's move made.
            let placed = if seat == 0 { 4 } else { 5 };
            if version < 9 {
                assert_eq!(
                    own,
                    if version >= placed { 17 } else { 0 },
                    "{player:?} at {version}"
                );
                assert_eq!(
                    other, 0,
                    "{} sees the other fleet at {version}",
                    player.username
                );
            } else {
                // The game shows both fleets once it is over.
                assert_eq!((own, other), (17, 17));
            }
        }
        // The room is finished, so every move shows now, whoever made it.
        browser.click("#replay-first").await;
        wait_for_version(&browser, 1).await;
        browser
            .eval(
                "document.getElementById('replay-slider').value = '6'; \
                 document.getElementById('replay-slider').dispatchEvent(new Event('input')); return true;",
                json!([]),
            )
            .await;
        wait_for_version(&browser, 6).await;
        let step = browser.text("#replay-step").await;
        assert!(
            step.contains(&format!("{} played row 1, column 1.", alice.username)),
            "{step}"
        );
    }
    browser.screenshot("replay-battleship").await;

    // Back to live: the address and the status follow.
    browser.click("#replay-live").await;
    browser.wait_for_text("#replay-step", "Live").await;
    assert_eq!(
        browser.url().await,
        format!("{}/#/room/{room}", app.address)
    );
    assert!(!browser.text("#status").await.starts_with("Replay"));

    // The lobby lists the finished game with a link to its replay.
    browser.goto(&format!("{}/#/", app.address)).await;
    let link = format!("#finished-rooms [data-room=\"{room}\"] .replay-link");
    browser.find(&link).await;
    browser.click(&link).await;
    wait_for_version(&browser, 1).await;
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_s_card_shows_its_owner_the_log_live_and_nobody_else() {
    let app = TestApp::spawn_for_browsers().await;
    let source = "module.exports = {
      onRoomStart: () => ({ state: { n: 0 } }),
      onPlayerJoin: (player) => { console.log(`${player.username} is here`); return {}; },
      onPlayerQuit: () => ({}),
      onPlayerMove: (player, move, room) => {
        console.warn(`move ${room.state.n + 1}`);
        return { state: { n: room.state.n + 1 } };
      },
    };";
    let owner = app.publish("logged", source).await;
    let player = app.new_player().await;
    let room = app.create_room(&player, json!({"game": "logged"})).await;
    let room = room["id"].as_str().unwrap().to_owned();

    let driver = Driver::start().await;
    let browser = driver.browser("game-logs-card").await;
    let card = "[data-game=\"logged\"]";
    open_as(&browser, &app, &player, "#/").await;
    browser.find(&format!("{card} .new-room")).await;
    assert_eq!(
        count(&browser, &format!("{card} details.logs")).await,
        0,
        "not the owner's"
    );

    open_as(&browser, &app, &owner, "#/").await;
    browser.click(&format!("{card} details.logs summary")).await;
    browser
        .wait_for_text(
            &format!("{card} .log-lines"),
            &format!("{} is here", player.username),
        )
        .await;
    // A move now: its line arrives by itself, with its version, hook and level.
    app.play_ok(&player, &room, json!({})).await;
    let line = browser
        .wait_for(
            "the move's line",
            "const l = [...document.querySelectorAll('.log-lines li')].find((li) => li.textContent.includes('move 1')); \
             return l ? [l.dataset.level, l.dataset.version, l.textContent] : null;",
            json!([]),
        )
        .await;
    assert_eq!(line[0], "warn");
    assert_eq!(line[1], "3");
    assert!(line[2].as_str().unwrap().contains("onPlayerMove"), "{line}");
    browser.screenshot("owner-logs").await;
    browser.close().await;
}
