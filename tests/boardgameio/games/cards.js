'use strict';
// Hidden hands and dice: the deck is shuffled with ctx.random at setup, each player sees only
// their own hand (playerView), and every card played is rolled for with random.D6. Drawing
// needs the hidden deck, so it runs on the server only (client: false).
const { INVALID_MOVE } = require('boardgame.io/core');

const Cards = {
  name: 'cards',
  minPlayers: 2,
  maxPlayers: 2,
  setup: ({ random }) => {
    const deck = random.Shuffle([...Array(20).keys()]);
    return { hands: { 0: deck.slice(0, 3), 1: deck.slice(3, 6) }, deck: deck.slice(6), table: [] };
  },
  turn: { minMoves: 1, maxMoves: 1 },
  moves: {
    play: ({ G, playerID, random }, card) => {
      const hand = G.hands[playerID];
      const at = Array.isArray(hand) ? hand.indexOf(card) : -1;
      if (at < 0) return INVALID_MOVE;
      hand.splice(at, 1);
      G.table.push({ playerID, card, roll: random.D6() });
    },
    draw: {
      move: ({ G, playerID }) => {
        if (G.deck.length === 0) return INVALID_MOVE;
        G.hands[playerID].push(G.deck.pop());
      },
      client: false,
    },
  },
  endIf: ({ G }) => {
    if (G.table.length < 4) return undefined;
    const score = (id) => G.table.filter((t) => t.playerID === id).reduce((s, t) => s + t.card * t.roll, 0);
    const [a, b] = [score('0'), score('1')];
    return a === b ? { draw: true } : { winner: a > b ? '0' : '1' };
  },
  playerView: ({ G, playerID }) => ({
    ...G,
    deck: G.deck.length,
    hands: Object.fromEntries(
      Object.entries(G.hands).map(([id, hand]) => [id, id === playerID ? hand : hand.length]),
    ),
  }),
};

module.exports = { Cards };
