//! A game's name cannot pass for another game's: the built-in games' names are reserved, and
//! characters that hide or reorder text are refused. And an empty form field is no setting.

use reqwest::multipart::Form;
use reqwest::StatusCode;

use crate::helpers::{assert_problem, example, file_part, unique, TestApp};

#[tokio::test]
async fn a_game_cannot_take_a_built_in_name_or_hide_characters_in_its_own() {
    let app = TestApp::spawn().await;
    let author = app.new_player().await;
    let id = unique("lookalike").replace('_', "-");
    for name in [
        "Tic-tac-toe",
        "tic tac toe",
        "BATTLESHIP",
        "3D Tic-Tac-Toe",
        "Chess\u{202E}",
        "Go\u{200B}",
    ] {
        let query = format!("?name={}", urlencode(name));
        let form = Form::new().part(
            "source",
            file_part("game.js", example("tictactoe.js").into_bytes()),
        );
        let response = app.upload_form(&author, &id, &query, form).await;
        settings_refused(response, "name").await;
    }
    // Nothing was published by any of them.
    assert_eq!(
        app.get(&format!("/games/{id}")).await.status(),
        StatusCode::NOT_FOUND
    );
    // A name of its own is fine, and the listing names its owner beside it.
    let form = Form::new()
        .part(
            "source",
            file_part("game.js", example("tictactoe.js").into_bytes()),
        )
        .text("name", "Tic-tac-toe, my way")
        .text("moveExample", "");
    let response = app.upload_form(&author, &id, "", form).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let listing = app.get_json(&format!("/games/{id}")).await;
    assert_eq!(listing["name"], "Tic-tac-toe, my way");
    assert_eq!(listing["owner"]["username"], author.username.as_str());
    // The empty `moveExample` field meant none.
    assert_eq!(listing["moveExample"], serde_json::Value::Null);
}

/// Checks that `response` refuses the game's settings, saying `what` was wrong.
async fn settings_refused(response: reqwest::Response, what: &str) {
    let problem = assert_problem(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_game_settings",
    )
    .await;
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains(what), "{detail}");
}

/// `text` as a query string's value.
fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A game's file may carry its own settings (as `turnhouse dev` publishes only the file): what
/// the upload says beats them, and they beat the previous version's.
#[tokio::test]
async fn a_source_carries_its_own_settings_and_an_upload_overrides_them() {
    let app = TestApp::spawn().await;
    let id = unique("settled").replace('_', "-");
    let source = |name: &str| {
        format!(
            "module.exports = {{ settings: {{ name: '{name}', minPlayers: 2, maxPlayers: 3, \
             description: 'Say a word.', moveExample: {{ say: 'hi' }} }},\n\
             onRoomStart: () => ({{}}), onPlayerJoin() {{}}, onPlayerQuit() {{}}, onPlayerMove() {{}} }};"
        )
    };
    let author = app.publish(&id, &source("Word game")).await;
    let listing = app.get_json(&format!("/games/{id}")).await;
    assert_eq!(listing["name"], "Word game");
    assert_eq!(
        (
            listing["minPlayers"].as_u64(),
            listing["maxPlayers"].as_u64()
        ),
        (Some(2), Some(3))
    );
    assert_eq!(listing["description"], "Say a word.");
    assert_eq!(listing["moveExample"], serde_json::json!({"say": "hi"}));

    // The query string beats the file; the file beats the last version.
    let form = Form::new().part(
        "source",
        file_part("game.js", source("Word game 2").into_bytes()),
    );
    let response = app.upload_form(&author, &id, "?maxPlayers=2", form).await;
    assert_eq!(response.status(), StatusCode::OK);
    let listing = app.get_json(&format!("/games/{id}")).await;
    assert_eq!(listing["name"], "Word game 2");
    assert_eq!(listing["maxPlayers"], 2);

    // Settings a game cannot have are refused, naming the export.
    let bad = source("Word game").replace("minPlayers: 2", "minPlayers: 'two'");
    let response = app.upload(&author, &id, &bad).await;
    settings_refused(response, "`settings` export").await;
    // Whether the upload or the source gives it, a move example has the same bound.
    let long = format!("'{}'", "y".repeat(2000));
    let big = source("Word game").replace("{ say: 'hi' }", &format!("{{ say: {long} }}"));
    let response = app.upload(&author, &id, &big).await;
    settings_refused(response, "moveExample must be at most").await;
}
