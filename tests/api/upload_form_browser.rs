//! The lobby's upload form in a real browser: a game's hooks with its page as a folder (zipped
//! by the page) or as an archive, and the frame that page gets on a phone.

use std::path::PathBuf;

use reqwest::StatusCode;
use serde_json::json;

use crate::browser::{room_in_view, sign_up};
use crate::helpers::{folder_files, unique, TestApp};
use crate::urturn_browser::{frame_waits_for, in_frame, urturn_build, zipped};
use crate::webdriver::{Browser, Driver};

/// Publishes `examples/connect-four.js` as `c4-folder` through the lobby's upload form, its
/// page given to the input `page_input` (the archive or the folder picker), and waits for
/// `published` ("version N") in the form's message.
async fn upload_connect_four(
    author: &Browser,
    page_input: &str,
    page: &std::path::Path,
    published: &str,
) {
    let hooks = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/connect-four.js");
    author.type_into("#upload-id", "c4-folder").await;
    author
        .type_into("#upload-file", hooks.to_str().unwrap())
        .await;
    author.type_into(page_input, page.to_str().unwrap()).await;
    author.click("#upload").await;
    author.wait_for_text("#upload-message", published).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_upload_form_takes_a_folder_or_an_archive_and_the_frame_fits_a_phone() {
    let app = TestApp::spawn_for_browsers().await;
    let driver = Driver::start().await;
    let author = driver.browser("upload-folder").await;
    sign_up(&author, &app, "author").await;
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");

    // The folder itself, as the browser's folder picker gives it: zipped by the page.
    let folder = examples.join("frontends/connect-four");
    upload_connect_four(&author, "#upload-folder", &folder, "version 1").await;
    for (path, body) in folder_files(&folder) {
        let served = app
            .get(&format!("/games/c4-folder/versions/1/frontend/{path}"))
            .await;
        assert_eq!(served.status(), StatusCode::OK, "{path}");
        assert_eq!(served.bytes().await.unwrap().to_vec(), body, "{path}");
    }

    // Its page on a 390 px phone: the frame, and the whole board in it, fit the width.
    author.click("[data-game=\"c4-folder\"] .new-private").await;
    let room = room_in_view(&author).await;
    let guest = app.register(&unique("guest")).await;
    assert_eq!(app.join(&guest, &room).await.status(), StatusCode::OK);
    author.resize(390, 844).await;
    frame_waits_for(&author, "#status", "Your turn").await;
    let widths = author
        .eval(
            "const f = document.getElementById('game-frame').getBoundingClientRect(); \
             return [f.left, f.right, document.documentElement.clientWidth];",
            json!([]),
        )
        .await;
    let (left, right, width) = (
        widths[0].as_f64().unwrap(),
        widths[1].as_f64().unwrap(),
        widths[2].as_f64().unwrap(),
    );
    assert!(left >= 0.0 && right <= width, "the frame fits: {widths}");
    let inside = in_frame(
        &author,
        "const drops = document.querySelectorAll('.drop'); \
         return [drops[drops.length - 1].getBoundingClientRect().right, document.documentElement.clientWidth];",
    )
    .await;
    assert!(
        inside[0].as_f64().unwrap() <= inside[1].as_f64().unwrap(),
        "the seventh column shows: {inside}"
    );
    author.screenshot("phone-connect-four").await;
    author.resize(1100, 900).await;

    // An archive, as the next version.
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("build.zip");
    std::fs::write(&archive, zipped(urturn_build())).unwrap();
    author.goto(&format!("{}/#/", app.address)).await;
    upload_connect_four(&author, "#upload-frontend", &archive, "version 2").await;
    let main = app
        .get("/games/c4-folder/versions/2/frontend/static/js/main.js")
        .await;
    assert_eq!(main.status(), StatusCode::OK);
    author.close().await;
}
