//! The records the engine works on and the store keeps: rooms, their events, and accounts.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

pub use crate::domain::audit::{AuditAction, AuditEntry, AuditTarget, Moderator};
use crate::domain::game_id::GameId;
use crate::domain::ids::{PlayerId, RoomId, SessionId};
use crate::domain::time::Timestamp;
use crate::frontend::FrontendFile;
use crate::game::{
    BoardGame, Capabilities, Clock, GameInfo, Hook, LogLevel, PlayerRef, RoomStartContext,
};

/// Since when it has been each player's move (see [`Room::turns`]).
pub type Turns = std::collections::BTreeMap<PlayerId, Timestamp>;

/// A room: the BoardGame record of its game plus what the platform keeps around it. Not
/// serialisable: what a client receives of it is a [`crate::views::RoomView`].
#[derive(Debug, Clone, PartialEq)]
pub struct Room {
    pub id: RoomId,
    pub game: GameId,
    /// The version of an uploaded game this room plays, for its whole life; built-in games
    /// have none.
    pub game_version: Option<i64>,
    pub players: Arc<Vec<PlayerRef>>,
    pub inactive_players: Vec<PlayerRef>,
    pub version: i64,
    pub joinable: bool,
    pub finished: bool,
    pub private: bool,
    /// Whether finishing the room's games changes its players' ratings: public rooms of people
    /// only, unless opened with `"rated": false`. Set when the room is opened, for its life.
    pub rated: bool,
    pub state: Arc<Value>,
    /// When the game's `onTimeout` runs, if a hook set a deadline (RFC 3339, UTC).
    pub trigger_timeout_at: Option<Timestamp>,
    /// The players its latest version waits on to move, as the game says (none in a finished
    /// room); `None` when the game could not say.
    pub to_move: Option<Vec<PlayerId>>,
    /// Since when it has been each player's move, for the players it waits on: kept while it
    /// stays theirs ([`Room::turns_after`]). On the room's own row, which every version
    /// rewrites anyway, so a move writes no membership.
    pub turns: Turns,
    /// The clock the room was created with, if any; the same for its whole life.
    pub clock: Option<Clock>,
    /// "Play again" holding the last game's seats for its other players, if it does.
    pub rematch: Option<Rematch>,
    /// The games played in the room so far, and who won them.
    pub score: Score,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// "Play again" in a finished room: the seats of the game that ended are held for its other
/// players until `until` (RFC 3339, UTC), and only they may join until then.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rematch {
    /// Who asked.
    pub by: PlayerRef,
    /// Whom the seats are held for: those who have neither joined nor declined yet.
    pub seats: Vec<PlayerRef>,
    pub until: Timestamp,
}

impl Rematch {
    /// Whether the seats are still held at `now`.
    pub fn holds(&self, now: Timestamp) -> bool {
        !self.seats.is_empty() && now < self.until
    }

    pub fn holds_for(&self, player_id: &str) -> bool {
        self.seats.iter().any(|p| p.id == player_id)
    }
}

/// A room's running score: its finished games, the draws among them, and each winner's wins
/// by player id. A game's winners are what its final state names (see
/// [`crate::game::winners_of`]); a finished game that names none is a draw.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Score {
    pub games: u32,
    pub draws: u32,
    pub wins: std::collections::BTreeMap<PlayerId, u32>,
}

impl Score {
    /// Counts a game that just finished with `winners`.
    pub fn count(&mut self, winners: &[PlayerId]) {
        self.games += 1;
        if winners.is_empty() {
            self.draws += 1;
        }
        for winner in winners {
            *self.wins.entry(winner.clone()).or_default() += 1;
        }
    }
}

impl Room {
    /// A room before any hook has run: version 0, no players, joinable, state `null`.
    pub fn blank(
        id: String,
        game: String,
        game_version: Option<i64>,
        private: bool,
        now: Timestamp,
    ) -> Self {
        Self {
            id: id.into(),
            game: game.into(),
            game_version,
            players: Arc::default(),
            inactive_players: Vec::new(),
            version: 0,
            joinable: true,
            finished: false,
            private,
            rated: false,
            state: Arc::new(Value::Null),
            trigger_timeout_at: None,
            to_move: None,
            turns: Turns::new(),
            clock: None,
            rematch: None,
            score: Score::default(),
            created_at: now,
            updated_at: now,
        }
    }

    /// Since when it is each player's move once the room waits on `to_move` (nobody's when
    /// the game could not say), at `now`: a turn that stays a player's keeps its start, one
    /// that begins starts now.
    pub fn turns_after(&self, now: Timestamp) -> Turns {
        let to_move = self.to_move.as_deref().unwrap_or_default();
        to_move
            .iter()
            .map(|player| (player.clone(), *self.turns.get(player).unwrap_or(&now)))
            .collect()
    }

    /// The record a hook is shown, at `now`. Its state and players are the room's own,
    /// shared, never copied: a hook returns new ones rather than changing them.
    pub fn board_game(&self, now: Timestamp) -> BoardGame {
        BoardGame {
            room_id: self.id.clone(),
            players: self.players.clone(),
            version: self.version,
            joinable: self.joinable,
            finished: self.finished,
            state: self.state.clone(),
            trigger_timeout_at: self.trigger_timeout_at,
            room_start_context: RoomStartContext {
                private: self.private,
                clock: self.clock,
            },
            now: now.as_chrono(),
        }
    }

    pub fn is_player(&self, player_id: &str) -> bool {
        self.players.iter().any(|p| p.id == player_id)
    }
}

/// How a public room's lobby entry changed: it `created` a room or `updated` one (opened,
/// filled, emptied or finished).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LobbyChange {
    Created,
    Updated,
}

impl LobbyChange {
    pub fn as_str(self) -> &'static str {
        match self {
            LobbyChange::Created => "created",
            LobbyChange::Updated => "updated",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "created" => Some(LobbyChange::Created),
            "updated" => Some(LobbyChange::Updated),
            _ => None,
        }
    }
}

/// What made a new version of a room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// `onRoomStart` ran for a new room.
    RoomStart,
    /// `onRoomStart` ran again for a room being played again.
    Reset,
    Join,
    Quit,
    Move,
    /// The room's deadline passed: `onTimeout` ran.
    Timeout,
    /// The room's deadline passed and `onTimeout` failed: the deadline was cleared and
    /// nothing else changed.
    TimeoutFault,
    /// The platform finished the room as it was, without a hook: a waiting room nobody
    /// joined for the idle period.
    Closed,
    /// A player who stopped playing was removed when another claimed the game (the room had
    /// no version for the claim period): `onPlayerQuit` ran for them.
    Abandoned,
    /// A player turned down the rematch offered to them: their seat is no longer held.
    Declined,
    /// An admin renamed a seated player: the player is shown by their new name from this
    /// version on, and nothing else changed.
    Renamed,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::RoomStart => "room_start",
            EventKind::Reset => "reset",
            EventKind::Join => "join",
            EventKind::Quit => "quit",
            EventKind::Move => "move",
            EventKind::Timeout => "timeout",
            EventKind::TimeoutFault => "timeout_fault",
            EventKind::Closed => "closed",
            EventKind::Abandoned => "abandoned",
            EventKind::Declined => "declined",
            EventKind::Renamed => "renamed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::RoomStart,
            Self::Reset,
            Self::Join,
            Self::Quit,
            Self::Move,
            Self::Timeout,
            Self::TimeoutFault,
            Self::Closed,
            Self::Abandoned,
            Self::Declined,
            Self::Renamed,
        ]
        .into_iter()
        .find(|kind| kind.as_str() == s)
    }
}

/// One version of a room's history: what happened and the record it resulted in. Not
/// serialisable: what a client receives of it is a [`crate::views::EventView`].
#[derive(Debug, Clone, PartialEq)]
pub struct RoomEvent {
    pub version: i64,
    pub kind: EventKind,
    pub player: Option<PlayerRef>,
    /// The move, shared with the action that made it (never copied).
    pub mv: Option<Arc<Value>>,
    pub state: Arc<Value>,
    pub joinable: bool,
    pub finished: bool,
    /// Who was seated at this version, in seat order.
    pub players: Arc<Vec<PlayerRef>>,
    pub trigger_timeout_at: Option<Timestamp>,
    /// The players this version waits on to move (see [`Room::to_move`]).
    pub to_move: Option<Vec<PlayerId>>,
    pub created_at: Timestamp,
    /// For the version that finished a rated game: how it changed each player's rating.
    pub rating_changes: Vec<RatingChange>,
}

/// A version of an uploaded game about to be published.
#[derive(Debug, Clone)]
pub struct NewGameVersion {
    pub game_id: GameId,
    pub owner_id: PlayerId,
    pub name: String,
    pub description: String,
    pub min_players: usize,
    pub max_players: usize,
    pub format: String,
    pub source: String,
    pub sha256: String,
    /// The game's own page: its files, or the previous version's kept as they are.
    pub frontend: FrontendSource,
    /// How the page frames the frontend: a CSS colour behind it, and its height in pixels.
    pub frontend_background: Option<String>,
    pub frontend_height: Option<u32>,
    /// An example move, as JSON text, if the author gave one.
    pub move_example: Option<String>,
    /// Whether players may talk in its rooms.
    pub chat: bool,
    /// What the source supports (the optional hooks it exports).
    pub hooks: Capabilities,
    pub created_at: Timestamp,
}

/// Where a new version's frontend comes from.
#[derive(Debug, Clone, Default)]
pub enum FrontendSource {
    /// The version has no page of its own.
    #[default]
    None,
    /// Files uploaded with this version.
    Files(Vec<FrontendFile>),
    /// The files of this earlier version of the same game, unchanged.
    CopyOf(i64),
}

/// The background a frame has when the author names none.
pub const DEFAULT_FRONTEND_BACKGROUND: &str = "white";
/// The height of a frame when the author names none, in pixels.
pub const DEFAULT_FRONTEND_HEIGHT: u32 = 600;

/// A published version of an uploaded game, without its source.
#[derive(Debug, Clone, PartialEq)]
pub struct GameVersionRecord {
    pub game_id: GameId,
    pub version: i64,
    pub name: String,
    pub description: String,
    pub min_players: usize,
    pub max_players: usize,
    pub format: String,
    pub sha256: String,
    /// How many files its own page has (none when it has no page).
    pub frontend_files: i64,
    pub frontend_background: Option<String>,
    pub frontend_height: Option<u32>,
    pub move_example: Option<Value>,
    /// Whether players may talk in its rooms.
    pub chat: bool,
    /// What the source supports (the optional hooks it exports).
    pub hooks: Capabilities,
    pub owner: PlayerRef,
    /// When this version was published.
    pub published_at: Timestamp,
    /// When the first version was.
    pub created_at: Timestamp,
    /// When an admin unpublished the game, if one did: it opens no new rooms then.
    pub unpublished_at: Option<Timestamp>,
}

/// A game as the lobby lists it: built in, or uploaded (with its owner and latest version).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GameListing {
    #[serde(flatten)]
    pub info: GameInfo,
    pub builtin: bool,
    pub owner: Option<PlayerRef>,
    pub version: Option<i64>,
    pub format: Option<String>,
    pub sha256: Option<String>,
    pub published_at: Option<Timestamp>,
    /// Whether the game ships its own page, served at `/games/{id}/versions/{n}/frontend/`.
    pub has_frontend: bool,
    /// The colour behind the frame of its page (uploaded games).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frontend_background: Option<String>,
    /// The height of the frame of its page, in pixels (uploaded games).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frontend_height: Option<u32>,
    /// A move as the game expects it, when the game gives one.
    pub move_example: Option<Value>,
    /// Whether players may talk in its rooms (the author may turn it off).
    pub chat: bool,
    /// `bots`, `onTimeout` and `onPlayerView`.
    #[serde(flatten)]
    pub capabilities: Capabilities,
    /// When an admin unpublished the game, if one did (listings leave it out then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unpublished_at: Option<Timestamp>,
}

impl GameListing {
    pub fn builtin(
        info: GameInfo,
        move_example: Option<Value>,
        capabilities: Capabilities,
    ) -> Self {
        Self {
            info,
            has_frontend: false,
            frontend_background: None,
            frontend_height: None,
            move_example,
            chat: true,
            capabilities,
            builtin: true,
            owner: None,
            version: None,
            format: None,
            sha256: None,
            published_at: None,
            unpublished_at: None,
        }
    }
}

impl GameVersionRecord {
    /// What the game says about itself, from what its author sent.
    pub fn info(&self) -> GameInfo {
        GameInfo {
            id: self.game_id.to_string().into(),
            name: self.name.clone().into(),
            min_players: self.min_players,
            max_players: self.max_players,
            description: self.description.clone().into(),
        }
    }

    pub fn listing(&self) -> GameListing {
        GameListing {
            info: self.info(),
            builtin: false,
            owner: Some(self.owner.clone()),
            version: Some(self.version),
            format: Some(self.format.clone()),
            sha256: Some(self.sha256.clone()),
            published_at: Some(self.published_at),
            has_frontend: self.frontend_files > 0,
            frontend_background: Some(
                self.frontend_background
                    .clone()
                    .unwrap_or_else(|| DEFAULT_FRONTEND_BACKGROUND.to_owned()),
            ),
            frontend_height: Some(self.frontend_height.unwrap_or(DEFAULT_FRONTEND_HEIGHT)),
            move_example: self.move_example.clone(),
            chat: self.chat,
            capabilities: self.hooks,
            unpublished_at: self.unpublished_at,
        }
    }
}

/// A player account as stored.
#[derive(Debug, Clone)]
pub struct Account {
    pub id: PlayerId,
    pub username: String,
    pub created_at: Timestamp,
}

impl Account {
    pub fn player_ref(&self) -> PlayerRef {
        PlayerRef {
            id: self.id.clone(),
            username: self.username.clone(),
        }
    }
}

/// One device a player is signed in on: a token of its own, which ending the session refuses
/// at once everywhere.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub id: SessionId,
    pub player: PlayerRef,
    /// What the device calls itself ("Firefox on Linux"), as the client gave it or the browser
    /// named itself.
    pub label: String,
    /// The SHA-256 of the secret part of its token.
    pub token_hash: String,
    pub created_at: Timestamp,
    /// To the minute.
    pub last_used_at: Timestamp,
}

/// Now, to the millisecond (written as RFC 3339 text in UTC: sortable and readable in SQL).
pub fn now() -> Timestamp {
    Timestamp::now()
}

/// A line an uploaded game's hook logged in one of its rooms, or the failure of one of its
/// hooks: its owner's log (`GET /games/{id}/logs`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GameLogLine {
    /// Its place in the game's log, growing (0 until it is stored).
    pub id: i64,
    #[serde(skip)]
    pub game: GameId,
    /// The version of the game the room plays.
    pub game_version: i64,
    pub at: Timestamp,
    pub room: RoomId,
    /// The room's version the call made (or would have made, had it not failed); for the view
    /// hook and a bot's search, the version they were shown.
    pub version: i64,
    pub hook: Hook,
    pub level: LogLevel,
    pub text: String,
}

/// A player as an admin looks them up.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlayerRecord {
    pub id: PlayerId,
    pub username: String,
    pub created_at: Timestamp,
    /// When a server last saw them (a request, or a stream held open).
    pub last_seen_at: Option<Timestamp>,
    /// `admin`, `author`.
    pub roles: Vec<String>,
    pub suspended: Option<Suspended>,
}

/// When and why an admin suspended a player.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suspended {
    pub at: Timestamp,
    pub reason: String,
}

/// A finished rated game, as its ratings are changed: the version that finished it, who played
/// it (those seated at the end, and one whose leaving ended it), and who won (none: a draw).
#[derive(Debug, Clone, PartialEq)]
pub struct RatedResult {
    pub version: i64,
    pub players: Vec<PlayerRef>,
    pub winners: Vec<PlayerId>,
}

/// How a finished rated game changed one player's rating.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RatingChange {
    pub player: PlayerRef,
    /// The rating before and after, rounded to a whole point.
    pub before: i64,
    pub after: i64,
}
