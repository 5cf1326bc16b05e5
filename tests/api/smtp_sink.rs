//! An SMTP server on loopback (`tests/receivers/smtp.py`, on aiosmtpd), started by a test like
//! the server is and stopped with it: it keeps every message, parsed, and can refuse some.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::webhook_receiver::python;

pub struct SmtpSink {
    child: Child,
    pub smtp_port: u16,
    http: String,
    client: reqwest::Client,
}

impl SmtpSink {
    pub fn start() -> Self {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut child = Command::new(python())
            .arg(format!("{root}/tests/receivers/smtp.py"))
            .stdout(Stdio::piped())
            .spawn()
            .expect("the SMTP server starts");
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let ports: Vec<&str> = first.split_whitespace().skip(2).collect();
        Self {
            child,
            smtp_port: ports[0].parse().unwrap(),
            http: format!("http://127.0.0.1:{}", ports[1]),
            client: reqwest::Client::new(),
        }
    }

    /// The `--smtp-url` that reaches it.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.smtp_port)
    }

    /// Every message received so far, oldest first.
    pub async fn messages(&self) -> Vec<Value> {
        let got = self.client.get(format!("{}/messages", self.http)).send();
        got.await.unwrap().json().await.unwrap()
    }

    /// The messages to `address`, once `done` holds of them, or a failure after `within`.
    pub async fn wait_for(
        &self,
        address: &str,
        within: Duration,
        done: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
        let until = Instant::now() + within;
        loop {
            let to: Vec<Value> = (self.messages().await.into_iter())
                .filter(|m| m["to"].as_array().unwrap().iter().any(|t| t == address))
                .collect();
            if done(&to) {
                return to;
            }
            assert!(Instant::now() < until, "mail to {address}: {to:#?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Answers the next `count` messages with `code`.
    pub async fn refuse(&self, count: u32, code: u16) {
        let sent = self
            .client
            .post(format!("{}/_control", self.http))
            .json(&json!({"refuse": count, "code": code}))
            .send();
        assert!(sent.await.unwrap().status().is_success());
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The token a mailed link carries (`…?token=<token>`).
pub fn token_in(text: &str) -> String {
    let at = text.find("?token=").expect("a link with a token") + "?token=".len();
    text[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c))
        .collect()
}
