//! What the benchmarks and the load generator share: reading a process's memory, and picking a
//! quantile from samples. Each example includes this file and uses what it needs of it.
#![allow(dead_code)]

use std::time::Duration;

/// The resident memory of process `pid` and the processes it started (a server's sandbox
/// processes), in bytes.
pub fn rss_bytes(pid: u32) -> u64 {
    tree(pid).into_iter().filter_map(own_rss_bytes).sum()
}

fn own_rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())?;
    Some(kib * 1024)
}

/// `pid` and every live process under it, children first found through `/proc`'s parent
/// links. A process that ends meanwhile is simply not there to read.
fn tree(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        if let Some(parent) = stat_fields(child).and_then(|f| f.get(1)?.parse().ok()) {
            parents.push((child, parent));
        }
    }
    let mut found = vec![pid];
    let mut at = 0;
    while at < found.len() {
        let parent = found[at];
        found.extend(
            parents
                .iter()
                .filter(|&&(_, p)| p == parent)
                .map(|&(c, _)| c),
        );
        at += 1;
    }
    found
}

/// The fields of `/proc/<pid>/stat` after the command name (which may hold spaces): the
/// state first, then the parent's pid.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, fields) = stat.rsplit_once(')')?;
    Some(fields.split_whitespace().map(str::to_owned).collect())
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

/// The CPU time process `pid` and the processes it started have used so far (user and
/// system, all their threads, and children that ended and were waited for), in ms: a server's
/// sandbox processes count as the server.
pub fn cpu_ms(pid: u32) -> f64 {
    let ticks: f64 = tree(pid)
        .into_iter()
        .filter_map(stat_fields)
        .map(|fields| {
            // utime, stime, cutime, cstime.
            fields[11..15]
                .iter()
                .map(|n| n.parse::<f64>().unwrap_or(0.0))
                .sum::<f64>()
        })
        .sum();
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
