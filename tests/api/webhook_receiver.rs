//! A webhook receiver on loopback (`tests/receivers/webhooks.py`), started by a test like the
//! server is and stopped with it: it verifies every delivery with the Standard Webhooks
//! reference library and keeps what it received, and answers as the test tells it to.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

static VENV: Once = Once::new();

/// The Python of the receivers (`scripts/receivers`), its libraries installed on first use.
pub fn python() -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    VENV.call_once(|| {
        let status = Command::new(format!("{root}/scripts/receivers"))
            .status()
            .expect("scripts/receivers runs");
        assert!(status.success(), "the receivers' Python libraries install");
    });
    format!("{root}/target/receivers/venv/bin/python")
}

pub struct Receiver {
    child: Child,
    address: String,
    client: reqwest::Client,
}

impl Receiver {
    /// A receiver that verifies with `secrets` (more may be given later).
    pub async fn start(secrets: &[&str]) -> Self {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut child = Command::new(python())
            .arg(format!("{root}/tests/receivers/webhooks.py"))
            .stdout(Stdio::piped())
            .spawn()
            .expect("the receiver starts");
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let port = first.trim().rsplit(' ').next().unwrap().to_owned();
        let receiver = Self {
            child,
            address: format!("http://127.0.0.1:{port}"),
            client: reqwest::Client::new(),
        };
        receiver.set(json!({"secrets": secrets})).await;
        receiver
    }

    /// Where deliveries go.
    pub fn url(&self) -> String {
        format!("{}/hook", self.address)
    }

    /// Changes how it answers: `secrets`, `status`, `delay` (seconds), `redirect`.
    pub async fn set(&self, settings: Value) {
        let sent = self
            .client
            .post(format!("{}/_control", self.address))
            .json(&settings)
            .send()
            .await
            .expect("the receiver answers");
        assert!(sent.status().is_success());
    }

    /// Every delivery received so far, oldest first.
    pub async fn received(&self) -> Vec<Value> {
        let got = self
            .client
            .get(format!("{}/_received", self.address))
            .send()
            .await
            .expect("the receiver answers");
        got.json().await.expect("a list")
    }

    /// The deliveries received once `done` holds of them, or a failure after `within`.
    pub async fn wait_for(&self, within: Duration, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let until = Instant::now() + within;
        loop {
            let received = self.received().await;
            if done(&received) {
                return received;
            }
            assert!(
                Instant::now() < until,
                "the receiver did not get what was awaited within {within:?}; it got {}",
                serde_json::to_string_pretty(&received).unwrap()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The deliveries of type `kind`.
pub fn of_type<'a>(received: &'a [Value], kind: &str) -> Vec<&'a Value> {
    received
        .iter()
        .filter(|d| d["body"]["type"] == kind)
        .collect()
}
