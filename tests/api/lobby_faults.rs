//! One game's broken view hook never takes the lobby down: listings show its rooms without
//! their state, the fault is kept (the hook runs once per version and viewer, not once per
//! listing), and the owner reads it in the game's log.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{unique, TestApp, TestPlayer};
use crate::moderation::new_admin;

/// A game whose view hook answers a `Symbol` (no JSON can hold it) to anyone not seated.
const SYMBOL_VIEW: &str = r#"
module.exports = {
  onRoomStart: () => ({ state: { secret: 1 } }),
  onPlayerJoin: () => ({}),
  onPlayerQuit: () => ({}),
  onPlayerMove: () => ({}),
  onPlayerView: (viewer, room) => (viewer ? room.state : Symbol('x')),
};
"#;

/// The same, looping for anyone not seated.
const LOOPING_VIEW: &str = r#"
module.exports = {
  onRoomStart: () => ({ state: { secret: 1 } }),
  onPlayerJoin: () => ({}),
  onPlayerQuit: () => ({}),
  onPlayerMove: () => ({}),
  onPlayerView: (viewer, room) => { if (viewer) return room.state; for (;;) {} },
};
"#;

/// The faults of `game`'s view hook in its log, once at least `count` are there (lines are
/// stored a moment after the call), or after a few seconds whatever their number.
async fn view_faults(app: &TestApp, owner: &TestPlayer, game: &str, count: usize) -> usize {
    let started = Instant::now();
    loop {
        let path = format!("/games/{game}/logs?limit=1000");
        let response = app
            .request(Method::GET, &path, Some(&owner.token), None)
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        let page: Value = response.json().await.unwrap();
        let faults = (page["lines"].as_array().unwrap().iter())
            .filter(|line| line["hook"] == "onPlayerView" && line["level"] == "error")
            .count();
        if faults >= count || started.elapsed() > Duration::from_secs(3) {
            return faults;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The listing at `path` for anyone, which must answer; the entry for `room`.
async fn listed(app: &TestApp, path: &str, room: &str) -> Value {
    let page = app.get_json(path).await;
    (page["rooms"].as_array().unwrap().iter())
        .find(|r| r["id"] == room)
        .unwrap_or_else(|| panic!("{room} is listed at {path}: {page}"))
        .clone()
}

async fn the_lobby_survives(source: &str, code: &str) {
    let app = TestApp::spawn().await;
    let game = unique("broken-view").replace('_', "-");
    let owner = app.publish(&game, source).await;
    let opener = app.new_player().await;
    let broken = app.create_room(&opener, json!({"game": game})).await;
    let broken = broken["id"].as_str().unwrap().to_owned();
    let healthy = app.create_room(&opener, json!({"game": "tictactoe"})).await;
    let healthy = healthy["id"].as_str().unwrap().to_owned();

    for path in ["/rooms", "/rooms?joinable=true&finished=false"] {
        let shown = listed(&app, path, &broken).await;
        assert_eq!(shown["state"], Value::Null, "{path}: no state: {shown}");
        assert_eq!(shown["viewFault"], code, "{path}");
        assert_eq!(shown["players"][0]["id"], opener.id.as_str());
        let other = listed(&app, path, &healthy).await;
        assert!(other["state"]["board"].is_array(), "{other}");
        assert!(other.get("viewFault").is_none());
    }
    // The opener, seated, still sees their room whole.
    let response = app
        .request(Method::GET, "/rooms", Some(&opener.token), None)
        .await;
    let page: Value = response.json().await.unwrap();
    let own = (page["rooms"].as_array().unwrap().iter())
        .find(|r| r["id"] == broken.as_str())
        .unwrap();
    assert_eq!(own["state"]["secret"], 1);
    // The room alone still answers with its fault, never with the state.
    let response = app.get(&format!("/rooms/{broken}")).await;
    assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let problem: Value = response.json().await.unwrap();
    assert_eq!(problem["code"], code);

    // The fault was remembered: however many listings, the hook failed once for anyone.
    assert_eq!(view_faults(&app, &owner, &game, 2).await, 1);

    // Unpublished with its rooms closed, the room still lists among the finished ones.
    let admin = new_admin(&app).await;
    let response = app
        .request(
            Method::POST,
            &format!("/admin/games/{game}/unpublish"),
            Some(&admin.token),
            Some(&json!({"reason": "a broken view", "rooms": "close"})),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let shown = listed(&app, "/rooms?finished=true", &broken).await;
    assert_eq!(shown["state"], Value::Null);
}

#[tokio::test]
async fn a_view_hook_that_answers_no_json_leaves_the_lobby_standing() {
    the_lobby_survives(SYMBOL_VIEW, "invalid_patch").await;
}

#[tokio::test]
async fn a_view_hook_that_loops_for_watchers_leaves_the_lobby_standing() {
    the_lobby_survives(LOOPING_VIEW, "hook_timeout").await;
}
