//! The page in Chromium over HTTPS, as people reach a server behind a proxy or on its own TLS:
//! signed up in a secure context, a game against a bot played to its end, and an author's
//! framed page running its scripts from the HTTPS origin, with nothing in the browser's
//! console. Chromium trusts the tests' site key as a real certificate (`certificates.rs`), so
//! a certificate warning would stop the page from loading at all.

use serde_json::json;

use crate::browser::{count, room_in_view};
use crate::helpers::unique;
use crate::webdriver::Driver;

/// Plays through the page at `base` (`https://…`), whose server has the game `framed`
/// (`proxies::publish_framed`).
pub(crate) async fn played_in_chromium(base: &str, name: &str) {
    let driver = Driver::start().await;
    let browser = driver.browser(name).await;
    let username = unique(name);
    browser.goto(&format!("{base}/")).await;
    browser.type_into("#username", &username).await;
    browser.click("#signup").await;
    browser.wait_for_text("#me", &username).await;
    let secure = browser
        .eval(
            "return [location.protocol, window.isSecureContext];",
            json!([]),
        )
        .await;
    assert_eq!(secure, json!(["https:", true]));

    // Against a bot, whose moves reach the page on the room's stream.
    browser.click("[data-game=\"tictactoe\"] .play-bot").await;
    room_in_view(&browser).await;
    for _ in 0..5 {
        let state = browser
            .wait_for(
                "the player's turn or the end",
                "const e = document.getElementById('status'); const s = e ? e.textContent : ''; \
                 return s.includes('Your turn') || s.includes('win') || s.includes('draw') ? s : null;",
                json!([]),
            )
            .await;
        if !state.as_str().unwrap().contains("Your turn") {
            break;
        }
        let before = count(&browser, ".cell:disabled").await;
        browser.click(".cell:not(:disabled)").await;
        browser
            .wait_for(
                "the board to change",
                "return document.querySelectorAll('.cell:disabled').length > arguments[0];",
                json!([before]),
            )
            .await;
    }
    browser
        .wait_for(
            "the game's end",
            "const e = document.getElementById('status'); const s = e ? e.textContent : ''; \
             return s.includes('win') || s.includes('draw');",
            json!([]),
        )
        .await;

    // An author's page, framed from the HTTPS origin, runs its own scripts.
    browser.goto(&format!("{base}/#/")).await;
    browser.click("[data-game=\"framed\"] .new-private").await;
    room_in_view(&browser).await;
    browser.enter_frame("#game-frame").await;
    browser
        .wait_for(
            "the game's own script",
            "return document.body !== null && document.body.dataset.ready === 'yes';",
            json!([]),
        )
        .await;
    browser.leave_frame().await;
    // The game against the bot is over, and the framed room waits for a second player.
    browser
        .wait_for(
            "no move to wait on the player",
            "return document.getElementById('turns').hidden;",
            json!([]),
        )
        .await;
    browser.screenshot("https").await;

    let console = browser.console().await;
    let complaints: Vec<_> = console
        .iter()
        .filter(|entry| entry["level"] == "SEVERE" || entry["level"] == "WARNING")
        .collect();
    assert!(complaints.is_empty(), "the console: {console:?}");
}
