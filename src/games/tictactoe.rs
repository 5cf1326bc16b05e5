//! Tic-tac-toe on a 3x3 board. Moves are `{"x": row, "y": col}`; the board is three rows of
//! `null | "X" | "O"`; a winning line is three `[row, col]` pairs.

use std::borrow::Cow;
use std::sync::LazyLock;

use serde::{Deserialize, Serializer};
use serde_json::{json, Value};

use super::line_game::{index_lines, move_field, Cell, Geometry, Line, LineGame};
use crate::game::{GameError, GameInfo};

pub type TicTacToe = LineGame<Square>;

/// The 3x3 board; cell `row * 3 + col`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Square;

/// Rows, columns, then the two diagonals.
pub const LINES: [Line; 8] = [
    [0, 1, 2],
    [3, 4, 5],
    [6, 7, 8],
    [0, 3, 6],
    [1, 4, 7],
    [2, 5, 8],
    [0, 4, 8],
    [2, 4, 6],
];

static LINES_THROUGH: LazyLock<Vec<Vec<usize>>> = LazyLock::new(|| index_lines(9, &LINES));

const MOVE_EXAMPLE: &str = r#"{"x": row, "y": col} with row and col in 0..=2"#;

impl Geometry for Square {
    const INFO: GameInfo = GameInfo {
        id: Cow::Borrowed("tictactoe"),
        name: Cow::Borrowed("Tic-tac-toe"),
        min_players: 2,
        max_players: 2,
        description: Cow::Borrowed(
            "Three in a row on a 3x3 board. X, the first player, moves first.",
        ),
    };
    const CELLS: usize = 9;

    fn lines() -> &'static [Line] {
        &LINES
    }

    fn lines_through(cell: usize) -> &'static [usize] {
        &LINES_THROUGH[cell]
    }

    fn parse_move(mv: &Value) -> Result<usize, GameError> {
        let shape = || GameError::new("invalid_move", format!("a move looks like {MOVE_EXAMPLE}"));
        if !mv.is_object() {
            return Err(shape());
        }
        let row = move_field(mv, "x", MOVE_EXAMPLE)?.ok_or_else(shape)?;
        let col = move_field(mv, "y", MOVE_EXAMPLE)?.ok_or_else(shape)?;
        if !(0..3).contains(&row) || !(0..3).contains(&col) {
            return Err(GameError::new(
                "off_board",
                format!("({row}, {col}) is off the board: row and col go from 0 to 2"),
            ));
        }
        Ok((row * 3 + col) as usize)
    }

    fn move_json(cell: usize) -> Value {
        json!({"x": cell / 3, "y": cell % 3})
    }

    fn write_board<S: Serializer>(board: &[Cell], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(board.chunks(3))
    }

    fn parse_board(board: &Value) -> Option<Vec<Cell>> {
        let rows = Vec::<[Cell; 3]>::deserialize(board).ok()?;
        (rows.len() == 3).then(|| rows.concat())
    }

    fn line_json(line: Line) -> Value {
        json!(line.map(|cell| [cell / 3, cell % 3]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{BoardGame, Game, HookError, RoomStartContext};
    use crate::games::line_game::{Mark, Outcome, Position};

    use crate::games::test_player as player;

    /// The game's name for why it refused.
    fn refusal_reason(err: HookError) -> String {
        match err {
            HookError::Refused(refusal) => refusal.reason,
            other => panic!("a refusal, not {other}"),
        }
    }

    /// The record `onRoomStart` sees.
    fn blank(private: bool) -> BoardGame {
        BoardGame {
            room_id: "r".into(),
            players: vec![].into(),
            version: 0,
            joinable: true,
            finished: false,
            state: Value::Null.into(),
            room_start_context: RoomStartContext {
                private,
                clock: None,
            },
            trigger_timeout_at: None,
            now: Default::default(),
        }
    }

    /// A room as the engine would hold it after both players joined.
    fn started() -> BoardGame {
        let game = TicTacToe::default();
        let start = game
            .on_room_start(&blank(false))
            .unwrap()
            .validate()
            .unwrap();
        let mut room = BoardGame {
            room_id: "r".into(),
            players: vec![player(0), player(1)].into(),
            version: 3,
            joinable: true,
            finished: false,
            state: start.state.unwrap().into(),
            room_start_context: RoomStartContext {
                private: false,
                clock: None,
            },
            trigger_timeout_at: None,
            now: Default::default(),
        };
        let join = game
            .on_player_join(&player(1), &room)
            .unwrap()
            .validate()
            .unwrap();
        assert_eq!(join.joinable, Some(false));
        room.state = join.state.unwrap().into();
        room
    }

    /// Plays moves alternately from a started room; returns the last patch's state and flags.
    fn play(moves: &[(i64, i64)]) -> Result<(Value, Option<bool>), HookError> {
        let game = TicTacToe::default();
        let mut room = started();
        let mut finished = None;
        for (turn, (x, y)) in moves.iter().enumerate() {
            let patch = game
                .on_player_move(&player(turn % 2), &json!({"x": x, "y": y}), &room)?
                .validate()
                .unwrap();
            room.state = patch.state.unwrap().into();
            finished = patch.finished;
        }
        Ok((Value::clone(&room.state), finished))
    }

    #[test]
    fn first_join_waits_second_starts() {
        let game = TicTacToe::default();
        let start = game
            .on_room_start(&blank(true))
            .unwrap()
            .validate()
            .unwrap();
        let state = start.state.unwrap();
        assert_eq!(state["status"], "preGame");
        assert_eq!(
            state["board"],
            json!([[null, null, null], [null, null, null], [null, null, null]])
        );
        let room = BoardGame {
            room_id: "r".into(),
            players: vec![player(0)].into(),
            version: 1,
            joinable: true,
            finished: false,
            state: state.into(),
            room_start_context: RoomStartContext {
                private: true,
                clock: None,
            },
            trigger_timeout_at: None,
            now: Default::default(),
        };
        let join = game
            .on_player_join(&player(0), &room)
            .unwrap()
            .validate()
            .unwrap();
        assert_eq!(join.joinable, Some(true));
        assert_eq!(join.state, None);
        assert_eq!(started().state["status"], "inGame");
    }

    #[test]
    fn x_wins_a_row_with_its_line_recorded() {
        let (state, finished) = play(&[(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]).unwrap();
        assert_eq!(finished, Some(true));
        assert_eq!(state["winner"], json!({"id": "p0", "username": "player0"}));
        assert_eq!(state["winningLine"], json!([[0, 0], [0, 1], [0, 2]]));
        assert_eq!(state["status"], "endGame");
        assert_eq!(state["moveCount"], 5);
    }

    #[test]
    fn o_wins_a_diagonal() {
        let (state, _) = play(&[(0, 0), (0, 2), (1, 0), (1, 1), (2, 2), (2, 0)]).unwrap();
        assert_eq!(state["winner"]["id"], "p1");
        assert_eq!(state["winningLine"], json!([[0, 2], [1, 1], [2, 0]]));
    }

    #[test]
    fn a_full_board_without_a_line_is_a_draw() {
        let moves = [
            (0, 0),
            (0, 1),
            (0, 2),
            (1, 1),
            (1, 0),
            (1, 2),
            (2, 1),
            (2, 0),
            (2, 2),
        ];
        let (state, finished) = play(&moves).unwrap();
        assert_eq!(finished, Some(true));
        assert_eq!(state["winner"], Value::Null);
        assert_eq!(state["status"], "endGame");
        assert_eq!(state["moveCount"], 9);
    }

    #[test]
    fn refusals_have_distinct_reasons() {
        let reason = |moves: &[(i64, i64)]| refusal_reason(play(moves).unwrap_err());
        assert_eq!(reason(&[(0, 0), (0, 0)]), "cell_taken");
        assert_eq!(reason(&[(3, 0)]), "off_board");
        assert_eq!(reason(&[(0, -1)]), "off_board");
        assert_eq!(
            reason(&[
                (0, 0),
                (0, 1),
                (0, 2),
                (1, 1),
                (1, 0),
                (1, 2),
                (2, 1),
                (2, 0),
                (2, 2),
                (0, 0)
            ]),
            "game_over"
        );

        let game = TicTacToe::default();
        let room = started();
        let err = |p: usize, mv: Value| {
            refusal_reason(game.on_player_move(&player(p), &mv, &room).unwrap_err())
        };
        assert_eq!(err(1, json!({"x": 0, "y": 0})), "not_your_turn");
        assert_eq!(err(0, json!({"x": "0", "y": 0})), "invalid_move");
        assert_eq!(err(0, json!([0, 0])), "invalid_move");
        assert_eq!(err(0, json!({"x": 1})), "invalid_move");
        assert_eq!(err(2, json!({"x": 1, "y": 1})), "not_a_player");

        let mut waiting = started();
        std::sync::Arc::make_mut(&mut waiting.state)["status"] = json!("preGame");
        assert_eq!(
            refusal_reason(
                game.on_player_move(&player(0), &json!({"x": 0, "y": 0}), &waiting)
                    .unwrap_err()
            ),
            "game_not_started"
        );
        waiting.state = json!({"board": 7}).into();
        assert_eq!(
            refusal_reason(
                game.on_player_move(&player(0), &json!({"x": 0, "y": 0}), &waiting)
                    .unwrap_err()
            ),
            "invalid_state"
        );
    }

    #[test]
    fn quitting_mid_game_forfeits_to_the_other_player() {
        let game = TicTacToe::default();
        let mut room = started();
        std::sync::Arc::make_mut(&mut room.players).remove(0);
        let patch = game
            .on_player_quit(&player(0), &room)
            .unwrap()
            .validate()
            .unwrap();
        assert_eq!(patch.finished, Some(true));
        let state = patch.state.unwrap();
        assert_eq!(state["winner"]["id"], "p1");
        assert_eq!(state["status"], "endGame");
    }

    #[test]
    fn quitting_before_the_game_reopens_the_seat() {
        let game = TicTacToe::default();
        let mut room = started();
        std::sync::Arc::make_mut(&mut room.state)["status"] = json!("preGame");
        std::sync::Arc::make_mut(&mut room.players).truncate(0);
        let patch = game
            .on_player_quit(&player(0), &room)
            .unwrap()
            .validate()
            .unwrap();
        assert_eq!(patch.joinable, Some(true));
        assert_eq!(patch.finished, None);
    }

    /// Every reachable game, played out: the rules agree with a brute-force line check at every
    /// node, games end exactly when a line is made or the board fills, and the counts of games
    /// are the known ones (255,168 games: 131,184 won by X, 77,904 by O, 46,080 drawn).
    #[test]
    fn exhaustive_game_tree() {
        fn brute_force_winner(board: &[Cell]) -> Option<Mark> {
            LINES.iter().find_map(|l| {
                let m = board[l[0]]?;
                (board[l[1]] == Some(m) && board[l[2]] == Some(m)).then_some(m)
            })
        }
        fn walk(pos: &mut Position<Square>, counts: &mut [usize; 3]) {
            let cells: Vec<usize> = pos.empty_cells().collect();
            for cell in cells {
                let mover = pos.to_move;
                let outcome = pos.play(cell);
                let winner = brute_force_winner(&pos.board);
                match outcome {
                    Outcome::Won(mark, line) => {
                        assert_eq!(mark, mover);
                        assert_eq!(winner, Some(mover));
                        assert!(line.contains(&cell));
                        counts[if mark == Mark::X { 0 } else { 1 }] += 1;
                    }
                    Outcome::Drawn => {
                        assert_eq!(winner, None);
                        counts[2] += 1;
                    }
                    Outcome::Ongoing => {
                        assert_eq!(winner, None);
                        walk(pos, counts);
                    }
                }
                pos.undo(cell);
            }
        }
        let mut counts = [0; 3];
        walk(&mut Position::default(), &mut counts);
        assert_eq!(counts, [131_184, 77_904, 46_080]);
    }

    #[test]
    fn every_cell_round_trips_through_its_move() {
        for cell in 0..9 {
            assert_eq!(Square::parse_move(&Square::move_json(cell)).unwrap(), cell);
        }
    }

    #[test]
    fn line_table_counts_lines_through_each_cell() {
        let counts: Vec<usize> = (0..9).map(|c| Square::lines_through(c).len()).collect();
        assert_eq!(counts, vec![3, 2, 3, 2, 4, 2, 3, 2, 3]);
    }
}
