//! What the server and a sandbox process say to each other: one JSON object per line on the
//! process's stdin (requests) and stdout (responses), one request at a time.
//!
//! One stop in the life of a move: `docs/internals.md`.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::game::{BotLevel, Capabilities, Hook};

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

/// Each request is `{"<what>": {…}}`: a tag outside the fields, so that a call's arguments
/// are read where they stand in the line (an internal tag would buffer them first).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// Compile and evaluate a source under the hook limits; check it exports the four hooks
    /// (and which optional ones it exports).
    Check { source: String },
    /// Compile a source and keep it under `key` for calls.
    Load { key: String, source: String },
    /// Run one hook of the game kept under `key`. `args` is the array of its arguments, the
    /// room's record last, written into the line as it is (JSON, never a string of JSON).
    Call {
        key: String,
        hook: Hook,
        args: Box<RawValue>,
    },
    /// Choose the move of bot `bot` in `room` (the room's record) with the server's search,
    /// stopped after `time_ms`.
    Search {
        key: String,
        room: Box<RawValue>,
        bot: String,
        options: SearchOptions,
        time_ms: u64,
    },
}

/// What the server's search (`search.js`) is asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchOptions {
    /// Every random choice comes from it.
    pub seed: u64,
    pub level: BotLevel,
    /// Playouts per decision, at most (medium and hard).
    pub playouts: u32,
    /// A playout that reaches this many moves without the game finishing counts as a draw.
    pub depth: u32,
    /// The search stops itself after this long (the realm's limit stops it outright).
    pub time_ms: u64,
    /// Answer `{move, playouts}` instead of the move (benchmarks).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stats: bool,
}

/// Each response is `{"<what>": {…}}` (or `"<what>"` alone), tagged outside its fields as the
/// requests are: an internal tag would make the server buffer every answer, patch and all,
/// before reading it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Response {
    Checked {
        format: Format,
        /// Which optional hooks the module also exports.
        hooks: Capabilities,
        /// Its `settings` export, as JSON text, if it has one.
        #[serde(default)]
        settings: Option<String>,
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

/// How one hook call ended; tagged outside its fields, as [`Response`] is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
    /// The engine raised an error in the hook's code (a `TypeError` reading a property of
    /// `undefined`, say): a bug in the game, at `line` of its source when known.
    Failed {
        error: String,
        line: Option<u32>,
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

pub use crate::game::LogLevel;

/// One line a hook logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogLine {
    pub level: LogLevel,
    pub text: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_carries_its_hook_by_name_and_its_arguments_as_json() {
        let args =
            serde_json::value::to_raw_value(&serde_json::json!([{"id": "p"}, {"x": 1}])).unwrap();
        let call = Request::Call {
            key: "g@1".into(),
            hook: Hook::PlayerMove,
            args,
        };
        let line = serde_json::to_string(&call).unwrap();
        assert_eq!(
            line,
            r#"{"call":{"key":"g@1","hook":"onPlayerMove","args":[{"id":"p"},{"x":1}]}}"#
        );
        match serde_json::from_str::<Request>(&line).unwrap() {
            Request::Call { hook, args, .. } => {
                assert_eq!(hook, Hook::PlayerMove);
                assert_eq!(args.get(), r#"[{"id":"p"},{"x":1}]"#);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_answer_carries_its_kind_outside_its_fields() {
        let done = Response::Done {
            outcome: Outcome::Patch {
                patch: serde_json::json!({"state": {"x": 1}}),
            },
            logs: vec![],
        };
        let line = serde_json::to_string(&done).unwrap();
        assert_eq!(
            line,
            r#"{"done":{"outcome":{"patch":{"patch":{"state":{"x":1}}}},"logs":[]}}"#
        );
        match serde_json::from_str::<Response>(&line).unwrap() {
            Response::Done {
                outcome: Outcome::Patch { patch },
                ..
            } => assert_eq!(patch["state"]["x"], 1),
            other => panic!("{other:?}"),
        }
        let timeout = Response::Done {
            outcome: Outcome::Timeout,
            logs: vec![],
        };
        let line = serde_json::to_string(&timeout).unwrap();
        assert_eq!(line, r#"{"done":{"outcome":"timeout","logs":[]}}"#);
        assert_eq!(
            serde_json::to_string(&Response::Missing).unwrap(),
            r#""missing""#
        );
    }
}
