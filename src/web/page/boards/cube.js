// 3D tic-tac-toe's board.

import { cellButton } from './grid.js';
import { el } from '../dom.js';

/** 3D tic-tac-toe: 27 cells, index `x + 3y + 9z`, drawn as three layers (z). */
export function drawCube(room, canMove, play) {
  const state = room.state || {};
  const board = state.board || new Array(27).fill(null);
  const line = state.winningLine || [];
  const moved = room.lastMove && room.lastMove.move;
  const last = !moved ? null : Number.isInteger(moved.index) ? moved.index : moved.x + 3 * moved.y + 9 * moved.z;
  const layers = el('div', { class: 'layers' });
  for (let z = 0; z < 3; z += 1) {
    const grid = el('div', { class: 'board', role: 'group', 'aria-label': `Layer ${z + 1}` });
    for (let y = 0; y < 3; y += 1) {
      for (let x = 0; x < 3; x += 1) {
        const index = x + 3 * y + 9 * z;
        grid.append(cellButton(`layer ${z + 1}, row ${y + 1}, column ${x + 1}`, board[index], {
          disabled: !canMove, win: line.includes(index), last: last === index, data: { cell: String(index) },
          onclick: () => play(index),
        }));
      }
    }
    layers.append(el('div', { class: 'layer' }, el('h3', {}, `Layer ${z + 1}${z === 0 ? ' (top)' : z === 2 ? ' (bottom)' : ''}`), grid));
  }
  return layers;
}
