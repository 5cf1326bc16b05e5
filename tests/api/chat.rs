//! Chat over HTTP: a room's table (its players) and gallery (its watchers, and its players once
//! the room is finished), the lobby, the limits on a message, blocks, reports, and the admins'
//! deletions and mutes with their rows of the audit log.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{assert_problem, unique, TestApp, TestPlayer};
use crate::moderation::new_admin;

async fn say(
    app: &TestApp,
    who: &TestPlayer,
    room: &str,
    channel: &str,
    text: &str,
) -> (StatusCode, Value) {
    app.post_value(
        &format!("/rooms/{room}/chat"),
        Some(&who.token),
        json!({"text": text, "channel": channel}),
    )
    .await
}

/// A room's messages of `channel` as `who` (anyone, when `None`) reads them: the status and
/// the texts.
async fn read(
    app: &TestApp,
    who: Option<&TestPlayer>,
    room: &str,
    channel: &str,
) -> (StatusCode, Vec<String>) {
    let path = format!("/rooms/{room}/chat?channel={channel}");
    let response = app
        .request(Method::GET, &path, who.map(|w| w.token.as_str()), None)
        .await;
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    let texts = body["messages"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|m| m["text"].as_str().unwrap_or("(deleted)").to_owned())
                .collect()
        })
        .unwrap_or_default();
    (status, texts)
}

#[tokio::test]
async fn players_talk_at_the_table_while_a_watcher_writes_in_the_gallery() {
    let app = TestApp::spawn().await;
    let (room, x, o) = app.started_tictactoe().await;
    let watcher = app.register(&unique("watcher")).await;

    let (status, sent) = say(&app, &x, &room, "table", "good luck").await;
    assert_eq!(status, StatusCode::CREATED, "{sent}");
    assert_eq!(sent["channel"], "table");
    assert_eq!(sent["player"]["id"], x.id.as_str());
    assert_eq!(sent["version"], 3, "written at the room's version");
    assert_eq!(
        say(&app, &o, &room, "table", "you too").await.0,
        StatusCode::CREATED
    );
    let (status, _) = say(&app, &watcher, &room, "gallery", "X opens in the corner?").await;
    assert_eq!(status, StatusCode::CREATED);

    // The table is the players'; the gallery the watchers', until the room is finished.
    assert_eq!(
        read(&app, Some(&o), &room, "table").await,
        (StatusCode::OK, vec!["good luck".into(), "you too".into()])
    );
    let (status, problem) = say(&app, &watcher, &room, "table", "psst").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(problem["code"], "chat_not_allowed");
    assert_eq!(
        read(&app, Some(&watcher), &room, "table").await.0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        read(&app, None, &room, "table").await.0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        read(&app, Some(&x), &room, "gallery").await.0,
        StatusCode::FORBIDDEN
    );
    let (status, problem) = say(&app, &x, &room, "gallery", "hello gallery").await;
    assert_eq!(
        (status, problem["code"].clone()),
        (StatusCode::FORBIDDEN, json!("chat_not_allowed"))
    );
    assert_eq!(
        read(&app, None, &room, "gallery").await,
        (StatusCode::OK, vec!["X opens in the corner?".into()]),
        "anyone may read the gallery"
    );

    for (who, mv) in [
        (&x, (0, 0)),
        (&o, (1, 0)),
        (&x, (0, 1)),
        (&o, (1, 1)),
        (&x, (0, 2)),
    ] {
        app.play_ok(who, &room, json!({"x": mv.0, "y": mv.1})).await;
    }
    assert_eq!(
        read(&app, Some(&x), &room, "gallery").await,
        (StatusCode::OK, vec!["X opens in the corner?".into()]),
        "players read the gallery once the room is finished"
    );

    // Pages resume after an id.
    let first: Value = app
        .request(
            Method::GET,
            &format!("/rooms/{room}/chat?channel=table&limit=1"),
            Some(&x.token),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(first["messages"].as_array().unwrap().len(), 1);
    let after = first["nextAfter"].as_i64().unwrap();
    let rest: Value = app
        .request(
            Method::GET,
            &format!("/rooms/{room}/chat?channel=table&after={after}"),
            Some(&x.token),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(rest["messages"][0]["text"], "you too");
    assert_eq!(rest["messages"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_message_is_plain_text_of_at_most_500_characters_and_a_player_is_rate_limited() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.abuse_limits.chat_rate = "8/min".parse().unwrap();
    })
    .await;
    let (room, x, _) = app.started_tictactoe().await;
    let (status, problem) = say(&app, &x, &room, "table", &"é".repeat(501)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(problem["code"], "invalid_message");
    assert!(
        problem["detail"].as_str().unwrap().contains("501"),
        "{problem}"
    );
    for bad in ["   ", "a\u{0}b", "bell\u{7}"] {
        let (status, problem) = say(&app, &x, &room, "table", bad).await;
        assert_eq!(
            (status, problem["code"].clone()),
            (StatusCode::UNPROCESSABLE_ENTITY, json!("invalid_message")),
            "{bad:?}"
        );
    }
    assert_eq!(
        say(&app, &x, &room, "table", &"é".repeat(500)).await.0,
        StatusCode::CREATED
    );
    let (status, problem) = say(&app, &x, &room, "lounge", "hi").await;
    assert_eq!(
        (status, problem["code"].clone()),
        (StatusCode::BAD_REQUEST, json!("invalid_body"))
    );
    let markup = "<script>alert(1)</script>\nsecond line";
    let (_, sent) = say(&app, &x, &room, "table", markup).await;
    assert_eq!(sent["text"], markup, "kept as written: plain text");

    // Eight a minute, every message sent counting, refused or not: two more pass, then the
    // ninth waits.
    for n in 0..2 {
        assert_eq!(
            say(&app, &x, &room, "table", &format!("n{n}")).await.0,
            StatusCode::CREATED
        );
    }
    let response = app
        .post(
            &format!("/rooms/{room}/chat"),
            Some(&x.token),
            Some(&json!({"text": "one more", "channel": "table"})),
        )
        .await;
    assert!(response.headers().get("retry-after").is_some());
    let problem = assert_problem(response, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("chat messages"),
        "{problem}"
    );
    assert_eq!(
        read(&app, Some(&x), &room, "table").await.1.len(),
        4,
        "nothing refused was kept"
    );
}

#[tokio::test]
async fn a_block_hides_a_players_messages_from_the_one_who_blocked_only() {
    let app = TestApp::spawn().await;
    let (room, x, o) = app.started_tictactoe().await;
    say(&app, &x, &room, "table", "from x").await;
    say(&app, &o, &room, "table", "from o").await;
    let block = app
        .post(
            "/players/me/blocks",
            Some(&o.token),
            Some(&json!({"player": x.id})),
        )
        .await;
    assert_eq!(block.status(), StatusCode::NO_CONTENT);
    assert_eq!(read(&app, Some(&o), &room, "table").await.1, ["from o"]);
    assert_eq!(
        read(&app, Some(&x), &room, "table").await.1,
        ["from x", "from o"],
        "only for o"
    );
    let listed = app.get_value_as("/players/me/blocks", &o).await;
    assert_eq!(listed["blocks"][0]["id"], x.id.as_str());

    // The lobby too, and not oneself.
    let (status, _) = app
        .post_value(
            "/lobby/chat",
            Some(&x.token),
            json!({"text": "x in the lobby"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let seen = app.get_value_as("/lobby/chat", &o).await;
    assert!(seen["messages"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["player"]["id"] != x.id.as_str()));
    let (status, problem) = app
        .post_value(
            "/players/me/blocks",
            Some(&o.token),
            json!({"player": o.id}),
        )
        .await;
    assert_eq!(
        (status, problem["code"].clone()),
        (StatusCode::UNPROCESSABLE_ENTITY, json!("invalid_block"))
    );
    let (status, problem) = app
        .post_value(
            "/players/me/blocks",
            Some(&o.token),
            json!({"player": "0".repeat(32)}),
        )
        .await;
    assert_eq!(
        (status, problem["code"].clone()),
        (StatusCode::NOT_FOUND, json!("player_not_found"))
    );

    let unblock = app
        .request(
            Method::DELETE,
            &format!("/players/me/blocks/{}", x.id),
            Some(&o.token),
            None,
        )
        .await;
    assert_eq!(unblock.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        read(&app, Some(&o), &room, "table").await.1,
        ["from x", "from o"]
    );
}

#[tokio::test]
async fn a_report_reaches_an_admin_who_deletes_the_message_and_mutes_its_author() {
    let app = TestApp::spawn().await;
    let (room, x, o) = app.started_tictactoe().await;
    let admin = new_admin(&app).await;
    let (_, rude) = say(&app, &x, &room, "table", "something rude").await;
    let id = rude["id"].as_i64().unwrap();
    let report = app
        .post(
            &format!("/chat/{id}/report"),
            Some(&o.token),
            Some(&json!({"reason": "rude"})),
        )
        .await;
    assert_eq!(report.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        app.post(&format!("/chat/{id}/report"), Some(&o.token), None)
            .await
            .status(),
        StatusCode::NO_CONTENT,
        "reporting again changes nothing"
    );
    let missing = app.post("/chat/999999/report", Some(&o.token), None).await;
    assert_problem(missing, StatusCode::NOT_FOUND, "message_not_found").await;

    let forbidden = app
        .request(Method::GET, "/admin/chat/reports", Some(&o.token), None)
        .await;
    assert_problem(forbidden, StatusCode::FORBIDDEN, "not_admin").await;
    let reports = app.get_value_as("/admin/chat/reports", &admin).await;
    let reports = reports["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["message"]["text"], "something rude");
    assert_eq!(reports[0]["reporter"]["id"], o.id.as_str());
    assert_eq!(reports[0]["reason"], "rude");

    // Deleted for everyone: the text is gone from the history, the report from the list.
    let path = format!("/admin/chat/{id}");
    let unexplained = app
        .request(Method::DELETE, &path, Some(&admin.token), Some(&json!({})))
        .await;
    assert_problem(unexplained, StatusCode::BAD_REQUEST, "invalid_body").await;
    let deleted: Value = app
        .request(
            Method::DELETE,
            &path,
            Some(&admin.token),
            Some(&json!({"reason": "insults"})),
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(deleted["deleted"], true);
    assert_eq!(deleted["text"], Value::Null);
    assert_eq!(read(&app, Some(&o), &room, "table").await.1, ["(deleted)"]);
    assert!(
        app.get_value_as("/admin/chat/reports", &admin).await["reports"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    // Muted: refused everywhere until the mute ends.
    let (status, muted) = app
        .post_value(
            &format!("/admin/players/{}/mute", x.id),
            Some(&admin.token),
            json!({"minutes": 0.03, "reason": "cool off"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{muted}");
    assert_eq!(muted["player"]["id"], x.id.as_str());
    let (status, problem) = say(&app, &x, &room, "table", "let me explain").await;
    assert_eq!(
        (status, problem["code"].clone()),
        (StatusCode::FORBIDDEN, json!("chat_muted"))
    );
    assert_eq!(problem["mutedUntil"], muted["mutedUntil"]);
    let (status, _) = app
        .post_value("/lobby/chat", Some(&x.token), json!({"text": "hi"}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let until = chrono_ms(muted["mutedUntil"].as_str().unwrap());
    loop {
        let (status, _) = say(&app, &x, &room, "table", "I'm back").await;
        if status == StatusCode::CREATED {
            assert!(now_ms() >= until, "not before the mute ends");
            break;
        }
        assert!(now_ms() < until + 5_000, "the mute ended");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }

    // Both actions are in the audit log.
    let audit: Value = app
        .request(Method::GET, "/admin/audit", Some(&admin.token), None)
        .await
        .json()
        .await
        .unwrap();
    let actions: Vec<&str> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert!(
        actions.starts_with(&["mute_chat", "delete_chat_message"]),
        "{actions:?}"
    );
    let deletion = &audit["entries"][1];
    assert_eq!(deletion["target"], json!({"kind": "player", "id": x.id}));
    assert_eq!(deletion["details"]["text"], "something rude");
    assert_eq!(deletion["reason"], "insults");
}

#[tokio::test]
async fn the_lobby_pages_back_and_the_opener_may_close_the_gallery() {
    let app = TestApp::spawn().await;
    let talker = app.register(&unique("talker")).await;
    let mut ids = Vec::new();
    for n in 0..5 {
        let (status, sent) = app
            .post_value(
                "/lobby/chat",
                Some(&talker.token),
                json!({"text": format!("m{n}")}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED);
        ids.push(sent["id"].as_i64().unwrap());
    }
    let newest = app.get_value("/lobby/chat?limit=2").await;
    let texts = |page: &Value| -> Vec<String> {
        page["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["text"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        texts(&newest),
        ["m3", "m4"],
        "the newest page, oldest first"
    );
    let back = app
        .get_value(&format!("/lobby/chat?before={}&limit=2", ids[3]))
        .await;
    assert_eq!(texts(&back), ["m1", "m2"]);
    let after = app
        .get_value(&format!("/lobby/chat?after={}", ids[2]))
        .await;
    assert_eq!(texts(&after), ["m3", "m4"]);
    let between = app
        .get_value(&format!("/lobby/chat?after={}&before={}", ids[0], ids[3]))
        .await;
    assert_eq!(texts(&between), ["m1", "m2"], "a window between two ids");
    let anonymous = app
        .post("/lobby/chat", None, Some(&json!({"text": "hi"})))
        .await;
    assert_problem(anonymous, StatusCode::UNAUTHORIZED, "missing_token").await;

    let (room, x, o) = app.started_tictactoe().await;
    let watcher = app.register(&unique("watcher")).await;
    let close = format!("/rooms/{room}/chat/gallery/close");
    let by_o = app.post(&close, Some(&o.token), None).await;
    assert_problem(by_o, StatusCode::FORBIDDEN, "not_the_opener").await;
    assert_eq!(
        app.post(&close, Some(&x.token), None).await.status(),
        StatusCode::NO_CONTENT
    );
    let (status, problem) = say(&app, &watcher, &room, "gallery", "anyone?").await;
    assert_eq!(
        (status, problem["code"].clone()),
        (StatusCode::CONFLICT, json!("gallery_closed"))
    );
    let nowhere = say(&app, &watcher, &"0".repeat(32), "gallery", "hi").await;
    assert_eq!(
        (nowhere.0, nowhere.1["code"].clone()),
        (StatusCode::NOT_FOUND, json!("room_not_found"))
    );
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Milliseconds since 1970 of an RFC 3339 time as the server writes it (UTC, `Z`).
fn chrono_ms(text: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(text)
        .unwrap()
        .timestamp_millis()
}

#[tokio::test]
async fn a_game_whose_author_turned_chat_off_has_no_chat_in_its_rooms() {
    let app = TestApp::spawn().await;
    let author = app.register(&unique("author")).await;
    let upload = app
        .client
        .put(format!("{}/games/silent-ttt?chat=false", app.address))
        .bearer_auth(&author.token)
        .header("content-type", "application/javascript")
        .body(crate::helpers::example("tictactoe.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(upload.status(), StatusCode::CREATED);
    assert_eq!(app.get_value("/games/silent-ttt").await["chat"], false);
    assert_eq!(app.get_value("/games/tictactoe").await["chat"], true);
    let (room, x, _) = app.started_game("silent-ttt").await;
    let (status, problem) = say(&app, &x, &room, "table", "psst").await;
    assert_eq!(
        (status, problem["code"].clone()),
        (StatusCode::CONFLICT, json!("chat_off"))
    );
    assert_eq!(
        read(&app, Some(&x), &room, "table").await.0,
        StatusCode::CONFLICT
    );

    // A new version that says nothing of it keeps it off; one that turns it on has chat.
    let again = app
        .upload(
            &author,
            "silent-ttt",
            &crate::helpers::example("tictactoe.js"),
        )
        .await;
    assert_eq!(again.status(), StatusCode::OK);
    assert_eq!(app.get_value("/games/silent-ttt").await["chat"], false);
    let form = reqwest::multipart::Form::new().text("chat", "true");
    let on = app.upload_form(&author, "silent-ttt", "", form).await;
    assert_eq!(on.status(), StatusCode::OK);
    assert_eq!(app.get_value("/games/silent-ttt").await["chat"], true);
    let (room, x, _) = app.started_game("silent-ttt").await;
    assert_eq!(
        say(&app, &x, &room, "table", "now we talk").await.0,
        StatusCode::CREATED
    );
}

#[tokio::test]
async fn a_kill_9_loses_no_acknowledged_message() {
    use crate::real_server::Server;
    let dir = tempfile::tempdir().unwrap();
    let database = crate::databases::fresh_database(dir.path(), "chat.db").await;
    let server = Server::start(&database);
    let api = server.api.with_timeout(std::time::Duration::from_secs(10));
    let (room, x, o) = api.started_tictactoe().await;
    let mut acknowledged = Vec::new();
    for n in 0..20 {
        let who = if n % 2 == 0 { &x } else { &o };
        let (status, sent) = api
            .post_value(
                &format!("/rooms/{room}/chat"),
                Some(&who.token),
                json!({"text": format!("message {n}"), "channel": "table"}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED);
        acknowledged.push(sent);
    }
    server.kill();

    let server = Server::start(&database);
    let api = server.api.with_timeout(std::time::Duration::from_secs(10));
    let kept = api
        .get_value_as(&format!("/rooms/{room}/chat?channel=table"), &x)
        .await;
    assert_eq!(
        kept["messages"],
        Value::Array(acknowledged),
        "every message as acknowledged"
    );
    server.kill();
}
