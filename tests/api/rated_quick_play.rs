//! Rated quick play: a room quick play opens keeps its creator's rating, and quick play joins
//! it only from within a window of that rating, 100 either way at first and 50 wider for each
//! 5 s it has waited, anyone's after a minute; and it stays race-free.

use std::collections::HashSet;

use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::databases::{database_execute, on_postgres};
use crate::helpers::{TestApp, TestPlayer};
use crate::ratings::beats;

async fn quickplay(app: &TestApp, player: &TestPlayer) -> (StatusCode, String) {
    let response = app
        .post(
            "/rooms/quickplay",
            Some(&player.token),
            Some(&json!({"game": "tictactoe"})),
        )
        .await;
    let status = response.status();
    let room: Value = response.json().await.unwrap();
    assert!(status.is_success(), "{room}");
    (status, room["id"].as_str().unwrap().to_owned())
}

/// A player at 1662, after one rated win (their opponent is at 1338).
async fn a_winner(app: &TestApp) -> (TestPlayer, TestPlayer) {
    let (winner, loser) = (app.new_player().await, app.new_player().await);
    beats(app, &winner, &loser).await;
    (winner, loser)
}

/// Every room quick play opened and still waits in has waited `ms` longer, as if that time had
/// passed.
async fn waited(app: &TestApp, sql: &'static str) {
    database_execute(&app.database, sql).await;
}

#[tokio::test]
async fn close_ratings_are_paired_first_and_the_window_widens_as_a_room_waits() {
    let app = TestApp::spawn().await;
    let (strong, weak) = a_winner(&app).await; // 1662 and 1338
    let (status, strong_room) = quickplay(&app, &strong).await;
    assert_eq!(status, StatusCode::CREATED);

    // 162 points away: not yet. A newcomer (1500) opens a room of their own instead...
    let newcomer = app.new_player().await;
    let (status, newcomer_room) = quickplay(&app, &newcomer).await;
    assert_eq!(status, StatusCode::CREATED, "1500 is outside 1662's ±100");
    // ...which the next newcomer joins, though the strong player's room is older.
    let (status, joined) = quickplay(&app, &app.new_player().await).await;
    assert_eq!((status, &joined), (StatusCode::OK, &newcomer_room));

    // Five seconds on the window is ±150: still not. Ten seconds on, ±200: yes.
    waited(
        &app,
        "UPDATE rooms SET quick_play_since = quick_play_since - 5000 WHERE quick_play_since IS NOT NULL",
    )
    .await;
    let (status, elsewhere) = quickplay(&app, &app.new_player().await).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_ne!(elsewhere, strong_room);
    // (That room is taken, so the next newcomer has only the strong player's to consider.)
    quickplay(&app, &app.new_player().await).await;
    waited(
        &app,
        "UPDATE rooms SET quick_play_since = quick_play_since - 5000 WHERE quick_play_since IS NOT NULL",
    )
    .await;
    let (status, joined) = quickplay(&app, &app.new_player().await).await;
    assert_eq!((status, &joined), (StatusCode::OK, &strong_room));

    // After a minute, anyone: the weakest (324 away) joins a strong player's room.
    let (status, waiting) = quickplay(&app, &strong).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, own) = quickplay(&app, &weak).await;
    assert_eq!(status, StatusCode::CREATED, "1338 is outside 1662's ±100");
    waited(
        &app,
        "UPDATE rooms SET quick_play_since = quick_play_since - 61000 WHERE quick_play_since IS NOT NULL",
    )
    .await;
    let (status, joined) = quickplay(&app, &weak).await;
    assert_eq!((status, &joined), (StatusCode::OK, &waiting), "{own}");
}

/// Players within each other's window who quick-play at the same moment always meet; players
/// outside it never do, racing or not. On PostgreSQL each of a pair asks a server of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn simultaneous_rated_quick_players_share_a_room_only_within_the_window() {
    let app = TestApp::spawn().await;
    let beside = match on_postgres() {
        true => Some(app.spawn_beside(turnhouse::games::builtin()).await),
        false => None,
    };
    let other = beside.as_ref().unwrap_or(&app);
    for round in 0..5 {
        let ((first, _), (second, loser)) = (a_winner(&app).await, a_winner(&app).await);
        let close =
            join_all([(&app, &first), (other, &second)].map(|(a, p)| quickplay(a, p))).await;
        let statuses: HashSet<StatusCode> = close.iter().map(|(s, _)| *s).collect();
        assert_eq!(
            statuses,
            HashSet::from([StatusCode::CREATED, StatusCode::OK]),
            "round {round}: 1662 and 1662 meet"
        );
        assert_eq!(close[0].1, close[1].1);

        let apart = join_all([(&app, &first), (other, &loser)].map(|(a, p)| quickplay(a, p))).await;
        assert_eq!(
            [apart[0].0, apart[1].0],
            [StatusCode::CREATED, StatusCode::CREATED],
            "round {round}: 1662 and 1338 do not meet"
        );
        assert_ne!(apart[0].1, apart[1].1);
        // Leave no room waiting for the next round: each is filled from its own window.
        let (other_first, other_loser) = a_winner(&app).await;
        for (player, (_, room)) in [&other_first, &other_loser].into_iter().zip(&apart) {
            assert_eq!(
                quickplay(&app, player).await,
                (StatusCode::OK, room.clone())
            );
        }
    }
}
