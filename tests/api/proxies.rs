//! Behind proxies: a request from a trusted proxy is counted by the client address the proxy
//! names, and from anyone else the forwarding headers change nothing.

use reqwest::StatusCode;
use serde_json::{json, Value};

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
