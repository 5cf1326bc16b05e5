'use strict';
// Phases and stages: everyone bids at once (ActivePlayers.ALL_ONCE), then, in turn from the
// highest bidder, each player plays a card and the other two must answer it in their
// `respond` stage (setActivePlayers) before the turn ends. The highest card wins. Moves
// made at the same time by several players say so (ignoreStaleStateID), as boardgame.io asks.
const { ActivePlayers, INVALID_MOVE } = require('boardgame.io/core');

const Auction = {
  name: 'auction',
  minPlayers: 3,
  maxPlayers: 3,
  setup: () => ({ bids: {}, played: [], answers: [], waiting: 0 }),
  phases: {
    bidding: {
      start: true,
      turn: { activePlayers: ActivePlayers.ALL_ONCE },
      moves: {
        bid: {
          move: ({ G, playerID }, amount) => {
            if (!Number.isInteger(amount) || amount < 0) return INVALID_MOVE;
            G.bids[playerID] = amount;
          },
          ignoreStaleStateID: true,
        },
      },
      endIf: ({ G, ctx }) => Object.keys(G.bids).length === ctx.numPlayers,
      next: 'playing',
    },
    playing: {
      turn: {
        order: {
          first: ({ G }) => Number(Object.entries(G.bids).sort((a, b) => b[1] - a[1] || a[0] - b[0])[0][0]),
          next: ({ ctx }) => (ctx.playOrderPos + 1) % ctx.numPlayers,
        },
        stages: {
          respond: {
            moves: {
              answer: {
                move: ({ G, playerID }, text) => {
                  if (typeof text !== 'string') return INVALID_MOVE;
                  G.answers.push({ playerID, text });
                  G.waiting -= 1;
                },
                ignoreStaleStateID: true,
              },
            },
          },
        },
        endIf: ({ G }) => G.waiting === 0 && G.played.length > 0 && G.answers.length === G.played.length * 2,
      },
      moves: {
        play: ({ G, playerID, events }, card) => {
          if (!Number.isInteger(card)) return INVALID_MOVE;
          G.played.push({ playerID, card });
          G.waiting = 2;
          events.setActivePlayers({ others: 'respond', minMoves: 1, maxMoves: 1 });
        },
      },
    },
  },
  endIf: ({ G }) => {
    if (G.played.length === 3 && G.waiting === 0) {
      const best = [...G.played].sort((a, b) => b.card - a.card)[0];
      return { winner: best.playerID };
    }
  },
};

module.exports = { Auction };
