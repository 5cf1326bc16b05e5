'use strict';
// Turns of several moves: a player adds to the count as often as they like, may undo and redo
// within their turn, and ends it with the endTurn event (endGame is disabled). Whoever brings
// the count to 10 or more wins.
const { INVALID_MOVE } = require('boardgame.io/core');

const Counter = {
  name: 'counter',
  minPlayers: 2,
  maxPlayers: 2,
  setup: () => ({ count: 0 }),
  events: { endGame: false },
  moves: {
    add: ({ G }, n) => {
      if (!Number.isInteger(n) || n < 1 || n > 3) return INVALID_MOVE;
      G.count += n;
    },
  },
  endIf: ({ G, ctx }) => (G.count >= 10 ? { winner: ctx.currentPlayer } : undefined),
};

module.exports = { Counter };
