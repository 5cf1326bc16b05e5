//! A small W3C WebDriver client for driving Debian's headless Chromium through chromedriver:
//! just what the page tests need (open a page, find, click, type, read, screenshot).

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long a test waits for the page to reach a state before failing: a bound on hanging,
/// generous because the machine may be busy with other tests, not a speed requirement.
const DEADLINE: Duration = Duration::from_secs(60);
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// The one chromedriver of this test process: started by the first browser test, and ended
/// with every browser it started when the process exits (they share its process group).
struct Shared {
    base: String,
    chromedriver: Mutex<Child>,
    /// Where the browsers' profiles are made, removed at exit.
    profiles: PathBuf,
}

static SHARED: OnceLock<Shared> = OnceLock::new();

/// Browsers a finished test gave back, with the origins it visited, to be cleaned and handed
/// to the next test: a browser is started once and serves test after test.
static IDLE: Mutex<Vec<Idle>> = Mutex::new(Vec::new());

/// Counts browsers started, for their profiles' names.
static STARTED: AtomicUsize = AtomicUsize::new(0);

/// Held by every browser a test uses (shared) and by a test that changes the machine's
/// network interfaces (alone): Chromium gives up every request it has in flight when an
/// interface or an address changes (`net::ERR_NETWORK_CHANGED`), so a page would lose its
/// modules under another test's feet.
static NETWORK: LazyLock<Arc<tokio::sync::RwLock<()>>> = LazyLock::new(Default::default);

/// For a test that adds or removes network interfaces: no browser is in use until it is
/// dropped.
pub async fn changing_the_network() -> tokio::sync::OwnedRwLockWriteGuard<()> {
    Arc::clone(&NETWORK).write_owned().await
}

struct Idle {
    session: String,
    origins: Vec<String>,
}

/// The window size every browser starts a test with.
const WINDOW: (u32, u32) = (1100, 900);

fn shared() -> &'static Shared {
    SHARED.get_or_init(|| {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(chromedriver())
            .arg(format!("--port={port}"))
            // A group of its own, which the browsers it starts join (see `end_browsers`).
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts (scripts/test installs chromium-driver)");
        let profiles =
            std::env::temp_dir().join(format!("turnhouse-browsers-{}", std::process::id()));
        std::fs::create_dir_all(&profiles).unwrap();
        let shared = Shared {
            base: format!("http://127.0.0.1:{port}"),
            chromedriver: Mutex::new(child),
            profiles,
        };
        // SAFETY: registers a plain function, which only signals and removes files.
        unsafe { libc::atexit(end_browsers) };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < DEADLINE,
                "chromedriver did not start listening"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        shared
    })
}

/// At the process's exit: chromedriver and every browser end, and their profiles go.
extern "C" fn end_browsers() {
    let Some(shared) = SHARED.get() else {
        return;
    };
    if let Ok(mut chromedriver) = shared.chromedriver.try_lock() {
        let group = chromedriver.id() as libc::pid_t;
        // SAFETY: a plain signal to the process group made for chromedriver in `shared`.
        unsafe { libc::kill(-group, libc::SIGKILL) };
        let _ = chromedriver.wait();
    }
    let _ = std::fs::remove_dir_all(&shared.profiles);
    if let Some(dir) = crate::certificates::site_key_made().and_then(|key| key.path.parent()) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A test's way to the shared chromedriver; browsers are sessions of it.
pub struct Driver {
    base: String,
    client: reqwest::Client,
    /// Keeps the network as it is while the test uses browsers (see [`NETWORK`]): taken once
    /// per test, so a test's second browser never waits behind a test changing it.
    _network: tokio::sync::OwnedRwLockReadGuard<()>,
}

impl Driver {
    pub async fn start() -> Self {
        let base = shared().base.clone();
        let driver = Self {
            base,
            client: reqwest::Client::new(),
            _network: Arc::clone(&NETWORK).read_owned().await,
        };
        let started = Instant::now();
        loop {
            let ready = driver
                .client
                .get(format!("{}/status", driver.base))
                .send()
                .await;
            if let Ok(response) = ready {
                let status: Value = response.json().await.unwrap_or_default();
                if status["value"]["ready"] == true {
                    return driver;
                }
            }
            assert!(
                started.elapsed() < DEADLINE,
                "chromedriver did not become ready"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// A browser of its own for this test, with storage of its own (so another person): one
    /// another test gave back, cleaned, or a new one.
    pub async fn browser(&self, name: &str) -> Browser {
        loop {
            let idle = IDLE.lock().unwrap().pop();
            let Some(idle) = idle else {
                return self.new_browser(name).await;
            };
            let browser = Browser {
                base: format!("{}/session/{}", self.base, idle.session),
                client: self.client.clone(),
                name: name.to_owned(),
                session: idle.session,
                origins: Mutex::new(Vec::new()),
            };
            if browser.clean(&idle.origins).await {
                return browser;
            }
            // Left in a state it cannot be brought back from: it goes, unreturned.
            let _ = self.client.delete(&browser.base).send().await;
            std::mem::forget(browser);
        }
    }

    async fn new_browser(&self, name: &str) -> Browser {
        let number = STARTED.fetch_add(1, Ordering::Relaxed);
        let profile = shared().profiles.join(number.to_string());
        let args = vec![
            "--headless=new".to_owned(),
            "--no-sandbox".to_owned(),
            "--disable-gpu".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            "--disable-background-networking".to_owned(),
            "--disable-extensions".to_owned(),
            "--no-first-run".to_owned(),
            format!("--window-size={},{}", WINDOW.0, WINDOW.1),
            format!("--user-data-dir={}", profile.display()),
            // The HTTPS tests' site certificates, all made for this one key, are trusted as a
            // real certificate would be (see `certificates.rs`).
            format!(
                "--ignore-certificate-errors-spki-list={}",
                crate::certificates::site_key().spki_sha256
            ),
        ];
        let mut options = json!({"args": args});
        if let Some(binary) = chromium() {
            options["binary"] = json!(binary);
        }
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": options,
            // Keeps the console, so a test can read what the browser complained about.
            "goog:loggingPrefs": {"browser": "ALL"},
        }}});
        let created = request(
            &self.client,
            "POST",
            &format!("{}/session", self.base),
            Some(capabilities),
        )
        .await;
        let session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("a browser session: {created}"))
            .to_owned();
        Browser {
            base: format!("{}/session/{session}", self.base),
            client: self.client.clone(),
            name: name.to_owned(),
            session,
            origins: Mutex::new(Vec::new()),
        }
    }
}

fn chromedriver() -> PathBuf {
    std::env::var_os("CHROMEDRIVER").map_or_else(|| "chromedriver".into(), PathBuf::from)
}

/// Debian's browser; chromedriver finds others itself.
fn chromium() -> Option<String> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|path| std::path::Path::new(path).exists())
        .map(str::to_owned)
}

async fn request(client: &reqwest::Client, method: &str, url: &str, body: Option<Value>) -> Value {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = client.request(method, url);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("chromedriver answers");
    let status = response.status();
    let body: Value = response.json().await.unwrap_or_default();
    assert!(status.is_success(), "{url}: {status} {body}");
    body["value"].clone()
}

pub struct Browser {
    base: String,
    client: reqwest::Client,
    /// Names this browser's screenshots.
    name: String,
    session: String,
    /// Every origin the test opened, whose storage is cleared before the next test.
    origins: Mutex<Vec<String>>,
}

/// Given back when the test is done with it (or failed), for the next test.
impl Drop for Browser {
    fn drop(&mut self) {
        let origins = std::mem::take(&mut *self.origins.lock().unwrap());
        let session = std::mem::take(&mut self.session);
        IDLE.lock().unwrap().push(Idle { session, origins });
    }
}

impl Browser {
    async fn send(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        request(&self.client, method, &format!("{}{path}", self.base), body).await
    }

    /// Like `send`, but `None` when the element was replaced meanwhile (the page redraws
    /// lists as live updates arrive).
    async fn send_to_element(&self, path: &str, body: Value) -> Option<Value> {
        let url = format!("{}{path}", self.base);
        let response = self.client.post(&url).json(&body).send().await.unwrap();
        let status = response.status();
        let body: Value = response.json().await.unwrap_or_default();
        if body["value"]["error"] == "stale element reference" {
            return None;
        }
        assert!(status.is_success(), "{url}: {status} {body}");
        Some(body["value"].clone())
    }

    pub async fn goto(&self, url: &str) {
        if let Some(origin) = origin_of(url) {
            let mut origins = self.origins.lock().unwrap();
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
        self.send("POST", "/url", Some(json!({"url": url}))).await;
    }

    /// Brings a browser another test used back to a new one's state: no dialog, one window,
    /// the top-level page blank, nothing stored for the origins that test opened, no cache,
    /// the first size, an empty console. `false` if it cannot be.
    async fn clean(&self, origins: &[String]) -> bool {
        let _ = self.try_send("POST", "/alert/dismiss", json!({})).await;
        let Some(handles) = self.try_send("GET", "/window/handles", Value::Null).await else {
            return false;
        };
        let handles: Vec<Value> = handles.as_array().cloned().unwrap_or_default();
        let Some((first, others)) = handles.split_first() else {
            return false;
        };
        for handle in others {
            let _ = self
                .try_send("POST", "/window", json!({"handle": handle}))
                .await;
            let _ = self.try_send("DELETE", "/window", Value::Null).await;
        }
        let mut steps = vec![
            ("POST", "/window", json!({"handle": first})),
            ("POST", "/frame", json!({"id": null})),
            ("POST", "/url", json!({"url": "about:blank"})),
            (
                "POST",
                "/goog/cdp/execute",
                json!({"cmd": "Network.clearBrowserCache", "params": {}}),
            ),
        ];
        for origin in origins {
            let params = json!({"origin": origin, "storageTypes": "all"});
            steps.push((
                "POST",
                "/goog/cdp/execute",
                json!({"cmd": "Storage.clearDataForOrigin", "params": params}),
            ));
        }
        steps.push((
            "POST",
            "/window/rect",
            json!({"width": WINDOW.0, "height": WINDOW.1}),
        ));
        steps.push(("POST", "/se/log", json!({"type": "browser"})));
        for (method, path, body) in steps {
            if self.try_send(method, path, body).await.is_none() {
                return false;
            }
        }
        true
    }

    /// Like `send`, but `None` for a refusal rather than a failed test.
    async fn try_send(&self, method: &str, path: &str, body: Value) -> Option<Value> {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if !body.is_null() {
            request = request.json(&body);
        }
        let response = request.send().await.ok()?;
        let ok = response.status().is_success();
        let body: Value = response.json().await.ok()?;
        ok.then(|| body["value"].clone())
    }

    /// Runs `script` (a function body; `arguments` are `args`) in the page.
    pub async fn eval(&self, script: &str, args: Value) -> Value {
        self.send(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": args})),
        )
        .await
    }

    /// Waits until `script` returns something truthy, and returns it.
    pub async fn wait_for(&self, what: &str, script: &str, args: Value) -> Value {
        let started = Instant::now();
        loop {
            let value = self.eval(script, args.clone()).await;
            if !(value.is_null() || value == false || value == "" || value == 0) {
                return value;
            }
            if started.elapsed() > DEADLINE {
                self.screenshot(&format!("timeout-{}", what.replace(' ', "-")))
                    .await;
                // What the browser said meanwhile (a module that failed to load, a refused
                // request) is most often why.
                let console = self.console().await;
                panic!(
                    "{}: gave up waiting for {what}; the browser's console: {console:?}",
                    self.name
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits for an element matching `css`, enabled, and returns its handle.
    pub async fn find(&self, css: &str) -> String {
        self.wait_for(
            css,
            "const e = document.querySelector(arguments[0]); return e && !e.disabled ? true : null;",
            json!([css]),
        )
        .await;
        let found = self
            .send(
                "POST",
                "/element",
                Some(json!({"using": "css selector", "value": css})),
            )
            .await;
        found[ELEMENT_KEY].as_str().unwrap().to_owned()
    }

    /// Chooses `value` in the select `css`, as a person does (the page hears `change`), once it
    /// is there (the lobby draws its games after they load, and may draw them again meanwhile).
    pub async fn select(&self, css: &str, value: &str) {
        self.wait_for(
            css,
            "const s = document.querySelector(arguments[0]); \
             if (s && s.value !== arguments[1]) { s.value = arguments[1]; \
             s.dispatchEvent(new Event('change', {bubbles: true})); } \
             return s !== null && s.value === arguments[1];",
            json!([css, value]),
        )
        .await;
    }

    /// Clicks the element, as a person would (so it must be visible and enabled).
    pub async fn click(&self, css: &str) {
        self.act_on(css, "click", json!({})).await;
    }

    /// Ticks the checkbox `css`, as a person would: clicks it, and again if the page moved
    /// under the pointer (a card above it still filling in) so the click missed.
    pub async fn check(&self, css: &str) {
        let checked = "return document.querySelector(arguments[0]).checked;";
        for _ in 0..5 {
            self.click(css).await;
            if self.eval(checked, json!([css])).await == true {
                return;
            }
        }
        panic!("{}: {css} stayed unticked", self.name);
    }

    pub async fn type_into(&self, css: &str, text: &str) {
        self.act_on(css, "value", json!({"text": text})).await;
    }

    /// Finds the element and acts on it, finding it again if it was redrawn in between.
    async fn act_on(&self, css: &str, action: &str, body: Value) {
        for _ in 0..20 {
            let element = self.find(css).await;
            let path = format!("/element/{element}/{action}");
            if self.send_to_element(&path, body.clone()).await.is_some() {
                return;
            }
        }
        panic!("{}: {css} kept being redrawn", self.name);
    }

    /// Presses Enter on the element, which must take keyboard focus.
    pub async fn press_enter(&self, css: &str) {
        self.act_on(css, "value", json!({"text": "\u{E007}"})).await;
    }

    /// Presses `key` on the page, as a keydown on its body (for the page's own shortcuts).
    pub async fn press_key(&self, key: &str) {
        self.eval(
            "document.body.dispatchEvent(new KeyboardEvent('keydown', {key: arguments[0], bubbles: true})); return true;",
            json!([key]),
        )
        .await;
    }

    /// Resizes the window, e.g. to a phone's screen.
    pub async fn resize(&self, width: u32, height: u32) {
        self.send(
            "POST",
            "/window/rect",
            Some(json!({"width": width, "height": height})),
        )
        .await;
    }

    /// The text of the first element matching `css` (empty if there is none).
    pub async fn text(&self, css: &str) -> String {
        let text = self
            .eval(
                "const e = document.querySelector(arguments[0]); return e ? e.textContent : '';",
                json!([css]),
            )
            .await;
        text.as_str().unwrap_or_default().to_owned()
    }

    /// Waits until the element matching `css` contains `text`.
    pub async fn wait_for_text(&self, css: &str, text: &str) {
        self.wait_for(
            &format!("{css} to say {text}"),
            "const e = document.querySelector(arguments[0]); return e && e.textContent.includes(arguments[1]);",
            json!([css, text]),
        )
        .await;
    }

    /// Saves a PNG of the page under `target/browser-screenshots/`, the tests' artifacts.
    pub async fn screenshot(&self, label: &str) -> PathBuf {
        let encoded = self.send("GET", "/screenshot", None).await;
        let png = decode_base64(encoded.as_str().unwrap());
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/browser-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{}-{label}.png", self.name));
        std::fs::write(&path, png).unwrap();
        path
    }

    /// The browser console's entries since the last call (`{level, message}` each), CORS
    /// refusals and CSP violations included.
    pub async fn console(&self) -> Vec<Value> {
        let entries = self
            .send("POST", "/se/log", Some(json!({"type": "browser"})))
            .await;
        entries.as_array().cloned().unwrap_or_default()
    }

    /// Moves into the frame matching `css`: finding, clicking and scripts act inside it.
    pub async fn enter_frame(&self, css: &str) {
        let element = self.find(css).await;
        self.send(
            "POST",
            "/frame",
            Some(json!({"id": {ELEMENT_KEY: element}})),
        )
        .await;
    }

    /// Back to the top-level page.
    pub async fn leave_frame(&self) {
        self.send("POST", "/frame", Some(json!({"id": null}))).await;
    }

    /// How many windows (tabs and popups) the browser has open.
    pub async fn windows(&self) -> usize {
        let handles = self.send("GET", "/window/handles", None).await;
        handles.as_array().map_or(0, Vec::len)
    }

    /// The top-level page's address.
    pub async fn url(&self) -> String {
        let url = self.send("GET", "/url", None).await;
        url.as_str().unwrap_or_default().to_owned()
    }

    /// Done with, as a person closing their browser: the page is closed (its streams with it,
    /// so the server sees them go), and the browser given back for the next test.
    /// (Its tab is closed, not navigated away from: Chromium may keep a page it left, streams
    /// and all, to come back to.)
    pub async fn close(self) {
        let Some(opened) = self.try_send("POST", "/window/new", json!({})).await else {
            return;
        };
        let _ = self.try_send("DELETE", "/window", Value::Null).await;
        let handle = json!({"handle": opened["handle"]});
        let _ = self.try_send("POST", "/window", handle).await;
    }
}

/// `scheme://host:port` of `url`, if it has one.
fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let host = rest.split(['/', '?', '#']).next()?;
    Some(format!("{scheme}://{host}"))
}

/// Standard base64, as WebDriver sends screenshots.
fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a') as u32 + 26,
            b'0'..=b'9' => (c - b'0') as u32 + 52,
            b'+' => 62,
            b'/' => 63,
            other => panic!("not base64: {other}"),
        }
    };
    let bytes: Vec<u8> = text
        .bytes()
        .filter(|c| *c != b'=' && !c.is_ascii_whitespace())
        .collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut acc = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            acc |= value(*c) << (18 - 6 * i);
        }
        let produced = chunk.len() * 6 / 8;
        out.extend_from_slice(&acc.to_be_bytes()[1..1 + produced]);
    }
    out
}
