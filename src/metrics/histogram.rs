//! A histogram with fixed bucket bounds and lock-free recording.

use std::sync::atomic::{AtomicU64, Ordering};

use super::text::Exposition;

pub struct Histogram {
    /// Upper bounds, ascending; observations above the last go to `+Inf` only.
    bounds: &'static [f64],
    /// One count per bound (not cumulative: summed when rendered), then `+Inf`.
    counts: Vec<AtomicU64>,
    /// The sum of observations, in millionths, so it can be an integer atomic.
    sum_micros: AtomicU64,
}

/// Seconds, for request and commit times: 50 µs to 10 s.
pub const SECONDS: &[f64] = &[
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 10.0,
];

/// Counts of things, such as writes per batch: 1 to the writer's maximum batch.
pub const COUNTS: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];

impl Histogram {
    pub fn new(bounds: &'static [f64]) -> Self {
        Self {
            bounds,
            counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum_micros: AtomicU64::new(0),
        }
    }

    pub fn observe(&self, value: f64) {
        let bucket = self.bounds.partition_point(|bound| *bound < value);
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        self.sum_micros
            .fetch_add((value * 1e6).round() as u64, Ordering::Relaxed);
    }

    /// Writes `<name>_bucket`, `<name>_sum` and `<name>_count` lines with `labels`
    /// (already formatted, without braces; empty for none).
    pub fn render(&self, out: &mut Exposition, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        let mut cumulative = 0;
        for (at, count) in self.counts.iter().enumerate() {
            cumulative += count.load(Ordering::Relaxed);
            let le = self
                .bounds
                .get(at)
                .map_or_else(|| "+Inf".to_owned(), |b| b.to_string());
            out.sample(
                &format!("{name}_bucket"),
                &format!("{labels}{sep}le=\"{le}\""),
                cumulative,
            );
        }
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        out.sample(&format!("{name}_sum"), labels, sum);
        out.sample(&format!("{name}_count"), labels, cumulative);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative_and_the_sum_is_kept() {
        let histogram = Histogram::new(&[1.0, 2.0]);
        for value in [0.5, 1.0, 1.5, 3.0] {
            histogram.observe(value);
        }
        let mut out = Exposition::default();
        histogram.render(&mut out, "x", "a=\"b\"");
        assert_eq!(
            out.finish(),
            "x_bucket{a=\"b\",le=\"1\"} 2\nx_bucket{a=\"b\",le=\"2\"} 3\n\
             x_bucket{a=\"b\",le=\"+Inf\"} 4\nx_sum{a=\"b\"} 6\nx_count{a=\"b\"} 4\n"
        );
    }
}
