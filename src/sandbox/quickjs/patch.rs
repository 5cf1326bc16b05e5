//! What a hook returned, read back from the JSON its value was encoded to, within the
//! platform's limits of size and depth.

use crate::game::MAX_STATE_BYTES;
use crate::sandbox::protocol::Outcome;

/// How deep a returned patch may nest (the platform's JSON readers stop at 128).
const MAX_PATCH_DEPTH: usize = 100;

/// Reads the JSON text a hook's value was encoded to, within the platform's limits.
pub(super) fn read_patch(text: &str) -> Outcome {
    if text.len() > MAX_STATE_BYTES + 4096 {
        return Outcome::InvalidResult {
            message: format!(
                "the returned patch is {} bytes of JSON; a room's state may hold at most {MAX_STATE_BYTES}",
                text.len()
            ),
        };
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(patch) if depth(&patch) > MAX_PATCH_DEPTH => Outcome::InvalidResult {
            message: format!("the returned patch nests deeper than {MAX_PATCH_DEPTH} levels"),
        },
        Ok(patch) => Outcome::Patch { patch },
        Err(err) => Outcome::InvalidResult {
            message: format!("the returned value could not be read as JSON: {err}"),
        },
    }
}

fn depth(value: &serde_json::Value) -> usize {
    match value {
        serde_json::Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        serde_json::Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}
