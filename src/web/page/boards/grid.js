// Tic-tac-toe's board, and the cell both grids are made of.

import { el } from '../dom.js';

export function cellButton(label, mark, { disabled, win, last, onclick, data }) {
  return el('button', {
    class: `cell${win ? ' win' : ''}${last ? ' last' : ''}`,
    'aria-label': `${label}: ${mark || 'empty'}${win ? ', winning line' : ''}${last ? ', the last move' : ''}`,
    disabled: disabled || Boolean(mark),
    dataset: data,
    onclick,
  }, mark || '');
}

/** Tic-tac-toe: `board[x][y]`, a move is `{x, y}`, the winning line `[[x, y], …]`. */
export function drawGrid(room, canMove, play) {
  const state = room.state || {};
  const board = state.board || [[null, null, null], [null, null, null], [null, null, null]];
  const line = (state.winningLine || []).map(([x, y]) => `${x},${y}`);
  const last = room.lastMove && room.lastMove.move ? `${room.lastMove.move.x},${room.lastMove.move.y}` : null;
  const grid = el('div', { class: 'board', role: 'group', 'aria-label': 'Board' });
  for (let x = 0; x < 3; x += 1) {
    for (let y = 0; y < 3; y += 1) {
      grid.append(cellButton(`row ${x + 1}, column ${y + 1}`, board[x][y], {
        disabled: !canMove, win: line.includes(`${x},${y}`), last: last === `${x},${y}`, data: { cell: `${x},${y}` },
        onclick: () => play([x, y]),
      }));
    }
  }
  return grid;
}
