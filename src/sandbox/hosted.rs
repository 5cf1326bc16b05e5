//! An uploaded game: one published version of an author's JavaScript, behind the same
//! [`Game`] trait as the built-in games. Its hooks are calls into the sandbox pool.

use std::sync::Arc;

use serde_json::Value;

use super::pool::{PoolError, SandboxPool};
use super::protocol::{LogLine, Outcome};
use super::quickjs::{ON_PLAYER_VIEW, ON_TIMEOUT};
use crate::game::{
    BoardGame, BotLevel, Game, GameError, GameInfo, HookError, HookResult, OptionalHooks, Patch,
    PlayerRef,
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
    hooks: OptionalHooks,
}

impl HostedGame {
    pub fn new(
        info: GameInfo,
        version: i64,
        source: Arc<str>,
        pool: SandboxPool,
        hooks: OptionalHooks,
    ) -> Self {
        Self {
            key: format!("{}@{version}", info.id),
            info,
            version,
            source,
            pool,
            hooks,
        }
    }

    /// Runs `hook` with `args`, the JSON array of its arguments (the room's record last): its
    /// patch.
    fn call(&self, hook: &str, args: String, game: &BoardGame) -> HookResult {
        let value = self.call_raw(hook, args, game)?;
        Patch::from_json(value).map_err(|err| HookError::InvalidResult(err.to_string()))
    }

    /// Runs `hook`: the JSON value it returned, whatever it is.
    fn call_raw(&self, hook: &str, args: String, game: &BoardGame) -> Result<Value, HookError> {
        let (outcome, logs) = self
            .pool
            .call(&self.key, &self.source, hook, args)
            .map_err(|err| self.pool_fault(err))?;
        self.log(hook, game, logs);
        let limits = self.pool.limits();
        match outcome {
            Outcome::Patch { patch } => Ok(patch),
            Outcome::Refused { reason, message } => Err(GameError::new(reason, message).into()),
            Outcome::Timeout => Err(HookError::Timeout {
                limit_ms: limits.time.as_millis() as u64,
            }),
            Outcome::OutOfMemory { .. } => Err(HookError::OutOfMemory {
                limit_mib: (limits.memory_bytes >> 20) as u64,
            }),
            Outcome::Crashed { message } => Err(HookError::Crashed(message)),
            Outcome::InvalidResult { message } => Err(HookError::InvalidResult(message)),
        }
    }

    fn pool_fault(&self, err: PoolError) -> HookError {
        match err {
            PoolError::Timeout => HookError::Timeout {
                limit_ms: self.pool.limits().time.as_millis() as u64,
            },
            PoolError::Died(status) => {
                HookError::Crashed(format!("the sandbox process running it died ({status})"))
            }
            PoolError::Unavailable(why) => HookError::Unavailable(why),
        }
    }

    /// What the hook logged, in the server's log, tagged with where it came from.
    fn log(&self, hook: &str, game: &BoardGame, logs: Vec<LogLine>) {
        for line in logs {
            let (id, version, room) = (&*self.info.id, self.version, &game.room_id);
            match line.level.as_str() {
                "error" => {
                    tracing::error!(target: "game", game = id, version, room, hook, "{}", line.text)
                }
                "warn" => {
                    tracing::warn!(target: "game", game = id, version, room, hook, "{}", line.text)
                }
                _ => {
                    tracing::info!(target: "game", game = id, version, room, hook, "{}", line.text)
                }
            }
        }
    }
}

/// Arguments as the JSON array a hook is called with, written in one pass; the room's record
/// comes last (the sandbox adds its `logger`).
fn arguments(args: &impl serde::Serialize) -> String {
    serde_json::to_string(args).expect("records always serialise")
}

impl Game for HostedGame {
    fn info(&self) -> GameInfo {
        self.info.clone()
    }

    fn hooks_wait(&self) -> bool {
        true
    }

    fn on_room_start(&self, game: &BoardGame) -> HookResult {
        self.call("onRoomStart", arguments(&(game,)), game)
    }

    fn on_player_join(&self, player: &PlayerRef, game: &BoardGame) -> HookResult {
        self.call("onPlayerJoin", arguments(&(player, game)), game)
    }

    fn on_player_quit(&self, player: &PlayerRef, game: &BoardGame) -> HookResult {
        self.call("onPlayerQuit", arguments(&(player, game)), game)
    }

    fn on_player_move(&self, player: &PlayerRef, mv: &Value, game: &BoardGame) -> HookResult {
        self.call("onPlayerMove", arguments(&(player, mv, game)), game)
    }

    fn on_timeout(&self, game: &BoardGame) -> HookResult {
        self.call(ON_TIMEOUT, arguments(&(game,)), game)
    }

    fn handles_timeouts(&self) -> bool {
        self.hooks.on_timeout
    }

    fn on_player_view(
        &self,
        viewer: Option<&PlayerRef>,
        game: &BoardGame,
    ) -> Result<Value, HookError> {
        self.call_raw(ON_PLAYER_VIEW, arguments(&(viewer, game)), game)
    }

    fn has_player_view(&self) -> bool {
        self.hooks.on_player_view
    }

    /// The move a search over the game's own hooks chooses, in the sandbox (one call per
    /// decision, under the bot search's own time limit); `None` when the bot has no move, or
    /// when the search failed (logged: the room stays as it is, and nothing retries).
    fn bot_move(
        &self,
        level: BotLevel,
        bot: &PlayerRef,
        game: &BoardGame,
        seed: u64,
    ) -> Option<Value> {
        if !self.hooks.enumerate_moves {
            return None;
        }
        let budget = self.pool.bot_search();
        let playouts = match level {
            BotLevel::Easy => 0,
            BotLevel::Medium => budget.bot_medium_playouts,
            BotLevel::Hard => budget.bot_hard_playouts,
        };
        let options = serde_json::json!({
            "seed": seed & 0xffff_ffff,
            "level": level.as_str(),
            "playouts": playouts,
            "depth": SEARCH_DEPTH,
        });
        let time = std::time::Duration::from_millis(budget.bot_search_ms);
        let outcome = self.pool.search(
            &self.key,
            &self.source,
            arguments(game),
            &bot.id,
            options.to_string(),
            time,
        );
        match outcome {
            Ok((Outcome::Patch { patch }, logs)) => {
                self.log("search", game, logs);
                (!patch.is_null()).then_some(patch)
            }
            Ok((other, logs)) => {
                self.log("search", game, logs);
                tracing::error!(game = %self.info.id, version = self.version, room = %game.room_id, level = level.as_str(), outcome = ?other, "a bot's search failed");
                None
            }
            Err(err) => {
                tracing::error!(game = %self.info.id, room = %game.room_id, error = %err, "a bot's search could not run");
                None
            }
        }
    }
}
