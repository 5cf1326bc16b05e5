//! Battleship: the classic fleet (5, 4, 3, 3, 2) on a 10×10 grid, a game of hidden
//! information. Both players first place their fleets (`{"fleet": [{"row", "col", "across"},
//! …]}`, one ship per size in that order), each unseen by the other; then they take turns
//! shooting (`{"row", "col"}`). Every shot is public: a hit, a miss, and when it sinks a ship,
//! that ship. Whoever sinks the whole enemy fleet wins; a quit mid-game forfeits.
//!
//! What a player is shown ([`Game::on_player_view`]): their own fleet, and of the other fleet
//! only the ships already sunk; a watcher sees no ship until it sinks. Once the game is over
//! everyone sees everything.

use std::borrow::Cow;

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::game::{
    BoardGame, BotLevel, Capabilities, Game, GameError, GameInfo, HookError, HookResult, Patch,
    PlayerRef,
};

pub const SIZE: i64 = 10;
/// The fleet, one ship of each size in this order.
pub const FLEET: [usize; 5] = [5, 4, 3, 3, 2];
const SEATS: usize = 2;

const INFO: GameInfo = GameInfo {
    id: Cow::Borrowed("battleship"),
    name: Cow::Borrowed("Battleship"),
    min_players: 2,
    max_players: 2,
    description: Cow::Borrowed(
        "Sink the enemy fleet of five ships, 5, 4, 3, 3 and 2 cells long, on a 10x10 grid. \
         Both players place their fleets unseen, then take turns to fire.",
    ),
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Status {
    /// Both fleets are being placed.
    Placing,
    InGame,
    EndGame,
}

/// A cell, `[row, col]`.
pub type Cell = [i64; 2];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ship {
    pub size: usize,
    pub cells: Vec<Cell>,
}

/// One shot, as everyone sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shot {
    pub row: i64,
    pub col: i64,
    pub hit: bool,
    /// The ship this shot sank, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sunk: Option<Ship>,
}

/// The stored state. `fleets` is the secret; everything else is public.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    pub status: Status,
    /// Each seat's fleet, `null` until placed.
    pub fleets: [Option<Vec<Ship>>; SEATS],
    /// The shots each seat has fired.
    pub shots: [Vec<Shot>; SEATS],
    pub plr_to_move_index: Option<usize>,
    pub winner: Option<PlayerRef>,
}

impl State {
    fn initial() -> Self {
        Self {
            status: Status::Placing,
            fleets: [None, None],
            shots: [Vec::new(), Vec::new()],
            plr_to_move_index: None,
            winner: None,
        }
    }

    fn decode(state: &Value) -> Result<Self, GameError> {
        serde_json::from_value(state.clone()).map_err(|_| {
            GameError::new(
                "invalid_state",
                "the room's state is not a game of battleship",
            )
        })
    }

    fn encode(&self) -> Value {
        serde_json::to_value(self).expect("a state always serialises")
    }

    /// Whether seat `target`'s fleet has been shot at `cell`.
    fn shot_at(&self, target: usize, cell: Cell) -> bool {
        self.shots[1 - target]
            .iter()
            .any(|s| [s.row, s.col] == cell)
    }

    /// Whether every cell of `ship` (of seat `target`) has been hit.
    fn sunk(&self, target: usize, ship: &Ship) -> bool {
        ship.cells.iter().all(|&cell| self.shot_at(target, cell))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Placement {
    row: i64,
    col: i64,
    across: bool,
}

/// Checks a placement: one ship per size of [`FLEET`] in order, on the board, none touching
/// another's cells.
pub fn place(placements: &Value) -> Result<Vec<Ship>, GameError> {
    let shape = || {
        GameError::new(
            "invalid_fleet",
            format!(
                "a fleet is {} placements {{\"row\", \"col\", \"across\"}}, for ships of sizes \
                 5, 4, 3, 3, 2 in that order",
                FLEET.len()
            ),
        )
    };
    let placements: Vec<Placement> =
        serde_json::from_value(placements.clone()).map_err(|_| shape())?;
    if placements.len() != FLEET.len() {
        return Err(shape());
    }
    let mut ships = Vec::new();
    let mut taken: Vec<Cell> = Vec::new();
    for (placement, size) in placements.iter().zip(FLEET) {
        let cells: Vec<Cell> = (0..size as i64)
            .map(|i| match placement.across {
                true => [placement.row, placement.col + i],
                false => [placement.row + i, placement.col],
            })
            .collect();
        if cells
            .iter()
            .any(|&[r, c]| !(0..SIZE).contains(&r) || !(0..SIZE).contains(&c))
        {
            return Err(GameError::new(
                "off_board",
                format!("the ship of size {size} does not fit on the board there"),
            ));
        }
        if cells.iter().any(|cell| taken.contains(cell)) {
            return Err(GameError::new(
                "ships_overlap",
                format!("the ship of size {size} overlaps another"),
            ));
        }
        taken.extend(&cells);
        ships.push(Ship { size, cells });
    }
    Ok(ships)
}

/// A random legal placement, as a move would send it.
pub fn random_fleet(rng: &mut impl Rng) -> Value {
    loop {
        let placements: Vec<Value> = FLEET
            .iter()
            .map(|_| {
                json!({
                    "row": rng.random_range(0..SIZE),
                    "col": rng.random_range(0..SIZE),
                    "across": rng.random_bool(0.5),
                })
            })
            .collect();
        let fleet = Value::Array(placements);
        if place(&fleet).is_ok() {
            return fleet;
        }
    }
}

#[derive(Debug, Default)]
pub struct Battleship;

impl Game for Battleship {
    fn info(&self) -> GameInfo {
        INFO
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            player_view: true,
            bots: true,
            ..Capabilities::default()
        }
    }

    fn move_example(&self) -> Option<Value> {
        Some(json!({"row": 4, "col": 4}))
    }

    fn on_room_start(&self, _game: &BoardGame) -> HookResult {
        Ok(Patch::empty()
            .state(State::initial().encode())
            .joinable(true)
            .finished(false))
    }

    fn on_player_join(&self, _player: &PlayerRef, game: &BoardGame) -> HookResult {
        let state = State::decode(&game.state)?;
        if game.players.len() > SEATS || state.status != Status::Placing {
            return Err(GameError::new("room_full", "both seats are taken").into());
        }
        Ok(Patch::empty().joinable(game.players.len() < SEATS))
    }

    fn on_player_quit(&self, _player: &PlayerRef, game: &BoardGame) -> HookResult {
        let mut state = State::decode(&game.state)?;
        if game.players.len() + 1 < SEATS && state.fleets.iter().all(Option::is_none) {
            // Nobody had placed a ship against anyone: the seat opens up again.
            state.fleets = [None, None];
            return Ok(Patch::empty().state(state.encode()).joinable(true));
        }
        if state.status == Status::EndGame {
            return Ok(Patch::empty());
        }
        state.status = Status::EndGame;
        state.plr_to_move_index = None;
        state.winner = game.players.first().cloned();
        Ok(Patch::empty().state(state.encode()).finished(true))
    }

    fn on_player_move(&self, player: &PlayerRef, mv: &Value, game: &BoardGame) -> HookResult {
        let mut state = State::decode(&game.state)?;
        let seat = game
            .players
            .iter()
            .position(|p| p.id == player.id)
            .ok_or_else(|| GameError::new("not_a_player", "only the room's players can move"))?;
        match state.status {
            Status::EndGame => Err(GameError::new("game_over", "the game is over").into()),
            Status::Placing => {
                let fleet = mv.get("fleet").ok_or_else(|| {
                    GameError::new(
                        "placing",
                        "place your fleet first: {\"fleet\": [{\"row\", \"col\", \"across\"}, …]}",
                    )
                })?;
                if state.fleets[seat].is_some() {
                    return Err(GameError::new("already_placed", "your fleet is placed").into());
                }
                state.fleets[seat] = Some(place(fleet)?);
                if game.players.len() == SEATS && state.fleets.iter().all(Option::is_some) {
                    state.status = Status::InGame;
                    state.plr_to_move_index = Some(0);
                }
                Ok(Patch::empty().state(state.encode()))
            }
            Status::InGame => {
                if state.plr_to_move_index != Some(seat) {
                    let whose = game
                        .players
                        .get(1 - seat)
                        .map_or("the other player", |p| p.username.as_str());
                    let message = format!("it is {whose}'s turn");
                    return Err(GameError::new("not_your_turn", message).into());
                }
                let cell = parse_shot(mv)?;
                let target = 1 - seat;
                if state.shot_at(target, cell) {
                    return Err(GameError::new("already_shot", "you shot there already").into());
                }
                let fleet = state.fleets[target].clone().unwrap_or_default();
                let ship = fleet.iter().find(|ship| ship.cells.contains(&cell));
                state.shots[seat].push(Shot {
                    row: cell[0],
                    col: cell[1],
                    hit: ship.is_some(),
                    sunk: None,
                });
                if let Some(ship) = ship.filter(|ship| state.sunk(target, ship)) {
                    let last = state.shots[seat].last_mut().expect("just pushed");
                    last.sunk = Some(ship.clone());
                }
                if fleet.iter().all(|ship| state.sunk(target, ship)) {
                    state.status = Status::EndGame;
                    state.plr_to_move_index = None;
                    state.winner = Some(player.clone());
                    return Ok(Patch::empty().state(state.encode()).finished(true));
                }
                state.plr_to_move_index = Some(target);
                Ok(Patch::empty().state(state.encode()))
            }
        }
    }

    /// A player sees their own fleet and the enemy ships already sunk; a watcher only the
    /// sunk ships. After the game, everything.
    fn on_player_view(
        &self,
        viewer: Option<&PlayerRef>,
        game: &BoardGame,
    ) -> Result<Value, HookError> {
        if game.finished {
            return Ok(Value::clone(&game.state));
        }
        let mut state = State::decode(&game.state)?;
        let seat = viewer.and_then(|v| game.players.iter().position(|p| p.id == v.id));
        let placed: Vec<bool> = state.fleets.iter().map(Option::is_some).collect();
        for target in 0..SEATS {
            if Some(target) == seat {
                continue;
            }
            let sunk: Vec<Ship> = state.shots[1 - target]
                .iter()
                .filter_map(|shot| shot.sunk.clone())
                .collect();
            state.fleets[target] = state.fleets[target].as_ref().map(|_| sunk);
        }
        let mut view = state.encode();
        view["placed"] = json!(placed);
        Ok(view)
    }

    fn bot_move(
        &self,
        level: BotLevel,
        bot: &PlayerRef,
        game: &BoardGame,
        seed: u64,
    ) -> Result<Option<Value>, HookError> {
        Ok(bot_choice(level, bot, game, seed))
    }
}

/// What a bot seated as `bot` does now: places its fleet, or shoots when it is its turn.
fn bot_choice(level: BotLevel, bot: &PlayerRef, game: &BoardGame, seed: u64) -> Option<Value> {
    let state = State::decode(&game.state).ok()?;
    let seat = game.players.iter().position(|p| p.id == bot.id)?;
    let mut rng = StdRng::seed_from_u64(seed);
    match state.status {
        Status::Placing if state.fleets[seat].is_none() => {
            Some(json!({"fleet": random_fleet(&mut rng)}))
        }
        Status::InGame if state.plr_to_move_index == Some(seat) => {
            let cell = choose_shot(level, &state.shots[seat], &mut rng)?;
            Some(json!({"row": cell[0], "col": cell[1]}))
        }
        _ => None,
    }
}

fn parse_shot(mv: &Value) -> Result<Cell, GameError> {
    let shape = || GameError::new("invalid_move", "a shot looks like {\"row\": r, \"col\": c}");
    let field = |key: &str| mv.get(key).and_then(Value::as_i64).ok_or_else(shape);
    let cell = [field("row")?, field("col")?];
    if cell.iter().any(|x| !(0..SIZE).contains(x)) {
        return Err(GameError::new("off_board", "row and col go from 0 to 9"));
    }
    Ok(cell)
}

/// A bot's shot from what it has seen (its own shots only, never the enemy fleet). Easy
/// shoots at random; medium (and hard) hunts and targets: after a hit on a ship not yet
/// sunk, it shoots along the line of hits, or beside a lone hit.
pub fn choose_shot(level: BotLevel, shots: &[Shot], rng: &mut impl Rng) -> Option<Cell> {
    let fired = |cell: Cell| shots.iter().any(|s| [s.row, s.col] == cell);
    let on_board = |[r, c]: Cell| (0..SIZE).contains(&r) && (0..SIZE).contains(&c);
    let open: Vec<Cell> = (0..SIZE)
        .flat_map(|r| (0..SIZE).map(move |c| [r, c]))
        .filter(|&cell| !fired(cell))
        .collect();
    if level != BotLevel::Easy {
        let sunk: Vec<Cell> = shots
            .iter()
            .filter_map(|s| s.sunk.as_ref())
            .flat_map(|ship| ship.cells.clone())
            .collect();
        let wounded: Vec<Cell> = shots
            .iter()
            .filter(|s| s.hit && !sunk.contains(&[s.row, s.col]))
            .map(|s| [s.row, s.col])
            .collect();
        let beside = |[r, c]: Cell| [[r - 1, c], [r + 1, c], [r, c - 1], [r, c + 1]];
        // Two hits in a row: keep to their line.
        let mut lined = Vec::new();
        for &a in &wounded {
            for &b in &wounded {
                let (dr, dc) = (b[0] - a[0], b[1] - a[1]);
                if (dr.abs() + dc.abs()) == 1 {
                    lined.push([b[0] + dr, b[1] + dc]);
                }
            }
        }
        let lined: Vec<Cell> = lined
            .into_iter()
            .filter(|&cell| on_board(cell) && !fired(cell))
            .collect();
        if let Some(&cell) = lined.choose(rng) {
            return Some(cell);
        }
        let near: Vec<Cell> = wounded
            .iter()
            .flat_map(|&cell| beside(cell))
            .filter(|&cell| on_board(cell) && !fired(cell))
            .collect();
        if let Some(&cell) = near.choose(rng) {
            return Some(cell);
        }
    }
    open.choose(rng).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::games::test_player as player;

    fn room(state: Value, finished: bool) -> BoardGame {
        BoardGame {
            room_id: "r".into(),
            players: vec![player(0), player(1)].into(),
            version: 5,
            joinable: false,
            finished,
            state: state.into(),
            trigger_timeout_at: None,
            room_start_context: crate::game::RoomStartContext {
                private: false,
                clock: None,
            },
            now: Default::default(),
        }
    }

    /// Ships along rows 0, 2, 4, 6 and 8, from column 0.
    fn rows_fleet() -> Value {
        json!([0, 2, 4, 6, 8]
            .iter()
            .map(|r| json!({"row": r, "col": 0, "across": true}))
            .collect::<Vec<_>>())
    }

    fn apply(game: &mut BoardGame, seat: usize, mv: Value) -> Result<(), HookError> {
        let patch = Battleship.on_player_move(&player(seat), &mv, game)?;
        let patch = patch.validate().unwrap();
        if let Some(state) = patch.state {
            game.state = state.into();
        }
        if let Some(finished) = patch.finished {
            game.finished = finished;
        }
        Ok(())
    }

    fn started() -> BoardGame {
        let mut game = room(State::initial().encode(), false);
        apply(&mut game, 0, json!({"fleet": rows_fleet()})).unwrap();
        apply(&mut game, 1, json!({"fleet": rows_fleet()})).unwrap();
        game
    }

    #[test]
    fn fleets_must_fit_and_not_overlap() {
        assert!(place(&rows_fleet()).is_ok());
        let overlapping = json!([
            {"row": 0, "col": 0, "across": true}, {"row": 0, "col": 1, "across": false},
            {"row": 5, "col": 0, "across": true}, {"row": 6, "col": 0, "across": true},
            {"row": 7, "col": 0, "across": true}
        ]);
        assert_eq!(place(&overlapping).unwrap_err().reason, "ships_overlap");
        let off = json!([
            {"row": 0, "col": 6, "across": true}, {"row": 2, "col": 0, "across": true},
            {"row": 4, "col": 0, "across": true}, {"row": 6, "col": 0, "across": true},
            {"row": 8, "col": 0, "across": true}
        ]);
        assert_eq!(place(&off).unwrap_err().reason, "off_board");
        let mut rng = StdRng::seed_from_u64(7);
        for _ in 0..50 {
            assert!(place(&random_fleet(&mut rng)).is_ok());
        }
    }

    #[test]
    fn shots_alternate_and_sinking_the_fleet_wins() {
        let mut game = started();
        assert_eq!(State::decode(&game.state).unwrap().status, Status::InGame);
        let targets: Vec<Cell> = [(0, 5), (2, 4), (4, 3), (6, 3), (8, 2)]
            .iter()
            .flat_map(|&(r, n)| (0..n).map(move |c| [r, c]))
            .collect();
        for (i, cell) in targets.iter().enumerate() {
            apply(&mut game, 0, json!({"row": cell[0], "col": cell[1]})).unwrap();
            if i + 1 < targets.len() {
                let miss = [9 - 2 * (i / 10) as i64, (i % 10) as i64];
                apply(&mut game, 1, json!({"row": miss[0], "col": miss[1]})).unwrap();
            }
        }
        let state = State::decode(&game.state).unwrap();
        assert!(game.finished);
        assert_eq!(state.winner, Some(player(0)));
        assert_eq!(
            state.shots[0].iter().filter(|s| s.sunk.is_some()).count(),
            5
        );
    }

    #[test]
    fn a_player_sees_their_own_fleet_and_only_sunk_enemy_ships() {
        let mut game = started();
        // Sink the enemy's two-cell ship (row 8), miss with the other side in between.
        apply(&mut game, 0, json!({"row": 8, "col": 0})).unwrap();
        apply(&mut game, 1, json!({"row": 9, "col": 9})).unwrap();
        apply(&mut game, 0, json!({"row": 8, "col": 1})).unwrap();
        let mine = Battleship.on_player_view(Some(&player(0)), &game).unwrap();
        assert_eq!(mine["fleets"][0].as_array().unwrap().len(), 5);
        assert_eq!(
            mine["fleets"][1],
            json!([{"size": 2, "cells": [[8, 0], [8, 1]]}])
        );
        let watcher = Battleship.on_player_view(None, &game).unwrap();
        assert_eq!(watcher["fleets"][0], json!([]));
        assert_eq!(watcher["placed"], json!([true, true]));
        game.finished = true;
        assert_eq!(Battleship.on_player_view(None, &game).unwrap(), *game.state);
    }

    #[test]
    fn the_medium_bot_follows_a_hit() {
        let hit = Shot {
            row: 4,
            col: 4,
            hit: true,
            sunk: None,
        };
        let mut rng = StdRng::seed_from_u64(1);
        for _ in 0..20 {
            let [r, c] =
                choose_shot(BotLevel::Medium, std::slice::from_ref(&hit), &mut rng).unwrap();
            assert_eq!((r - 4).abs() + (c - 4).abs(), 1);
        }
        let second = Shot {
            col: 5,
            ..hit.clone()
        };
        for _ in 0..20 {
            let cell =
                choose_shot(BotLevel::Medium, &[hit.clone(), second.clone()], &mut rng).unwrap();
            assert!(cell == [4, 3] || cell == [4, 6], "{cell:?}");
        }
    }
}
