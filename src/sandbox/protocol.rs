//! What the server and a sandbox process say to each other: one JSON object per line on the
//! process's stdin (requests) and stdout (responses), one request at a time.
//!
//! One stop in the life of a move: `docs/internals.md`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::game::OptionalHooks;

/// How a game's source is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// `module.exports = {…}` or `exports.onRoomStart = …`, as bundlers emit with `format: 'cjs'`.
    Commonjs,
    /// `export default {…}` (or the four hooks as named exports).
    Module,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Commonjs => "commonjs",
            Format::Module => "module",
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Compile and evaluate a source under the hook limits; check it exports the four hooks
    /// (and which optional ones it exports).
    Check { source: String },
    /// Compile a source and keep it under `key` for calls.
    Load { key: String, source: String },
    /// Run one hook of the game kept under `key`. `args` is the JSON array of its arguments.
    Call {
        key: String,
        hook: String,
        args: String,
    },
    /// Choose the move of bot `bot` in `room` (JSON) with the server's search, under
    /// `time_ms`; `options` (JSON) are the search's.
    Search {
        key: String,
        room: String,
        bot: String,
        options: String,
        time_ms: u64,
    },
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Response {
    Checked {
        format: Format,
        /// Which optional hooks the module also exports.
        hooks: OptionalHooks,
    },
    Invalid {
        message: String,
        line: Option<u32>,
    },
    Loaded,
    /// The process does not hold the game: send `Load`, then the call again.
    Missing,
    Done {
        outcome: Outcome,
        logs: Vec<LogLine>,
    },
}

/// How one hook call ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// The hook returned this value (a patch, if it is an object with the right keys).
    Patch {
        patch: Value,
    },
    /// The hook threw: the game refuses the action.
    Refused {
        reason: String,
        message: String,
    },
    Timeout,
    OutOfMemory {
        detail: String,
    },
    Crashed {
        message: String,
    },
    /// The hook returned something that is not JSON (a function, a BigInt, a cycle…).
    InvalidResult {
        message: String,
    },
}

/// The engine stopping a hook (as opposed to the hook throwing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    Timeout,
    OutOfMemory { detail: String },
    StackOverflow,
}

impl From<Fault> for Outcome {
    fn from(fault: Fault) -> Self {
        match fault {
            Fault::Timeout => Outcome::Timeout,
            Fault::OutOfMemory { detail } => Outcome::OutOfMemory { detail },
            Fault::StackOverflow => Outcome::Crashed {
                message: "stack overflow: the hook recursed too deeply".into(),
            },
        }
    }
}

/// One line a hook logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogLine {
    pub level: String,
    pub text: String,
}
