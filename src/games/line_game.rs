//! Rules shared by every "three in a line" game: two seats (X is `players[0]`), alternating
//! turns, a win when a move completes a line, a draw when the board fills up, and a forfeit
//! when a player quits mid-game or, in a room with a clock, runs out of time to move. A [`Geometry`] supplies the board: its cells, its lines, how
//! moves are written and how the board looks in JSON.

use std::marker::PhantomData;

use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::line_bots;
use crate::game::{
    BoardGame, BotLevel, Capabilities, Game, GameError, GameInfo, HookError, HookResult, Patch,
    PlayerRef,
};

/// A player's mark. X moves first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Mark {
    X,
    O,
}

impl Mark {
    pub fn of_seat(seat: usize) -> Mark {
        if seat == 0 {
            Mark::X
        } else {
            Mark::O
        }
    }

    pub fn other(self) -> Mark {
        match self {
            Mark::X => Mark::O,
            Mark::O => Mark::X,
        }
    }
}

pub type Cell = Option<Mark>;
pub type Line = [usize; 3];

/// The shape of a board.
pub trait Geometry: Clone + std::fmt::Debug + PartialEq + Eq + Send + Sync + 'static {
    const INFO: GameInfo;
    const CELLS: usize;

    /// Every winning line.
    fn lines() -> &'static [Line];

    /// For each cell, the indices (into [`Geometry::lines`]) of the lines through it.
    fn lines_through(cell: usize) -> &'static [usize];

    /// Reads a client's move into a cell index, checking only its shape and range.
    fn parse_move(mv: &Value) -> Result<usize, GameError>;

    /// Writes a cell index as a client would send it.
    fn move_json(cell: usize) -> Value;

    /// Writes the board as the room's state shows it.
    fn write_board<S: Serializer>(board: &[Cell], serializer: S) -> Result<S::Ok, S::Error>;
    /// Reads the board where it lies in the state; `None` if it is not one of this shape.
    fn parse_board(board: &Value) -> Option<Vec<Cell>>;
    fn line_json(line: Line) -> Value;
}

/// Builds the cell → lines table from a list of lines.
pub fn index_lines(cells: usize, lines: &[Line]) -> Vec<Vec<usize>> {
    let mut through = vec![Vec::new(); cells];
    for (index, line) in lines.iter().enumerate() {
        for &cell in line {
            through[cell].push(index);
        }
    }
    through
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Status {
    PreGame,
    InGame,
    EndGame,
}

/// The position on the board, independent of who the players are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position<G: Geometry> {
    pub board: Vec<Cell>,
    pub to_move: Mark,
    pub move_count: usize,
    geometry: PhantomData<G>,
}

/// How a position stands after a move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ongoing,
    Won(Mark, Line),
    Drawn,
}

impl<G: Geometry> Default for Position<G> {
    fn default() -> Self {
        Self {
            board: vec![None; G::CELLS],
            to_move: Mark::X,
            move_count: 0,
            geometry: PhantomData,
        }
    }
}

impl<G: Geometry> Position<G> {
    pub fn from_board(board: Vec<Cell>) -> Self {
        let move_count = board.iter().filter(|cell| cell.is_some()).count();
        let to_move = if move_count % 2 == 0 {
            Mark::X
        } else {
            Mark::O
        };
        Self {
            board,
            to_move,
            move_count,
            geometry: PhantomData,
        }
    }

    pub fn empty_cells(&self) -> impl Iterator<Item = usize> + '_ {
        (0..G::CELLS).filter(|&cell| self.board[cell].is_none())
    }

    /// Places the mark of the side to move on an empty cell; the outcome looks only at the
    /// lines through that cell.
    pub fn play(&mut self, cell: usize) -> Outcome {
        debug_assert!(self.board[cell].is_none());
        let mark = self.to_move;
        self.board[cell] = Some(mark);
        self.move_count += 1;
        self.to_move = mark.other();
        if let Some(line) = self.line_completed_by(cell) {
            Outcome::Won(mark, line)
        } else if self.move_count == G::CELLS {
            Outcome::Drawn
        } else {
            Outcome::Ongoing
        }
    }

    pub fn undo(&mut self, cell: usize) {
        self.board[cell] = None;
        self.move_count -= 1;
        self.to_move = self.to_move.other();
    }

    /// The line through `cell` that its occupant has filled, if any.
    pub fn line_completed_by(&self, cell: usize) -> Option<Line> {
        let mark = self.board[cell]?;
        G::lines_through(cell)
            .iter()
            .map(|&index| G::lines()[index])
            .find(|line| line.iter().all(|&c| self.board[c] == Some(mark)))
    }
}

/// The game state as stored in the room and shown to clients, read where it lies (the board
/// by [`Geometry::parse_board`]) and written straight from a [`TurnState`]: each move does
/// both, and copying the whole tree on the way in and again on the way out was a quarter of
/// the HTTP workers' allocations under load (`docs/benchmarks.md`, "Where the time goes").
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StateFields {
    status: Status,
    plr_to_move_index: usize,
    winner: Option<PlayerRef>,
    winning_line: Option<Value>,
    /// Not read (the board says it), but part of a state of this kind.
    #[serde(rename = "moveCount")]
    _move_count: usize,
    /// How a game that did not end on the board ended: `"timeout"`.
    #[serde(default)]
    ended_by: Option<String>,
}

/// The state written straight from a [`TurnState`], the board included.
#[derive(Serialize)]
#[serde(rename_all = "camelCase", bound = "")]
struct StateJson<'a, G: Geometry> {
    status: Status,
    board: Board<'a, G>,
    plr_to_move_index: usize,
    winner: &'a Option<PlayerRef>,
    winning_line: &'a Option<Value>,
    move_count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    ended_by: &'a Option<String>,
}

struct Board<'a, G>(&'a [Cell], PhantomData<G>);

impl<G: Geometry> Serialize for Board<'_, G> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        G::write_board(self.0, serializer)
    }
}

/// A decoded room state.
pub struct TurnState<G: Geometry> {
    pub status: Status,
    pub position: Position<G>,
    pub plr_to_move_index: usize,
    winner: Option<PlayerRef>,
    winning_line: Option<Value>,
    ended_by: Option<String>,
}

impl<G: Geometry> TurnState<G> {
    fn initial() -> Self {
        Self {
            status: Status::PreGame,
            position: Position::default(),
            plr_to_move_index: 0,
            winner: None,
            winning_line: None,
            ended_by: None,
        }
    }

    pub fn decode(state: &Value) -> Result<Self, GameError> {
        let invalid = || {
            GameError::new(
                "invalid_state",
                "the room's state is not a game of this kind",
            )
        };
        let json = StateFields::deserialize(state).map_err(|_| invalid())?;
        let board = state
            .get("board")
            .and_then(G::parse_board)
            .ok_or_else(invalid)?;
        Ok(Self {
            status: json.status,
            position: Position::from_board(board),
            plr_to_move_index: json.plr_to_move_index,
            winner: json.winner,
            winning_line: json.winning_line,
            ended_by: json.ended_by,
        })
    }

    pub fn encode(&self) -> Value {
        serde_json::to_value(StateJson {
            status: self.status,
            board: Board::<G>(&self.position.board, PhantomData),
            plr_to_move_index: self.plr_to_move_index,
            winner: &self.winner,
            winning_line: &self.winning_line,
            move_count: self.position.move_count,
            ended_by: &self.ended_by,
        })
        .expect("a game state always serialises")
    }
}

/// Two-seat, turn-taking hooks for any geometry.
pub struct LineGame<G: Geometry>(PhantomData<G>);

impl<G: Geometry> Default for LineGame<G> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

const SEATS: usize = 2;

impl<G: Geometry> Game for LineGame<G> {
    fn info(&self) -> GameInfo {
        G::INFO
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            timeouts: true,
            bots: true,
            ..Capabilities::default()
        }
    }

    /// The centre cell: a legal first move on every board.
    fn move_example(&self) -> Option<Value> {
        Some(G::move_json(G::CELLS / 2))
    }

    fn on_room_start(&self, _game: &BoardGame) -> HookResult {
        Ok(Patch::empty()
            .state(TurnState::<G>::initial().encode())
            .joinable(true)
            .finished(false))
    }

    /// The seat to move, while the game is in play: nobody's before both seats are taken.
    fn to_move(&self, game: &BoardGame) -> Result<Vec<String>, HookError> {
        let turn = TurnState::<G>::decode(&game.state)?;
        let seated = game.players.get(turn.plr_to_move_index);
        Ok(match (turn.status, seated) {
            (Status::InGame, Some(player)) => vec![player.id.to_string()],
            _ => Vec::new(),
        })
    }

    fn on_player_join(&self, _player: &PlayerRef, game: &BoardGame) -> HookResult {
        let mut turn = TurnState::<G>::decode(&game.state)?;
        if game.players.len() > SEATS || turn.status != Status::PreGame {
            return Err(GameError::new("room_full", "both seats are taken").into());
        }
        if game.players.len() < SEATS {
            return Ok(Patch::empty().joinable(true));
        }
        turn.status = Status::InGame;
        turn.plr_to_move_index = 0;
        Ok(with_clock(
            Patch::empty().state(turn.encode()).joinable(false),
            game,
        ))
    }

    fn on_player_quit(&self, _player: &PlayerRef, game: &BoardGame) -> HookResult {
        let mut turn = TurnState::<G>::decode(&game.state)?;
        match turn.status {
            // Still waiting for an opponent: the seat opens up again.
            Status::PreGame => Ok(Patch::empty().joinable(true)),
            // A quit mid-game is a forfeit: whoever is left wins.
            Status::InGame => {
                turn.status = Status::EndGame;
                turn.winner = game.players.first().cloned();
                Ok(Patch::empty().state(turn.encode()).finished(true))
            }
            Status::EndGame => Ok(Patch::empty()),
        }
    }

    fn on_player_move(&self, player: &PlayerRef, mv: &Value, game: &BoardGame) -> HookResult {
        let mut turn = TurnState::<G>::decode(&game.state)?;
        match turn.status {
            Status::PreGame => {
                return Err(GameError::new(
                    "game_not_started",
                    "the game has not started: it is waiting for a second player",
                )
                .into())
            }
            Status::EndGame => return Err(GameError::new("game_over", "the game is over").into()),
            Status::InGame => {}
        }
        let seat = game
            .players
            .iter()
            .position(|p| p.id == player.id)
            .ok_or_else(|| GameError::new("not_a_player", "only the room's players can move"))?;
        if seat != turn.plr_to_move_index {
            let whose = game
                .players
                .get(turn.plr_to_move_index)
                .map_or("the other player", |p| p.username.as_str());
            return Err(GameError::new("not_your_turn", format!("it is {whose}'s turn")).into());
        }
        let cell = G::parse_move(mv)?;
        if turn.position.board[cell].is_some() {
            return Err(GameError::new("cell_taken", "that cell is already taken").into());
        }
        if turn.position.to_move != Mark::of_seat(seat) {
            return Err(GameError::new(
                "invalid_state",
                "the board does not agree with whose turn it is",
            )
            .into());
        }
        match turn.position.play(cell) {
            Outcome::Won(_, line) => {
                turn.status = Status::EndGame;
                turn.winner = Some(player.clone());
                turn.winning_line = Some(G::line_json(line));
                Ok(Patch::empty().state(turn.encode()).finished(true))
            }
            Outcome::Drawn => {
                turn.status = Status::EndGame;
                Ok(Patch::empty().state(turn.encode()).finished(true))
            }
            Outcome::Ongoing => {
                turn.plr_to_move_index = (seat + 1) % SEATS;
                Ok(with_clock(Patch::empty().state(turn.encode()), game))
            }
        }
    }

    /// The player to move ran out of time: the other player wins.
    fn on_timeout(&self, game: &BoardGame) -> HookResult {
        let mut turn = TurnState::<G>::decode(&game.state)?;
        if turn.status != Status::InGame {
            return Ok(Patch::empty());
        }
        turn.status = Status::EndGame;
        turn.winner = game
            .players
            .get((turn.plr_to_move_index + 1) % SEATS)
            .cloned();
        turn.ended_by = Some("timeout".to_owned());
        Ok(Patch::empty().state(turn.encode()).finished(true))
    }

    fn bot_move(
        &self,
        level: BotLevel,
        bot: &PlayerRef,
        game: &BoardGame,
        seed: u64,
    ) -> Result<Option<Value>, HookError> {
        Ok(Self::bot_cell(level, bot, game, seed).map(G::move_json))
    }
}

impl<G: Geometry> LineGame<G> {
    /// A bot moves when the game is on and the seat to move is its own.
    fn bot_cell(level: BotLevel, bot: &PlayerRef, game: &BoardGame, seed: u64) -> Option<usize> {
        let turn = TurnState::<G>::decode(&game.state).ok()?;
        let to_move = game.players.get(turn.plr_to_move_index)?;
        if game.finished || turn.status != Status::InGame || to_move.id != bot.id {
            return None;
        }
        line_bots::choose(level, &turn.position, &mut StdRng::seed_from_u64(seed))
    }
}

/// In a room with a clock, the player to move now has `moveSeconds` from now.
fn with_clock(patch: Patch, game: &BoardGame) -> Patch {
    match game.room_start_context.clock {
        Some(clock) => {
            let seconds = chrono::TimeDelta::seconds(i64::from(clock.move_seconds));
            patch.trigger_timeout_at(Some(game.now + seconds))
        }
        None => patch,
    }
}

/// Reads a non-negative integer field of a move; `None` when absent.
pub fn move_field(mv: &Value, key: &str, example: &str) -> Result<Option<i64>, GameError> {
    match mv.get(key) {
        None => Ok(None),
        Some(value) => value.as_i64().map(Some).ok_or_else(|| {
            GameError::new(
                "invalid_move",
                format!("`{key}` must be an integer; a move looks like {example}"),
            )
        }),
    }
}
