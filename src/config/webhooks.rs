//! The settings of webhooks: where they may go (also web push's endpoints), and how the
//! outbox delivers them (also the retries of mail and pushes).

use std::time::Duration;

use clap::Args;

use crate::outbound::Destinations;
use crate::outbox::OutboxRules;

/// Where webhooks may go, and how the outbox delivers them.
#[derive(Debug, Clone, Args)]
pub struct WebhookSettings {
    /// Lets webhook URLs reach loopback and private addresses, and use plain http:// (for
    /// tests, `turnhouse dev`, and receivers on the operator's own network). Off by default:
    /// a URL must be https:// to a public address, checked on every connection.
    #[arg(global = true, long, env = "ALLOW_PRIVATE_DESTINATIONS")]
    pub allow_private_destinations: bool,

    /// Seconds a delivery's attempt may take, connecting included.
    #[arg(global = true, long, env = "WEBHOOK_TIMEOUT_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=300))]
    pub webhook_timeout_secs: u64,

    /// Seconds an event is tried for (with exponential backoff and jitter) before it is marked
    /// failed.
    #[arg(
        global = true,
        long,
        env = "WEBHOOK_RETRY_FOR_SECS",
        default_value_t = 86_400
    )]
    pub webhook_retry_for_secs: u64,

    /// Milliseconds before the first retry, doubled for each one after, up to an hour.
    #[arg(global = true, long, env = "WEBHOOK_FIRST_RETRY_MS", default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub webhook_first_retry_ms: u64,

    /// Seconds an endpoint may fail every delivery before it is disabled (its owner sees why,
    /// and resumes it).
    #[arg(
        global = true,
        long,
        env = "WEBHOOK_DISABLE_AFTER_SECS",
        default_value_t = 432_000
    )]
    pub webhook_disable_after_secs: u64,

    /// Seconds delivered and failed events are kept for the delivery log.
    #[arg(
        global = true,
        long,
        env = "WEBHOOK_KEEP_SECS",
        default_value_t = 604_800
    )]
    pub webhook_keep_secs: u64,

    /// Deliveries in flight at once to one endpoint.
    #[arg(global = true, long, env = "WEBHOOK_CONCURRENCY", default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub webhook_concurrency: u64,

    /// Deliveries in flight at once from this server, to every endpoint together.
    #[arg(global = true, long, env = "WEBHOOK_TOTAL_CONCURRENCY", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=10000))]
    pub webhook_total_concurrency: u64,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        Self {
            allow_private_destinations: false,
            webhook_timeout_secs: 10,
            webhook_retry_for_secs: 86_400,
            webhook_first_retry_ms: 5_000,
            webhook_disable_after_secs: 432_000,
            webhook_keep_secs: 604_800,
            webhook_concurrency: 8,
            webhook_total_concurrency: 64,
        }
    }
}

impl WebhookSettings {
    pub fn destinations(&self) -> Destinations {
        Destinations {
            allow_private: self.allow_private_destinations,
        }
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.webhook_timeout_secs)
    }

    /// The outbox's rules these settings give.
    pub fn rules(&self) -> OutboxRules {
        let timeout = self.timeout();
        OutboxRules {
            retry_for: Duration::from_secs(self.webhook_retry_for_secs),
            first_retry: Duration::from_millis(self.webhook_first_retry_ms),
            longest_wait: Duration::from_secs(60 * 60),
            disable_after: Duration::from_secs(self.webhook_disable_after_secs),
            keep_for: Duration::from_secs(self.webhook_keep_secs),
            per_endpoint: self.webhook_concurrency as usize,
            total: self.webhook_total_concurrency as usize,
            // Longer than any attempt, with room for the round that keeps its outcome.
            lease: timeout * 2 + Duration::from_secs(10),
        }
    }
}
