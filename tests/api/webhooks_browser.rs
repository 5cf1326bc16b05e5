//! A game's webhooks on the page, for its owner: an endpoint added, its secret shown once, a
//! ping delivered and verified by the receiver, the log, a redelivery, a pause.

use serde_json::json;

use crate::browser::count;
use crate::helpers::{example, unique, TestApp};
use crate::replay_browser::open_as;
use crate::webdriver::Driver;
use crate::webhook_receiver::Receiver;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_adds_a_webhook_pings_it_and_reads_its_log_on_the_page() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.webhooks.allow_private_destinations = true;
    })
    .await;
    let game = unique("paged").replace('_', "-");
    let owner = app.publish(&game, &example("tictactoe.js")).await;
    let stranger = app.new_player().await;
    let receiver = Receiver::start(&[]).await;

    let driver = Driver::start().await;
    let browser = driver.browser("webhooks-card").await;
    let card = format!("[data-game=\"{game}\"]");
    open_as(&browser, &app, &stranger, "#/").await;
    browser.find(&format!("{card} .new-room")).await;
    assert_eq!(
        count(&browser, &format!("{card} details.webhooks")).await,
        0,
        "not theirs"
    );

    open_as(&browser, &app, &owner, "#/").await;
    browser
        .click(&format!("{card} details.webhooks summary"))
        .await;
    browser
        .wait_for_text(&format!("{card} .webhooks-list"), "No endpoints yet.")
        .await;
    browser
        .type_into(&format!("{card} .webhook-url"), &receiver.url())
        .await;
    browser.click(&format!("{card} .add-webhook")).await;
    browser
        .wait_for_text(&format!("{card} .webhook-secret"), "whsec_")
        .await;
    let secret = browser.text(&format!("{card} .webhook-secret code")).await;
    receiver.set(json!({"secrets": [secret]})).await;
    browser
        .wait_for_text(&format!("{card} .webhook-status"), "active")
        .await;

    browser.click(&format!("{card} .webhook .ping")).await;
    let got = receiver
        .wait_for(std::time::Duration::from_secs(30), |r| !r.is_empty())
        .await;
    assert_eq!(
        got[0]["verified"],
        json!([0]),
        "signed with the secret the page showed"
    );
    assert_eq!(got[0]["body"]["type"], "ping");
    // The log shows it delivered (asked again until it does), and sends it again.
    let delivered = browser
        .wait_for(
            "the ping delivered in the log",
            "const button = document.querySelector(arguments[0] + ' .show-deliveries'); \
             const item = document.querySelector(arguments[0] + ' .delivery'); \
             if (item && item.dataset.state === 'delivered') return item.textContent; \
             button.click(); return null;",
            json!([card]),
        )
        .await;
    assert!(
        delivered.as_str().unwrap().contains("HTTP 200"),
        "{delivered}"
    );
    browser.click(&format!("{card} .delivery .redeliver")).await;
    let got = receiver
        .wait_for(std::time::Duration::from_secs(30), |r| r.len() == 2)
        .await;
    assert_eq!(got[1]["id"], got[0]["id"], "the same webhook-id");

    browser.click(&format!("{card} .webhook .pause")).await;
    browser
        .wait_for_text(&format!("{card} .webhook-status"), "paused")
        .await;
    browser.screenshot("owner-webhooks").await;
    browser.close().await;
}
