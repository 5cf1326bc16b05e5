//! Computer opponents for line games.
//!
//! - easy: a random empty cell;
//! - medium: complete a line if it can, else block the opponent's, else random;
//! - hard: on boards small enough to solve (3x3), perfect play from a full search; on larger
//!   boards (the cube), win or block when it must, look for a forced win through a chain of
//!   threats, and otherwise play the most promising cell that gives the opponent no forced win.

use std::collections::HashMap;

use rand::seq::IndexedRandom;
use rand::Rng;

use super::line_game::{Geometry, Line, Mark, Outcome, Position};
use crate::game::BotLevel;

/// Boards with at most this many cells are searched to the end.
const SOLVABLE_CELLS: usize = 9;
/// How many of its own moves hard looks ahead in a chain of threats.
const ATTACK_DEPTH: u32 = 4;
/// How deep hard checks that a quiet move gives the opponent no forced win.
const DEFENCE_DEPTH: u32 = 3;
/// How many of the best-looking quiet moves are checked that way.
const DEFENCE_CANDIDATES: usize = 8;

/// The cell the side to move plays at `level`; `None` on a full board.
pub fn choose<G: Geometry>(
    level: BotLevel,
    pos: &Position<G>,
    rng: &mut impl Rng,
) -> Option<usize> {
    let empty: Vec<usize> = pos.empty_cells().collect();
    let random = *empty.choose(rng)?;
    let me = pos.to_move;
    Some(match level {
        BotLevel::Easy => random,
        BotLevel::Medium => winning_cells(pos, me)
            .first()
            .or(winning_cells(pos, me.other()).first())
            .copied()
            .unwrap_or(random),
        BotLevel::Hard if G::CELLS <= SOLVABLE_CELLS => perfect(pos, rng),
        BotLevel::Hard => tactical(pos, rng),
    })
}

/// The empty cells where `mark` would complete a line, each once.
pub fn winning_cells<G: Geometry>(pos: &Position<G>, mark: Mark) -> Vec<usize> {
    let mut cells = Vec::new();
    for line in G::lines() {
        if count(pos, line, mark, None) != (2, 0) {
            continue;
        }
        let empty = line.iter().find(|&&c| pos.board[c].is_none());
        if let Some(&cell) = empty.filter(|c| !cells.contains(*c)) {
            cells.push(cell);
        }
    }
    cells
}

/// How many of `line`'s cells, leaving out `skip`, hold `mark` and how many the other mark.
fn count<G: Geometry>(
    pos: &Position<G>,
    line: &Line,
    mark: Mark,
    skip: Option<usize>,
) -> (usize, usize) {
    line.iter()
        .filter(|&&c| Some(c) != skip)
        .fold((0, 0), |(own, theirs), &c| match pos.board[c] {
            Some(m) if m == mark => (own + 1, theirs),
            Some(_) => (own, theirs + 1),
            None => (own, theirs),
        })
}

/// A best move by full search: a win as soon as possible, a loss as late as possible.
fn perfect<G: Geometry>(pos: &Position<G>, rng: &mut impl Rng) -> usize {
    let mut work = pos.clone();
    let mut memo = HashMap::new();
    let scored: Vec<(i32, usize)> = pos
        .empty_cells()
        .map(|cell| (score_move(&mut work, cell, &mut memo), cell))
        .collect();
    let best = scored
        .iter()
        .map(|(score, _)| *score)
        .max()
        .expect("a non-full board");
    let best_cells: Vec<usize> = scored
        .iter()
        .filter(|(s, _)| *s == best)
        .map(|(_, c)| *c)
        .collect();
    *best_cells.choose(rng).expect("at least one best move")
}

/// The value of playing `cell` for the side to move: positive wins, negative loses, and the
/// sooner a win (the later a loss) the larger.
fn score_move<G: Geometry>(
    pos: &mut Position<G>,
    cell: usize,
    memo: &mut HashMap<Vec<Option<Mark>>, i32>,
) -> i32 {
    let score = match pos.play(cell) {
        Outcome::Won(..) => 100 - pos.move_count as i32,
        Outcome::Drawn => 0,
        Outcome::Ongoing => -value(pos, memo),
    };
    pos.undo(cell);
    score
}

fn value<G: Geometry>(pos: &mut Position<G>, memo: &mut HashMap<Vec<Option<Mark>>, i32>) -> i32 {
    if let Some(&known) = memo.get(&pos.board) {
        return known;
    }
    let cells: Vec<usize> = pos.empty_cells().collect();
    let best = cells
        .into_iter()
        .map(|cell| score_move(pos, cell, memo))
        .max()
        .expect("an ongoing game has an empty cell");
    memo.insert(pos.board.clone(), best);
    best
}

fn tactical<G: Geometry>(pos: &Position<G>, rng: &mut impl Rng) -> usize {
    let me = pos.to_move;
    if let Some(&cell) = winning_cells(pos, me).first() {
        return cell;
    }
    // A single threat must be blocked; against two, blocking one is all there is.
    if let Some(&cell) = winning_cells(pos, me.other()).first() {
        return cell;
    }
    let mut work = pos.clone();
    if let Some(cell) = forced_win(&mut work, ATTACK_DEPTH) {
        return cell;
    }
    let mut ranked: Vec<(usize, u32, usize)> = pos
        .empty_cells()
        .map(|cell| (promise(pos, cell), rng.random(), cell))
        .collect();
    ranked.sort_unstable_by(|a, b| b.cmp(a));
    for &(_, _, cell) in ranked.iter().take(DEFENCE_CANDIDATES) {
        work.play(cell);
        let safe = forced_win(&mut work, DEFENCE_DEPTH).is_none();
        work.undo(cell);
        if safe {
            return cell;
        }
    }
    ranked[0].2
}

/// A move for the side to move that wins by force through a chain of threats the opponent
/// must answer, looking `depth` of its own moves ahead.
pub fn forced_win<G: Geometry>(pos: &mut Position<G>, depth: u32) -> Option<usize> {
    let me = pos.to_move;
    if let Some(&cell) = winning_cells(pos, me).first() {
        return Some(cell);
    }
    if depth == 0 {
        return None;
    }
    let must_block = winning_cells(pos, me.other());
    let candidates: Vec<usize> = match must_block.as_slice() {
        [] => pos
            .empty_cells()
            .filter(|&cell| makes_threat(pos, cell, me))
            .collect(),
        [only] => vec![*only],
        _ => return None,
    };
    for cell in candidates {
        pos.play(cell);
        let threats = winning_cells(pos, me);
        let wins = match threats.as_slice() {
            // The opponent can stop only one of two threats.
            [_, _, ..] => true,
            [reply] => {
                pos.play(*reply);
                let wins = forced_win(pos, depth - 1).is_some();
                pos.undo(*reply);
                wins
            }
            [] => false,
        };
        pos.undo(cell);
        if wins {
            return Some(cell);
        }
    }
    None
}

/// Whether `mark` on `cell` would make two in a line with the third cell still empty.
fn makes_threat<G: Geometry>(pos: &Position<G>, cell: usize, mark: Mark) -> bool {
    G::lines_through(cell)
        .iter()
        .any(|&index| count(pos, &G::lines()[index], mark, Some(cell)) == (1, 0))
}

/// How promising a quiet move is: lines it builds on, lines it denies, lines still open.
fn promise<G: Geometry>(pos: &Position<G>, cell: usize) -> usize {
    G::lines_through(cell)
        .iter()
        .map(
            |&index| match count(pos, &G::lines()[index], pos.to_move, Some(cell)) {
                (0, 0) => 1,
                (own, 0) => 8 * own,
                (0, theirs) => 4 * theirs,
                _ => 0,
            },
        )
        .sum()
}

#[cfg(test)]
mod tests {
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    use super::*;
    use crate::games::tictactoe::Square;
    use crate::games::tictactoe3d::Cube;

    /// Every game hard can be dragged into on 3x3, against every possible sequence of the
    /// opponent's moves: hard never loses, and whenever it can win at once, it does.
    fn hard_never_loses(hard_mark: Mark) -> usize {
        fn walk(pos: &mut Position<Square>, hard_mark: Mark, games: &mut usize) {
            if pos.to_move == hard_mark {
                let immediate = winning_cells(pos, hard_mark);
                let cell = choose(
                    BotLevel::Hard,
                    pos,
                    &mut StdRng::seed_from_u64(*games as u64),
                )
                .unwrap();
                if !immediate.is_empty() {
                    assert!(
                        immediate.contains(&cell),
                        "hard missed a win on {:?}",
                        pos.board
                    );
                }
                match pos.play(cell) {
                    Outcome::Ongoing => walk(pos, hard_mark, games),
                    _ => *games += 1,
                }
                pos.undo(cell);
            } else {
                for cell in pos.empty_cells().collect::<Vec<_>>() {
                    match pos.play(cell) {
                        Outcome::Won(..) => panic!("hard lost: {:?}", pos.board),
                        Outcome::Drawn => *games += 1,
                        Outcome::Ongoing => walk(pos, hard_mark, games),
                    }
                    pos.undo(cell);
                }
            }
        }
        let mut games = 0;
        walk(&mut Position::default(), hard_mark, &mut games);
        games
    }

    #[test]
    fn hard_never_loses_on_3x3_as_x() {
        assert!(hard_never_loses(Mark::X) > 0);
    }

    #[test]
    fn hard_never_loses_on_3x3_as_o() {
        assert!(hard_never_loses(Mark::O) > 0);
    }

    /// Plays one seeded game on the cube; returns the winner.
    fn cube_game(x: BotLevel, o: BotLevel, seed: u64) -> Option<Mark> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut pos = Position::<Cube>::default();
        loop {
            let level = if pos.to_move == Mark::X { x } else { o };
            let cell = choose(level, &pos, &mut rng)?;
            match pos.play(cell) {
                Outcome::Won(mark, _) => return Some(mark),
                Outcome::Drawn => return None,
                Outcome::Ongoing => {}
            }
        }
    }

    fn wins(x: BotLevel, o: BotLevel, mark: Mark) -> usize {
        (0..100)
            .filter(|&seed| cube_game(x, o, seed) == Some(mark))
            .count()
    }

    #[test]
    fn hard_first_on_the_cube_beats_medium_every_time() {
        assert_eq!(wins(BotLevel::Hard, BotLevel::Medium, Mark::X), 100);
    }

    #[test]
    fn hard_first_on_the_cube_beats_easy_every_time() {
        assert_eq!(wins(BotLevel::Hard, BotLevel::Easy, Mark::X), 100);
    }

    #[test]
    fn hard_second_on_the_cube_beats_easy_nine_times_in_ten() {
        let won = wins(BotLevel::Easy, BotLevel::Hard, Mark::O);
        assert!(won >= 90, "hard won {won} of 100 as O");
    }

    /// The cube favours the first player (who can force a win), so from the second seat hard
    /// beats medium in most games rather than all.
    #[test]
    fn hard_second_on_the_cube_beats_medium_nine_times_in_ten() {
        let won = wins(BotLevel::Medium, BotLevel::Hard, Mark::O);
        assert!(won >= 90, "hard won {won} of 100 as O against medium");
    }

    /// Random positions on both boards: medium always completes a line it can, and otherwise
    /// always blocks an opponent's single threat.
    fn medium_wins_and_blocks<G: Geometry>() {
        let mut rng = StdRng::seed_from_u64(42);
        let (mut took, mut blocked) = (0, 0);
        for _ in 0..2000 {
            let mut pos = Position::<G>::default();
            let plies = rng.random_range(0..G::CELLS - 1);
            for _ in 0..plies {
                let cell = *pos
                    .empty_cells()
                    .collect::<Vec<_>>()
                    .choose(&mut rng)
                    .unwrap();
                if pos.play(cell) != Outcome::Ongoing {
                    pos.undo(cell);
                    break;
                }
            }
            let me = pos.to_move;
            let cell = choose(BotLevel::Medium, &pos, &mut rng).unwrap();
            let mine = winning_cells(&pos, me);
            let theirs = winning_cells(&pos, me.other());
            if !mine.is_empty() {
                assert!(mine.contains(&cell), "medium missed a win");
                took += 1;
            } else if theirs.len() == 1 {
                assert_eq!(cell, theirs[0], "medium did not block");
                blocked += 1;
            }
        }
        assert!(
            took > 50 && blocked > 50,
            "the positions exercised both rules ({took}, {blocked})"
        );
    }

    #[test]
    fn medium_takes_wins_and_blocks_on_3x3() {
        medium_wins_and_blocks::<Square>();
    }

    #[test]
    fn medium_takes_wins_and_blocks_on_the_cube() {
        medium_wins_and_blocks::<Cube>();
    }

    #[test]
    fn a_double_threat_is_a_forced_win() {
        // X on 0 and 4, O on 5 and 8 (threatening 2). X must block at 2, which threatens
        // 1 and 6 at once: a forced win one move deep.
        let (x, o) = (Some(Mark::X), Some(Mark::O));
        let mut pos =
            Position::<Square>::from_board(vec![x, None, None, None, x, o, None, None, o]);
        assert_eq!(pos.to_move, Mark::X);
        assert_eq!(forced_win(&mut pos, 1), Some(2));
    }
}
