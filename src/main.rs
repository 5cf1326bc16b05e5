use std::process::ExitCode;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};
use turnhouse::config::{
    named_file, Command, Config, ConfigCommand, FileSettings, RatingsCommand, RoleChange,
    WebhooksCommand,
};
use turnhouse::dev::DevOptions;
use turnhouse::domain::records::{AuditAction, AuditEntry};
use turnhouse::startup::{self, Application};
use turnhouse::store::Store;
use turnhouse::{games, sandbox, seed, telemetry};

/// jemalloc rather than glibc's allocator or mimalloc: a request allocates and frees many small
/// blocks, often on another thread than made them. Allocating was about a seventh of the
/// server's samples at load with glibc's, much of it its own bookkeeping (`malloc_consolidate`,
/// `_int_free`); mimalloc took less, but most of what it took was a miss on the cache for each
/// block handed out that another thread had freed. jemalloc hands a thread back what that
/// thread freed last, still in its core's cache. Measured in `docs/benchmarks.md` ("Where the
/// time goes"). The sandbox processes run this binary too. SQLite's own allocations go through
/// jemalloc as well (`store::sqlite::allocator`).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    no_huge_pages();
    let args: Vec<String> = std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    // The settings file's values become the command's defaults: the environment and the flags
    // override them.
    let file = match named_file(&args) {
        Some(path) => match FileSettings::read(&path, &command()) {
            Ok(file) => file,
            Err(err) => {
                eprintln!("turnhouse: {err}");
                return ExitCode::FAILURE;
            }
        },
        None => FileSettings::default(),
    };
    let settings = command();
    let matches = file.apply(settings.clone()).get_matches();
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
        Some(Command::Admin { ref change }) => admin(&config, change),
        Some(Command::Webhooks { ref action }) => webhooks(&config, action),
        Some(Command::Ratings {
            action: RatingsCommand::Rebuild,
        }) => rebuild_ratings(&config),
        Some(Command::Config {
            action: ConfigCommand::Print,
        }) => {
            print!("{}", file.print(&settings, &matches));
            ExitCode::SUCCESS
        }
        None => serve(config),
    }
}

/// The command line. `turnhouse dev` shares the server's settings, but not its database's
/// default: asked for its help, it names the throwaway file it uses instead.
fn command() -> clap::Command {
    let command = Config::command();
    if std::env::args().skip(1).all(|arg| arg != "dev") {
        return command;
    }
    command.mut_arg("database_url", |arg| {
        arg.hide_default_value(true).help(
            "Database: a file path or `sqlite:` URL (SQLite), or a `postgres://` URL (PostgreSQL) \
             [default: a throwaway SQLite file in a temporary folder, removed when dev stops]",
        )
    })
}

#[tokio::main]
async fn serve(config: Config) -> ExitCode {
    telemetry::init("info");
    match startup::raise_open_files_limit() {
        Ok(limit) => tracing::debug!(limit, "open files"),
        Err(err) => tracing::warn!(error = %err, "could not raise the open-files limit"),
    }
    for warning in config.warnings() {
        tracing::warn!("{warning}");
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
    tracing::info!(database = %config.database_for_logs(), "listening on {}://{host}:{}", app.scheme(), app.port());
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
async fn admin(config: &Config, change: &RoleChange) -> ExitCode {
    telemetry::init("warn");
    let (args, grant) = match change {
        RoleChange::Grant(args) => (args, true),
        RoleChange::Revoke(args) => (args, false),
    };
    let busy_timeout = std::time::Duration::from_millis(config.database_busy_timeout_ms);
    let action = match grant {
        true => AuditAction::Grant,
        false => AuditAction::Revoke,
    };
    // The target is the player the name belongs to, which the store fills in.
    let audit = AuditEntry::new(None, action, ("player", ""), "", serde_json::json!({}));
    let changed = match Store::open_existing(&config.database_url, busy_timeout).await {
        Ok(store) => store
            .set_role(&args.username, args.role, grant, audit)
            .await
            .map_err(|e| e.to_string())
            .and_then(|player| {
                player.ok_or_else(|| {
                    format!(
                        "there is no player named {} in {}",
                        args.username,
                        config.database_for_logs()
                    )
                })
            }),
        Err(err) => Err(err.to_string()),
    };
    match changed {
        Ok(player) => {
            let done = if grant { "granted to" } else { "revoked from" };
            println!("{} {done} {} ({})", args.role, player.username, player.id);
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("turnhouse admin: {err}");
            ExitCode::FAILURE
        }
    }
}

#[tokio::main]
async fn webhooks(config: &Config, action: &WebhooksCommand) -> ExitCode {
    use turnhouse::webhooks::{Scope, Webhooks};
    telemetry::init("warn");
    let busy_timeout = std::time::Duration::from_millis(config.database_busy_timeout_ms);
    let store = match Store::open_existing(&config.database_url, busy_timeout).await {
        Ok(store) => store,
        Err(err) => {
            eprintln!("turnhouse webhooks: {err}");
            return ExitCode::FAILURE;
        }
    };
    let settings = &config.webhooks;
    let hooks = Webhooks::for_operator(store, settings.destinations(), settings.rules().retry_for);
    let done = match action {
        WebhooksCommand::Add { url, events } => hooks
            .create(&Scope::Server, None, url, events)
            .await
            .map(|e| {
                println!("id:     {}", e.id);
                println!("secret: {}", e.secret);
                println!("url:    {}", e.url);
                println!("events: {}", e.types.text());
                let active = e.created_at.after(turnhouse::store::WEBHOOK_ACTIVATION);
                println!(
                    "active from: {active} (every event committed from then on, on every server)"
                );
            }),
        WebhooksCommand::List => hooks.list(&Scope::Server).await.map(|all| {
            for e in all {
                let status = match (&e.disabled_at, &e.paused_at) {
                    (Some(_), _) => "disabled",
                    (None, Some(_)) => "paused",
                    (None, None) => "active",
                };
                println!("{}\t{status}\t{}\t{}", e.id, e.url, e.types.text());
            }
        }),
        WebhooksCommand::Remove { id } => hooks
            .delete(&Scope::Server, id)
            .await
            .map(|()| println!("removed {id}")),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("turnhouse webhooks: {err}");
            ExitCode::FAILURE
        }
    }
}

#[tokio::main]
async fn rebuild_ratings(config: &Config) -> ExitCode {
    telemetry::init("warn");
    let busy_timeout = std::time::Duration::from_millis(config.database_busy_timeout_ms);
    let rebuilt = match Store::open_existing(&config.database_url, busy_timeout).await {
        Ok(store) => store.rebuild_ratings().await.map_err(|e| e.to_string()),
        Err(err) => Err(err.to_string()),
    };
    match rebuilt {
        Ok(rebuilt) => {
            println!(
                "{} rated games replayed, {} ratings computed, {} numbers differed",
                rebuilt.games, rebuilt.ratings, rebuilt.differed
            );
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("turnhouse ratings rebuild: {err}");
            ExitCode::FAILURE
        }
    }
}

#[tokio::main]
async fn seed_rooms(config: Config, count: u64) -> ExitCode {
    telemetry::init("info");
    let started = std::time::Instant::now();
    let seeded = match startup::services(&config, games::builtin()).await {
        Ok(services) => seed::seed_rooms(&services, count)
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

/// No transparent huge pages for this process and those it starts. An allocator maps memory in
/// large pieces, and where the kernel backs memory with huge pages whenever it can
/// (`/sys/kernel/mm/transparent_hugepage/enabled` set to `always`), each part of a piece first
/// touched takes 2 MiB: with mimalloc, the server's resident memory at 64 games in flight was
/// about 86 MiB, and with this 53-58. Measured in `docs/benchmarks.md` ("Where the time
/// goes"); a failure changes nothing else.
fn no_huge_pages() {
    // SAFETY: a plain system call with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
}
