//! An uploaded game: one published version of an author's JavaScript, behind the same
//! [`Game`] trait as the built-in games. Its hooks are calls into the sandbox pool.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::Value;

use super::game_log::GameLogSink;
use super::pool::{PoolError, SandboxPool};
use super::protocol::{LogLevel, LogLine, Outcome, SearchOptions};
use crate::domain::records::{now, GameLogLine};
use crate::game::{
    json_type, player_ids, to_move_of, winners_of, BoardGame, BotLevel, Capabilities, Game,
    GameError, GameInfo, Hook, HookError, HookResult, Patch, PlayerRef,
};

/// A playout that reaches this many moves without the game finishing counts as a draw.
const SEARCH_DEPTH: u32 = 200;

pub struct HostedGame {
    info: GameInfo,
    version: i64,
    /// Names this version in the sandbox processes' caches.
    key: String,
    source: Arc<str>,
    pool: SandboxPool,
    /// The optional hooks the source exports (checked when it was published).
    hooks: Capabilities,
    /// Its owner's log.
    logs: GameLogSink,
}

impl HostedGame {
    pub fn new(
        info: GameInfo,
        version: i64,
        source: Arc<str>,
        pool: SandboxPool,
        hooks: Capabilities,
        logs: GameLogSink,
    ) -> Self {
        Self {
            key: format!("{}@{version}", info.id),
            info,
            version,
            source,
            pool,
            hooks,
            logs,
        }
    }

    /// Runs `hook` with `args`, the JSON array of its arguments (the room's record last): its
    /// patch.
    fn call(&self, hook: Hook, args: Box<RawValue>, game: &BoardGame) -> HookResult {
        let value = self.call_raw(hook, args, game)?;
        Patch::from_json(value).map_err(|err| HookError::InvalidResult(err.to_string()))
    }

    /// Runs `hook`: the JSON value it returned, whatever it is.
    fn call_raw(
        &self,
        hook: Hook,
        args: Box<RawValue>,
        game: &BoardGame,
    ) -> Result<Value, HookError> {
        let outcome = self.pool.call(&self.key, &self.source, hook, args);
        self.value_of(hook, game, outcome, self.pool.limits().time)
    }

    /// The value a sandbox call (`what`, stopped after `time`) gave, its logs written to the
    /// server's log; or how it failed.
    fn value_of(
        &self,
        what: Hook,
        game: &BoardGame,
        outcome: Result<(Outcome, Vec<LogLine>), PoolError>,
        time: Duration,
    ) -> Result<Value, HookError> {
        let (outcome, logs) = outcome.map_err(|err| self.pool_fault(err, time))?;
        self.log(what, game, logs);
        let limit_ms = time.as_millis() as u64;
        match outcome {
            Outcome::Patch { patch } => Ok(patch),
            Outcome::Refused { reason, message } => Err(GameError::new(reason, message).into()),
            Outcome::Timeout => Err(HookError::Timeout { limit_ms }),
            Outcome::OutOfMemory { .. } => Err(HookError::OutOfMemory {
                limit_mib: (self.pool.limits().memory_bytes >> 20) as u64,
            }),
            Outcome::Crashed { message } => Err(HookError::Crashed(message)),
            Outcome::Failed { error, line } => Err(HookError::Failed { error, line }),
            Outcome::InvalidResult { message } => Err(HookError::InvalidResult(message)),
        }
    }

    fn pool_fault(&self, err: PoolError, time: Duration) -> HookError {
        match err {
            PoolError::Timeout => HookError::Timeout {
                limit_ms: time.as_millis() as u64,
            },
            PoolError::Died(status) => {
                HookError::Crashed(format!("the sandbox process running it died ({status})"))
            }
            PoolError::Unavailable(why) => HookError::Unavailable(why),
        }
    }

    /// What the hook logged, in the server's log, tagged with where it came from, and (but for
    /// a bot's search) in its owner's log.
    fn log(&self, hook: Hook, game: &BoardGame, logs: Vec<LogLine>) {
        for line in logs {
            let (id, version, room) = (&*self.info.id, self.version, game.room_id.as_str());
            let name = hook.name();
            match line.level {
                LogLevel::Error => {
                    tracing::error!(target: "game", game = id, version, room, hook = name, "{}", line.text)
                }
                LogLevel::Warn => {
                    tracing::warn!(target: "game", game = id, version, room, hook = name, "{}", line.text)
                }
                LogLevel::Info => {
                    tracing::info!(target: "game", game = id, version, room, hook = name, "{}", line.text)
                }
            }
            // A bot's search runs the hooks over positions that never happen: what they log
            // there would crowd out what happened in the game.
            if hook != Hook::BotSearch {
                self.keep(hook, game, line.level, line.text);
            }
        }
    }

    /// Adds a line to the owner's log.
    fn keep(&self, hook: Hook, game: &BoardGame, level: LogLevel, text: String) {
        let version = match hook.makes_a_version() {
            true => game.version + 1,
            false => game.version,
        };
        self.logs.record(GameLogLine {
            id: 0,
            game: self.info.id.to_string().into(),
            game_version: self.version,
            at: now(),
            room: game.room_id.clone(),
            version,
            hook,
            level,
            text,
        });
    }
}

/// Arguments as the JSON array a hook is called with, written in one pass; the room's record
/// comes last (the sandbox adds its `logger`).
fn arguments(args: &impl serde::Serialize) -> Box<RawValue> {
    serde_json::value::to_raw_value(args).expect("records always serialise")
}

impl Game for HostedGame {
    fn info(&self) -> GameInfo {
        self.info.clone()
    }

    fn capabilities(&self) -> Capabilities {
        self.hooks
    }

    fn hooks_wait(&self) -> bool {
        true
    }

    fn log_fault(&self, hook: Hook, game: &BoardGame, fault: &str) {
        self.keep(hook, game, LogLevel::Error, fault.to_owned());
    }

    fn on_room_start(&self, game: &BoardGame) -> HookResult {
        self.call(Hook::RoomStart, arguments(&(game,)), game)
    }

    fn on_player_join(&self, player: &PlayerRef, game: &BoardGame) -> HookResult {
        self.call(Hook::PlayerJoin, arguments(&(player, game)), game)
    }

    fn on_player_quit(&self, player: &PlayerRef, game: &BoardGame) -> HookResult {
        self.call(Hook::PlayerQuit, arguments(&(player, game)), game)
    }

    fn on_player_move(&self, player: &PlayerRef, mv: &Value, game: &BoardGame) -> HookResult {
        self.call(Hook::PlayerMove, arguments(&(player, mv, game)), game)
    }

    fn on_timeout(&self, game: &BoardGame) -> HookResult {
        self.call(Hook::Timeout, arguments(&(game,)), game)
    }

    fn on_player_view(
        &self,
        viewer: Option<&PlayerRef>,
        game: &BoardGame,
    ) -> Result<Value, HookError> {
        self.call_raw(Hook::PlayerView, arguments(&(viewer, game)), game)
    }

    /// What its `winners(roomState)` export answers, when it has one: a list of players or
    /// their ids.
    fn winners(&self, game: &BoardGame) -> Result<Vec<String>, HookError> {
        if !self.hooks.winners {
            return Ok(winners_of(&game.state));
        }
        match self.call_raw(Hook::Winners, arguments(&(game,)), game) {
            Ok(Value::Array(list)) => Ok(player_ids(&list)),
            Ok(other) => Err(HookError::InvalidResult(format!(
                "winners must return an array of player ids, not {}",
                json_type(&other)
            ))),
            // Throwing is a refusal to the sandbox; the transition makes it the fault it is.
            Err(fault) => Err(fault),
        }
    }

    /// What its `toMove(roomState)` export answers, when it has one: a list of players or
    /// their ids.
    fn to_move(&self, game: &BoardGame) -> Result<Vec<String>, HookError> {
        if !self.hooks.to_move {
            return Ok(to_move_of(&game.state, &game.players, game.joinable));
        }
        match self.call_raw(Hook::ToMove, arguments(&(game,)), game) {
            Ok(Value::Array(list)) => Ok(player_ids(&list)),
            Ok(other) => Err(HookError::InvalidResult(format!(
                "toMove must return an array of players or player ids, not {}",
                json_type(&other)
            ))),
            Err(fault) => Err(fault),
        }
    }

    /// The move a search over the game's own hooks chooses, in the sandbox: one call per
    /// decision, searching for at most `--bot-search-ms` and stopped outright at twice that
    /// (a playout in progress may finish). `None` when the bot has no move to make.
    fn bot_move(
        &self,
        level: BotLevel,
        bot: &PlayerRef,
        game: &BoardGame,
        seed: u64,
    ) -> Result<Option<Value>, HookError> {
        if !self.hooks.bots {
            return Ok(None);
        }
        let budget = self.pool.bot_search();
        let playouts = match level {
            BotLevel::Easy => 0,
            BotLevel::Medium => budget.medium_playouts,
            BotLevel::Hard => budget.hard_playouts,
        };
        let options = SearchOptions {
            seed: seed & 0xffff_ffff,
            level,
            playouts,
            depth: SEARCH_DEPTH,
            time_ms: budget.time.as_millis() as u64,
            stats: false,
        };
        let time = budget.time.saturating_mul(2);
        let outcome = self.pool.search(
            &self.key,
            &self.source,
            arguments(game),
            &bot.id,
            options,
            time,
        );
        let chosen = self.value_of(Hook::BotSearch, game, outcome, time)?;
        Ok((!chosen.is_null()).then_some(chosen))
    }
}
