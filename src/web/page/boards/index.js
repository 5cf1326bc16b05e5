// The boards the page draws itself, by game: how each is drawn, what a click sends, and how a
// move reads in words. Any other game has its own page (frames.js) or the generic board.

import { drawBattleship } from './battleship.js';
import { drawCube } from './cube.js';
import { drawGrid } from './grid.js';

export const views = {
  tictactoe: {
    draw: drawGrid, moveOf: (cell) => ({ x: cell[0], y: cell[1] }),
    // The seats' marks, shown beside the players' names.
    marks: ['X', 'O'],
    moveText: (move) => `row ${move.x + 1}, column ${move.y + 1}`,
  },
  tictactoe3d: {
    draw: drawCube, moveOf: (index) => ({ index }),
    marks: ['X', 'O'],
    moveText: (move) => {
      const index = Number.isInteger(move.index) ? move.index : move.x + 3 * move.y + 9 * move.z;
      return `layer ${Math.floor(index / 9) + 1}, row ${Math.floor((index % 9) / 3) + 1}, column ${(index % 3) + 1}`;
    },
  },
  battleship: {
    draw: drawBattleship, moveOf: ([row, col]) => ({ row, col }),
    moveText: (move) => (move.fleet ? 'their fleet' : `row ${move.row + 1}, column ${move.col + 1}`),
  },
};

/** A move as the board labels it ("row 3, column 3"), or as the game's JSON for a game the page does not draw itself. */
export function moveText(game, move) {
  const view = views[game];
  try {
    if (view && view.moveText && move && typeof move === 'object') return view.moveText(move);
  } catch { /* a move of another shape: shown as it is */ }
  return JSON.stringify(move);
}
