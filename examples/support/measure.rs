//! What the benchmarks and the load generator share: reading a process's memory, and picking a
//! quantile from samples. Each example includes this file and uses what it needs of it.
#![allow(dead_code)]

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

/// The sample at quantile `q` (0 to 1) of `sorted`, nearest rank; `None` without samples.
pub fn quantile<T: Copy>(sorted: &[T], q: f64) -> Option<T> {
    let last = sorted.len().checked_sub(1)?;
    Some(sorted[(last as f64 * q).round() as usize])
}
