//! Computer opponents: one player account per level, and the loop that lets seated bots move
//! when it is their turn. A bot's move is an ordinary `onPlayerMove`, pinned to the version the
//! bot looked at, so it can never land on a room that changed under it.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use super::{Action, Engine, EngineError, Precondition};
use crate::domain::ids::new_id;
use crate::domain::records::{now, Room};
use crate::game::{BotLevel, Hook, PlayerRef};
use crate::metrics::Exposition;
use crate::problem::Problem;
use crate::store::Store;

/// More bot moves in a row than any game here needs; a guard against two bots playing forever.
const MAX_BOT_MOVES: usize = 64;

pub struct BotRoster {
    accounts: HashMap<BotLevel, PlayerRef>,
    seed: u64,
    /// Bot moves that failed through the game's code, by game and problem code.
    faults: Mutex<BTreeMap<(String, &'static str), u64>>,
}

impl BotRoster {
    /// Finds (creating on first start) the account of each bot level.
    pub async fn load(store: &Store, seed: u64) -> Result<Self, EngineError> {
        let mut accounts = HashMap::new();
        for level in BotLevel::ALL {
            let username = format!("{} bot", level.as_str());
            let account = store
                .bot_account(level, &new_id(), &username, now())
                .await?;
            accounts.insert(level, account);
        }
        Ok(Self {
            accounts,
            seed,
            faults: Mutex::default(),
        })
    }

    /// Logs a bot move that failed, once, and counts it. The code is the one a client would
    /// be given for the same fault of a hook.
    fn fault(&self, room: &Room, bot: &PlayerRef, error: EngineError) {
        tracing::error!(room = %room.id, game = %room.game, version = room.version, bot = %bot.username, error = %error, "a bot could not move; the room is left as it was until someone else acts");
        let code = error.code();
        let mut faults = self.faults.lock().unwrap_or_else(|e| e.into_inner());
        *faults.entry((room.game.to_string(), code)).or_default() += 1;
    }

    pub fn render_metrics(&self, out: &mut Exposition) {
        const NAME: &str = "turnhouse_bot_faults_total";
        out.family(
            NAME,
            "counter",
            "Bot moves that failed through the game's code (its enumerateMoves, winners or \
             onPlayerMove), by game and problem code.",
        );
        let faults = self.faults.lock().unwrap_or_else(|e| e.into_inner());
        for ((game, code), count) in faults.iter() {
            out.sample(NAME, &format!("game=\"{game}\",code=\"{code}\""), count);
        }
    }

    pub fn account(&self, level: BotLevel) -> &PlayerRef {
        &self.accounts[&level]
    }

    pub fn level_of(&self, player_id: &str) -> Option<BotLevel> {
        self.accounts
            .iter()
            .find_map(|(level, account)| (account.id == player_id).then_some(*level))
    }

    /// The random source of one decision: the server's bot seed and the position (game,
    /// version, state), so the same history under the same seed brings the same moves.
    fn seed_for(&self, room: &Room) -> u64 {
        let digest = Sha256::digest(format!(
            "{}:{}:{}:{}",
            self.seed, room.game, room.version, room.state
        ));
        u64::from_le_bytes(
            digest[..8]
                .try_into()
                .expect("a SHA-256 digest has 8 bytes"),
        )
    }
}

impl Engine {
    /// Lets the room's bots move for as long as one of them has the turn.
    pub(super) async fn let_bots_play(
        &self,
        mut room: Arc<Room>,
    ) -> Result<Arc<Room>, EngineError> {
        for _ in 0..MAX_BOT_MOVES {
            let seated: Vec<(PlayerRef, BotLevel)> = room
                .players
                .iter()
                .filter_map(|p| self.bots.level_of(&p.id).map(|level| (p.clone(), level)))
                .collect();
            if room.finished || seated.is_empty() {
                return Ok(room);
            }
            let Ok(game) = self.catalog.game_of(&room).await else {
                return Ok(room);
            };
            let board = room.board_game(crate::domain::time::Timestamp::now());
            let seed = self.bots.seed_for(&room);
            // Searching takes a while (an uploaded game's bot searches for up to
            // --bot-search-ms): keep it off the async workers.
            let decision = tokio::task::spawn_blocking(move || {
                for (bot, level) in seated {
                    match game.bot_move(level, &bot, &board, seed) {
                        Ok(None) => continue,
                        Ok(Some(mv)) => return Ok(Some((bot, mv))),
                        Err(fault) => {
                            let error = EngineError::from_hook_fault(Hook::BotSearch, fault);
                            if error.is_game_fault() {
                                game.log_fault(Hook::BotSearch, &board, &error.to_string());
                            }
                            return Err((bot, error));
                        }
                    }
                }
                Ok(None)
            })
            .await;
            let (bot, mv) = match decision {
                Ok(Ok(Some(choice))) => choice,
                Ok(Ok(None)) => return Ok(room),
                // The game's code failed: nothing retries, since it would fail the same way
                // on the same room. The next action on the room asks the bot again.
                Ok(Err((bot, fault))) => {
                    self.bots.fault(&room, &bot, fault);
                    return Ok(room);
                }
                Err(err) => {
                    tracing::error!(room = %room.id, error = %err, "a bot crashed while choosing a move");
                    return Ok(room);
                }
            };
            let mv = Arc::new(mv);
            // Boxed: a room with no bot seated never gets here, and unboxed every action's
            // future would be sized for a bot's turn (this loop's state around a whole
            // update) rather than for the action's own update.
            match Box::pin(self.update(
                &room.id,
                Precondition::exactly(room.version),
                Action::Move(bot.clone(), mv.clone()),
            ))
            .await
            {
                Ok(next) => room = next,
                // Someone else moved first: look at the room again.
                Err(EngineError::VersionMismatch { .. }) => room = self.room(&room.id).await?,
                Err(err) if err.is_game_fault() => {
                    self.bots.fault(&room, &bot, err);
                    return Ok(room);
                }
                Err(err) => {
                    tracing::error!(room = %room.id, bot = %bot.username, %mv, error = %err, "a bot's move could not be made");
                    return Ok(room);
                }
            }
        }
        Ok(room)
    }
}
