//! Profiles: a player's rating, rank and games in each game, their latest finished rooms with
//! what each did to their rating; and the ratings a page shows by players' names.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{assert_problem, TestApp};
use crate::ratings::{beats, x_wins};

#[tokio::test]
async fn a_profile_shows_ratings_ranks_and_recent_rooms_with_their_changes() {
    let app = TestApp::spawn().await;
    let (a, b) = (app.new_player().await, app.new_player().await);
    let profile = app.get_json(&format!("/players/{}", a.id)).await;
    assert_eq!(profile["player"]["username"], a.username.as_str());
    assert_eq!(profile["ratings"], json!([]), "{profile}");
    assert_eq!(profile["recentRooms"], json!([]), "{profile}");

    beats(&app, &a, &b).await;
    let profile = app.get_json(&format!("/players/{}", a.id)).await;
    let tictactoe = &profile["ratings"][0];
    assert_eq!(tictactoe["game"], "tictactoe", "{profile}");
    assert_eq!(tictactoe["games"], 1);
    assert_eq!(tictactoe["rank"], Value::Null, "no rank before five games");
    let recent = &profile["recentRooms"][0];
    let room = recent["room"]["id"].as_str().unwrap();
    assert_eq!(recent["room"]["finished"], true);
    assert_eq!(recent["replay"], format!("/#/room/{room}/v/1"));
    let change = &recent["ratingChange"];
    assert_eq!(change["won"], true, "{recent}");
    assert_eq!(change["before"], 1500);
    assert_eq!(change["after"], tictactoe["rating"]);

    // Five games: ranked, above the one who lost them all.
    for _ in 0..4 {
        beats(&app, &a, &b).await;
    }
    let rank = |profile: &Value| profile["ratings"][0]["rank"].as_i64().unwrap();
    let (of_a, of_b) = (
        app.get_json(&format!("/players/{}", a.id)).await,
        app.get_json(&format!("/players/{}", b.id)).await,
    );
    assert!(rank(&of_a) < rank(&of_b), "{of_a} {of_b}");
    assert_eq!(of_b["recentRooms"][0]["ratingChange"]["won"], false);
    assert_eq!(of_a["recentRooms"].as_array().unwrap().len(), 5);

    // A private room shows on its player's own profile only.
    let private = app
        .create_room(&a, json!({"game": "tictactoe", "private": true}))
        .await;
    let private = private["id"].as_str().unwrap().to_owned();
    assert_eq!(app.join(&b, &private).await.status(), StatusCode::OK);
    x_wins(&app, &private, &a, &b).await;
    let first_room = |profile: &Value| profile["recentRooms"][0]["room"]["id"].clone();
    let seen_by_b = app
        .request(
            Method::GET,
            &format!("/players/{}", a.id),
            Some(&b.token),
            None,
        )
        .await
        .json::<Value>()
        .await
        .unwrap();
    assert_ne!(first_room(&seen_by_b), private.as_str());
    let own = app
        .request(Method::GET, "/players/me", Some(&a.token), None)
        .await
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(first_room(&own), private.as_str(), "{own}");
    assert!(own["recentRooms"][0].get("ratingChange").is_none());

    // Mistakes.
    assert_problem(
        app.get("/players/me").await,
        StatusCode::UNAUTHORIZED,
        "missing_token",
    )
    .await;
    let nobody = "0".repeat(32);
    for path in [
        format!("/players/{nobody}"),
        "/players/NOT-AN-ID".to_owned(),
    ] {
        assert_problem(
            app.get(&path).await,
            StatusCode::NOT_FOUND,
            "player_not_found",
        )
        .await;
    }

    // The ratings a page shows by names: those rated, others left out.
    let c = app.new_player().await;
    let asked = format!(
        "/games/tictactoe/ratings?players={},{},{}",
        a.id, b.id, c.id
    );
    let ratings = app.get_json(&asked).await;
    assert_eq!(
        ratings["ratings"][&a.id]["rating"],
        of_a["ratings"][0]["rating"]
    );
    assert_eq!(ratings["ratings"][&b.id]["games"], 5);
    assert!(ratings["ratings"].get(&c.id).is_none(), "{ratings}");
    for bad in ["?players=nope", "?players=", "?who=me"] {
        let response = app.get(&format!("/games/tictactoe/ratings{bad}")).await;
        assert_problem(response, StatusCode::BAD_REQUEST, "invalid_query").await;
    }
    let unknown = app
        .get(&format!("/games/no-such-game/ratings?players={}", a.id))
        .await;
    assert_problem(unknown, StatusCode::NOT_FOUND, "game_not_found").await;
}
