//! Answers compressed for clients that take gzip, except those too small to gain from it.

use std::io::Read;

use flate2::read::GzDecoder;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{unique, TestApp};
use turnhouse::api::compress::MIN_COMPRESSED_BYTES;

async fn get_with(app: &TestApp, path: &str, accept: Option<&str>) -> reqwest::Response {
    let mut request = app.client.get(format!("{}{path}", app.address));
    if let Some(accept) = accept {
        request = request.header("accept-encoding", accept);
    }
    request.send().await.unwrap()
}

fn header(response: &reqwest::Response, name: &str) -> Vec<String> {
    response
        .headers()
        .get_all(name)
        .iter()
        .map(|v| v.to_str().unwrap().to_ascii_lowercase())
        .collect()
}

#[tokio::test]
async fn a_small_answer_goes_as_it_is_and_a_large_one_gzipped() {
    let app = TestApp::spawn().await;
    let x = app.register(&unique("x")).await;
    let room = app.create_room(&x, json!({"game": "tictactoe"})).await;
    let path = format!("/rooms/{}", room["id"].as_str().unwrap());

    // A room: a few hundred bytes, sent as they are even to a client that takes gzip, with
    // `Vary` saying the answer depends on what the client takes.
    let small = get_with(&app, &path, Some("gzip, deflate, br")).await;
    assert_eq!(small.status(), StatusCode::OK);
    assert!(header(&small, "content-encoding").is_empty());
    assert!(header(&small, "vary").contains(&"accept-encoding".to_owned()));
    let text = small.text().await.unwrap();
    assert!((text.len() as u64) < MIN_COMPRESSED_BYTES, "{}", text.len());
    let shown: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(shown["id"], room["id"]);

    // The client script: tens of kilobytes, gzipped for a client that takes it only.
    let plain = get_with(&app, "/client.js", None).await;
    assert!(header(&plain, "content-encoding").is_empty());
    let script = plain.bytes().await.unwrap();
    assert!(script.len() as u64 > MIN_COMPRESSED_BYTES);
    let packed = get_with(&app, "/client.js", Some("gzip, deflate, br")).await;
    assert_eq!(header(&packed, "content-encoding"), ["gzip"]);
    assert!(header(&packed, "vary").contains(&"accept-encoding".to_owned()));
    let packed = packed.bytes().await.unwrap();
    assert!(
        packed.len() < script.len() / 2,
        "{} of {}",
        packed.len(),
        script.len()
    );
    let mut unpacked = Vec::new();
    GzDecoder::new(&packed[..])
        .read_to_end(&mut unpacked)
        .unwrap();
    assert_eq!(unpacked, script);

    // Nothing this server sends is acceptable: 406, as before.
    let refused = get_with(&app, &path, Some("br, identity;q=0")).await;
    assert_eq!(refused.status(), StatusCode::NOT_ACCEPTABLE);
    assert_eq!(header(&refused, "vary"), ["accept-encoding"]);
}
