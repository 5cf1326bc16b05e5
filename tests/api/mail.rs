//! Account e-mail and turn mail, end to end: the real server, a real SMTP server on loopback
//! (aiosmtpd) that keeps what it is handed, on both databases.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{assert_problem, unique, TestApp, TestPlayer};
use crate::sessions::{set_password, sign_in_with};
use crate::smtp_sink::{token_in, SmtpSink};
use crate::sse_client::EventStream;

/// Long enough for any mail here, on a busy machine.
const WAIT: Duration = Duration::from_secs(30);
/// Where the server says it is, in every link.
const PUBLIC: &str = "https://games.example.test";

/// A server that mails through `sink`, a player away for `after` being mailed their turns.
async fn spawn(sink: &SmtpSink, after: &str, every: &str) -> TestApp {
    let (url, after, every) = (sink.url(), after.to_owned(), every.to_owned());
    TestApp::spawn_configured(turnhouse::games::builtin(), move |config| {
        config.mail.smtp_url = Some(url);
        config.mail.mail_from = "Turnhouse <games@example.test>".into();
        config.mail.public_url = Some(PUBLIC.into());
        config.mail.turn_mail_after = turnhouse::config::parse_span(&after).unwrap();
        config.mail.turn_mail_every = turnhouse::config::parse_span(&every).unwrap();
        // Seen at most once a second: a player with a stream open is seen as they look.
        config.idle_rooms.quickplay_seen_within_secs = 4;
    })
    .await
}

fn address_of(player: &TestPlayer) -> String {
    format!("{}@example.test", player.username.to_lowercase())
}

async fn put_email(app: &TestApp, player: &TestPlayer, address: &str) -> reqwest::Response {
    app.request(
        Method::PUT,
        "/players/me/email",
        Some(&player.token),
        Some(&json!({ "email": address })),
    )
    .await
}

async fn email_of(app: &TestApp, player: &TestPlayer) -> Value {
    let response = app
        .request(Method::GET, "/players/me/email", Some(&player.token), None)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

/// Gives `player` the verified address `address`: asks, and follows the mailed link.
pub async fn verified(app: &TestApp, sink: &SmtpSink, player: &TestPlayer, address: &str) {
    let before = sink.wait_for(address, WAIT, |_| true).await.len();
    assert_eq!(
        put_email(app, player, address).await.status(),
        StatusCode::ACCEPTED
    );
    let mails = sink.wait_for(address, WAIT, |m| m.len() > before).await;
    let token = token_in(mails.last().unwrap()["text"].as_str().unwrap());
    let (status, body) = app
        .post_value("/email-verifications", None, json!({ "token": token }))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

fn header<'a>(mail: &'a Value, name: &str) -> &'a str {
    mail["headers"][name].as_str().unwrap_or_default()
}

#[tokio::test]
async fn an_address_counts_once_confirmed_and_a_new_one_tells_the_old() {
    let sink = SmtpSink::start();
    let app = spawn(&sink, "10min", "12h").await;
    let ada = app.register(&unique("ada")).await;
    let first = address_of(&ada);
    assert_eq!(app.get_json("/features").await, json!({"mail": true}));

    assert_eq!(
        put_email(&app, &ada, &first).await.status(),
        StatusCode::ACCEPTED
    );
    let shown = email_of(&app, &ada).await;
    assert_eq!(
        (shown["address"].clone(), shown["pending"].clone()),
        (Value::Null, json!(first))
    );
    let mail = sink
        .wait_for(&first, WAIT, |m| !m.is_empty())
        .await
        .remove(0);
    assert_eq!(header(&mail, "From"), "Turnhouse <games@example.test>");
    assert_eq!(header(&mail, "To"), first);
    assert_eq!(header(&mail, "Subject"), "Confirm your e-mail address");
    assert!(header(&mail, "Content-Type").starts_with("multipart/alternative"));
    let (text, html) = (
        mail["text"].as_str().unwrap(),
        mail["html"].as_str().unwrap(),
    );
    let token = token_in(text);
    let link = format!("{PUBLIC}/#/verify-email?token={token}");
    assert!(text.contains(&link), "{text}");
    assert!(html.contains(&format!("href=\"{link}\"")), "{html}");
    assert!(
        text.contains(&format!("Turnhouse server at {PUBLIC}")),
        "{text}"
    );
    assert!(text.contains(&ada.username));

    // The link works once.
    let (status, body) = app
        .post_value("/email-verifications", None, json!({ "token": token }))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["address"], first);
    let again = app
        .post(
            "/email-verifications",
            None,
            Some(&json!({ "token": token })),
        )
        .await;
    assert_problem(again, StatusCode::UNPROCESSABLE_ENTITY, "invalid_link").await;
    let shown = email_of(&app, &ada).await;
    assert_eq!(shown["address"], first);
    assert_eq!(
        (shown["turnMail"].clone(), shown["clockMail"].clone()),
        (json!(true), json!(true))
    );

    // A new address replaces it only once confirmed, and the old one is told.
    let second = format!("new-{first}");
    verified(&app, &sink, &ada, &second).await;
    assert_eq!(email_of(&app, &ada).await["address"], second);
    let told = sink
        .wait_for(&first, WAIT, |m| m.len() == 2)
        .await
        .remove(1);
    assert_eq!(header(&told, "Subject"), "Your e-mail address was changed");
    assert!(told["text"].as_str().unwrap().contains(&second));

    // Another account cannot take it.
    let bob = app.register(&unique("bob")).await;
    assert_eq!(
        put_email(&app, &bob, &second.to_uppercase()).await.status(),
        StatusCode::ACCEPTED
    );
    let mails = sink
        .wait_for(&second.to_uppercase(), WAIT, |m| !m.is_empty())
        .await;
    let token = token_in(mails[0]["text"].as_str().unwrap());
    let taken = app
        .post(
            "/email-verifications",
            None,
            Some(&json!({ "token": token })),
        )
        .await;
    assert_problem(taken, StatusCode::CONFLICT, "email_taken").await;

    for bad in ["not an address", "a@", "a@b@example.test"] {
        let refused = put_email(&app, &bob, bad).await;
        assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_email").await;
    }
    let long = format!("{}@example.test", "x".repeat(250));
    let refused = put_email(&app, &bob, &long).await;
    assert_problem(refused, StatusCode::BAD_REQUEST, "invalid_body").await;
}

/// The median of `runs` timings of `ask`, in milliseconds.
async fn median_ms(runs: usize, mut ask: impl AsyncFnMut() -> (StatusCode, Value)) -> f64 {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let (status, body) = ask().await;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!((status, body), (StatusCode::ACCEPTED, json!({})));
    }
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

#[tokio::test]
async fn a_reset_answers_alike_for_anyone_and_its_link_works_once_and_signs_out_everywhere() {
    let sink = SmtpSink::start();
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), {
        let url = sink.url();
        move |config| {
            config.mail.smtp_url = Some(url);
            config.mail.public_url = Some(PUBLIC.into());
            config.abuse_limits.sign_in_rate = "off".parse().unwrap();
            config.abuse_limits.mail_link_rate = "off".parse().unwrap();
        }
    })
    .await;
    let ada = app.register(&unique("ada")).await;
    let address = address_of(&ada);
    verified(&app, &sink, &ada, &address).await;
    let set = set_password(&app, &ada, json!({"password": "first password"})).await;
    assert_eq!(set.status(), StatusCode::NO_CONTENT);
    // Setting a password tells the address.
    let told = sink
        .wait_for(&address, WAIT, |m| m.len() == 2)
        .await
        .remove(1);
    assert_eq!(header(&told, "Subject"), "Your password was changed");
    let (_, signed) = sign_in_with(&app, &ada.username, "first password").await;
    let phone = TestPlayer {
        token: signed["token"].as_str().unwrap().to_owned(),
        ..ada.clone()
    };
    let room = app.create_room(&phone, json!({"game": "tictactoe"})).await;
    let url = format!(
        "{}/rooms/{}/stream?access_token={}",
        app.address,
        room["id"].as_str().unwrap(),
        phone.token
    );
    let mut stream = EventStream::open(&app.client, &url, None).await;
    stream.event().await;

    // The same answer, and about the same time, for a known name, a known address and
    // someone nobody is (medians printed, not asserted: this machine is shared).
    let known = median_ms(15, async || {
        app.post_value("/password-resets", None, json!({"username": ada.username}))
            .await
    })
    .await;
    let unknown = median_ms(15, async || {
        app.post_value(
            "/password-resets",
            None,
            json!({"email": "nobody@example.test"}),
        )
        .await
    })
    .await;
    println!("a reset asked for a known account took {known:.2} ms (median), for an unknown one {unknown:.2} ms");
    let (status, _) = app
        .post_value(
            "/password-resets",
            None,
            json!({"email": address.to_uppercase()}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert!(sink
        .wait_for("nobody@example.test", Duration::ZERO, |_| true)
        .await
        .is_empty());

    // Only the newest link works; it works once, signs out every device, ends their streams.
    let resets = sink.wait_for(&address, WAIT, |m| m.len() == 2 + 16).await;
    let older = token_in(resets[2]["text"].as_str().unwrap());
    let (status, _) = app
        .post_value("/password-resets", None, json!({"username": ada.username}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let resets = sink.wait_for(&address, WAIT, |m| m.len() == 2 + 17).await;
    let reset = resets.last().unwrap();
    assert_eq!(header(reset, "Subject"), "Reset your password");
    let text = reset["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("{PUBLIC}/#/reset-password?token=")),
        "{text}"
    );
    let token = token_in(text);
    let stale = app
        .post(
            "/password-resets/confirm",
            None,
            Some(&json!({"token": older, "password": "second password"})),
        )
        .await;
    assert_problem(stale, StatusCode::UNPROCESSABLE_ENTITY, "invalid_link").await;
    let short = app
        .post(
            "/password-resets/confirm",
            None,
            Some(&json!({"token": token, "password": "short"})),
        )
        .await;
    assert_problem(short, StatusCode::UNPROCESSABLE_ENTITY, "invalid_password").await;
    let done = app
        .post(
            "/password-resets/confirm",
            None,
            Some(&json!({"token": token, "password": "second password"})),
        )
        .await;
    assert_eq!(done.status(), StatusCode::NO_CONTENT);
    crate::sessions::ends_within(&mut stream, Duration::from_secs(5)).await;
    for signed_out in [&ada, &phone] {
        let refused = app
            .request(
                Method::GET,
                "/players/me/sessions",
                Some(&signed_out.token),
                None,
            )
            .await;
        assert_problem(refused, StatusCode::UNAUTHORIZED, "invalid_token").await;
    }
    assert_eq!(
        sign_in_with(&app, &ada.username, "first password").await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        sign_in_with(&app, &ada.username, "second password").await.0,
        StatusCode::CREATED
    );
    let again = app
        .post(
            "/password-resets/confirm",
            None,
            Some(&json!({"token": token, "password": "third password"})),
        )
        .await;
    assert_problem(again, StatusCode::UNPROCESSABLE_ENTITY, "invalid_link").await;
    let told = sink
        .wait_for(&address, WAIT, |m| m.len() == 2 + 17 + 1)
        .await;
    assert_eq!(
        header(told.last().unwrap(), "Subject"),
        "Your password was changed"
    );
}

#[tokio::test]
async fn without_an_smtp_server_there_is_no_mail_to_ask_for() {
    let app = TestApp::spawn().await;
    let ada = app.register(&unique("ada")).await;
    assert_eq!(app.get_json("/features").await, json!({"mail": false}));
    let refused = put_email(&app, &ada, "ada@example.test").await;
    assert_problem(refused, StatusCode::CONFLICT, "mail_disabled").await;
    let refused = app
        .post(
            "/password-resets",
            None,
            Some(&json!({"username": ada.username})),
        )
        .await;
    assert_problem(refused, StatusCode::CONFLICT, "mail_disabled").await;
}

/// A tic-tac-toe room `x` opened and `o` joined: `x` to move.
async fn room_waiting_on(
    app: &TestApp,
    x: &TestPlayer,
    o: &TestPlayer,
    clock: Option<u32>,
) -> String {
    let mut body = json!({"game": "tictactoe"});
    if let Some(seconds) = clock {
        body["clock"] = json!({"moveSeconds": seconds});
    }
    let room = app.create_room(x, body).await;
    let id = room["id"].as_str().unwrap().to_owned();
    assert_eq!(app.join(o, &id).await.status(), StatusCode::OK);
    id
}

/// How many mails the server held back (the player looked after all), as it counts them.
async fn held(app: &TestApp) -> f64 {
    app.metric("turnhouse_notices_total{channel=\"mail\",outcome=\"held\"}")
        .await
        .unwrap_or(0.0)
}

/// The Lichess rule: a player away is mailed once, after a while, a list of every room waiting
/// on them; one who is looking is mailed nothing; the next mail waits for the period.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_are_mailed_once_a_period_to_players_away_and_never_to_one_looking() {
    let sink = SmtpSink::start();
    let app = spawn(&sink, "2s", "4s").await;
    let (ada, bob) = (
        app.register(&unique("ada")).await,
        app.register(&unique("bob")).await,
    );
    let (ada_address, bob_address) = (address_of(&ada), address_of(&bob));
    verified(&app, &sink, &ada, &ada_address).await;
    verified(&app, &sink, &bob, &bob_address).await;

    // Three rooms waiting on Ada, who goes away; one on Bob, who watches it.
    let mut rooms = Vec::new();
    for _ in 0..3 {
        rooms.push(room_waiting_on(&app, &ada, &bob, None).await);
    }
    let bobs = room_waiting_on(&app, &bob, &ada, None).await;
    let url = format!(
        "{}/rooms/{bobs}/stream?access_token={}",
        app.address, bob.token
    );
    let mut watching = EventStream::open(&app.client, &url, None).await;
    watching.event().await;
    let held_before = held(&app).await;
    // The first attempt fails for now (a 4xx): it is tried again.
    sink.refuse(1, 451).await;

    let digest = sink
        .wait_for(&ada_address, WAIT, |m| m.len() == 2)
        .await
        .remove(1);
    let first_at = Instant::now();
    assert_eq!(header(&digest, "Subject"), "Your move in 3 games");
    let text = digest["text"].as_str().unwrap();
    for room in &rooms {
        assert!(text.contains(&format!("{PUBLIC}/#/room/{room}")), "{text}");
    }
    assert!(
        text.contains(&format!("Tic-tac-toe against {}", bob.username)),
        "{text}"
    );
    assert!(!text.contains(&bobs), "{text}");
    let unsubscribe = header(&digest, "List-Unsubscribe").to_owned();
    assert!(
        unsubscribe.starts_with(&format!("<{PUBLIC}/mail/unsubscribe?token=")),
        "{unsubscribe}"
    );
    assert_eq!(
        header(&digest, "List-Unsubscribe-Post"),
        "List-Unsubscribe=One-Click"
    );
    assert!(digest["html"]
        .as_str()
        .unwrap()
        .contains(&format!("href=\"{PUBLIC}/#/room/{}\"", rooms[0])));

    // Bob looked: his mail was held back, and none went.
    let until = Instant::now() + WAIT;
    while held(&app).await <= held_before {
        assert!(Instant::now() < until, "Bob's mail was never held back");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(sink.wait_for(&bob_address, WAIT, |_| true).await.len(), 1);

    // A turn within the period waits for it, then comes with every room still waiting.
    app.play_ok(&ada, &rooms[0], json!({"x": 0, "y": 0})).await;
    app.play_ok(&bob, &rooms[0], json!({"x": 1, "y": 1})).await;
    let second = sink
        .wait_for(&ada_address, WAIT, |m| m.len() == 3)
        .await
        .remove(2);
    assert!(
        first_at.elapsed() >= Duration::from_secs(3),
        "the period is kept"
    );
    assert_eq!(header(&second, "Subject"), "Your move in 3 games");

    // One click stops it (RFC 8058), and the setting says so.
    let link = unsubscribe.trim_matches(['<', '>']);
    let stopped = app
        .client
        .post(link.replace(PUBLIC, &app.address))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();
    assert_eq!(stopped.status(), StatusCode::OK);
    let settings = email_of(&app, &ada).await;
    assert_eq!(
        (settings["turnMail"].clone(), settings["clockMail"].clone()),
        (json!(false), json!(true))
    );
    let forged = app
        .client
        .post(format!(
            "{}/mail/unsubscribe?token={}.turns.AAAA",
            app.address, bob.id
        ))
        .send()
        .await
        .unwrap();
    assert_problem(forged, StatusCode::UNPROCESSABLE_ENTITY, "invalid_link").await;
}

/// A clock near its end warns the player who has not moved; one who moved hears nothing.
#[tokio::test]
async fn a_clock_running_out_warns_the_player_who_has_not_moved() {
    let sink = SmtpSink::start();
    let app = spawn(&sink, "1s", "12h").await;
    let (ada, bob) = (
        app.register(&unique("ada")).await,
        app.register(&unique("bob")).await,
    );
    let address = address_of(&ada);
    verified(&app, &sink, &ada, &address).await;
    // Warned 1.2 s before its end (a tenth of the clock), which the dispatcher's one look a
    // second is sure to catch.
    let room = room_waiting_on(&app, &ada, &bob, Some(12)).await;
    let warned = sink
        .wait_for(&address, WAIT, |m| {
            m.iter()
                .any(|m| header(m, "Subject").starts_with("Your clock runs out soon"))
        })
        .await;
    let warning = warned
        .iter()
        .find(|m| header(m, "Subject").starts_with("Your clock"))
        .unwrap();
    assert_eq!(
        header(warning, "Subject"),
        format!(
            "Your clock runs out soon: Tic-tac-toe against {}",
            bob.username
        )
    );
    assert!(warning["text"]
        .as_str()
        .unwrap()
        .contains(&format!("{PUBLIC}/#/room/{room}")));
    let unsubscribe = header(warning, "List-Unsubscribe")
        .trim_matches(['<', '>'])
        .to_owned();
    let page = app
        .client
        .get(unsubscribe.replace(PUBLIC, &app.address))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.unwrap().contains("<form method=\"post\""));
    assert_eq!(
        email_of(&app, &ada).await["clockMail"],
        true,
        "a link alone stops nothing"
    );
    let stopped = app
        .client
        .post(unsubscribe.replace(PUBLIC, &app.address))
        .send()
        .await
        .unwrap();
    assert_eq!(stopped.status(), StatusCode::OK);
    assert_eq!(email_of(&app, &ada).await["clockMail"], false);
}

/// Mail waiting when the server is killed (`kill -9`) goes once it is back: every mail, each
/// once (the SMTP server refused every attempt before the kill, so none went twice).
#[tokio::test]
async fn mail_pending_through_a_kill_is_sent_after_the_restart() {
    let sink = SmtpSink::start();
    let dir = tempfile::tempdir().unwrap();
    let database = crate::databases::fresh_database(dir.path(), "mail.db").await;
    let flags = [
        "--smtp-url",
        &sink.url(),
        "--public-url",
        PUBLIC,
        "--webhook-first-retry-ms",
        "200",
    ];
    let server = crate::real_server::Server::start_with(&database, &flags);
    let api = server.api.with_timeout(Duration::from_secs(10));
    sink.refuse(10_000, 451).await;
    let mut addresses = Vec::new();
    for _ in 0..5 {
        let player = api.register(&unique("kept")).await;
        let address = address_of(&player);
        let asked = api
            .request(
                Method::PUT,
                "/players/me/email",
                Some(&player.token),
                Some(&json!({ "email": address })),
            )
            .await;
        assert_eq!(asked.status(), StatusCode::ACCEPTED);
        addresses.push(address);
    }
    // Tried, refused, waiting for another try: then killed.
    let until = Instant::now() + WAIT;
    while api
        .metric("turnhouse_notices_total{channel=\"mail\",outcome=\"retried\"}")
        .await
        .unwrap_or(0.0)
        < 5.0
    {
        assert!(Instant::now() < until, "the mail was never tried");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.kill();
    sink.refuse(0, 451).await;

    let server = crate::real_server::Server::start_with(&database, &flags);
    for address in &addresses {
        // A row taken when the server died waits out its lease (on PostgreSQL, 30 s) first.
        let mail = sink.wait_for(address, WAIT * 2, |m| !m.is_empty()).await;
        assert_eq!(header(&mail[0], "Subject"), "Confirm your e-mail address");
    }
    // Once each: a second copy would be a retry of one that went, and none went before.
    let all = sink.messages().await;
    assert_eq!(all.len(), addresses.len(), "{all:#?}");
    server.kill();
}
