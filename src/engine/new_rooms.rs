//! Opening rooms: a new room (`onRoomStart`, then its first players join, in one commit), and
//! quick play, which joins the oldest open room that fits or opens one. A room quick play
//! opens keeps its creator's rating, and is joined by quick play only from within a window of
//! it that widens as the room waits (see [`QuickPlayGuard`]): close ratings are paired first,
//! and nobody waits more than a minute for want of one.

use std::sync::Arc;

use super::action::Action;
use super::hook_runner::run_hooks;
use super::transition::Transition;
use super::{Engine, EngineError, Precondition, MAX_ATTEMPTS};
use crate::domain::ids::new_room_id;
use crate::domain::records::{now, EventKind, Room};
use crate::game::{BotLevel, Clock, PlayerRef};
use crate::store::{QuickPlayGuard, StoreError};

/// A computer opponent to seat in a new room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BotSeat {
    pub level: BotLevel,
    /// The bot takes the first seat (and so, in two-seat games, the first move).
    pub plays_first: bool,
}

/// What a new room should be.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoomOptions {
    pub private: bool,
    pub bot: Option<BotSeat>,
    /// `Some(false)` opts a public room out of ratings; private rooms and rooms with a bot are
    /// never rated.
    pub rated: Option<bool>,
    /// How long the player to move has, for games that time their players.
    pub clock: Option<Clock>,
}

/// How quick play placed the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Joined,
    Created,
}

impl Engine {
    /// See [`Engine::quickplay`].
    pub(super) async fn quick_play(
        &self,
        player: &PlayerRef,
        game_id: &str,
        clock: Option<Clock>,
    ) -> Result<(Arc<Room>, Placement), EngineError> {
        self.catalog.require_published(game_id).await?;
        let options = RoomOptions {
            clock,
            ..RoomOptions::default()
        };
        let rating = (self
            .store
            .ratings_in_game(game_id, &[player.id.to_string()]))
        .await?
        .remove(player.id.as_str())
        .unwrap_or_default()
        .rating;
        for _ in 0..MAX_ATTEMPTS {
            let seeker = QuickPlayGuard {
                player_id: player.id.clone(),
                seen_since: self.seen_since(),
                rating,
                at_ms: chrono::Utc::now().timestamp_millis(),
            };
            match self
                .store
                .oldest_open_room(game_id, clock, now(), &seeker)
                .await?
            {
                Some(room_id) => match self
                    .act(&room_id, Action::Join(player.clone()), Precondition::Any)
                    .await
                {
                    Ok(room) => return Ok((room, Placement::Joined)),
                    // Filled or closed since it was found: look again.
                    Err(
                        EngineError::RoomNotJoinable
                        | EngineError::RoomFinished
                        | EngineError::RoomFull(_)
                        | EngineError::AlreadyAPlayer,
                    ) => continue,
                    Err(other) => return Err(other),
                },
                None => match self
                    .insert_room(player, game_id, options, Some(seeker))
                    .await
                {
                    Ok(room) => return Ok((room, Placement::Created)),
                    // Someone opened a room meanwhile: join it instead.
                    Err(EngineError::Store(StoreError::Conflict)) => continue,
                    Err(other) => return Err(other),
                },
            }
        }
        Err(EngineError::Contention)
    }

    pub(super) async fn insert_room(
        &self,
        creator: &PlayerRef,
        game_id: &str,
        options: RoomOptions,
        quick_play: Option<QuickPlayGuard>,
    ) -> Result<Arc<Room>, EngineError> {
        let (game, game_version) = self.catalog.game_for_new_room(game_id).await?;
        if options.clock.is_some() && !game.capabilities().timeouts {
            return Err(EngineError::ClockUnsupported(game_id.to_owned()));
        }
        let mut seats = vec![creator.clone()];
        if let Some(seat) = options.bot {
            if !game.capabilities().bots {
                return Err(EngineError::BotsUnsupported(game_id.to_owned()));
            }
            let bot = self.bots.account(seat.level).clone();
            if seat.plays_first {
                seats.insert(0, bot);
            } else {
                seats.push(bot);
            }
        }
        let room_id = new_room_id();
        // Nobody else can know the id yet, but its first versions must be published before
        // anything done to the room once it is found.
        let _turn = self.locks.lock(&room_id).await;
        let room = Room {
            clock: options.clock,
            rated: !options.private && options.bot.is_none() && options.rated != Some(false),
            ..Room::blank(
                room_id.clone(),
                game_id.to_owned(),
                game_version,
                options.private,
                now(),
            )
        };
        let starter = creator.clone();
        let coming = self.store.write_coming();
        let step = run_hooks(&self.sandbox, game, move |game| {
            let mut step = Transition::new(game, room, None);
            step.run_hook(EventKind::RoomStart, &starter, None)?;
            for player in &seats {
                step.add_player(player);
                step.run_hook(EventKind::Join, player, None)?;
            }
            Ok(step)
        })
        .await?;
        drop(coming);
        Ok(self.commit(step, quick_play).await?)
    }
}
