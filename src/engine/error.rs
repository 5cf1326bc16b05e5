use crate::frontend::FrontendError;
use crate::game::{at_line, GameError, Hook, HookError, PatchError};
use crate::store::{StorageFault, StoreError};

/// Why an action on a room was not applied. Whatever the variant, nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("there is no room with that id")]
    RoomNotFound,
    #[error("there is no game `{0}`")]
    GameNotFound(String),
    #[error("this server no longer hosts the game `{0}` this room plays")]
    GameUnavailable(String),
    #[error("there is no version {version} of the game `{game}`")]
    GameVersionNotFound { game: String, version: i64 },
    #[error("{}", frontend_missing(game, *version))]
    FrontendNotFound { game: String, version: Option<i64> },
    #[error("version {version} of the game `{game}` has no file `{path}` in its frontend")]
    FrontendFileNotFound {
        game: String,
        version: i64,
        path: String,
    },
    #[error("the frontend cannot be published: {0}")]
    InvalidFrontend(#[from] FrontendError),
    #[error("`{0}` is a built-in game; it has no uploaded source and cannot be replaced")]
    GameIsBuiltin(String),
    #[error("the game `{0}` belongs to another player; only its owner can publish it")]
    NotTheOwner(String),
    #[error("only the owner of an uploaded game may read its logs, and `{0}` is not yours")]
    LogsNotYours(String),
    #[error("the game's code cannot be hosted: {message}{}", at_line(*line))]
    InvalidGameCode { message: String, line: Option<u32> },
    #[error("{0}")]
    InvalidGameSettings(String),
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
    #[error("you have no session with that id that is still signed in")]
    SessionNotFound,
    #[error("that sign-in code is not valid: codes work once, for ten minutes")]
    InvalidCode,
    #[error("you have {0} sign-in codes that work already: use one, or wait until one expires (codes work for ten minutes)")]
    TooManyCodes(i64),
    #[error("the name and password do not match a player")]
    InvalidCredentials,
    #[error("{0}")]
    InvalidPassword(String),
    #[error("too many sign-ins are being checked right now; try again in a moment")]
    SignInBusy,
    #[error("the seats are held for {players} until {until}, who played the last game here and were offered a rematch")]
    SeatHeld { players: String, until: String },
    #[error("there is no rematch offered to you in this room")]
    NoRematchOffer,
    #[error("{0}")]
    CannotClaim(&'static str),
    #[error("the room had a version less than the claim period ago; it can be claimed from {at} if nothing happens before")]
    ClaimTooEarly { at: String },
    #[error("only an admin may do this")]
    NotAdmin,
    #[error("publishing games on this server is open to {0} only")]
    UploadsRestricted(&'static str),
    #[error("this player is suspended: {0}")]
    PlayerSuspended(String),
    #[error("there is no player with that id")]
    PlayerNotFound,
    #[error("the username `{0}` is taken")]
    UsernameTaken(String),
    #[error("the game `{0}` was unpublished by an admin: it opens no new rooms")]
    GameUnpublished(String),
    #[error("the room is changing too fast; try again")]
    Contention,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What kind of refusal or failure an [`EngineError`] is, for a caller to put in its own terms
/// (the API gives each an HTTP status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    NotFound,
    /// The credentials given do not sign anyone in.
    Unauthorized,
    Forbidden,
    /// The room or game is not in a state that allows it.
    Conflict,
    /// Understood, and refused for what it says.
    Unprocessable,
    /// The version pinned is not the room's.
    PreconditionFailed,
    /// Passes by itself: try again later.
    Unavailable,
    /// The game's own code failed.
    GameFault,
    Internal,
}

impl EngineError {
    /// The stable, documented name of the problem.
    pub fn code(&self) -> &'static str {
        self.classify().1
    }

    pub fn kind(&self) -> ErrorKind {
        self.classify().0
    }

    /// The kind and code of every error, in one match so the two never drift apart.
    fn classify(&self) -> (ErrorKind, &'static str) {
        use ErrorKind as K;
        match self {
            EngineError::RoomNotFound => (K::NotFound, "room_not_found"),
            EngineError::GameNotFound(_) => (K::NotFound, "game_not_found"),
            EngineError::GameUnavailable(_) => (K::Unavailable, "game_unavailable"),
            EngineError::GameVersionNotFound { .. } => (K::NotFound, "game_version_not_found"),
            EngineError::FrontendNotFound { .. } => (K::NotFound, "frontend_not_found"),
            EngineError::FrontendFileNotFound { .. } => (K::NotFound, "frontend_file_not_found"),
            EngineError::InvalidFrontend(_) => (K::Unprocessable, "invalid_frontend"),
            EngineError::GameIsBuiltin(_) => (K::Conflict, "game_is_builtin"),
            EngineError::NotTheOwner(_) | EngineError::LogsNotYours(_) => {
                (K::Forbidden, "not_the_owner")
            }
            EngineError::InvalidGameCode { .. } => (K::Unprocessable, "invalid_game_code"),
            EngineError::InvalidGameSettings(_) => (K::Unprocessable, "invalid_game_settings"),
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
            EngineError::SessionNotFound => (K::NotFound, "session_not_found"),
            EngineError::InvalidCode => (K::Unauthorized, "invalid_code"),
            EngineError::TooManyCodes(_) => (K::Conflict, "too_many_codes"),
            EngineError::InvalidCredentials => (K::Unauthorized, "invalid_credentials"),
            EngineError::InvalidPassword(_) => (K::Unprocessable, "invalid_password"),
            EngineError::SignInBusy => (K::Unavailable, "sign_in_busy"),
            EngineError::SeatHeld { .. } => (K::Conflict, "seat_held"),
            EngineError::NoRematchOffer => (K::Conflict, "no_rematch_offer"),
            EngineError::CannotClaim(_) => (K::Conflict, "cannot_claim"),
            EngineError::ClaimTooEarly { .. } => (K::Conflict, "claim_too_early"),
            EngineError::NotAdmin => (K::Forbidden, "not_admin"),
            EngineError::UploadsRestricted(_) => (K::Forbidden, "uploads_restricted"),
            EngineError::PlayerSuspended(_) => (K::Forbidden, "player_suspended"),
            EngineError::PlayerNotFound => (K::NotFound, "player_not_found"),
            EngineError::UsernameTaken(_) => (K::Conflict, "username_taken"),
            EngineError::GameUnpublished(_) => (K::Conflict, "game_unpublished"),
            EngineError::Contention => (K::Unavailable, "contention"),
            EngineError::SandboxUnavailable(_) => (K::Unavailable, "sandbox_unavailable"),
            EngineError::Store(err) => match err.fault() {
                Some(StorageFault::Busy) => (K::Unavailable, "storage_busy"),
                Some(StorageFault::Unavailable) => (K::Unavailable, "storage_unavailable"),
                None => (K::Internal, "internal"),
            },
        }
    }

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

fn frontend_missing(game: &str, version: Option<i64>) -> String {
    match version {
        Some(version) => {
            format!("version {version} of the game `{game}` has no frontend of its own")
        }
        None => format!("the built-in game `{game}` has no frontend of its own; the page draws it"),
    }
}
