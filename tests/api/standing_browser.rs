//! Standing on the page, in Chromium: a game's card lists its leaderboard, a name opens the
//! player's profile, ratings stand by names, the lobby says how many are online, and a player
//! who closes their tab shows as gone to the other.

use serde_json::json;

use crate::browser::{room_in_view, sign_up};
use crate::helpers::TestApp;
use crate::ratings::beats;
use crate::webdriver::Driver;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaderboards_profiles_ratings_by_names_and_who_is_here() {
    let app = TestApp::spawn_for_browsers().await;
    // Five rated wins put a player on the leaderboard.
    let (leader, runner_up) = (app.new_player().await, app.new_player().await);
    for _ in 0..5 {
        beats(&app, &leader, &runner_up).await;
    }
    let driver = Driver::start().await;
    let alice = driver.browser("standing-alice").await;
    let bob = driver.browser("standing-bob").await;
    sign_up(&alice, &app, "alice").await;
    alice
        .wait_for_text("#online-count", "1 player online")
        .await;

    // The game's card lists the leader; their name opens their profile.
    let listed = format!(
        "[data-game=\"tictactoe\"] .leaderboard a[href=\"#/player/{}\"]",
        leader.id
    );
    alice.wait_for_text(&listed, &leader.username).await;
    // Names in the lobby's rooms carry their ratings (settled: five games, no "?").
    let rated = format!("{} (", leader.username);
    alice.wait_for_text("#finished-rooms", &rated).await;
    alice.screenshot("lobby-leaderboard").await;
    alice.click(&listed).await;
    alice.wait_for_text("#profile-name", &leader.username).await;
    alice
        .wait_for_text("table.ratings [data-game=\"tictactoe\"]", "#1")
        .await;
    alice.wait_for_text("#recent-title", "Recent games").await;
    let replays = crate::browser::count(&alice, ".replay-link").await;
    assert_eq!(replays, 5, "each recent game links to its replay");
    alice.screenshot("profile").await;

    // Who is here: Alice opens a room, Bob joins it by its link; each sees the other's dot.
    alice.goto(&format!("{}/", app.address)).await;
    alice.click("[data-game=\"tictactoe\"] .new-room").await;
    let room = room_in_view(&alice).await;
    let bob_name = sign_up(&bob, &app, "bob").await;
    bob.goto(&format!("{}/#/room/{room}", app.address)).await;
    bob.click("#join").await;
    let here = format!("#players .dot.here[aria-label=\"{bob_name} is here\"]");
    alice.find(&here).await;
    // Ratings stand by names in the room: new players are provisional.
    alice.wait_for_text("#players", "(1500?)").await;
    alice.screenshot("both-here").await;

    // Bob closes his browser: gone, to Alice.
    bob.close().await;
    alice
        .wait_for_text("#presence-note", &format!("{bob_name} left the room"))
        .await;
    let away = format!("#players .dot.away[aria-label=\"{bob_name} is away\"]");
    alice.find(&away).await;
    assert_eq!(app.room(&room).await["online"].as_array().unwrap().len(), 1);
    alice.screenshot("bob-left").await;
    let console = alice.console().await;
    let errors: Vec<_> = console
        .iter()
        .filter(|entry| entry["level"] == json!("SEVERE"))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    alice.close().await;
}
