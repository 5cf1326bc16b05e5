use std::process::ExitCode;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};
use turnhouse::config::{Command, Config};
use turnhouse::dev::DevOptions;
use turnhouse::startup::{self, Application};
use turnhouse::{games, sandbox, seed, telemetry};

fn main() -> ExitCode {
    let matches = Config::command().get_matches();
    let config = Config::from_arg_matches(&matches).unwrap_or_else(|err| err.exit());
    match config.command {
        Some(Command::Dev {
            ref game,
            ref frontend,
            seats,
        }) => {
            let options = DevOptions {
                game: game.clone(),
                frontend: frontend.clone(),
                seats: seats.map(usize::from),
                database_given: matches.value_source("database_url")
                    != Some(ValueSource::DefaultValue),
            };
            dev(config, options)
        }
        // A sandbox process: no runtime, no logging, nothing but the JS engine.
        Some(Command::SandboxWorker) => sandbox::worker::run(config.hook_limits.limits()),
        Some(Command::SeedRooms { count }) => seed_rooms(config, count),
        Some(Command::Backup { ref dest }) => backup(&config, dest),
        None => serve(config),
    }
}

#[tokio::main]
async fn serve(config: Config) -> ExitCode {
    telemetry::init("info");
    match startup::raise_open_files_limit() {
        Ok(limit) => tracing::debug!(limit, "open files"),
        Err(err) => tracing::warn!(error = %err, "could not raise the open-files limit"),
    }
    let app = match Application::build(&config, games::builtin()).await {
        Ok(app) => app,
        Err(err) => {
            tracing::error!(error = %err, "could not start");
            return ExitCode::FAILURE;
        }
    };
    let host = config
        .bind
        .rsplit_once(':')
        .map_or(config.bind.as_str(), |(host, _)| host);
    tracing::info!(database = %config.database_for_logs(), "listening on http://{host}:{}", app.port());
    match app.run_until_stopped().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!(error = %err, "the server stopped with an error");
            ExitCode::FAILURE
        }
    }
}

#[tokio::main]
async fn dev(config: Config, options: DevOptions) -> ExitCode {
    // The hooks' own lines, and what goes wrong: requests are the author's own clicks.
    telemetry::init("warn,game=info");
    match turnhouse::dev::run(config, options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("turnhouse dev: {err}");
            ExitCode::FAILURE
        }
    }
}

#[tokio::main]
async fn backup(config: &Config, dest: &std::path::Path) -> ExitCode {
    telemetry::init("info");
    let started = std::time::Instant::now();
    match turnhouse::store::Store::backup(&config.database_url, dest).await {
        Ok(bytes) => {
            tracing::info!(
                bytes,
                seconds = started.elapsed().as_secs_f64(),
                dest = %dest.display(),
                database = %config.database_for_logs(),
                "backed up"
            );
            ExitCode::SUCCESS
        }
        Err(err) => {
            tracing::error!(error = %err, "could not back up");
            ExitCode::FAILURE
        }
    }
}

#[tokio::main]
async fn seed_rooms(config: Config, count: u64) -> ExitCode {
    telemetry::init("info");
    let started = std::time::Instant::now();
    let seeded = match startup::engine(&config, games::builtin()).await {
        Ok(engine) => seed::seed_rooms(&engine, count)
            .await
            .map_err(|e| e.to_string()),
        Err(err) => Err(err.to_string()),
    };
    match seeded {
        Ok(first) => {
            tracing::info!(
                count,
                first,
                seconds = started.elapsed().as_secs_f64(),
                database = %config.database_for_logs(),
                "seeded"
            );
            ExitCode::SUCCESS
        }
        Err(err) => {
            tracing::error!(error = %err, "could not seed rooms");
            ExitCode::FAILURE
        }
    }
}
