//! 3D tic-tac-toe on a 3x3x3 cube: cell `x + 3y + 9z`, 49 winning lines. Moves are
//! `{"index": 0..26}` or `{"x", "y", "z"}`; the board is a flat array of 27 `null | "X" | "O"`;
//! a winning line is three cell indices.

use std::borrow::Cow;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{json, Value};

use super::line_game::{index_lines, move_field, Cell, Geometry, Line, LineGame};
use crate::game::{GameError, GameInfo};

pub type TicTacToe3d = LineGame<Cube>;

/// The 3x3x3 cube.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cube;

/// The 49 winning lines, grouped by kind (a test derives them from the geometry).
pub const LINES: [Line; 49] = [
    // Rows along x, in each layer.
    [0, 1, 2],
    [3, 4, 5],
    [6, 7, 8],
    [9, 10, 11],
    [12, 13, 14],
    [15, 16, 17],
    [18, 19, 20],
    [21, 22, 23],
    [24, 25, 26],
    // Columns along y, in each layer.
    [0, 3, 6],
    [1, 4, 7],
    [2, 5, 8],
    [9, 12, 15],
    [10, 13, 16],
    [11, 14, 17],
    [18, 21, 24],
    [19, 22, 25],
    [20, 23, 26],
    // Diagonals within each layer (z fixed).
    [0, 4, 8],
    [2, 4, 6],
    [9, 13, 17],
    [11, 13, 15],
    [18, 22, 26],
    [20, 22, 24],
    // Pillars along z.
    [0, 9, 18],
    [3, 12, 21],
    [6, 15, 24],
    [1, 10, 19],
    [4, 13, 22],
    [7, 16, 25],
    [2, 11, 20],
    [5, 14, 23],
    [8, 17, 26],
    // Diagonals in the vertical planes: y fixed, then x fixed.
    [0, 10, 20],
    [2, 10, 18],
    [3, 13, 23],
    [5, 13, 21],
    [6, 16, 26],
    [8, 16, 24],
    [0, 12, 24],
    [6, 12, 18],
    [1, 13, 25],
    [7, 13, 19],
    [2, 14, 26],
    [8, 14, 20],
    // The four space diagonals through the centre.
    [0, 13, 26],
    [2, 13, 24],
    [6, 13, 20],
    [8, 13, 18],
];

static LINES_THROUGH: LazyLock<Vec<Vec<usize>>> = LazyLock::new(|| index_lines(27, &LINES));

const MOVE_EXAMPLE: &str = r#"{"index": 0..=26} or {"x": 0..=2, "y": 0..=2, "z": 0..=2}"#;

impl Geometry for Cube {
    const INFO: GameInfo = GameInfo {
        id: Cow::Borrowed("tictactoe3d"),
        name: Cow::Borrowed("3D tic-tac-toe"),
        min_players: 2,
        max_players: 2,
        description: Cow::Borrowed(
            "Three in a line in a 3x3x3 cube, along any of its 49 lines. X, the first player, \
             moves first.",
        ),
    };
    const CELLS: usize = 27;

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
        let off_board =
            |what: String| GameError::new("off_board", format!("{what} is off the board"));
        if let Some(index) = move_field(mv, "index", MOVE_EXAMPLE)? {
            if mv.as_object().is_some_and(|o| o.len() != 1) {
                return Err(shape());
            }
            return if (0..27).contains(&index) {
                Ok(index as usize)
            } else {
                Err(off_board(format!("index {index} (0 to 26)")))
            };
        }
        let x = move_field(mv, "x", MOVE_EXAMPLE)?.ok_or_else(shape)?;
        let y = move_field(mv, "y", MOVE_EXAMPLE)?.ok_or_else(shape)?;
        let z = move_field(mv, "z", MOVE_EXAMPLE)?.ok_or_else(shape)?;
        if [x, y, z].iter().any(|c| !(0..3).contains(c)) {
            return Err(off_board(format!("({x}, {y}, {z}) (each from 0 to 2)")));
        }
        Ok((x + 3 * y + 9 * z) as usize)
    }

    fn move_json(cell: usize) -> Value {
        json!({"index": cell})
    }

    fn write_board<S: Serializer>(board: &[Cell], serializer: S) -> Result<S::Ok, S::Error> {
        board.serialize(serializer)
    }

    fn parse_board(board: &Value) -> Option<Vec<Cell>> {
        let cells = Vec::<Cell>::deserialize(board).ok()?;
        (cells.len() == 27).then_some(cells)
    }

    fn line_json(line: Line) -> Value {
        json!(line)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::games::line_game::{Mark, Outcome, Position};

    fn coords(cell: usize) -> [i32; 3] {
        [(cell % 3) as i32, (cell / 3 % 3) as i32, (cell / 9) as i32]
    }

    fn cell([x, y, z]: [i32; 3]) -> Option<usize> {
        [x, y, z]
            .iter()
            .all(|c| (0..3).contains(c))
            .then(|| (x + 3 * y + 9 * z) as usize)
    }

    /// Every set of three collinear, evenly spaced cells: a start and a non-zero step.
    fn derived_lines() -> BTreeSet<[usize; 3]> {
        let mut lines = BTreeSet::new();
        for start in 0..27 {
            for dx in -1..=1 {
                for dy in -1..=1 {
                    for dz in -1..=1 {
                        if (dx, dy, dz) == (0, 0, 0) {
                            continue;
                        }
                        let [x, y, z] = coords(start);
                        let cells = (0..3).map(|k| cell([x + k * dx, y + k * dy, z + k * dz]));
                        if let Some(mut line) = cells.collect::<Option<Vec<usize>>>() {
                            line.sort();
                            lines.insert([line[0], line[1], line[2]]);
                        }
                    }
                }
            }
        }
        lines
    }

    #[test]
    fn the_table_holds_exactly_the_49_geometric_lines() {
        let table: BTreeSet<[usize; 3]> = LINES
            .iter()
            .map(|l| {
                let mut l = *l;
                l.sort();
                l
            })
            .collect();
        assert_eq!(LINES.len(), 49);
        assert_eq!(table.len(), 49, "no line is listed twice");
        assert_eq!(table, derived_lines());
    }

    /// Centre 13, face centres 5, edges 4, corners 7 (49 lines x 3 cells = 147 incidences),
    /// counted from the lines themselves.
    #[test]
    fn lines_through_each_kind_of_cell() {
        let mut total = 0;
        for c in 0..27 {
            let off_centre = coords(c).iter().filter(|&&v| v != 1).count();
            let expected = match off_centre {
                0 => 13, // the centre
                1 => 5,  // a face centre
                2 => 4,  // an edge
                _ => 7,  // a corner
            };
            assert_eq!(Cube::lines_through(c).len(), expected, "cell {c}");
            total += Cube::lines_through(c).len();
        }
        assert_eq!(total, 147);
    }

    /// X completes one line of each of the six kinds while O plays far from it.
    #[test]
    fn a_win_along_each_kind_of_line() {
        let kinds: [(&str, Line); 6] = [
            ("row", [9, 10, 11]),
            ("column", [18, 21, 24]),
            ("layer diagonal", [2, 4, 6]),
            ("pillar", [5, 14, 23]),
            ("vertical-plane diagonal", [1, 13, 25]),
            ("space diagonal", [8, 13, 18]),
        ];
        for (kind, line) in kinds {
            let mut pos = Position::<Cube>::default();
            let mut spare = (0..27).filter(|c| !line.contains(c));
            let mut outcome = Outcome::Ongoing;
            for &x_cell in &line {
                outcome = pos.play(x_cell);
                if outcome != Outcome::Ongoing {
                    break;
                }
                // O answers with the first cell that neither blocks nor wins.
                let o_cell = spare
                    .by_ref()
                    .find(|&c| {
                        pos.board[c].is_none() && {
                            let mut probe = pos.clone();
                            probe.play(c) == Outcome::Ongoing
                        }
                    })
                    .unwrap();
                pos.play(o_cell);
            }
            assert_eq!(outcome, Outcome::Won(Mark::X, line), "{kind}");
        }
    }

    #[test]
    fn moves_by_index_or_coordinates() {
        assert_eq!(Cube::parse_move(&json!({"index": 13})).unwrap(), 13);
        assert_eq!(
            Cube::parse_move(&json!({"x": 2, "y": 1, "z": 2})).unwrap(),
            2 + 3 + 18
        );
        assert_eq!(
            Cube::parse_move(&json!({"index": 27})).unwrap_err().reason,
            "off_board"
        );
        assert_eq!(
            Cube::parse_move(&json!({"x": 0, "y": 3, "z": 0}))
                .unwrap_err()
                .reason,
            "off_board"
        );
        assert_eq!(
            Cube::parse_move(&json!({"x": 0, "y": 1}))
                .unwrap_err()
                .reason,
            "invalid_move"
        );
        assert_eq!(
            Cube::parse_move(&json!({"index": "4"})).unwrap_err().reason,
            "invalid_move"
        );
        assert_eq!(
            Cube::parse_move(&json!({"index": 4, "z": 1}))
                .unwrap_err()
                .reason,
            "invalid_move"
        );
        for c in 0..27 {
            assert_eq!(Cube::parse_move(&Cube::move_json(c)).unwrap(), c);
        }
    }

    #[test]
    fn a_full_cube_always_holds_a_line() {
        // 3x3x3 cannot end in a draw: whatever the order, someone completes a line first.
        use rand::{seq::SliceRandom, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..200 {
            let mut order: Vec<usize> = (0..27).collect();
            order.shuffle(&mut rng);
            let mut pos = Position::<Cube>::default();
            let ended = order
                .iter()
                .map(|&c| pos.play(c))
                .find(|o| *o != Outcome::Ongoing);
            assert!(matches!(ended, Some(Outcome::Won(..))));
        }
    }
}
