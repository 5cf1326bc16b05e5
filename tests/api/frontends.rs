//! Frontends over HTTP: CORS on every route (preflights, actual responses, streams, a list of
//! origins), the browser client served with content tags, and a game's own page uploaded with
//! its hooks and served sandboxed. The same in a real browser is in `frontends_browser.rs`.

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde_json::json;
use turnhouse::api::CorsOrigins;

use crate::helpers::{assert_problem, unique, TestApp};
use crate::real_server::Server;

const DEV_SERVER: &str = "http://localhost:5173";

pub(crate) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).map(|v| v.to_str().unwrap())
}

/// A preflight as a browser sends it before a cross-origin request.
async fn preflight(app: &TestApp, path: &str, origin: &str, method: &str) -> reqwest::Response {
    app.client
        .request(Method::OPTIONS, format!("{}{path}", app.address))
        .header("Origin", origin)
        .header("Access-Control-Request-Method", method)
        .header(
            "Access-Control-Request-Headers",
            "authorization, content-type, if-match",
        )
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn every_route_answers_a_preflight_with_its_own_methods() {
    let app = TestApp::spawn().await;
    let room = "0123456789abcdef0123456789abcdef";
    for (path, method, allowed) in [
        ("/rooms", "POST", "POST, GET, HEAD, OPTIONS"),
        (&format!("/rooms/{room}/moves"), "POST", "POST, OPTIONS"),
        (&format!("/rooms/{room}"), "GET", "GET, HEAD, OPTIONS"),
        ("/games/my-game", "PUT", "GET, PUT, HEAD, OPTIONS"),
        (
            &format!("/rooms/{room}/stream"),
            "GET",
            "GET, HEAD, OPTIONS",
        ),
        ("/players/me/token", "POST", "POST, OPTIONS"),
        ("/client.js", "GET", "GET, HEAD, OPTIONS"),
    ] {
        let response = preflight(&app, path, DEV_SERVER, method).await;
        assert_eq!(response.status(), StatusCode::NO_CONTENT, "{path}");
        let headers = response.headers();
        assert_eq!(header(headers, "access-control-allow-origin"), Some("*"));
        assert_eq!(
            header(headers, "access-control-allow-methods"),
            Some(allowed),
            "{path}"
        );
        let allow_headers = header(headers, "access-control-allow-headers")
            .unwrap()
            .to_ascii_lowercase();
        for needed in [
            "authorization",
            "content-type",
            "if-match",
            "if-none-match",
            "last-event-id",
            "x-request-id",
        ] {
            assert!(allow_headers.contains(needed), "{path}: {allow_headers}");
        }
        assert_eq!(header(headers, "access-control-max-age"), Some("7200"));
        assert_eq!(header(headers, "allow"), Some(allowed));
        assert_eq!(header(headers, "access-control-allow-credentials"), None);
    }

    // Without Origin it is a plain OPTIONS: the methods, and no preflight headers.
    let plain = app.request(Method::OPTIONS, "/rooms", None, None).await;
    assert_eq!(plain.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        header(plain.headers(), "allow"),
        Some("POST, GET, HEAD, OPTIONS")
    );
    assert_eq!(
        header(plain.headers(), "access-control-allow-methods"),
        None
    );
    // A path that does not exist stays 404, preflight or not.
    let unknown = preflight(&app, "/nowhere", DEV_SERVER, "GET").await;
    assert_problem(unknown, StatusCode::NOT_FOUND, "route_not_found").await;
    // 405 names OPTIONS among what a path serves.
    let delete = app.request(Method::DELETE, "/games", None, None).await;
    assert_eq!(
        header(delete.headers(), "allow"),
        Some("GET, HEAD, OPTIONS")
    );
}

#[tokio::test]
async fn actual_responses_let_a_page_on_any_origin_read_them_problems_included() {
    let app = TestApp::spawn().await;
    let alice = app.register(&unique("alice")).await;
    let created = app
        .client
        .post(format!("{}/rooms", app.address))
        .header("Origin", DEV_SERVER)
        .bearer_auth(&alice.token)
        .body(json!({"game": "tictactoe"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let headers = created.headers();
    assert_eq!(header(headers, "access-control-allow-origin"), Some("*"));
    let exposed = header(headers, "access-control-expose-headers").unwrap();
    for name in ["ETag", "Location", "Retry-After", "X-Request-Id", "Allow"] {
        assert!(exposed.contains(name), "{exposed}");
    }
    // `*` answers every origin the same: a cache varies a room only on who asks.
    assert_eq!(header(headers, "vary"), Some("Authorization"));

    let refused = app
        .client
        .post(format!("{}/rooms", app.address))
        .header("Origin", "https://elsewhere.example")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(
        header(refused.headers(), "access-control-allow-origin"),
        Some("*")
    );
    assert_problem(refused, StatusCode::UNAUTHORIZED, "missing_token").await;
}

#[tokio::test]
async fn both_streams_open_to_a_page_on_another_origin() {
    let app = TestApp::spawn().await;
    let (room, _, _) = app.started_tictactoe().await;
    for path in [format!("/rooms/{room}/stream"), "/rooms/stream".to_owned()] {
        let stream = app
            .client
            .get(format!("{}{path}", app.address))
            .header("Origin", DEV_SERVER)
            .header("Accept", "text/event-stream")
            .send()
            .await
            .unwrap();
        assert_eq!(stream.status(), StatusCode::OK, "{path}");
        assert_eq!(
            header(stream.headers(), "content-type"),
            Some("text/event-stream")
        );
        assert_eq!(
            header(stream.headers(), "access-control-allow-origin"),
            Some("*"),
            "{path}"
        );
    }
}

#[tokio::test]
async fn a_list_of_origins_admits_only_those_and_refuses_the_rest_in_their_preflight() {
    let allowed = "https://games.example,http://localhost:5173";
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.cors_origins = allowed.parse::<CorsOrigins>().unwrap();
    })
    .await;

    let listed = preflight(&app, "/rooms/quickplay", DEV_SERVER, "POST").await;
    assert_eq!(listed.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        header(listed.headers(), "access-control-allow-origin"),
        Some(DEV_SERVER)
    );
    assert_eq!(header(listed.headers(), "vary"), Some("Origin"));

    let other = preflight(&app, "/rooms/quickplay", "http://localhost:5174", "POST").await;
    assert_eq!(header(other.headers(), "access-control-allow-origin"), None);
    assert_eq!(
        header(other.headers(), "access-control-allow-methods"),
        None
    );
    assert_eq!(header(other.headers(), "vary"), Some("Origin"));
    let problem = assert_problem(other, StatusCode::FORBIDDEN, "origin_not_allowed").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("http://localhost:5174"),
        "{problem}"
    );

    // Actual requests from elsewhere are served (a browser then hides the answer), without CORS
    // headers; every answer varies by Origin, even one to a request that sent none.
    for origin in [Some("https://evil.example"), None] {
        let mut request = app.client.get(format!("{}/games", app.address));
        if let Some(origin) = origin {
            request = request.header("Origin", origin);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            header(response.headers(), "access-control-allow-origin"),
            None
        );
        assert_eq!(header(response.headers(), "vary"), Some("Origin"));
    }
    let games = app
        .client
        .get(format!("{}/games", app.address))
        .header("Origin", "https://games.example")
        .send()
        .await
        .unwrap();
    assert_eq!(
        header(games.headers(), "access-control-allow-origin"),
        Some("https://games.example")
    );
    assert!(header(games.headers(), "access-control-expose-headers").is_some());
}

#[tokio::test]
async fn the_client_module_and_its_types_are_served_with_tags_from_their_content() {
    let app = TestApp::spawn().await;
    let mut tags = Vec::new();
    for (path, content_type, marker) in [
        (
            "/client.js",
            "text/javascript; charset=utf-8",
            "export class Turnhouse",
        ),
        (
            "/client.d.ts",
            "application/typescript; charset=utf-8",
            "export declare class Turnhouse",
        ),
    ] {
        let response = app
            .client
            .get(format!("{}{path}", app.address))
            .header("Origin", DEV_SERVER)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let headers = response.headers().clone();
        assert_eq!(header(&headers, "content-type"), Some(content_type));
        // A module script from another origin is fetched with CORS.
        assert_eq!(header(&headers, "access-control-allow-origin"), Some("*"));
        let tag = header(&headers, "etag").unwrap().to_owned();
        let body = response.text().await.unwrap();
        assert!(body.contains(marker), "{path}");
        let source =
            std::fs::read_to_string(format!("{}/src/web{path}", env!("CARGO_MANIFEST_DIR")))
                .unwrap();
        assert_eq!(body, source, "{path} is served as it is in src/web");

        let again = app
            .client
            .get(format!("{}{path}", app.address))
            .header("If-None-Match", &tag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(header(again.headers(), "etag"), Some(tag.as_str()));
        let stale = app
            .client
            .get(format!("{}{path}", app.address))
            .header("If-None-Match", "\"0\"")
            .send()
            .await
            .unwrap();
        assert_eq!(stale.status(), StatusCode::OK);
        tags.push(tag);
    }
    assert_ne!(tags[0], tags[1], "each file has its own tag");
}

/// A malformed header is the client's doing: it is counted and logged at INFO, not as an
/// error (the real binary, whose log is what an operator reads).
#[tokio::test]
async fn a_malformed_request_is_counted_and_not_logged_as_a_server_error() {
    let dir = tempfile::tempdir().unwrap();
    let database = crate::databases::fresh_database(dir.path(), "malformed.db").await;
    let server = Server::start(&database);
    let address = server.address.trim_start_matches("http://").to_owned();
    for _ in 0..3 {
        let answer = tokio::task::spawn_blocking({
            let address = address.clone();
            move || {
                use std::io::{Read, Write};
                let mut socket = std::net::TcpStream::connect(address).unwrap();
                socket
                    .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n")
                    .unwrap();
                let mut answer = String::new();
                let _ = socket.read_to_string(&mut answer);
                answer
            }
        })
        .await
        .unwrap();
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    }
    let client = reqwest::Client::new();
    let mut counted = String::new();
    for _ in 0..100 {
        let metrics = client
            .get(format!("{}/metrics", server.address))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        counted = metrics
            .lines()
            .find(|l| {
                l.starts_with("turnhouse_http_unreadable_requests_total{reason=\"malformed\"}")
            })
            .unwrap()
            .to_owned();
        if counted.ends_with(" 3") && server.log_lines_with(&["could not be read"]).len() == 3 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(counted.ends_with(" 3"), "{counted}");
    let logged = server.log_lines_with(&["could not be read", "invalid Header provided"]);
    assert_eq!(logged.len(), 3, "{logged:?}");
    assert!(
        logged.iter().all(|line| line.contains(" INFO ")),
        "{logged:?}"
    );
    assert!(server.log_lines_with(&["ERROR"]).is_empty());
    server.kill();
}
