//! The partial patch a hook returns. It is kept as the JSON object the hook produced, so that
//! games of any origin (native or uploaded) are validated by the same rules in one place.
//!
//! One stop in the life of a move: `docs/internals.md`.

use crate::domain::time::Timestamp;
use serde_json::{Map, Value};

/// The largest `state` a room may hold, as JSON text. Every version of it is kept in the
/// history, so a game that grows its state without bound is stopped here, by name.
pub const MAX_STATE_BYTES: usize = 1 << 20;

/// What a hook returns: an object that may hold `state`, `joinable`, `finished` and
/// `triggerTimeoutAt`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Patch(Map<String, Value>);

impl Patch {
    /// The empty patch `{}`: nothing changes but the version.
    pub fn empty() -> Self {
        Self::default()
    }

    /// A patch exactly as a hook wrote it; checked when the engine applies it.
    pub fn from_json(value: Value) -> Result<Self, PatchError> {
        match value {
            Value::Object(map) => Ok(Self(map)),
            other => Err(PatchError::NotAnObject(json_type(&other))),
        }
    }

    pub fn state(mut self, state: Value) -> Self {
        self.0.insert("state".into(), state);
        self
    }

    pub fn joinable(mut self, joinable: bool) -> Self {
        self.0.insert("joinable".into(), Value::Bool(joinable));
        self
    }

    pub fn finished(mut self, finished: bool) -> Self {
        self.0.insert("finished".into(), Value::Bool(finished));
        self
    }

    pub fn trigger_timeout_at(mut self, at: Option<chrono::DateTime<chrono::Utc>>) -> Self {
        let at = at.map_or(Value::Null, |at| Value::String(Timestamp::from(at).text()));
        self.0.insert("triggerTimeoutAt".into(), at);
        self
    }

    /// Checks the patch against the contract: only the four known keys, each of its type.
    pub fn validate(self) -> Result<ValidPatch, PatchError> {
        let mut valid = ValidPatch::default();
        for (key, value) in self.0 {
            match key.as_str() {
                "state" => {
                    let bytes = json_len(&value);
                    if bytes > MAX_STATE_BYTES {
                        return Err(PatchError::StateTooLarge { bytes });
                    }
                    valid.state = Some(value)
                }
                "joinable" => valid.joinable = Some(as_bool(&key, value)?),
                "finished" => valid.finished = Some(as_bool(&key, value)?),
                "triggerTimeoutAt" => valid.trigger_timeout_at = Some(as_deadline(value)?),
                _ => return Err(PatchError::UnknownKey(key)),
            }
        }
        Ok(valid)
    }
}

/// `triggerTimeoutAt`: an RFC 3339 time (any offset, kept in UTC to the millisecond) or `null`.
/// Years before 1970 or after 9999 are refused, which keeps the stored text one width.
fn as_deadline(value: Value) -> Result<Option<Timestamp>, PatchError> {
    let text = match value {
        Value::Null => return Ok(None),
        Value::String(text) => text,
        other => return Err(PatchError::NotATime(json_type(&other).to_owned())),
    };
    let at = chrono::DateTime::parse_from_rfc3339(&text)
        .map_err(|_| PatchError::NotATime(format!("the string `{text}`")))?
        .with_timezone(&chrono::Utc);
    use chrono::Datelike;
    if !(1970..=9999).contains(&at.year()) {
        return Err(PatchError::NotATime(format!("the string `{text}`")));
    }
    Ok(Some(Timestamp::from(at)))
}

fn as_bool(key: &str, value: Value) -> Result<bool, PatchError> {
    value.as_bool().ok_or_else(|| PatchError::NotABool {
        key: key.to_owned(),
        found: json_type(&value),
    })
}

/// The length of `value` as JSON text, without building the text.
fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).expect("counting never fails");
    count.0
}

/// What kind of JSON value `value` is, for a message.
pub fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A patch that passed validation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ValidPatch {
    pub state: Option<Value>,
    pub joinable: Option<bool>,
    pub finished: Option<bool>,
    /// `Some(None)` clears the deadline; `None` leaves it as it was.
    pub trigger_timeout_at: Option<Option<Timestamp>>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    #[error("a patch must be a JSON object, the hook returned {0}")]
    NotAnObject(&'static str),
    #[error(
        "a patch may only hold `state`, `joinable`, `finished` and `triggerTimeoutAt`; the hook \
         returned `{0}`"
    )]
    UnknownKey(String),
    #[error(
        "`triggerTimeoutAt` in a patch must be an RFC 3339 time between the years 1970 and \
         9999, or null; the hook returned {0}"
    )]
    NotATime(String),
    #[error(
        "the patch sets `triggerTimeoutAt`, but the game has no `onTimeout` hook to run when \
         it passes"
    )]
    NoTimeoutHook,
    #[error("`{key}` in a patch must be a boolean, the hook returned {found}")]
    NotABool { key: String, found: &'static str },
    #[error(
        "the state is {bytes} bytes of JSON; a room's state may hold at most {MAX_STATE_BYTES}"
    )]
    StateTooLarge { bytes: usize },
    #[error("the hook returned something a room record cannot hold: {0}")]
    Unrepresentable(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builder_patches_validate_to_their_fields() {
        let valid = Patch::empty()
            .state(json!({"a": 1}))
            .joinable(false)
            .finished(true)
            .validate()
            .unwrap();
        assert_eq!(valid.state, Some(json!({"a": 1})));
        assert_eq!(valid.joinable, Some(false));
        assert_eq!(valid.finished, Some(true));
    }

    #[test]
    fn empty_patch_changes_nothing() {
        assert_eq!(Patch::empty().validate().unwrap(), ValidPatch::default());
    }

    #[test]
    fn unknown_keys_are_rejected_by_name() {
        let err = Patch::from_json(json!({"state": {}, "score": 3}))
            .unwrap()
            .validate()
            .unwrap_err();
        assert_eq!(err, PatchError::UnknownKey("score".into()));
        assert!(err.to_string().contains("`score`"));
    }

    #[test]
    fn wrongly_typed_flags_are_rejected() {
        let err = Patch::from_json(json!({"finished": "yes"}))
            .unwrap()
            .validate()
            .unwrap_err();
        assert!(
            matches!(err, PatchError::NotABool { ref key, found: "a string" } if key == "finished")
        );
    }

    #[test]
    fn oversized_states_are_rejected_with_their_size() {
        let big = json!({"s": "x".repeat(MAX_STATE_BYTES)});
        let err = Patch::empty().state(big).validate().unwrap_err();
        assert_eq!(
            err,
            PatchError::StateTooLarge {
                bytes: MAX_STATE_BYTES + 8
            }
        );
        let fits = json!({"s": "x".repeat(MAX_STATE_BYTES - 8)});
        assert!(Patch::empty().state(fits).validate().is_ok());
    }

    #[test]
    fn deadlines_are_stored_in_utc_to_the_millisecond_or_refused() {
        let valid = Patch::from_json(json!({"triggerTimeoutAt": "2026-11-22T12:00:00+02:00"}))
            .unwrap()
            .validate()
            .unwrap();
        assert_eq!(
            valid.trigger_timeout_at,
            Some(Timestamp::parse("2026-11-22T10:00:00.000Z"))
        );
        let cleared = Patch::from_json(json!({"triggerTimeoutAt": null}))
            .unwrap()
            .validate()
            .unwrap();
        assert_eq!(cleared.trigger_timeout_at, Some(None));
        for bad in [json!(5), json!("tomorrow"), json!("0200-01-01T00:00:00Z")] {
            let err = Patch::from_json(json!({"triggerTimeoutAt": bad}))
                .unwrap()
                .validate()
                .unwrap_err();
            assert!(matches!(err, PatchError::NotATime(_)), "{err}");
        }
    }

    #[test]
    fn non_objects_are_not_patches() {
        assert_eq!(
            Patch::from_json(json!([1])).unwrap_err(),
            PatchError::NotAnObject("an array")
        );
    }
}
