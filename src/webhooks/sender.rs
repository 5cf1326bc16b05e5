//! One delivery, signed and sent: the outbox's channel for webhook endpoints.

use std::time::Duration;

use futures_util::future::BoxFuture;

use super::signing::{signature_header, Secret};
use crate::domain::time::Timestamp;
use crate::outbound::{Destinations, OutboundClient};
use crate::outbox::{Attempted, Channel};
use crate::store::Claimed;

/// How much of an answer's body is kept for the delivery log.
const KEPT_ANSWER: usize = 1024;

pub struct WebhookSender {
    client: OutboundClient,
}

impl WebhookSender {
    pub fn new(destinations: Destinations, timeout: Duration) -> Self {
        Self {
            client: OutboundClient::new(destinations, timeout, KEPT_ANSWER),
        }
    }

    async fn send(&self, row: &Claimed, body: &str) -> Attempted {
        let now = Timestamp::now();
        let timestamp = now.as_chrono().timestamp();
        let secrets: Vec<Secret> = row
            .endpoint
            .signing_secrets(now)
            .into_iter()
            .filter_map(Secret::parse)
            .collect();
        let secrets: Vec<&Secret> = secrets.iter().collect();
        let body = body.as_bytes();
        let headers = [
            ("content-type", "application/json".to_owned()),
            ("webhook-id", row.id.clone()),
            ("webhook-timestamp", timestamp.to_string()),
            (
                "webhook-signature",
                signature_header(&secrets, &row.id, timestamp, body),
            ),
        ];
        let started = std::time::Instant::now();
        match self
            .client
            .post(&row.endpoint.url, &headers, body.to_vec())
            .await
        {
            Ok(answer) => Attempted {
                status: Some(answer.status),
                delivered: (200..300).contains(&answer.status),
                latency: answer.latency,
                response: answer.body_start,
                error: None,
            },
            Err(err) => Attempted {
                status: None,
                delivered: false,
                latency: started.elapsed(),
                response: String::new(),
                error: Some(err.to_string()),
            },
        }
    }
}

impl Channel for WebhookSender {
    fn deliver<'a>(&'a self, row: &'a Claimed, body: &'a str) -> BoxFuture<'a, Attempted> {
        Box::pin(self.send(row, body))
    }
}
