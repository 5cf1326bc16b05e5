//! Settings, from command-line flags or the environment.

mod file;
mod mail;
mod serving;
mod webhooks;

pub use file::{named_file, FileError, FileSettings, CONFIG_ENV};
pub use mail::{parse_span, MailSettings, Span};
pub use serving::Serving;
pub use webhooks::WebhookSettings;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::api::limits::{Limits as RateLimits, RateLimiter, RateSetting};
use crate::api::CorsOrigins;
use crate::domain::roles::{Role, UploadPolicy};
use crate::engine::IdleRules;
use crate::sandbox::{Limits, SearchBudget};

#[derive(Debug, Clone, Parser)]
#[command(
    name = "turnhouse",
    version,
    about = "A self-hostable backend for turn-based games"
)]
pub struct Config {
    /// A settings file (TOML, keys the flags' names with `_` for `-`): the environment
    /// overrides it, and flags override both.
    #[arg(global = true, long, env = "TURNHOUSE_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Address to listen on (port 0 picks a free port).
    #[arg(global = true, long, env = "BIND", default_value = "127.0.0.1:8080")]
    pub bind: String,

    /// Database: a file path or `sqlite:` URL (SQLite), or a `postgres://` URL (PostgreSQL), created and migrated on first start; `turnhouse dev` uses a throwaway SQLite file unless this is given.
    #[arg(
        global = true,
        long = "database",
        env = "DATABASE_URL",
        default_value = "sqlite://data/turnhouse.db"
    )]
    pub database_url: String,

    /// How long a write waits, in milliseconds, while another connection (say, someone in
    /// `sqlite3`) holds the database's write lock, before it is answered `503 storage_busy`.
    #[arg(
        global = true,
        long,
        env = "DATABASE_BUSY_TIMEOUT_MS",
        default_value_t = 5000
    )]
    pub database_busy_timeout_ms: u64,

    /// Seed for the computer opponents' random choices. With a fixed seed, a room with the same
    /// history gets the same bot moves (for tests and replays); by default each start picks one.
    #[arg(global = true, long, env = "BOT_SEED")]
    pub bot_seed: Option<u64>,

    /// Origins a browser page may call the API from: `*` (any; tokens never travel in
    /// cookies, so this is safe) or a comma-separated list of exact origins, such as
    /// `https://games.example,http://localhost:5173`.
    #[arg(global = true, long, env = "CORS_ORIGINS", default_value = "*")]
    pub cors_origins: CorsOrigins,

    #[command(flatten)]
    pub serving: Serving,

    #[command(flatten)]
    pub hook_limits: HookLimits,

    #[command(flatten)]
    pub abuse_limits: AbuseLimits,

    #[command(flatten)]
    pub bot_search: BotSearch,

    #[command(flatten)]
    pub idle_rooms: IdleRooms,

    #[command(flatten)]
    pub webhooks: WebhookSettings,

    #[command(flatten)]
    pub mail: MailSettings,

    /// Sandbox processes that run uploaded games' hooks, at most (each runs one call at a time).
    #[arg(global = true, long, env = "SANDBOX_WORKERS", default_value_t = 4)]
    pub sandbox_workers: usize,

    /// The program started as `<program> sandbox-worker` for sandbox processes; this binary
    /// unless set.
    #[arg(global = true, long, env = "SANDBOX_PROGRAM", hide = true)]
    pub sandbox_program: Option<PathBuf>,

    /// Who may publish games: `anyone` signed up, `authors` (players granted the author role,
    /// and admins) or `admins` only. Roles are granted with `turnhouse admin grant`.
    #[arg(global = true, long, env = "UPLOADS", value_enum, hide_possible_values = true, default_value_t = UploadPolicy::Anyone)]
    pub uploads: UploadPolicy,

    /// Seconds between keep-alive comments on an idle stream, so proxies do not close it.
    #[arg(global = true, long, env = "STREAM_KEEPALIVE_SECS", default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..=15))]
    pub stream_keepalive_secs: u64,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// A sandbox process, started by the server (not for people to run), under the hook
    /// limits given.
    #[command(hide = true)]
    SandboxWorker,
    /// Fills the database with finished tic-tac-toe rooms (one game played through the engine,
    /// then copied, history and all), to measure the service with many rooms stored. Run it
    /// with the server stopped or running; it prints how long it took.
    SeedRooms {
        /// How many finished rooms to add.
        #[arg(long)]
        count: u64,
    },
    /// Runs a game you are writing, on this machine only: a server on a loopback address with
    /// a throwaway database (unless --database names one) and rate limits off, the game
    /// published from its files and again on every save, and a dev page at /dev/{game} with
    /// every seat side by side, the true state and its history, and the hooks' logs.
    Dev {
        /// The game's hooks: a JavaScript file (its name, less `.js`, is the game's id).
        game: PathBuf,
        /// The game's own page: one HTML file, or a build folder.
        #[arg(long)]
        frontend: Option<PathBuf>,
        /// Seats side by side on the dev page, 2 to 4 (the game's minPlayers by default).
        #[arg(long, value_parser = clap::value_parser!(u8).range(2..=4))]
        seats: Option<u8>,
    },
    /// Copies the SQLite database to DEST, a new file, while servers keep using it: one
    /// consistent snapshot (every commit up to a moment, none after), writers never held up.
    /// Start a server on the copy to restore it. For PostgreSQL use pg_dump.
    Backup {
        /// The file to write; it must not exist.
        dest: std::path::PathBuf,
    },
    /// Grants or revokes a role (admin by default, or author) on the database, whether a server
    /// is running on it or not; the change counts at once, and is kept in the audit log.
    Admin {
        #[command(subcommand)]
        change: RoleChange,
    },
    /// The operator's webhook endpoints, which take every event of the server, on the database
    /// whether a server is running on it or not (servers see a change within a second).
    Webhooks {
        #[command(subcommand)]
        action: WebhooksCommand,
    },
    /// Ratings, kept by the server as rated games finish.
    Ratings {
        #[command(subcommand)]
        action: RatingsCommand,
    },
    /// The settings in effect.
    Config {
        #[command(subcommand)]
        action: ConfigCommand,
    },
}

/// What to do with the settings.
#[derive(Debug, Clone, Subcommand)]
pub enum ConfigCommand {
    /// Prints every setting in effect (from the settings file, the environment and the flags
    /// given with it) and where each came from, passwords in URLs masked, as a settings file.
    Print,
}

/// What to do with the operator's webhook endpoints.
#[derive(Debug, Clone, Subcommand)]
pub enum WebhooksCommand {
    /// Adds an endpoint and prints its id and its secret (shown this once).
    Add {
        /// Where deliveries are posted: `https://`, to a public address (unless
        /// --allow-private-destinations).
        url: String,
        /// The event types it takes, comma-separated: room.created, room.started,
        /// room.finished, room.closed, player.joined, player.left, version.created,
        /// game.published.
        #[arg(long, value_delimiter = ',', required = true)]
        events: Vec<String>,
    },
    /// Lists the operator's endpoints.
    List,
    /// Removes an endpoint and its deliveries.
    Remove {
        /// The endpoint's id (`hook_…`).
        id: String,
    },
}

/// What to do with the ratings.
#[derive(Debug, Clone, Subcommand)]
pub enum RatingsCommand {
    /// Computes every rating again from the kept results of rated games, in the order they
    /// finished, in one commit, and says how many numbers came out different (none, unless
    /// the maths changed).
    Rebuild,
}

/// A change to a player's roles.
#[derive(Debug, Clone, Subcommand)]
pub enum RoleChange {
    /// Gives the player the role.
    Grant(RoleArgs),
    /// Takes the role from the player.
    Revoke(RoleArgs),
}

#[derive(Debug, Clone, Args)]
pub struct RoleArgs {
    /// The player's name.
    pub username: String,
    /// The role: `admin` (the /admin/ routes) or `author` (publishing under `--uploads
    /// authors`).
    #[arg(long, value_enum, default_value_t = Role::Admin)]
    pub role: Role,
}

/// How hard the computer opponents of uploaded games search (their moves are chosen by a
/// search over the game's own hooks, in the sandbox, one call per decision).
#[derive(Debug, Clone, Copy, Args)]
pub struct BotSearch {
    /// Milliseconds a bot of an uploaded game searches for one move at most; the sandbox
    /// stops the search outright at twice this (its own limit, not the hook's).
    #[arg(global = true, long, env = "BOT_SEARCH_MS", default_value_t = 1000)]
    pub bot_search_ms: u64,

    /// Playouts a medium bot's search runs per move.
    #[arg(
        global = true,
        long,
        env = "BOT_MEDIUM_PLAYOUTS",
        default_value_t = 200
    )]
    pub bot_medium_playouts: u32,

    /// Playouts a hard bot's search runs per move.
    #[arg(global = true, long, env = "BOT_HARD_PLAYOUTS", default_value_t = 2000)]
    pub bot_hard_playouts: u32,

    /// Bot searches that run at once (the others wait their turn); 0 is one fewer than the
    /// CPU cores, at least one. Never more than one fewer than --sandbox-workers.
    #[arg(global = true, long, env = "BOT_SEARCHES", default_value_t = 0)]
    pub bot_searches: usize,
}

impl BotSearch {
    /// The sandbox's budget these settings give.
    pub fn budget(&self) -> SearchBudget {
        SearchBudget {
            time: Duration::from_millis(self.bot_search_ms),
            medium_playouts: self.bot_medium_playouts,
            hard_playouts: self.bot_hard_playouts,
            concurrent: self.bot_searches,
        }
    }
}

impl Default for BotSearch {
    fn default() -> Self {
        Self {
            bot_search_ms: 1000,
            bot_medium_playouts: 200,
            bot_hard_playouts: 2000,
            bot_searches: 0,
        }
    }
}

/// How fast one client may sign up, act and upload (see `api::limits`).
#[derive(Debug, Clone, Args)]
pub struct AbuseLimits {
    /// Sign-ups per client address: `N/s`, `N/min`, `N/h`, `N/day` (a burst of N, refilled at
    /// N per period), or `off`.
    #[arg(global = true, long, env = "SIGNUP_RATE", default_value = "300/h")]
    pub signup_rate: RateSetting,

    /// Sign-in attempts (with a code or a password) per client address: what makes guessing
    /// a code or a password slow.
    #[arg(global = true, long, env = "SIGN_IN_RATE", default_value = "30/min")]
    pub sign_in_rate: RateSetting,

    /// Failed password sign-ins per account from one client address: past this, that
    /// address's sign-ins to the account are refused until the limit refills (others' are
    /// not, so a stranger guessing slows only themselves).
    #[arg(
        global = true,
        long,
        env = "PASSWORD_FAILURE_RATE",
        default_value = "10/h"
    )]
    pub password_failure_rate: RateSetting,

    /// Failed password sign-ins per account from every address together: the ceiling for
    /// guessing spread over many addresses, much higher than the one per address.
    #[arg(
        global = true,
        long,
        env = "ACCOUNT_FAILURE_RATE",
        default_value = "200/h"
    )]
    pub account_failure_rate: RateSetting,

    /// Sign-in codes a player may ask for (besides the few that may work at once).
    #[arg(global = true, long, env = "SIGN_IN_CODE_RATE", default_value = "20/h")]
    pub sign_in_code_rate: RateSetting,

    /// Actions (new rooms, quick play, joins, moves, quits, play again, token rotation) per
    /// player.
    #[arg(global = true, long, env = "ACTION_RATE", default_value = "1200/min")]
    pub action_rate: RateSetting,

    /// Game uploads per author.
    #[arg(global = true, long, env = "UPLOAD_RATE", default_value = "60/h")]
    pub upload_rate: RateSetting,

    /// Chat messages per player (a room's table and gallery, and the lobby, together).
    #[arg(global = true, long, env = "CHAT_RATE", default_value = "20/min")]
    pub chat_rate: RateSetting,

    /// Mailed links (an address to confirm, a password reset) per account, and per address
    /// mailed: no one can make the server mail someone over and over.
    #[arg(global = true, long, env = "MAIL_LINK_RATE", default_value = "5/h")]
    pub mail_link_rate: RateSetting,

    /// `off` turns every one of these limits off.
    #[arg(global = true, long, env = "RATE_LIMITS", default_value = "on", value_parser = ["on", "off"])]
    pub rate_limits: String,
}

impl Default for AbuseLimits {
    fn default() -> Self {
        let rate = |text: &str| text.parse().expect("a valid default");
        Self {
            signup_rate: rate("300/h"),
            sign_in_rate: rate("30/min"),
            password_failure_rate: rate("10/h"),
            account_failure_rate: rate("200/h"),
            sign_in_code_rate: rate("20/h"),
            action_rate: rate("1200/min"),
            upload_rate: rate("60/h"),
            chat_rate: rate("20/min"),
            mail_link_rate: rate("5/h"),
            rate_limits: "on".into(),
        }
    }
}

impl AbuseLimits {
    pub fn limiters(&self) -> RateLimits {
        let limiter = |setting: RateSetting, what| match self.rate_limits.as_str() {
            "off" => RateLimiter::new(RateSetting(None), what),
            _ => RateLimiter::new(setting, what),
        };
        RateLimits {
            signups: limiter(self.signup_rate, "sign-ups from this address"),
            sign_ins: limiter(self.sign_in_rate, "sign-in attempts from this address"),
            password_failures: limiter(
                self.password_failure_rate,
                "failed sign-ins to this account from this address",
            ),
            account_failures: limiter(self.account_failure_rate, "failed sign-ins to this account"),
            sign_in_codes: limiter(self.sign_in_code_rate, "sign-in codes"),
            actions: limiter(self.action_rate, "actions"),
            chat: limiter(self.chat_rate, "chat messages"),
            mail_links: limiter(
                self.mail_link_rate,
                "mailed links for this account or address",
            ),
            uploads: limiter(self.upload_rate, "uploads"),
        }
    }
}

/// How long rooms nobody plays are kept waiting, and how long a rematch is held (see
/// `docs/operations.md`). Every one is in seconds.
#[derive(Debug, Clone, Copy, Args)]
pub struct IdleRooms {
    /// Quick play joins only a room that changed, or has a player seen (any request, or an
    /// open stream), within this many seconds.
    #[arg(global = true, long, env = "QUICKPLAY_SEEN_WITHIN_SECS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
    pub quickplay_seen_within_secs: u64,

    /// A room waiting for players with no version for this long is closed.
    #[arg(global = true, long, env = "WAITING_ROOM_IDLE_SECS", default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..))]
    pub waiting_room_idle_secs: u64,

    /// A game in play with no clock and no version for this long can be claimed by a player
    /// the room is not waiting on.
    #[arg(global = true, long, env = "CLAIM_AFTER_SECS", default_value_t = 86_400, value_parser = clap::value_parser!(u64).range(1..))]
    pub claim_after_secs: u64,

    /// How long "Play again" holds the other players' seats for a rematch.
    #[arg(global = true, long, env = "REMATCH_HOLD_SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub rematch_hold_secs: u64,
}

impl Default for IdleRooms {
    fn default() -> Self {
        Self {
            quickplay_seen_within_secs: 120,
            waiting_room_idle_secs: 1800,
            claim_after_secs: 86_400,
            rematch_hold_secs: 60,
        }
    }
}

impl IdleRooms {
    pub fn rules(&self) -> IdleRules {
        let secs = Duration::from_secs;
        IdleRules {
            seen_within: secs(self.quickplay_seen_within_secs),
            waiting_room_idle: secs(self.waiting_room_idle_secs),
            claim_after: secs(self.claim_after_secs),
            rematch_hold: secs(self.rematch_hold_secs),
        }
    }
}

/// The limits every hook of an uploaded game runs under.
#[derive(Debug, Clone, Copy, Args)]
pub struct HookLimits {
    /// CPU time one hook call may use, in milliseconds (waiting for a core does not count).
    #[arg(
        global = true,
        long = "hook-time-limit-ms",
        env = "HOOK_TIME_LIMIT_MS",
        default_value_t = 50
    )]
    pub time_ms: u64,

    /// Memory one hook call's JavaScript heap may use, in MiB.
    #[arg(
        global = true,
        long = "hook-memory-limit-mib",
        env = "HOOK_MEMORY_LIMIT_MIB",
        default_value_t = 32
    )]
    pub memory_mib: u64,

    /// Stack one hook call may use, in KiB (deep recursion stops here).
    #[arg(
        global = true,
        long = "hook-stack-limit-kib",
        env = "HOOK_STACK_LIMIT_KIB",
        default_value_t = 512
    )]
    pub stack_kib: u64,
}

impl Default for HookLimits {
    fn default() -> Self {
        Self {
            time_ms: 50,
            memory_mib: 32,
            stack_kib: 512,
        }
    }
}

impl HookLimits {
    pub fn limits(&self) -> Limits {
        Limits {
            time: Duration::from_millis(self.time_ms.max(1)),
            memory_bytes: (self.memory_mib.max(1) as usize) << 20,
            stack_bytes: (self.stack_kib.max(64) as usize) << 10,
        }
    }
}

impl Config {
    /// The database URL as logs show it: a password in it is replaced by `***`.
    pub fn database_for_logs(&self) -> String {
        let url = &self.database_url;
        let Some((scheme, rest)) = url.split_once("://") else {
            return url.clone();
        };
        match rest.split_once('@') {
            Some((user_info, host)) if user_info.contains(':') => {
                let user = user_info
                    .split_once(':')
                    .map_or(user_info, |(user, _)| user);
                format!("{scheme}://{user}:***@{host}")
            }
            _ => url.clone(),
        }
    }

    /// Defaults for everything but the database, bound to a free loopback port.
    pub fn for_database(database_url: impl Into<String>) -> Self {
        Self {
            config: None,
            bind: "127.0.0.1:0".into(),
            database_url: database_url.into(),
            database_busy_timeout_ms: 5000,
            bot_seed: None,
            cors_origins: CorsOrigins::Any,
            serving: Serving::default(),
            hook_limits: HookLimits::default(),
            bot_search: BotSearch::default(),
            abuse_limits: AbuseLimits::default(),
            sandbox_workers: 4,
            sandbox_program: None,
            stream_keepalive_secs: 15,
            idle_rooms: IdleRooms::default(),
            webhooks: WebhookSettings::default(),
            mail: MailSettings::default(),
            uploads: UploadPolicy::Anyone,
            command: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_never_show_a_database_password() {
        let shown = |url: &str| Config::for_database(url).database_for_logs();
        assert_eq!(
            shown("postgres://turnhouse:s3cret@db:5432/turnhouse"),
            "postgres://turnhouse:***@db:5432/turnhouse"
        );
        assert_eq!(
            shown("postgres://turnhouse@db/turnhouse"),
            "postgres://turnhouse@db/turnhouse"
        );
        assert_eq!(shown("data/turnhouse.db"), "data/turnhouse.db");
    }
}
