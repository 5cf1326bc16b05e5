//! How long a delivery waits before it is tried again.

use std::time::Duration;

use super::OutboxRules;

/// The wait after attempt `attempt` (from 1) failed: the first retry's wait, doubled for each
/// attempt since, no longer than the longest wait; then between half and all of that, by
/// `jitter` (0 to 1), so that the deliveries that failed together (a receiver that was down)
/// are not all tried again at the same moment.
pub fn retry_delay(attempt: i64, rules: &OutboxRules, jitter: f64) -> Duration {
    let doublings = attempt.saturating_sub(1).clamp(0, 30) as u32;
    let full = rules
        .first_retry
        .saturating_mul(1 << doublings)
        .min(rules.longest_wait);
    full.mul_f64(0.5 + 0.5 * jitter.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_doubles_up_to_the_longest_with_jitter_below_it() {
        let rules = OutboxRules::default();
        let waits: Vec<u64> = (1..=12)
            .map(|a| retry_delay(a, &rules, 1.0).as_secs())
            .collect();
        assert_eq!(
            waits,
            [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600]
        );
        assert_eq!(retry_delay(1, &rules, 0.0), Duration::from_millis(2500));
        assert_eq!(retry_delay(i64::MAX, &rules, 1.0), rules.longest_wait);
    }
}
