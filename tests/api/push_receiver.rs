//! A push service on loopback (`tests/receivers/push.py`), started by a test like the server
//! is and stopped with it: it holds a browser's keys, decrypts every push with an independent
//! library and checks its VAPID JWT.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::webhook_receiver::python;

pub struct PushReceiver {
    child: Child,
    pub address: String,
    client: reqwest::Client,
}

impl PushReceiver {
    pub fn start() -> Self {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut child = Command::new(python())
            .arg(format!("{root}/tests/receivers/push.py"))
            .stdout(Stdio::piped())
            .spawn()
            .expect("the push service starts");
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let port = first.trim().rsplit(' ').next().unwrap().to_owned();
        Self {
            child,
            address: format!("http://127.0.0.1:{port}"),
            client: reqwest::Client::new(),
        }
    }

    /// A subscription as a browser's `PushSubscription.toJSON()` gives it, its endpoint here.
    pub async fn subscription(&self, path: &str) -> Value {
        let keys: Value = (self
            .client
            .get(format!("{}/_keys", self.address))
            .send()
            .await)
            .unwrap()
            .json()
            .await
            .unwrap();
        json!({"endpoint": format!("{}{path}", self.address), "expirationTime": null, "keys": keys})
    }

    /// Answers the next pushes with `status`.
    pub async fn answer(&self, status: u16) {
        let sent = self
            .client
            .post(format!("{}/_control", self.address))
            .json(&json!({ "status": status }))
            .send();
        assert!(sent.await.unwrap().status().is_success());
    }

    /// Every push received so far, oldest first.
    pub async fn received(&self) -> Vec<Value> {
        let got = self
            .client
            .get(format!("{}/_received", self.address))
            .send();
        got.await.unwrap().json().await.unwrap()
    }

    /// The pushes received once `done` holds of them, or a failure after `within`.
    pub async fn wait_for(&self, within: Duration, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let until = Instant::now() + within;
        loop {
            let got = self.received().await;
            if done(&got) {
                return got;
            }
            assert!(Instant::now() < until, "pushes: {got:#?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for PushReceiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
