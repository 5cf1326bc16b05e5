//! `openapi.yaml` describes exactly the routes the server serves.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::Value;

use crate::helpers::TestApp;

fn spec() -> Value {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.yaml")).unwrap();
    serde_yaml::from_str(&text).expect("openapi.yaml parses")
}

fn spec_routes(spec: &Value) -> BTreeSet<(String, String)> {
    let methods = ["get", "put", "post", "delete", "patch", "head", "options"];
    spec["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .filter(|k| methods.contains(&k.as_str()))
                .map(move |m| (m.to_uppercase(), path.clone()))
        })
        .collect()
}

#[test]
fn the_spec_lists_exactly_the_served_routes() {
    let spec = spec();
    assert!(spec["openapi"].as_str().unwrap().starts_with("3.1"));
    let served: BTreeSet<(String, String)> = turnhouse::api::route_table()
        .into_iter()
        .map(|(method, path)| (method.to_string(), path.to_owned()))
        .collect();
    assert_eq!(spec_routes(&spec), served);
}

#[test]
fn every_operation_documents_its_errors_as_problems() {
    let spec = spec();
    for (method, path) in spec_routes(&spec) {
        let op = &spec["paths"][&path][method.to_lowercase()];
        assert!(
            op["operationId"].is_string(),
            "{method} {path} has an operationId"
        );
        let responses = op["responses"].as_object().unwrap();
        assert!(
            // A route that only sends the client on documents the redirect as its success.
            responses
                .keys()
                .any(|k| k.starts_with('2') || k.starts_with('3')),
            "{method} {path} documents success"
        );
    }
    let codes = spec["components"]["schemas"]["Problem"]["properties"]["code"]["enum"]
        .as_array()
        .expect("the Problem schema lists every code");
    for code in [
        "malformed_json",
        "missing_token",
        "not_a_player",
        "room_not_found",
        "version_mismatch",
        "game_refused",
    ] {
        assert!(codes.iter().any(|c| c == code), "{code} is documented");
    }
}

/// Each documented route answers something other than "no such route" on the live server.
#[tokio::test]
async fn every_documented_route_is_live() {
    let app = TestApp::spawn().await;
    for (method, path) in spec_routes(&spec()) {
        let path = path.replace("{id}", "0123456789abcdef0123456789abcdef");
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let response = app.request(method.clone(), &path, None, None).await;
        let status = response.status();
        if status == reqwest::StatusCode::NO_CONTENT {
            continue; // OPTIONS: a path that answers it is live.
        }
        if response.headers()["content-type"] == "text/event-stream" {
            continue; // A stream that opened is live (and never ends by itself).
        }
        let body: Value = response.json().await.unwrap_or(Value::Null);
        assert!(
            body["code"] != "route_not_found" && body["code"] != "method_not_allowed",
            "{method} {path}: {status} {body}"
        );
    }
}

/// The Problem schema lists exactly the codes the server can answer with.
#[test]
fn the_spec_lists_every_problem_code() {
    // The API's own problems, and every slice's and the store's, each classified in one
    // match whose arms read `=> (S::STATUS, "code")` or `=> (K::Kind, "code")`.
    let mut served = BTreeSet::new();
    for file in [
        "/src/api/error.rs",
        "/src/engine/error.rs",
        "/src/accounts/error.rs",
        "/src/catalog/error.rs",
        "/src/moderation/error.rs",
        "/src/chat/error.rs",
        "/src/standing/mod.rs",
        "/src/webhooks/error.rs",
        "/src/notifications/error.rs",
        "/src/problem.rs",
    ] {
        let path = format!("{}{file}", env!("CARGO_MANIFEST_DIR"));
        let source = std::fs::read_to_string(path).unwrap();
        // Each match ends where the next function begins.
        for body in source.split("fn classify(&self)").skip(1) {
            let body = body.split("\n    fn ").next().unwrap();
            served.extend(
                body.split(", \"")
                    .skip(1)
                    .map(|rest| rest.split('"').next().unwrap().to_owned()),
            );
        }
    }
    let spec = spec();
    let documented: BTreeSet<String> = spec["components"]["schemas"]["Problem"]["properties"]
        ["code"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(documented, served);
}
