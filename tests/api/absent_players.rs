//! The bar issue by issue: three correspondence games between two absent players, played out
//! through a real SMTP server and a push service that decrypts with an independent library,
//! beside a player who looks at her own game, and a reset for a known and an unknown account.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::{unique, TestApp, TestPlayer};
use crate::mail::verified;
use crate::push_receiver::PushReceiver;
use crate::smtp_sink::SmtpSink;
use crate::sse_client::EventStream;

const WAIT: Duration = Duration::from_secs(30);

/// Tic-tac-toe to a draw: nine moves, X first (each `(x, y)`).
const DRAW: [(i64, i64); 9] = [
    (0, 0),
    (1, 1),
    (2, 2),
    (0, 2),
    (2, 0),
    (1, 0),
    (1, 2),
    (2, 1),
    (0, 1),
];

async fn subscribe(app: &TestApp, player: &TestPlayer, push: &PushReceiver, path: &str) {
    let subscription = push.subscription(path).await;
    let made = app
        .request(
            Method::POST,
            "/players/me/push-subscriptions",
            Some(&player.token),
            Some(&subscription),
        )
        .await;
    assert_eq!(made.status(), StatusCode::CREATED);
}

async fn counted(app: &TestApp, channel: &str, outcome: &str) -> f64 {
    let sample = format!("turnhouse_notices_total{{channel=\"{channel}\",outcome=\"{outcome}\"}}");
    app.metric(&sample).await.unwrap_or(0.0)
}

fn digests(mails: &[serde_json::Value]) -> Vec<String> {
    mails
        .iter()
        .filter(|m| {
            m["headers"]["Subject"]
                .as_str()
                .unwrap_or_default()
                .starts_with("Your move")
        })
        .map(|m| m["text"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_correspondence_games_between_absent_players_reach_them_and_spare_the_one_looking() {
    let sink = SmtpSink::start();
    let push = PushReceiver::start();
    let url = sink.url();
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), move |config| {
        config.mail.smtp_url = Some(url);
        config.mail.turn_mail_after = turnhouse::config::parse_span("1s").unwrap();
        config.mail.turn_mail_every = turnhouse::config::parse_span("1h").unwrap();
        // Pushed at once, so that the three games' pushes come before the mail's while.
        config.mail.push_after = turnhouse::config::parse_span("0").unwrap();
        config.webhooks.allow_private_destinations = true;
        config.idle_rooms.quickplay_seen_within_secs = 4;
    })
    .await;
    let [ada, bob, carol, dave] = [
        app.register(&unique("ada")).await,
        app.register(&unique("bob")).await,
        app.register(&unique("carol")).await,
        app.register(&unique("dave")).await,
    ];
    let address = |p: &TestPlayer| format!("{}@example.test", p.username.to_lowercase());
    for player in [&ada, &bob, &carol] {
        verified(&app, &sink, player, &address(player)).await;
    }
    subscribe(&app, &ada, &push, "/send/ada").await;
    subscribe(&app, &bob, &push, "/send/bob").await;
    subscribe(&app, &carol, &push, "/send/carol").await;

    // Carol looks at her game while it becomes her move: nothing reaches her.
    let (held_mail, held_push) = (
        counted(&app, "mail", "held").await,
        counted(&app, "push", "held").await,
    );
    let hers = app
        .create_room(
            &dave,
            json!({"game": "tictactoe", "clock": {"moveSeconds": 86_400}}),
        )
        .await;
    let hers = hers["id"].as_str().unwrap().to_owned();
    let stream = format!(
        "{}/rooms/{hers}/stream?access_token={}",
        app.address, carol.token
    );
    let mut looking = EventStream::open(&app.client, &stream, None).await;
    looking.event().await;
    assert_eq!(app.join(&carol, &hers).await.status(), StatusCode::OK);
    app.play_ok(&dave, &hers, json!({"x": 0, "y": 0})).await;

    // Three games on a day's clock, each waiting on Ada as it starts.
    let mut rooms = Vec::new();
    for _ in 0..3 {
        let room = app
            .create_room(
                &ada,
                json!({"game": "tictactoe", "clock": {"moveSeconds": 86_400}}),
            )
            .await;
        let room = room["id"].as_str().unwrap().to_owned();
        assert_eq!(app.join(&bob, &room).await.status(), StatusCode::OK);
        push.wait_for(WAIT, |p| p.len() == rooms.len() + 1).await;
        rooms.push(room);
    }
    // Away, Ada is mailed once, listing the three.
    let mails = sink
        .wait_for(&address(&ada), WAIT, |m| digests(m).len() == 1)
        .await;
    let digest = digests(&mails).remove(0);
    for room in &rooms {
        assert!(digest.contains(&format!("/#/room/{room}")), "{digest}");
    }
    assert!(!digest.contains(&hers), "{digest}");

    // Every move is a turn of the other's, pushed once (each push arriving before the next
    // move, so that none is held back for a move made meanwhile); the last move is a draw.
    let mut turns = rooms.len();
    for (n, (x, y)) in DRAW.into_iter().enumerate() {
        let mover = if n % 2 == 0 { &ada } else { &bob };
        for room in &rooms {
            let moved = app.play_ok(mover, room, json!({"x": x, "y": y})).await;
            if !moved["finished"].as_bool().unwrap() {
                turns += 1;
                push.wait_for(WAIT, |p| p.len() == turns).await;
            }
        }
        if n == 0 {
            // Bob, away too, is mailed once, listing the three.
            let mails = sink
                .wait_for(&address(&bob), WAIT, |m| digests(m).len() == 1)
                .await;
            let digest = digests(&mails).remove(0);
            for room in &rooms {
                assert!(digest.contains(&format!("/#/room/{room}")), "{digest}");
            }
        }
    }
    assert_eq!(turns, 27);
    let pushes = push.received().await;
    assert_eq!(pushes.len(), 27);
    for pushed in &pushes {
        assert!(
            pushed.get("error").is_none() && pushed["vapid"].get("error").is_none(),
            "{pushed}"
        );
        assert!(
            pushed["path"] == "/send/ada" || pushed["path"] == "/send/bob",
            "{pushed}"
        );
    }

    // Carol was looking: her mail and her push were held back, and none went.
    let until = Instant::now() + WAIT;
    while counted(&app, "mail", "held").await <= held_mail
        || counted(&app, "push", "held").await <= held_push
    {
        assert!(
            Instant::now() < until,
            "Carol's notices were never held back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(looking);
    assert!(digests(&sink.wait_for(&address(&carol), WAIT, |_| true).await).is_empty());

    // One digest each in the period, however many turns came after.
    assert_eq!(
        digests(&sink.wait_for(&address(&ada), WAIT, |_| true).await).len(),
        1
    );
    assert_eq!(
        digests(&sink.wait_for(&address(&bob), WAIT, |_| true).await).len(),
        1
    );

    // A reset: the same answer for a known account and an unknown one; the known gets a link.
    for who in [
        json!({"username": ada.username}),
        json!({"email": "nobody@example.test"}),
    ] {
        let (status, body) = app.post_value("/password-resets", None, who).await;
        assert_eq!((status, body), (StatusCode::ACCEPTED, json!({})));
    }
    let mails = sink
        .wait_for(&address(&ada), WAIT, |m| {
            m.iter()
                .any(|m| m["headers"]["Subject"] == "Reset your password")
        })
        .await;
    let link = mails
        .iter()
        .find(|m| m["headers"]["Subject"] == "Reset your password")
        .unwrap();
    let token = crate::smtp_sink::token_in(link["text"].as_str().unwrap());
    let reset = app
        .post(
            "/password-resets/confirm",
            None,
            Some(&json!({"token": token, "password": "a new one here"})),
        )
        .await;
    assert_eq!(reset.status(), StatusCode::NO_CONTENT);
}
