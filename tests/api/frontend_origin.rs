//! Authors' pages on an origin of their own (`--frontend-origin`), and a game's page opened on
//! its own instead of in a frame.

use reqwest::StatusCode;
use serde_json::json;

use crate::browser::{room_in_view, sign_up};
use crate::frontends_browser::publish_with_page;
use crate::helpers::free_port;
use crate::helpers::{example, unique, TestApp};
use crate::webdriver::Driver;

async fn get(app: &TestApp, url: &str, dest: Option<&str>) -> reqwest::Response {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let mut request = client.get(url);
    if let Some(dest) = dest {
        request = request.header("sec-fetch-dest", dest);
    }
    let _ = app;
    request.send().await.unwrap()
}

#[tokio::test]
async fn a_games_page_opened_on_its_own_shows_what_it_is_instead() {
    let app = TestApp::spawn().await;
    publish_with_page(&app, "framed", &example("frontends/tictactoe.html")).await;
    let page = format!("{}/games/framed/versions/1/frontend/", app.address);
    let framed = get(&app, &page, Some("iframe")).await;
    assert_eq!(framed.status(), StatusCode::OK);
    let author_page = framed.text().await.unwrap();
    assert!(
        author_page.contains("<script") && !author_page.contains("This is a game's page"),
        "the author's own page in a frame: {author_page}"
    );

    for url in [
        page.clone(),
        format!("{}/games/framed/frontend", app.address),
    ] {
        let alone = get(&app, &url, Some("document")).await;
        assert_eq!(alone.status(), StatusCode::OK);
        let policy = alone.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            !policy.contains("script-src"),
            "nothing runs on it: {policy}"
        );
        assert!(policy.contains("form-action 'none'"), "{policy}");
        let text = alone.text().await.unwrap();
        assert!(text.contains("This is a game's page"), "{text}");
        assert!(text.contains("<a href=\"/\">Open Turnhouse</a>"), "{text}");
        assert!(!text.contains("<script"), "not the author's document");
    }
    // Framed for a room (as the page frames it), the notice leads to that room's view; what is
    // no room's id leads to the lobby.
    let room = app
        .create_room(
            &app.register(&unique("host")).await,
            json!({"game": "tictactoe"}),
        )
        .await;
    let room = room["id"].as_str().unwrap();
    let alone = get(&app, &format!("{page}?room={room}"), Some("document")).await;
    let text = alone.text().await.unwrap();
    assert!(
        text.contains(&format!("<a href=\"/#/room/{room}\">Open its room</a>")),
        "{text}"
    );
    let alone = get(&app, &format!("{page}?room=%3Cscript%3E"), Some("document")).await;
    let text = alone.text().await.unwrap();
    assert!(text.contains("<a href=\"/\">Open Turnhouse</a>"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authors_pages_are_served_only_at_their_own_origin_and_played_from_there() {
    let port = free_port();
    let origin = format!("http://127.0.0.1:{port}");
    let app = TestApp::spawn_for_browsers_configured({
        let origin = origin.clone();
        move |config| {
            config.serving.frontend_origin = Some(origin);
            config.serving.frontend_bind = Some(format!("127.0.0.1:{port}"));
        }
    })
    .await;
    publish_with_page(&app, "framed", &example("frontends/tictactoe.html")).await;
    let folder = "/games/framed/versions/1/frontend/";

    // At the main origin, a game's page is only a redirect to its own origin.
    let here = get(&app, &format!("{}{folder}", app.address), None).await;
    assert_eq!(here.status(), StatusCode::PERMANENT_REDIRECT);
    assert_eq!(
        here.headers()["location"],
        format!("{origin}{folder}").as_str()
    );
    // There it is served, under a policy naming that origin; and nothing else is.
    let there = get(&app, &format!("{origin}{folder}"), Some("iframe")).await;
    assert_eq!(there.status(), StatusCode::OK);
    let policy = there.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        policy.contains(&format!("script-src {origin}{folder} ")),
        "{policy}"
    );
    let api = get(&app, &format!("{origin}/rooms"), None).await;
    assert_eq!(api.status(), StatusCode::NOT_FOUND);
    let page = get(&app, &format!("{origin}/"), None).await;
    assert_eq!(
        page.status(),
        StatusCode::NOT_FOUND,
        "not the sign-in page either"
    );
    // The page frames that origin and loads scripts only from its own.
    let index = get(&app, &format!("{}/", app.address), None).await;
    let policy = index.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        policy.contains(&format!("frame-src 'self' {origin};")),
        "{policy}"
    );
    assert!(policy.contains("script-src 'self';"), "{policy}");

    // A game is played in Chromium with its board served from there.
    let driver = Driver::start().await;
    let alice = driver.browser("own-origin-alice").await;
    sign_up(&alice, &app, "alice").await;
    alice
        .wait_for_text("[data-game=\"framed\"]", "with its own page")
        .await;
    alice.click("[data-game=\"framed\"] .new-private").await;
    let room = room_in_view(&alice).await;
    let bob = app.register(&unique("bob")).await;
    assert_eq!(app.join(&bob, &room).await.status(), StatusCode::OK);
    alice.enter_frame("#game-frame").await;
    alice.wait_for_text("#status", "Your turn").await;
    let at = alice.eval("return location.href;", json!([])).await;
    assert_eq!(
        at,
        json!(format!("{origin}{folder}?room={room}&matchID={room}"))
    );
    let before = app.room(&room).await["version"].as_i64().unwrap();
    alice.click("[data-cell=\"1,1\"]").await;
    alice.leave_frame().await;
    let mut version = before;
    for _ in 0..100 {
        version = app.room(&room).await["version"].as_i64().unwrap();
        if version > before {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        version,
        before + 1,
        "the move made in the frame at the other origin"
    );
    alice.close().await;
}
