//! Computer opponents for an uploaded game that exports `enumerateMoves`: each level seated
//! and playing through the same path as anyone, from the game's own hooks.

use serde_json::{json, Value};

use crate::helpers::{example, unique, TestApp};

/// The first empty cell of a tic-tac-toe board, as a move.
fn first_empty(room: &Value) -> Value {
    let cells: Vec<&Value> = room["state"]["board"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row.as_array().unwrap())
        .collect();
    let cell = cells.iter().position(|c| c.is_null()).unwrap();
    json!({"x": cell / 3, "y": cell % 3})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uploaded_game_with_enumerate_moves_gets_bots_at_every_level() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        // A small budget: these games show that bots play, not how well.
        config.bot_search.bot_hard_playouts = 300;
        config.bot_search.bot_medium_playouts = 50;
    })
    .await;
    let game = "js-tictactoe-bots";
    app.publish(game, &example("tictactoe.js")).await;
    let listing = app.get_json(&format!("/games/{game}")).await;
    assert_eq!(listing["bots"], true, "{listing}");
    let player = app.register(&unique("human")).await;
    for level in ["easy", "medium", "hard"] {
        let body = json!({"game": game, "bot": level, "botPlaysFirst": true});
        let mut room = app.create_room(&player, body).await;
        assert_eq!(
            room["state"]["moveCount"], 1,
            "the {level} bot opened: {room}"
        );
        let id = room["id"].as_str().unwrap().to_owned();
        while room["finished"] == false {
            room = app.play_ok(&player, &id, first_empty(&room)).await;
        }
        let winner = room["state"]["winner"]["username"]
            .as_str()
            .unwrap_or("nobody");
        if level == "hard" {
            assert_ne!(
                winner, player.username,
                "the hard bot never loses to this player"
            );
        }
        let events = app.events(&id).await;
        let bot_moves = events
            .iter()
            .filter(|e| e["kind"] == "move" && e["player"]["username"] != player.username.as_str())
            .count();
        assert!(
            bot_moves >= 2,
            "{level}: the bot moved, each move a version of its own"
        );
    }
}
