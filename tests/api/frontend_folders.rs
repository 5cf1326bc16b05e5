//! A game's frontend as a build folder: published with one form upload (a .zip, a .tar.gz or
//! one page), refused by name when it breaks a rule (and then nothing is stored), and served
//! per version with its types, entity tags, immutable caching, gzip and the sandbox policy.
//! The same in a real browser is in `frontends_browser.rs` and `urturn_browser.rs`.

use std::io::{Read, Write};

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use reqwest::multipart::Form;
use reqwest::StatusCode;
use serde_json::Value;

use crate::helpers::{assert_problem, example, file_part, unique, zip_of, TestApp, TestPlayer};

const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

fn script() -> Vec<u8> {
    "document.body.dataset.ready = 'yes'; // a build's bundle, much repeated\n"
        .repeat(200)
        .into_bytes()
}

/// A create-react-app-like build folder, zipped with its top folder as `zip -r build.zip build`.
pub(crate) fn build_zip() -> Vec<u8> {
    zip_of(&[
        (
            "build/index.html",
            b"<!doctype html><link href=\"./static/css/main.css\" rel=\"stylesheet\">\
              <div id=\"root\"></div><script defer src=\"./static/js/main.1a2b.js\"></script>",
        ),
        ("build/static/js/main.1a2b.js", &script()),
        (
            "build/static/css/main.css",
            b"body { background: #121212; }",
        ),
        ("build/static/media/logo.png", PNG),
    ])
}

pub(crate) fn with_source(frontend: reqwest::multipart::Part) -> Form {
    Form::new()
        .part(
            "source",
            file_part("index.js", example("tictactoe.js").into_bytes()),
        )
        .part("frontend", frontend)
}

async fn get_with(app: &TestApp, path: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut request = app.client.get(format!("{}{path}", app.address));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

fn header(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
}

#[tokio::test]
async fn a_build_folder_is_published_with_one_form_and_served_from_its_version() {
    let app = TestApp::spawn().await;
    let author = app.register(&unique("author")).await;
    let form = with_source(file_part("build.zip", build_zip()))
        .text("frontendBackground", "#121212")
        .text("frontendHeight", "720");
    let created = app
        .upload_form(&author, "folder", "?name=Folder%20game", form)
        .await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let game: Value = created.json().await.unwrap();
    assert_eq!(
        game["name"], "Folder game",
        "settings from the query string"
    );
    assert_eq!(game["hasFrontend"], true);
    assert_eq!(game["frontendBackground"], "#121212");
    assert_eq!(game["frontendHeight"], 720);

    // The folder itself is its index.html, under the sandbox policy of this version's folder.
    let index = app.get("/games/folder/versions/1/frontend/").await;
    assert_eq!(index.status(), StatusCode::OK);
    let host = app.address.trim_start_matches("http://");
    let policy = header(&index, "content-security-policy").unwrap();
    let folder = format!("http://{host}/games/folder/versions/1/frontend/");
    for part in [
        "sandbox allow-scripts".to_owned(),
        "default-src 'none'".to_owned(),
        format!("script-src {folder} 'unsafe-inline'"),
        format!("style-src {folder} 'unsafe-inline'"),
        format!("img-src {folder} data: blob:"),
        format!("font-src {folder} data:"),
        "connect-src 'none'".to_owned(),
        "form-action 'none'".to_owned(),
    ] {
        assert!(policy.contains(&part), "{part} in {policy}");
    }
    assert_eq!(
        header(&index, "content-type").as_deref(),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(
        header(&index, "cache-control").as_deref(),
        Some("public, max-age=31536000, immutable")
    );
    assert_eq!(
        header(&index, "x-content-type-options").as_deref(),
        Some("nosniff")
    );
    assert_eq!(
        header(&index, "access-control-allow-origin").as_deref(),
        Some("*")
    );
    assert!(index
        .text()
        .await
        .unwrap()
        .contains("./static/js/main.1a2b.js"));

    // A script: as uploaded without gzip, gzipped when asked, 304 for either tag.
    let path = "/games/folder/versions/1/frontend/static/js/main.1a2b.js";
    let plain = get_with(&app, path, &[]).await;
    assert_eq!(
        header(&plain, "content-type").as_deref(),
        Some("text/javascript; charset=utf-8")
    );
    assert_ne!(header(&plain, "content-encoding").as_deref(), Some("gzip"));
    let tag = header(&plain, "etag").unwrap();
    assert_eq!(plain.bytes().await.unwrap().to_vec(), script());
    let gzipped = get_with(&app, path, &[("accept-encoding", "br;q=1, gzip;q=0.8")]).await;
    assert_eq!(
        header(&gzipped, "content-encoding").as_deref(),
        Some("gzip")
    );
    assert_eq!(header(&gzipped, "vary").as_deref(), Some("Accept-Encoding"));
    let gzip_tag = header(&gzipped, "etag").unwrap();
    assert_ne!(gzip_tag, tag, "another representation, another tag");
    let packed = gzipped.bytes().await.unwrap();
    assert!(packed.len() < script().len() / 5, "{}", packed.len());
    let mut unpacked = Vec::new();
    GzDecoder::new(&packed[..])
        .read_to_end(&mut unpacked)
        .unwrap();
    assert_eq!(unpacked, script());
    for sent in [&tag, &gzip_tag] {
        let again = get_with(&app, path, &[("if-none-match", sent.as_str())]).await;
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(
            header(&again, "cache-control").as_deref(),
            Some("public, max-age=31536000, immutable")
        );
    }
    let refused = get_with(&app, path, &[("accept-encoding", "gzip;q=0")]).await;
    assert_ne!(
        header(&refused, "content-encoding").as_deref(),
        Some("gzip")
    );

    // An image: its own type, never gzipped; a stylesheet; an unknown file is 404.
    let logo = get_with(
        &app,
        "/games/folder/versions/1/frontend/static/media/logo.png",
        &[("accept-encoding", "gzip")],
    )
    .await;
    assert_eq!(header(&logo, "content-type").as_deref(), Some("image/png"));
    assert_ne!(header(&logo, "content-encoding").as_deref(), Some("gzip"));
    assert_eq!(logo.bytes().await.unwrap().to_vec(), PNG);
    let css = app
        .get("/games/folder/versions/1/frontend/static/css/main.css")
        .await;
    assert_eq!(
        header(&css, "content-type").as_deref(),
        Some("text/css; charset=utf-8")
    );
    let missing = assert_problem(
        app.get("/games/folder/versions/1/frontend/static/js/nope.js")
            .await,
        StatusCode::NOT_FOUND,
        "frontend_file_not_found",
    )
    .await;
    assert!(missing["detail"]
        .as_str()
        .unwrap()
        .contains("static/js/nope.js"));
    for (path, code) in [
        (
            "/games/folder/versions/9/frontend/",
            "game_version_not_found",
        ),
        (
            "/games/folder/versions/x/frontend/",
            "game_version_not_found",
        ),
        ("/games/nobody/versions/1/frontend/", "game_not_found"),
        (
            "/games/tictactoe/versions/1/frontend/",
            "frontend_not_found",
        ),
    ] {
        assert_problem(app.get(path).await, StatusCode::NOT_FOUND, code).await;
    }

    // Without the slash, and by the single-page route: sent on to the folder.
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for (path, status) in [
        (
            "/games/folder/versions/1/frontend",
            StatusCode::PERMANENT_REDIRECT,
        ),
        (
            "/games/folder/frontend?version=1",
            StatusCode::TEMPORARY_REDIRECT,
        ),
    ] {
        let moved = no_redirects
            .get(format!("{}{path}", app.address))
            .send()
            .await
            .unwrap();
        assert_eq!(moved.status(), status, "{path}");
        assert_eq!(
            header(&moved, "location").as_deref(),
            Some("/games/folder/versions/1/frontend/")
        );
    }

    // A new version of the hooks alone keeps the folder, as it was, under its own number.
    let second = app
        .upload(&author, "folder", &example("tictactoe.js"))
        .await;
    assert_eq!(second.status(), StatusCode::OK);
    let second: Value = second.json().await.unwrap();
    assert_eq!(second["version"], 2);
    assert_eq!(second["hasFrontend"], true);
    assert_eq!(second["frontendHeight"], 720, "kept");
    let kept = get_with(
        &app,
        "/games/folder/versions/2/frontend/static/js/main.1a2b.js",
        &[],
    )
    .await;
    assert_eq!(header(&kept, "etag"), Some(tag));
    let policy = header(&kept, "content-security-policy").unwrap();
    assert!(
        policy.contains("/games/folder/versions/2/frontend/"),
        "{policy}"
    );
}

#[tokio::test]
async fn a_tar_gz_or_one_page_is_a_frontend_too() {
    let app = TestApp::spawn().await;
    let author = app.register(&unique("author")).await;
    let mut tar = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::default()));
    for (path, body) in [
        (
            "./index.html",
            &b"<!doctype html><script src=\"app.js\"></script>"[..],
        ),
        ("./app.js", b"go()"),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(body.len() as u64);
        header.set_mode(0o644);
        tar.append_data(&mut header, path, body).unwrap();
    }
    let tar_gz = tar.into_inner().unwrap().finish().unwrap();
    let response = app
        .upload_form(
            &author,
            "tarred",
            "",
            with_source(file_part("page.tar.gz", tar_gz)).text("name", "Tarred"),
        )
        .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let app_js = app.get("/games/tarred/versions/1/frontend/app.js").await;
    assert_eq!(app_js.text().await.unwrap(), "go()");

    // One .html file is the folder's index.html, served by both routes.
    let page = "<!doctype html><p>one page</p>";
    let response = app
        .upload_form(
            &author,
            "one-page",
            "",
            with_source(file_part("game.html", page.as_bytes().to_vec())),
        )
        .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    for path in [
        "/games/one-page/versions/1/frontend/",
        "/games/one-page/frontend",
    ] {
        let served = app.get(path).await;
        assert_eq!(served.status(), StatusCode::OK, "{path}");
        assert_eq!(served.text().await.unwrap(), page);
    }
}

/// Uploads `frontend` as a new game's: refused with `invalid_frontend`, naming `entry`.
async fn refused(
    app: &TestApp,
    author: &TestPlayer,
    id: &str,
    name: &str,
    bytes: Vec<u8>,
    entry: &str,
) {
    let response = app
        .upload_form(author, id, "", with_source(file_part(name, bytes)))
        .await;
    let problem = assert_problem(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_frontend",
    )
    .await;
    assert_eq!(problem["entry"], entry, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains(entry),
        "the detail names the entry: {problem}"
    );
}

#[tokio::test]
async fn every_broken_rule_is_refused_by_name_and_nothing_is_stored() {
    let app = TestApp::spawn().await;
    let author = app.register(&unique("author")).await;
    let index: (&str, &[u8]) = ("index.html", b"<p>hi");

    refused(
        &app,
        &author,
        "slip",
        "a.zip",
        zip_of(&[index, ("../../evil.html", b"x")]),
        "../../evil.html",
    )
    .await;
    refused(
        &app,
        &author,
        "slip",
        "a.zip",
        zip_of(&[index, ("/etc/cron.d/x", b"x")]),
        "/etc/cron.d/x",
    )
    .await;

    let mut links = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    links
        .start_file("index.html", zip::write::SimpleFileOptions::default())
        .unwrap();
    links.write_all(b"<p>hi").unwrap();
    links
        .add_symlink(
            "secrets",
            "/etc/passwd",
            zip::write::SimpleFileOptions::default(),
        )
        .unwrap();
    refused(
        &app,
        &author,
        "slip",
        "a.zip",
        links.finish().unwrap().into_inner(),
        "secrets",
    )
    .await;

    let mut hard = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Link);
    header.set_size(0);
    hard.append_link(&mut header, "again.html", "/etc/passwd")
        .unwrap();
    let hard = hard.into_inner().unwrap().finish().unwrap();
    refused(&app, &author, "slip", "a.tar.gz", hard, "again.html").await;

    // A bomb: 33 MiB of zeros in about 33 KiB, stopped at the cap while it inflates.
    let zeros = vec![0u8; 33 << 20];
    let bomb = zip_of(&[index, ("zeros.bin", &zeros)]);
    assert!(bomb.len() < 1 << 20);
    refused(&app, &author, "bomb", "bomb.zip", bomb, "zeros.bin").await;

    let names: Vec<String> = (0..1_000).map(|i| format!("f{i}.txt")).collect();
    let mut many: Vec<(&str, &[u8])> = vec![index];
    many.extend(names.iter().map(|n| (n.as_str(), &b"x"[..])));
    refused(&app, &author, "many", "many.zip", zip_of(&many), "f999.txt").await;

    // Over 8 MiB as sent: refused while it arrives.
    let noise: Vec<u8> = (0..(9u32 << 20))
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    refused(&app, &author, "big", "big.zip", noise, "big.zip").await;

    refused(
        &app,
        &author,
        "no-index",
        "a.zip",
        zip_of(&[("app/index.htm", b"x"), ("b.js", b"x")]),
        "index.html",
    )
    .await;
    refused(&app, &author, "png", "logo.png", PNG.to_vec(), "logo.png").await;

    for id in ["slip", "bomb", "many", "big", "no-index", "png"] {
        assert_problem(
            app.get(&format!("/games/{id}")).await,
            StatusCode::NOT_FOUND,
            "game_not_found",
        )
        .await;
    }

    // An existing game keeps its version and its files when the next upload is refused.
    let good = app
        .upload_form(
            &author,
            "kept",
            "",
            with_source(file_part("build.zip", build_zip())),
        )
        .await;
    assert_eq!(good.status(), StatusCode::CREATED);
    refused(
        &app,
        &author,
        "kept",
        "a.zip",
        zip_of(&[index, ("../x", b"x")]),
        "../x",
    )
    .await;
    let game = app.get_json("/games/kept").await;
    assert_eq!(game["version"], 1);
    assert_problem(
        app.get("/games/kept/versions/2/frontend/").await,
        StatusCode::NOT_FOUND,
        "game_version_not_found",
    )
    .await;

    // Settings and form fields that are wrong are named too.
    for (field, value, status, code) in [
        (
            "frontendHeight",
            "100",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_game_settings",
        ),
        (
            "frontendHeight",
            "tall",
            StatusCode::BAD_REQUEST,
            "invalid_body",
        ),
        (
            "frontendBackground",
            "red; position: fixed",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_game_settings",
        ),
        ("colour", "red", StatusCode::BAD_REQUEST, "invalid_body"),
    ] {
        let form = with_source(file_part("build.zip", build_zip())).text(field, value);
        let response = app.upload_form(&author, "kept", "", form).await;
        let problem = assert_problem(response, status, code).await;
        assert!(
            problem["detail"].as_str().unwrap().contains(field),
            "{problem}"
        );
    }
    assert_eq!(app.get_json("/games/kept").await["version"], 1);
}
