//! Behind proxies: a request from a trusted proxy is counted by the client address the proxy
//! names, and from anyone else the forwarding headers change nothing.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::client::unique;
use crate::helpers::*;

/// A sign-up sent with `headers`: its status and body.
async fn sign_up(app: &TestApp, headers: &[(&str, &str)]) -> (StatusCode, Value) {
    let mut request = app
        .client
        .post(format!("{}/players", app.address))
        .json(&json!({"username": unique("proxied")}));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn behind_a_trusted_proxy_each_client_address_has_its_own_limit() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.abuse_limits.signup_rate = "2/h".parse().unwrap();
        config.serving.trusted_proxies = "127.0.0.0/8".parse().unwrap();
    })
    .await;
    let alice = [
        ("x-forwarded-for", "198.51.100.7"),
        ("x-forwarded-proto", "https"),
    ];
    for _ in 0..2 {
        assert_eq!(sign_up(&app, &alice).await.0, StatusCode::CREATED);
    }
    let (status, refused) = sign_up(&app, &alice).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{refused}");
    assert_eq!(refused["code"], "rate_limited");
    // Another client behind the same proxy is not held back by the first.
    let bob = [("x-forwarded-for", "198.51.100.8")];
    assert_eq!(sign_up(&app, &bob).await.0, StatusCode::CREATED);
    // A client cannot escape its limit by writing an address of its own to the left: the
    // proxy appends the one it saw.
    let forged = [("x-forwarded-for", "203.0.113.50, 198.51.100.7")];
    assert_eq!(
        sign_up(&app, &forged).await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
    // RFC 7239's header names the client just as well, and wins over X-Forwarded-For.
    let carol = [
        ("forwarded", "for=\"[2001:db8::7]:4711\";proto=https"),
        ("x-forwarded-for", "198.51.100.7"),
    ];
    for _ in 0..2 {
        assert_eq!(sign_up(&app, &carol).await.0, StatusCode::CREATED);
    }
    assert_eq!(sign_up(&app, &carol).await.0, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn forwarding_headers_from_an_untrusted_address_are_ignored() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.abuse_limits.signup_rate = "2/h".parse().unwrap();
    })
    .await;
    // Every request claims another client; all of them come from this one address.
    for (n, expected) in [
        (1, StatusCode::CREATED),
        (2, StatusCode::CREATED),
        (3, StatusCode::TOO_MANY_REQUESTS),
    ] {
        let forged = format!("198.51.100.{n}");
        let headers = [
            ("x-forwarded-for", forged.as_str()),
            ("forwarded", "for=192.0.2.1"),
        ];
        assert_eq!(sign_up(&app, &headers).await.0, expected, "sign-up {n}");
    }
}

/// The policy of the game `framed`'s page, asked for with `headers`.
pub(crate) async fn policy_of(app: &TestApp, headers: &[(&str, &str)]) -> String {
    let mut request = app
        .client
        .get(format!("{}/games/framed/versions/1/frontend/", app.address));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned()
}

/// Publishes the game `framed` with a build folder.
pub(crate) async fn publish_framed(app: &crate::client::Api) {
    let author = app.register(&unique("author")).await;
    let form = crate::frontend_folders::with_source(file_part(
        "build.zip",
        crate::frontend_folders::build_zip(),
    ));
    let created = app.upload_form(&author, "framed", "", form).await;
    assert_eq!(created.status(), StatusCode::CREATED);
}

/// The frames' policy names the origin people reach the server at: the public URL when the
/// operator gave one, else the scheme a trusted proxy says and the request's own `Host`.
#[tokio::test]
async fn the_frames_policy_and_the_api_description_name_the_public_origin() {
    let folder = "/games/framed/versions/1/frontend/";
    let public = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.mail.public_url = Some("https://games.example.org/".into());
    })
    .await;
    publish_framed(&public).await;
    let policy = policy_of(&public, &[]).await;
    assert!(
        policy.contains(&format!("script-src https://games.example.org{folder} ")),
        "{policy}"
    );
    let servers = "servers:\n  - url: https://games.example.org\n";
    assert!(api_description(&public, &[]).await.contains(servers));

    let proxied = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.serving.trusted_proxies = "127.0.0.1".parse().unwrap();
    })
    .await;
    publish_framed(&proxied).await;
    let host = proxied.address.trim_start_matches("http://").to_owned();
    let policy = policy_of(&proxied, &[("x-forwarded-proto", "https")]).await;
    assert!(
        policy.contains(&format!("script-src https://{host}{folder} ")),
        "{policy}"
    );
    let servers = format!("servers:\n  - url: https://{host}\n");
    let forwarded = [("x-forwarded-proto", "https")];
    assert!(api_description(&proxied, &forwarded)
        .await
        .contains(&servers));
    // Without the proxy's word, the request's own scheme.
    let policy = policy_of(&proxied, &[]).await;
    assert!(
        policy.contains(&format!("script-src http://{host}{folder} ")),
        "{policy}"
    );
    let servers = format!("servers:\n  - url: http://{host}\n");
    assert!(api_description(&proxied, &[]).await.contains(&servers));
}

/// `GET /openapi.yaml` sent with `headers`.
async fn api_description(app: &TestApp, headers: &[(&str, &str)]) -> String {
    let mut request = app.client.get(format!("{}/openapi.yaml", app.address));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/yaml");
    response.text().await.unwrap()
}

/// An admin's action is kept with the address it came from: behind a trusted proxy, the client
/// the proxy names; from the command line, none.
#[tokio::test]
async fn the_audit_log_keeps_the_client_address_an_action_came_from() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.serving.trusted_proxies = "127.0.0.0/8".parse().unwrap();
    })
    .await;
    let admin = crate::moderation::new_admin(&app).await;
    let player = app.register(&unique("audited")).await;
    let suspended = app
        .client
        .post(format!(
            "{}/admin/players/{}/suspend",
            app.address, player.id
        ))
        .bearer_auth(&admin.token)
        .header("x-forwarded-for", "203.0.113.9, 198.51.100.21")
        .json(&json!({"reason": "spam"}))
        .send()
        .await
        .unwrap();
    assert_eq!(suspended.status(), StatusCode::OK);
    let page: Value = app
        .request(
            reqwest::Method::GET,
            "/admin/audit",
            Some(&admin.token),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    let entries = page["entries"].as_array().unwrap();
    let suspend = entries.iter().find(|e| e["action"] == "suspend").unwrap();
    assert_eq!(suspend["client"], "198.51.100.21", "{suspend}");
    let grant = entries.iter().find(|e| e["action"] == "grant").unwrap();
    assert_eq!(grant["client"], Value::Null, "{grant}");
}

/// Behind a trusted proxy, each client it names may hold only so many requests open at once,
/// streams included (`--max-connections-per-address`): the next is answered `429
/// too_many_connections`, another client is not held back, and a stream closed frees its place.
#[tokio::test]
async fn behind_a_trusted_proxy_each_client_holds_only_so_many_requests_open() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.serving.max_connections_per_address = 2;
        config.serving.trusted_proxies = "127.0.0.0/8".parse().unwrap();
        // A closed stream is noticed when the next keep-alive cannot be written.
        config.stream_keepalive_secs = 1;
    })
    .await;
    let from = |client: &'static str, path: &str| {
        app.client
            .get(format!("{}{path}", app.address))
            .header("x-forwarded-for", client)
            .send()
    };
    let alice = "198.51.100.30";
    let mut streams = Vec::new();
    for _ in 0..2 {
        let stream = from(alice, "/rooms/stream").await.unwrap();
        assert_eq!(stream.status(), StatusCode::OK);
        streams.push(stream);
    }
    let refused = from(alice, "/healthz").await.unwrap();
    let problem = assert_problem(
        refused,
        StatusCode::TOO_MANY_REQUESTS,
        "too_many_connections",
    )
    .await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("2 requests open"),
        "{problem}"
    );
    let other = from("198.51.100.31", "/healthz").await.unwrap();
    assert_eq!(other.status(), StatusCode::OK, "another client has its own");

    drop(streams.pop());
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let status = from(alice, "/healthz").await.unwrap().status();
        if status == StatusCode::OK {
            break;
        }
        assert!(
            std::time::Instant::now() < until,
            "still {status} after a stream closed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
