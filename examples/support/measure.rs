//! What the benchmarks and the load generator share: reading a process's memory, and picking a
//! quantile from samples. Each example includes this file and uses what it needs of it.
#![allow(dead_code)]

use std::time::Duration;

/// The resident memory of process `pid`, in bytes.
pub fn rss_bytes(pid: u32) -> u64 {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the process's status");
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("VmRSS");
    kib * 1024
}

/// The bytes process `pid` has had written to storage so far (its log and its database
/// files, for a SQLite server).
pub fn written_bytes(pid: u32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).expect("the process's io");
    io.lines()
        .find_map(|line| line.strip_prefix("write_bytes:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("write_bytes")
}

/// The CPU time process `pid` has used so far (user and system, all its threads), in ms.
pub fn cpu_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the process's stat");
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    // SAFETY: sysconf only reads a constant.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks * 1000.0 / per_second
}

/// The sample at quantile `q` (0 to 1) of `sorted`, nearest rank; `None` without samples.
pub fn quantile<T: Copy>(sorted: &[T], q: f64) -> Option<T> {
    let last = sorted.len().checked_sub(1)?;
    Some(sorted[(last as f64 * q).round() as usize])
}

/// The sample at quantile `q` of unsorted `samples`; zero without samples.
pub fn percentile(samples: &[Duration], q: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    quantile(&sorted, q).unwrap_or_default()
}

/// One line of latency figures (p50 and p99), with their ratios to `baseline`'s.
pub fn latency_row(label: &str, samples: &[Duration], baseline: Option<&[Duration]>) -> String {
    let (p50, p99) = (percentile(samples, 0.5), percentile(samples, 0.99));
    let ratio = baseline.map_or(String::new(), |base| {
        format!(
            "   ratio p50 {:.2}x  p99 {:.2}x",
            p50.as_secs_f64() / percentile(base, 0.5).as_secs_f64(),
            p99.as_secs_f64() / percentile(base, 0.99).as_secs_f64()
        )
    });
    let ms = |d: Duration| format!("{:.3} ms", d.as_secs_f64() * 1000.0);
    format!(
        "   {label:<22} n={:<6} p50 {:>10}  p99 {:>10}{ratio}",
        samples.len(),
        ms(p50),
        ms(p99)
    )
}
