'use strict';
// boardgame.io's tic-tac-toe as its tutorial writes it (0.50 API: moves and hooks receive a
// context object { G, ctx, playerID, events, random, ... }), with ai.enumerate for bots.
const { INVALID_MOVE } = require('boardgame.io/core');

const LINES = [
  [0, 1, 2], [3, 4, 5], [6, 7, 8],
  [0, 3, 6], [1, 4, 7], [2, 5, 8],
  [0, 4, 8], [2, 4, 6],
];

function isVictory(cells) {
  return LINES.some(([a, b, c]) => cells[a] !== null && cells[a] === cells[b] && cells[a] === cells[c]);
}

function isDraw(cells) {
  return cells.every((c) => c !== null);
}

const TicTacToe = {
  name: 'tictactoe',
  minPlayers: 2,
  maxPlayers: 2,
  setup: () => ({ cells: Array(9).fill(null) }),
  turn: { minMoves: 1, maxMoves: 1 },
  moves: {
    clickCell: ({ G, playerID }, id) => {
      if (!Number.isInteger(id) || id < 0 || id > 8 || G.cells[id] !== null) {
        return INVALID_MOVE;
      }
      G.cells[id] = playerID;
    },
  },
  endIf: ({ G, ctx }) => {
    if (isVictory(G.cells)) return { winner: ctx.currentPlayer };
    if (isDraw(G.cells)) return { draw: true };
  },
  ai: {
    enumerate: (G) => G.cells.flatMap((cell, id) => (cell === null ? [{ move: 'clickCell', args: [id] }] : [])),
  },
};

module.exports = { TicTacToe };
