//! Running authors' JavaScript games safely. Hooks run in QuickJS inside separate processes
//! (this binary as `turnhouse sandbox-worker`): the engine's own limits stop runaway time,
//! memory and recursion; the process boundary, a watchdog that kills a worker missing its
//! deadline, and operating-system limits contain whatever gets past them (an engine bug, an
//! abort on an out-of-memory path). A fault costs one worker process, never the server.
//!
//! - [`quickjs`]: the engine inside a worker: compile once; every call starts from the game's
//!   saved realm.
//! - [`worker`]: the worker process's main loop.
//! - [`protocol`]: the JSON lines the two sides exchange.
//! - [`pool`]: the server's side: leasing workers, deadlines, replacing dead ones.
//! - [`process`]: one worker process as the server holds it: its pipes and its watchdog.
//! - [`hook_threads`]: the threads the server calls hooks from, one per worker.
//! - [`hosted`]: an uploaded game as a [`crate::game::Game`].
//! - [`game_log`]: where its log lines go for its owner to read.

mod counts;
pub mod game_log;
mod hook_threads;
pub mod hosted;
pub mod pool;
mod process;
pub mod protocol;
pub mod quickjs;
mod watchdog;
pub mod worker;

pub use game_log::GameLogSink;
pub use hosted::HostedGame;
pub use pool::{CheckError, Checked, PoolError, SandboxPool, SearchBudget};
pub use protocol::Format;
pub use quickjs::Limits;
