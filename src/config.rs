//! Settings, from command-line flags or the environment.

use clap::Parser;

#[derive(Debug, Clone, Parser)]
#[command(
    name = "turnhouse",
    version,
    about = "A self-hostable backend for turn-based games"
)]
pub struct Config {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, env = "BIND", default_value = "127.0.0.1:8080")]
    pub bind: String,

    /// Database: a `sqlite:` URL or a file path. Created and migrated on first start.
    #[arg(
        long = "database",
        env = "DATABASE_URL",
        default_value = "sqlite://data/turnhouse.db"
    )]
    pub database_url: String,

    /// Seed for the computer opponents' random choices. With a fixed seed, a room with the same
    /// history gets the same bot moves (for tests and replays); by default each start picks one.
    #[arg(long, env = "BOT_SEED")]
    pub bot_seed: Option<u64>,
}

impl Config {
    /// Defaults for everything but the database, bound to a free loopback port.
    pub fn for_database(database_url: impl Into<String>) -> Self {
        Self {
            bind: "127.0.0.1:0".into(),
            database_url: database_url.into(),
            bot_seed: None,
        }
    }
}
