//! The settings file: its values are the defaults, the environment overrides them and flags
//! override both; a misspelt key stops the start naming the key meant; `config print` says
//! where each setting came from.

use std::process::Command;

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::unique;
use crate::real_server::Server;

fn turnhouse(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_turnhouse"));
    command
        .args(args)
        .env_remove("BIND")
        .env_remove("TURNHOUSE_CONFIG");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("the binary runs")
}

/// The line of `config print`'s output that sets `key`.
fn line<'o>(printed: &'o str, key: &str) -> &'o str {
    printed
        .lines()
        .find(|line| line.starts_with(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no line for {key} in:\n{printed}"))
}

/// What `config print` printed is itself a settings file that gives the same settings.
fn reads_back(dir: &std::path::Path, printed: &str) {
    let again = dir.join("printed.toml");
    std::fs::write(&again, printed.replace("***", "s3cret")).unwrap();
    let output = turnhouse(
        &["--config", again.to_str().unwrap(), "config", "print"],
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    let reprinted = String::from_utf8(output.stdout).unwrap();
    assert!(
        reprinted.contains("hook_time_limit_ms = 30  # file"),
        "{reprinted}"
    );
    assert!(
        reprinted.contains("bind = \"127.0.0.1:9002\"  # file"),
        "{reprinted}"
    );
}

#[test]
fn the_file_gives_defaults_the_environment_overrides_it_and_flags_override_both() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("turnhouse.toml");
    std::fs::write(
        &file,
        "bind = \"127.0.0.1:9001\"\n\
         hook_time_limit_ms = 20\n\
         sign_in_rate = \"9/min\"\n\
         trusted_proxies = [\"127.0.0.1\", \"10.0.0.0/8\"]\n\
         allow_private_destinations = true\n\
         smtp_url = \"smtps://mailer:s3cret@smtp.example.org:465\"\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let output = turnhouse(
        &[
            "--config",
            path,
            "config",
            "print",
            "--hook-time-limit-ms",
            "30",
        ],
        &[("BIND", "127.0.0.1:9002"), ("SIGN_IN_RATE", "7/min")],
    );
    assert!(output.status.success(), "{output:?}");
    let printed = String::from_utf8(output.stdout).unwrap();
    let from_file = format!("# file ({path})");
    assert_eq!(
        line(&printed, "bind"),
        "bind = \"127.0.0.1:9002\"  # environment (BIND)"
    );
    assert_eq!(
        line(&printed, "hook_time_limit_ms"),
        "hook_time_limit_ms = 30  # flag"
    );
    assert_eq!(
        line(&printed, "sign_in_rate"),
        "sign_in_rate = \"7/min\"  # environment (SIGN_IN_RATE)"
    );
    assert_eq!(
        line(&printed, "trusted_proxies"),
        format!("trusted_proxies = \"127.0.0.1,10.0.0.0/8\"  {from_file}")
    );
    assert_eq!(
        line(&printed, "allow_private_destinations"),
        format!("allow_private_destinations = true  {from_file}")
    );
    // Secrets never show.
    assert_eq!(
        line(&printed, "smtp_url"),
        format!("smtp_url = \"smtps://mailer:***@smtp.example.org:465\"  {from_file}")
    );
    assert!(!printed.contains("s3cret"));
    assert_eq!(
        line(&printed, "upload_rate"),
        "upload_rate = \"60/h\"  # default"
    );

    reads_back(dir.path(), &printed);

    // The environment can name the file too.
    let output = turnhouse(&["config", "print"], &[("TURNHOUSE_CONFIG", path)]);
    let printed = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        line(&printed, "bind"),
        format!("bind = \"127.0.0.1:9001\"  {from_file}")
    );
}

#[test]
fn a_key_that_is_no_setting_or_a_value_of_the_wrong_kind_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("turnhouse.toml");
    std::fs::write(
        &file,
        "bind = \"127.0.0.1:0\"\ntrusted_proxy = \"10.0.0.1\"\n",
    )
    .unwrap();
    let output = turnhouse(&["--config", file.to_str().unwrap()], &[]);
    assert!(!output.status.success());
    let said = String::from_utf8(output.stderr).unwrap();
    assert!(
        said.contains("has no setting `trusted_proxy` (did you mean `trusted_proxies`?)"),
        "{said}"
    );
    std::fs::write(&file, "rate_limits = [1, 2]\n").unwrap();
    let output = turnhouse(&["--config", file.to_str().unwrap()], &[]);
    let said = String::from_utf8(output.stderr).unwrap();
    assert!(!output.status.success());
    assert!(said.contains("`rate_limits`"), "{said}");
    let output = turnhouse(&["--config", "/nonexistent/turnhouse.toml"], &[]);
    let said = String::from_utf8(output.stderr).unwrap();
    assert!(
        said.contains("cannot read the settings file /nonexistent/turnhouse.toml"),
        "{said}"
    );
    // A value the setting itself refuses is named as the flag's would be.
    std::fs::write(&file, "trusted_proxies = \"10.0.0.0/99\"\n").unwrap();
    let output = turnhouse(
        &["--config", file.to_str().unwrap(), "config", "print"],
        &[],
    );
    let said = String::from_utf8(output.stderr).unwrap();
    assert!(!output.status.success());
    assert!(said.contains("10.0.0.0/99"), "{said}");
}

#[tokio::test]
async fn a_server_runs_with_the_settings_of_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("turnhouse.toml");
    std::fs::write(&file, "signup_rate = \"1/h\"\n").unwrap();
    let database = dir.path().join("t.db");
    let server = Server::start_with(
        database.to_str().unwrap(),
        &["--config", file.to_str().unwrap()],
    );
    let sign_up = || async {
        server
            .post_value("/players", None, json!({"username": unique("filed")}))
            .await
            .0
    };
    assert_eq!(sign_up().await, StatusCode::CREATED);
    assert_eq!(sign_up().await, StatusCode::TOO_MANY_REQUESTS);
}
