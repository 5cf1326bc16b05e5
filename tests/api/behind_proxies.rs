//! The server behind Debian's nginx and Caddy, with `deploy/nginx/turnhouse.conf` and
//! `deploy/caddy/Caddyfile` as they are but for names, ports and files: HTTPS at nginx, each client counted by its own address (and never by
//! one it wrote itself), streams passed at once, and the framed games' policy naming the
//! HTTPS origin people reach.

use std::net::IpAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::certificates::certificate;
use crate::client::unique;
use crate::helpers::free_port;
use crate::helpers::TestApp;
use crate::proxies::publish_framed;

/// A proxy (nginx, Caddy) in a folder of its own, stopped with the test.
struct Nginx(Child);

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// nginx on `tls` and `plain` in front of `backend`, with the deploy folder's site.
async fn nginx(dir: &Path, backend: u16, tls: u16, plain: u16) -> Nginx {
    let site = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/nginx/turnhouse.conf"
    ))
    .unwrap()
    .replace(
        "server 127.0.0.1:8080;",
        &format!("server 127.0.0.1:{backend};"),
    )
    .replace("listen 80;", &format!("listen 127.0.0.1:{plain};"))
    .replace(
        "listen 443 ssl http2;",
        &format!("listen 127.0.0.1:{tls} ssl http2;"),
    )
    .replace(
        "/etc/letsencrypt/live/games.example.org/fullchain.pem",
        dir.join("site.pem").to_str().unwrap(),
    )
    .replace(
        "/etc/letsencrypt/live/games.example.org/privkey.pem",
        dir.join("site.key").to_str().unwrap(),
    );
    std::fs::write(dir.join("site.conf"), site).unwrap();
    let d = dir.display();
    std::fs::write(
        dir.join("nginx.conf"),
        format!(
            "worker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 512; }}\n\
             http {{\n access_log off;\n client_body_temp_path {d}/body;\n proxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi;\n uwsgi_temp_path {d}/uwsgi;\n scgi_temp_path {d}/scgi;\n\
             include {d}/site.conf;\n}}\n"
        ),
    )
    .unwrap();
    let program = ["/usr/sbin/nginx", "nginx"]
        .into_iter()
        .find(|p| !p.starts_with('/') || Path::new(p).exists())
        .unwrap();
    let child = Command::new(program)
        .args([
            "-p",
            &d.to_string(),
            "-c",
            &format!("{d}/nginx.conf"),
            "-e",
            &format!("{d}/error.log"),
            "-g",
            "daemon off;",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nginx starts (scripts/test installs nginx-light)");
    let nginx = Nginx(child);
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", tls))
            .await
            .is_ok()
        {
            return nginx;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "nginx did not listen: {}",
        std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
    );
}

/// A browser on the loopback address `from`, trusting the test's CA.
fn browser_at(dir: &Path, from: &str) -> reqwest::Client {
    let pem = std::fs::read(dir.join("site-ca.pem")).unwrap();
    reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()])
        .local_address(from.parse::<IpAddr>().unwrap())
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

async fn post(
    client: &reqwest::Client,
    url: String,
    token: Option<&str>,
    body: Value,
    headers: &[(&str, &str)],
) -> (StatusCode, Value) {
    let mut request = client.post(url).json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("nginx answers");
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A server trusting the proxy on 127.0.0.1, with three sign-in attempts a minute per client,
/// and the game `framed` published.
async fn backend() -> (TestApp, u16) {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.serving.trusted_proxies = "127.0.0.1".parse().unwrap();
        config.abuse_limits.sign_in_rate = "3/min".parse().unwrap();
    })
    .await;
    publish_framed(&app).await;
    let port = app.address.rsplit(':').next().unwrap().parse().unwrap();
    (app, port)
}

/// What every proxy in front must keep, checked through the one at `base` by browsers at
/// 127.0.0.2 and 127.0.0.3: each client has its own limits, whatever it claims to be; a game
/// is played with its versions streamed through at once; and the framed game's policy names
/// the HTTPS origin people reach.
async fn checks_through(dir: &Path, base: &str) {
    let (alice, bob) = (browser_at(dir, "127.0.0.2"), browser_at(dir, "127.0.0.3"));
    let attempt = json!({"code": "ZZZZZZZZ", "label": "guess"});
    for _ in 0..3 {
        let (status, body) = post(
            &alice,
            format!("{base}/sessions"),
            None,
            attempt.clone(),
            &[],
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    }
    let (status, body) = post(
        &alice,
        format!("{base}/sessions"),
        None,
        attempt.clone(),
        &[],
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::TOO_MANY_REQUESTS, Some("rate_limited"))
    );
    let forged = [("x-forwarded-for", "203.0.113.9")];
    let (status, _) = post(
        &alice,
        format!("{base}/sessions"),
        None,
        attempt.clone(),
        &forged,
    )
    .await;
    assert_eq!(
        status,
        StatusCode::TOO_MANY_REQUESTS,
        "a forged address changes nothing"
    );
    let (status, _) = post(&bob, format!("{base}/sessions"), None, attempt.clone(), &[]).await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "another client is not held back"
    );

    let (_, x) = post(
        &alice,
        format!("{base}/players"),
        None,
        json!({"username": unique("x")}),
        &[],
    )
    .await;
    let (_, o) = post(
        &bob,
        format!("{base}/players"),
        None,
        json!({"username": unique("o")}),
        &[],
    )
    .await;
    let (x, o) = (
        x["token"].as_str().unwrap().to_owned(),
        o["token"].as_str().unwrap().to_owned(),
    );
    let (status, room) = post(
        &alice,
        format!("{base}/rooms"),
        Some(&x),
        json!({"game": "tictactoe"}),
        &[],
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{room}");
    let id = room["id"].as_str().unwrap().to_owned();
    let mut stream = bob
        .get(format!("{base}/rooms/{id}/stream"))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    assert_eq!(
        post(
            &bob,
            format!("{base}/rooms/{id}/join"),
            Some(&o),
            Value::Null,
            &[]
        )
        .await
        .0,
        StatusCode::OK
    );
    let (status, moved) = post(
        &alice,
        format!("{base}/rooms/{id}/moves"),
        Some(&x),
        json!({"x": 1, "y": 1}),
        &[],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    let mut seen = String::new();
    while !seen.contains("\"version\":3") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), stream.chunk())
            .await
            .expect("versions pass through the proxy at once")
            .unwrap()
            .expect("the stream stays open");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }

    let page = alice
        .get(format!("{base}/games/framed/versions/1/frontend/"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        policy.contains(&format!(
            "script-src {base}/games/framed/versions/1/frontend/ "
        )),
        "{policy}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_nginx_each_client_has_its_own_limits_and_streams_and_frames_work() {
    let dir = tempfile::tempdir().unwrap();
    certificate(dir.path(), "site");
    let (_app, backend) = backend().await;
    let (tls, plain) = (free_port(), free_port());
    let _nginx = nginx(dir.path(), backend, tls, plain).await;
    checks_through(dir.path(), &format!("https://127.0.0.1:{tls}")).await;
    crate::https_browser::played_in_chromium(&format!("https://127.0.0.1:{tls}"), "nginx").await;
    // Plain HTTP at nginx goes to HTTPS.
    let redirected = browser_at(dir.path(), "127.0.0.2")
        .get(format!("http://127.0.0.1:{plain}/rooms"))
        .send()
        .await
        .unwrap();
    assert_eq!(redirected.status(), StatusCode::MOVED_PERMANENTLY);
}

#[tokio::test]
async fn behind_caddy_each_client_has_its_own_limits_and_streams_and_frames_work() {
    let dir = tempfile::tempdir().unwrap();
    certificate(dir.path(), "site");
    let (_app, backend) = backend().await;
    let (tls, plain) = (free_port(), free_port());
    let d = dir.path().display();
    let site = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/caddy/Caddyfile"
    ))
    .unwrap()
    .replace(
        "reverse_proxy 127.0.0.1:8080",
        &format!("reverse_proxy 127.0.0.1:{backend}"),
    )
    .replace(
        "games.example.org {",
        &format!("127.0.0.1 {{\n\ttls {d}/site.pem {d}/site.key"),
    );
    let global = format!(
        "{{\n\tadmin off\n\thttp_port {plain}\n\thttps_port {tls}\n\tdefault_bind 127.0.0.1\n\tstorage file_system {d}/caddy\n}}\n"
    );
    std::fs::write(dir.path().join("Caddyfile"), global + &site).unwrap();
    let child = Command::new("caddy")
        .args([
            "run",
            "--adapter",
            "caddyfile",
            "--config",
            &format!("{d}/Caddyfile"),
        ])
        .env("HOME", dir.path())
        .env("XDG_DATA_HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("caddy starts (scripts/test installs it)");
    let _caddy = Nginx(child);
    let mut up = false;
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", tls))
            .await
            .is_ok()
        {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(up, "caddy did not listen");
    checks_through(dir.path(), &format!("https://127.0.0.1:{tls}")).await;
}
