//! The files an operator copies from `deploy/`: the systemd unit passes `systemd-analyze
//! verify`, and the Prometheus alerts pass `promtool check rules` and their own unit tests.
//! (The nginx and Caddy sites are tested in front of a server: `behind_proxies.rs`.)

use std::process::Command;

const DEPLOY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy");

fn run(program: &str, args: &[&str], dir: &str) -> String {
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|err| panic!("{program} runs (scripts/test installs it): {err}"));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{program} {args:?}:\n{said}");
    said
}

#[test]
fn the_systemd_unit_verifies_and_is_hardened() {
    let unit = std::fs::read_to_string(format!("{DEPLOY}/turnhouse.service")).unwrap();
    for setting in [
        "DynamicUser=yes",
        "StateDirectory=turnhouse",
        "ProtectSystem=strict",
        "NoNewPrivileges=yes",
        "Restart=on-failure",
        "KillSignal=SIGTERM",
    ] {
        assert!(unit.lines().any(|line| line == setting), "{setting}");
    }
    // Verified with the binary where the unit expects it: here, the one just built.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("turnhouse.service");
    std::fs::write(
        &copy,
        unit.replace("/usr/local/bin/turnhouse", env!("CARGO_BIN_EXE_turnhouse")),
    )
    .unwrap();
    let said = run(
        "systemd-analyze",
        &["verify", copy.to_str().unwrap()],
        dir.path().to_str().unwrap(),
    );
    assert!(!said.contains("turnhouse.service:"), "{said}");
}

#[test]
fn the_prometheus_alerts_check_and_pass_their_tests() {
    let dir = format!("{DEPLOY}/prometheus");
    let said = run(
        "promtool",
        &["check", "rules", "turnhouse-alerts.yml"],
        &dir,
    );
    assert!(said.contains("SUCCESS: 9 rules found"), "{said}");
    run("promtool", &["test", "rules", "alerts-test.yml"], &dir);
}
