use serde_json::{json, Map, Value};

use crate::catalog::CatalogError;
use crate::domain::time::Timestamp;
use crate::game::{at_line, GameError, Hook, HookError, PatchError};
use crate::problem::{ErrorKind, Problem};
use crate::store::StoreError;

/// Why an action on a room was not applied. Whatever the variant, nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("there is no room with that id")]
    RoomNotFound,
    #[error("you are not a player of this room")]
    NotAPlayer,
    #[error("the room is not open for joining")]
    RoomNotJoinable,
    #[error("the game in this room is finished")]
    RoomFinished,
    #[error("you are already a player of this room")]
    AlreadyAPlayer,
    #[error("the room has the most players it can hold ({0})")]
    RoomFull(usize),
    #[error("the game in this room is not finished yet")]
    RoomNotFinished,
    #[error("the game `{0}` has no computer opponents")]
    BotsUnsupported(String),
    #[error("the game `{0}` has no `onTimeout` hook, so its rooms cannot have a clock")]
    ClockUnsupported(String),
    #[error("the room is at version {current}, not the version you pinned")]
    VersionMismatch { current: i64 },
    #[error("the room is only at version {current}; resume after a version it has")]
    VersionNotYetCommitted { current: i64 },
    #[error("{0}")]
    GameRefused(GameError),
    #[error("the game's {hook} hook returned an invalid patch: {error}")]
    InvalidPatch { hook: Hook, error: PatchError },
    #[error("the game's {hook} hook crashed: {message}")]
    HookCrashed { hook: Hook, message: String },
    #[error("the game's {hook} hook has a bug: {error}{}", at_line(*line))]
    HookFailed {
        hook: Hook,
        error: String,
        line: Option<u32>,
    },
    #[error("the game's {hook} hook ran past its time limit of {limit_ms} ms and was stopped")]
    HookTimeout { hook: Hook, limit_ms: u64 },
    #[error("the game's {hook} hook ran out of memory (its limit is {limit_mib} MiB)")]
    HookOutOfMemory { hook: Hook, limit_mib: u64 },
    #[error("games cannot be run right now: {0}")]
    SandboxUnavailable(String),
    #[error("the room has no deadline to fire")]
    NoDeadline,
    #[error("the seats are held for {players} until {until}, who played the last game here and were offered a rematch")]
    SeatHeld { players: String, until: Timestamp },
    #[error("there is no rematch offered to you in this room")]
    NoRematchOffer,
    #[error("{0}")]
    CannotClaim(&'static str),
    #[error("the room had a version less than the claim period ago; it can be claimed from {at} if nothing happens before")]
    ClaimTooEarly { at: Timestamp },
    #[error("the room is changing too fast; try again")]
    Contention,
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Problem for EngineError {
    fn wrapped(&self) -> Option<&dyn Problem> {
        match self {
            EngineError::Catalog(err) => Some(err),
            EngineError::Store(err) => Some(err),
            _ => None,
        }
    }

    fn classify(&self) -> (ErrorKind, &'static str) {
        use ErrorKind as K;
        match self {
            EngineError::RoomNotFound => (K::NotFound, "room_not_found"),
            EngineError::NotAPlayer => (K::Forbidden, "not_a_player"),
            EngineError::RoomNotJoinable => (K::Conflict, "room_not_joinable"),
            EngineError::RoomFinished => (K::Conflict, "room_finished"),
            EngineError::RoomNotFinished => (K::Conflict, "room_not_finished"),
            EngineError::AlreadyAPlayer => (K::Conflict, "already_a_player"),
            EngineError::RoomFull(_) => (K::Conflict, "room_full"),
            EngineError::BotsUnsupported(_) => (K::Unprocessable, "bots_unsupported"),
            EngineError::ClockUnsupported(_) => (K::Unprocessable, "clock_unsupported"),
            EngineError::VersionMismatch { .. } => (K::PreconditionFailed, "version_mismatch"),
            EngineError::VersionNotYetCommitted { .. } => (K::Conflict, "unknown_version"),
            EngineError::GameRefused(_) => (K::Unprocessable, "game_refused"),
            EngineError::InvalidPatch { .. } => (K::GameFault, "invalid_patch"),
            EngineError::HookCrashed { .. } => (K::GameFault, "hook_crashed"),
            EngineError::HookFailed { .. } => (K::GameFault, "hook_failed"),
            EngineError::HookTimeout { .. } => (K::GameFault, "hook_timeout"),
            EngineError::HookOutOfMemory { .. } => (K::GameFault, "hook_out_of_memory"),
            EngineError::NoDeadline => (K::Conflict, "no_deadline"),
            EngineError::SeatHeld { .. } => (K::Conflict, "seat_held"),
            EngineError::NoRematchOffer => (K::Conflict, "no_rematch_offer"),
            EngineError::CannotClaim(_) => (K::Conflict, "cannot_claim"),
            EngineError::ClaimTooEarly { .. } => (K::Conflict, "claim_too_early"),
            EngineError::Contention => (K::Unavailable, "contention"),
            EngineError::SandboxUnavailable(_) => (K::Unavailable, "sandbox_unavailable"),
            EngineError::Catalog(err) => err.classify(),
            EngineError::Store(err) => err.classify(),
        }
    }

    fn extensions(&self, extra: &mut Map<String, Value>) {
        match self {
            EngineError::VersionMismatch { current }
            | EngineError::VersionNotYetCommitted { current } => {
                extra.insert("currentVersion".into(), json!(current));
            }
            EngineError::GameRefused(refusal) => {
                extra.insert("reason".into(), json!(refusal.reason));
            }
            EngineError::HookFailed {
                line: Some(line), ..
            } => {
                extra.insert("line".into(), json!(line));
            }
            _ => {}
        }
    }

    fn retry_after(&self) -> Option<u64> {
        matches!(
            self,
            EngineError::Contention | EngineError::SandboxUnavailable(_)
        )
        .then_some(1)
    }

    fn public_detail(&self) -> Option<String> {
        match self {
            EngineError::SandboxUnavailable(_) => {
                Some("uploaded games cannot be run right now; try again later".into())
            }
            EngineError::HookCrashed { .. }
            | EngineError::HookTimeout { .. }
            | EngineError::HookOutOfMemory { .. }
            | EngineError::InvalidPatch { .. }
                if self.hook() == Some(Hook::PlayerView) =>
            {
                // The view is made after any action was committed: the action stands.
                Some(format!(
                    "{self}; the room cannot be shown, and no state is sent in its place"
                ))
            }
            EngineError::HookCrashed { .. }
            | EngineError::HookTimeout { .. }
            | EngineError::HookOutOfMemory { .. }
            | EngineError::InvalidPatch { .. } => Some(format!("{self}; the room is unchanged")),
            _ => None,
        }
    }
}

impl EngineError {
    /// A refusal that another version of the room might not give.
    pub fn depends_on_the_room(&self) -> bool {
        matches!(
            self,
            EngineError::NotAPlayer
                | EngineError::RoomNotJoinable
                | EngineError::RoomFinished
                | EngineError::AlreadyAPlayer
                | EngineError::RoomFull(_)
                | EngineError::RoomNotFinished
                | EngineError::SeatHeld { .. }
                | EngineError::NoRematchOffer
                | EngineError::GameRefused(_)
                | EngineError::VersionMismatch { .. }
        )
    }

    /// Whether a hook failed through the game's own code, or (`onTimeout` has no player to
    /// refuse) refused: running it again on the same room would do the same.
    pub fn is_game_fault(&self) -> bool {
        matches!(
            self,
            EngineError::GameRefused(_)
                | EngineError::InvalidPatch { .. }
                | EngineError::HookCrashed { .. }
                | EngineError::HookFailed { .. }
                | EngineError::HookTimeout { .. }
                | EngineError::HookOutOfMemory { .. }
        )
    }

    /// The hook a game fault came from, if this is one.
    pub fn hook(&self) -> Option<Hook> {
        match self {
            EngineError::InvalidPatch { hook, .. }
            | EngineError::HookCrashed { hook, .. }
            | EngineError::HookFailed { hook, .. }
            | EngineError::HookTimeout { hook, .. }
            | EngineError::HookOutOfMemory { hook, .. } => Some(*hook),
            _ => None,
        }
    }

    /// The error for a hook that failed through a fault of the game's code.
    pub fn from_hook_fault(hook: Hook, fault: HookError) -> Self {
        match fault {
            HookError::Refused(refusal) => EngineError::GameRefused(refusal),
            HookError::Timeout { limit_ms } => EngineError::HookTimeout { hook, limit_ms },
            HookError::OutOfMemory { limit_mib } => {
                EngineError::HookOutOfMemory { hook, limit_mib }
            }
            HookError::Crashed(message) => EngineError::HookCrashed { hook, message },
            HookError::Failed { error, line } => EngineError::HookFailed { hook, error, line },
            HookError::InvalidResult(message) => EngineError::InvalidPatch {
                hook,
                error: PatchError::Unrepresentable(message),
            },
            HookError::Unavailable(why) => EngineError::SandboxUnavailable(why),
        }
    }
}
