//! Abuse limits: how many sign-ups one client address, actions one player, and uploads one
//! author may make. Each is a token bucket per key: a burst of `N` at once, refilled at `N` per
//! period, so a steady user never notices and a script is slowed to the rate. Over the limit,
//! `429 rate_limited` with `Retry-After`; nothing is done.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `N/period`: a burst of `N`, refilled at `N` per period. Periods: `s`, `min`, `h`, `day`
/// (`60/min`, `300/h`). `off` disables the limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub burst: u32,
    pub period: Duration,
}

/// A limit as configured: a rate, or none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateSetting(pub Option<Rate>);

impl FromStr for RateSetting {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if text.eq_ignore_ascii_case("off") {
            return Ok(RateSetting(None));
        }
        let bad = || format!("`{text}` is not a rate: write N/s, N/min, N/h or N/day, or off");
        let (count, period) = text.split_once('/').ok_or_else(bad)?;
        let burst: u32 = count.trim().parse().map_err(|_| bad())?;
        let seconds = match period.trim() {
            "s" | "sec" | "second" => 1,
            "m" | "min" | "minute" => 60,
            "h" | "hour" => 3600,
            "d" | "day" => 86_400,
            _ => return Err(bad()),
        };
        if burst == 0 {
            return Err(format!(
                "`{text}`: a limit of 0 would refuse everything; use off"
            ));
        }
        Ok(RateSetting(Some(Rate {
            burst,
            period: Duration::from_secs(seconds),
        })))
    }
}

/// Keys tracked at most; past this, buckets that are full again (their key has been quiet for
/// a whole period) are dropped, so memory stays bounded however many addresses come by.
const MAX_KEYS: usize = 100_000;

struct Bucket {
    tokens: f64,
    at: Instant,
}

pub struct RateLimiter {
    rate: Option<Rate>,
    /// What it counts, as a refusal names it ("actions", "sign-ups from this address").
    what: &'static str,
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl RateLimiter {
    pub fn new(setting: RateSetting, what: &'static str) -> Self {
        Self {
            rate: setting.0,
            what,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one from `key`'s bucket, or says how long until one is there.
    pub fn take(&self, key: &str) -> Result<(), Duration> {
        self.take_at(key, Instant::now(), true)
    }

    /// Refuses `key` with `429 rate_limited` while its bucket is empty, without taking from
    /// it (for limits on failures, taken only when one happens).
    pub fn check(&self, key: &str) -> Result<(), super::ApiError> {
        self.take_at(key, Instant::now(), false)
            .map_err(|retry_after| self.refusal(retry_after))
    }

    /// Lets one more through for `key`, or refuses it with `429 rate_limited`.
    pub fn admit(&self, key: &str) -> Result<(), super::ApiError> {
        self.take(key)
            .map_err(|retry_after| self.refusal(retry_after))
    }

    fn refusal(&self, retry_after: Duration) -> super::ApiError {
        super::ApiError::RateLimited {
            what: self.what,
            retry_after,
        }
    }

    fn take_at(&self, key: &str, now: Instant, take: bool) -> Result<(), Duration> {
        let Some(rate) = self.rate else {
            return Ok(());
        };
        let burst = f64::from(rate.burst);
        let per_second = burst / rate.period.as_secs_f64();
        let mut buckets = self.buckets.lock().expect("never poisoned");
        if buckets.len() >= MAX_KEYS && !buckets.contains_key(key) {
            buckets.retain(|_, b| b.tokens + (now - b.at).as_secs_f64() * per_second < burst);
        }
        let bucket = buckets.entry(key.to_owned()).or_insert(Bucket {
            tokens: burst,
            at: now,
        });
        bucket.tokens = (bucket.tokens + (now - bucket.at).as_secs_f64() * per_second).min(burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            if take {
                bucket.tokens -= 1.0;
            }
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / per_second))
        }
    }
}

/// The limits the server applies.
pub struct Limits {
    pub signups: RateLimiter,
    /// Sign-in attempts per client address (codes and passwords alike).
    pub sign_ins: RateLimiter,
    /// Failed password sign-ins per account and client address.
    pub password_failures: RateLimiter,
    /// Failed password sign-ins per account, from every address together.
    pub account_failures: RateLimiter,
    /// Sign-in codes asked for, per player.
    pub sign_in_codes: RateLimiter,
    pub actions: RateLimiter,
    /// Chat messages, per player.
    pub chat: RateLimiter,
    pub uploads: RateLimiter,
    /// Mailed links, per account and per address mailed (keys `player:…`, `address:…`).
    pub mail_links: RateLimiter,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_read_as_written() {
        let rate = |text: &str| text.parse::<RateSetting>();
        assert_eq!(
            rate("60/min").unwrap().0,
            Some(Rate {
                burst: 60,
                period: Duration::from_secs(60)
            })
        );
        assert_eq!(rate("300/h").unwrap().0.unwrap().period.as_secs(), 3600);
        assert_eq!(rate("OFF").unwrap(), RateSetting(None));
        for bad in ["60", "0/min", "x/min", "5/week", ""] {
            assert!(rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_burst_then_the_rate() {
        let limiter = RateLimiter::new("3/s".parse().unwrap(), "tests");
        let start = Instant::now();
        for _ in 0..3 {
            assert!(limiter.take_at("a", start, true).is_ok());
        }
        let wait = limiter.take_at("a", start, true).unwrap_err();
        assert!(wait > Duration::from_millis(300) && wait <= Duration::from_millis(334));
        assert!(
            limiter.take_at("b", start, true).is_ok(),
            "keys are separate"
        );
        let later = start + wait + Duration::from_micros(1);
        assert!(limiter.take_at("a", later, true).is_ok(), "refilled");
        assert!(limiter.take_at("a", later, true).is_err());
        let off = RateLimiter::new(RateSetting(None), "tests");
        assert!((0..10_000).all(|_| off.take("a").is_ok()));
    }
}
