//! The contract between the platform and a game: four hooks that see a copy of the room and
//! answer with a partial patch. Games know nothing of HTTP or SQL, and the trait is object-safe
//! so natively compiled games and sandboxed uploaded ones can sit behind the same `dyn Game`.
//!
//! One stop in the life of a move: `docs/internals.md`.

mod hook;
mod outcome;
mod patch;
mod registry;

pub use hook::{Hook, LogLevel};
pub use outcome::{player_ids, to_move_of, winners_of};
pub use patch::{json_type, Patch, PatchError, ValidPatch, MAX_STATE_BYTES};
pub use registry::GameRegistry;

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// No room holds more players than this, whatever its game says.
pub const MAX_PLAYERS: usize = 50;

/// A player as hooks and clients see one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerRef {
    pub id: crate::domain::ids::PlayerId,
    pub username: String,
}

/// What `onRoomStart` is told about the room being created (and every other hook too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoomStartContext {
    pub private: bool,
    /// The clock the room was created with, for a game that times its players.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<Clock>,
}

/// A room's clock: how long the player to move has, as games that time their players read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Clock {
    pub move_seconds: u32,
}

impl Clock {
    /// The longest a move may be given: fourteen days, for correspondence games (a move made
    /// sooner costs nothing: there is no bank of time to draw on).
    pub const MAX_MOVE_SECONDS: u32 = 14 * 86_400;
}

/// The persisted record a hook sees: a copy, so a hook cannot change the stored room.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BoardGame {
    /// The room this record belongs to, for a game's logs; not part of what a hook is shown.
    #[serde(skip)]
    pub room_id: crate::domain::ids::RoomId,
    /// Shared with the room's own list (and its versions'): never changed in place.
    pub players: Arc<Vec<PlayerRef>>,
    pub version: i64,
    pub joinable: bool,
    pub finished: bool,
    pub state: Arc<Value>,
    /// When `onTimeout` runs next (RFC 3339, UTC), if a hook set it.
    pub trigger_timeout_at: Option<crate::domain::time::Timestamp>,
    pub room_start_context: RoomStartContext,
    /// The time of the action the hook runs for, for native games that set deadlines (a
    /// hosted game reads its own clock); not part of what a hook is shown.
    #[serde(skip)]
    pub now: chrono::DateTime<chrono::Utc>,
}

/// What the lobby shows about a game. Built-in games describe themselves with constants;
/// uploaded games with what their author sent, hence the `Cow`s.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GameInfo {
    pub id: Cow<'static, str>,
    pub name: Cow<'static, str>,
    pub min_players: usize,
    pub max_players: usize,
    pub description: Cow<'static, str>,
}

/// What a game supports beyond the four hooks, stated once ([`Game::capabilities`]): the
/// engine, the listings and the page all read it from here. An uploaded game supports what its
/// source exports; it is stored with each version.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// `onTimeout`: the game may set deadlines, and its rooms may have a clock.
    #[serde(rename = "onTimeout")]
    pub timeouts: bool,
    /// `onPlayerView`: what a room shows depends on who looks.
    #[serde(rename = "onPlayerView")]
    pub player_view: bool,
    /// Computer opponents can be seated (an uploaded game: it exports `enumerateMoves`, and
    /// the platform searches its own hooks).
    pub bots: bool,
    /// `winners`: the game says who won a finished room (otherwise its state's `winner` or
    /// `winners` does, see [`winners_of`]).
    pub winners: bool,
    /// `toMove`: the game says whose move it is in a room in play (otherwise its state's
    /// `plrToMoveIndex` does, see [`to_move_of`]).
    #[serde(default)]
    pub to_move: bool,
}

/// How well a computer opponent plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BotLevel {
    /// A random legal move.
    Easy,
    /// Wins if it can, else blocks, else plays at random.
    Medium,
    /// The strongest play the game offers.
    Hard,
}

impl BotLevel {
    pub const ALL: [BotLevel; 3] = [BotLevel::Easy, BotLevel::Medium, BotLevel::Hard];

    pub fn as_str(self) -> &'static str {
        match self {
            BotLevel::Easy => "easy",
            BotLevel::Medium => "medium",
            BotLevel::Hard => "hard",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|level| level.as_str() == s)
    }
}

/// A game refusing an action. `reason` is a stable, machine-readable name
/// (`not_your_turn`, `cell_taken`, …); `message` is for people.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct GameError {
    pub reason: String,
    pub message: String,
}

impl GameError {
    pub fn new(reason: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            message: message.into(),
        }
    }
}

/// Why a hook produced no patch. Only a refusal is the game's answer to the action; every
/// other variant is a fault in the game's code, reported as such and changing nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookError {
    /// The game said no (an uploaded game: the hook threw).
    #[error(transparent)]
    Refused(#[from] GameError),
    /// The hook ran past its time limit and was stopped.
    #[error("the hook ran past its time limit of {limit_ms} ms")]
    Timeout { limit_ms: u64 },
    /// The hook needed more memory than its limit allows.
    #[error("the hook ran out of memory (the limit is {limit_mib} MiB)")]
    OutOfMemory { limit_mib: u64 },
    /// The hook failed in some other way: a panic, a stack overflow, an engine failure.
    #[error("{0}")]
    Crashed(String),
    /// The game's code went wrong where the engine raised an error (a `TypeError`,
    /// `ReferenceError`, `RangeError` or `SyntaxError` it did not make itself), at `line` of
    /// its source when known.
    #[error("{error}{}", at_line(*line))]
    Failed { error: String, line: Option<u32> },
    /// The hook returned something that is not a patch a record can hold (not JSON, cyclic…).
    #[error("{0}")]
    InvalidResult(String),
    /// The hook could not be run at all, through no fault of the game (no sandbox process
    /// could be started).
    #[error("{0}")]
    Unavailable(String),
}

pub type HookResult = Result<Patch, HookError>;

/// ` (line N)` after a message about a game's source, when the line is known.
pub fn at_line(line: Option<u32>) -> String {
    line.map(|l| format!(" (line {l})")).unwrap_or_default()
}

/// A turn-based game written as four lifecycle hooks. Every hook is a pure function of its
/// arguments: no I/O, no clock, no shared mutable state.
pub trait Game: Send + Sync {
    fn info(&self) -> GameInfo;

    /// What the game supports beyond the four hooks. A patch that sets a deadline is refused
    /// without `timeouts`; `on_player_view` is called only with `player_view`; `bot_move`
    /// only with `bots`.
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    /// Runs when a room is created (and again when a finished room is reset). `game` is the
    /// record before any hook: no players, `state` null, joinable, unfinished.
    fn on_room_start(&self, game: &BoardGame) -> HookResult;

    /// Runs after `player` has been appended to `game.players`.
    fn on_player_join(&self, player: &PlayerRef, game: &BoardGame) -> HookResult;

    /// Runs after `player` has been removed from `game.players`.
    fn on_player_quit(&self, player: &PlayerRef, game: &BoardGame) -> HookResult;

    /// Runs when a current player of an unfinished room sends `mv`, any JSON value.
    fn on_player_move(&self, player: &PlayerRef, mv: &Value, game: &BoardGame) -> HookResult;

    /// Runs once when the room's `triggerTimeoutAt` has passed and nothing changed the room
    /// since that version. The deadline is used up: the patch may set a new one.
    fn on_timeout(&self, game: &BoardGame) -> HookResult {
        let _ = game;
        Ok(Patch::empty())
    }

    /// What `viewer` (a player seated in the room now or before, or `None` for anyone else)
    /// may see of `game.state`. Never stored: every response, history entry and stream event
    /// about the room shows this instead of the state. By default, all of it.
    fn on_player_view(
        &self,
        viewer: Option<&PlayerRef>,
        game: &BoardGame,
    ) -> Result<Value, HookError> {
        let _ = viewer;
        Ok(Value::clone(&game.state))
    }

    /// Who won `game`, a room that has just finished (the record of its finishing version):
    /// the ids of the winners, none for a draw. Read once, for the room's score and, when it
    /// is rated, its players' ratings. By default what the state names ([`winners_of`]).
    fn winners(&self, game: &BoardGame) -> Result<Vec<String>, HookError> {
        Ok(winners_of(&game.state))
    }

    /// Whose move it is in `game`, a room in play (the record of a version just made): the
    /// players, or their ids, whose move the game waits on; none when it waits on nobody.
    /// Asked once per version, for the turns inbox and the notices of a turn. By default what
    /// the state's `plrToMoveIndex` names ([`to_move_of`]).
    fn to_move(&self, game: &BoardGame) -> Result<Vec<String>, HookError> {
        Ok(to_move_of(&game.state, &game.players, game.joinable))
    }

    /// A move as the game expects it, for generic clients to suggest (a move box's
    /// placeholder); `None` when the game gives none.
    fn move_example(&self) -> Option<Value> {
        None
    }

    /// Whether the hooks wait on something outside this thread (an uploaded game's sandbox).
    /// The engine then calls them on the sandbox's hook threads, so that waiting never holds
    /// up the threads that serve requests; native hooks are pure computation and run in place.
    fn hooks_wait(&self) -> bool {
        false
    }

    /// A hook failed on `game` through the game's own code (`fault` says how): an uploaded
    /// game keeps it in its owner's log, beside what its hooks logged. Built-in games have no
    /// owner to tell; the server's log has it.
    fn log_fault(&self, hook: Hook, game: &BoardGame, fault: &str) {
        let _ = (hook, game, fault);
    }

    /// The move a computer opponent seated as `bot` makes now, or `None` when it is not its
    /// turn. Pure like the hooks: all randomness comes from `seed`. `Err` when choosing failed
    /// through the game's code (an uploaded game's exports), as a hook would. Games without
    /// bots (see [`Capabilities::bots`]) keep the default.
    fn bot_move(
        &self,
        level: BotLevel,
        bot: &PlayerRef,
        game: &BoardGame,
        seed: u64,
    ) -> Result<Option<Value>, HookError> {
        let _ = (level, bot, game, seed);
        Ok(None)
    }
}
