'use strict';
// Plays a boardgame.io game on a real Turnhouse server with boardgame.io's own Client (one per
// seat, plus a spectator) and the turnhouse-boardgameio transport, asserting what each client
// sees. Usage: node play.cjs SCENARIO, with SERVER (the API's address), ROOM (the match) and
// TOKENS (the seats' session tokens in seat order, separated by commas) in the environment.
// Prints one line of JSON about the match when it passes; exits non-zero when it does not.
const assert = require('node:assert/strict');
const { Client } = require('boardgame.io/client');
const { Turnhouse } = require('turnhouse-boardgameio/client');
const { TicTacToe } = require('./games/tictactoe.js');
const { Auction } = require('./games/auction.js');
const { Cards } = require('./games/cards.js');

const server = process.env.SERVER;
const matchID = process.env.ROOM;
const tokens = process.env.TOKENS.split(',');
const errors = [];

function clientFor(game, playerID, credentials) {
  const client = Client({
    game,
    matchID,
    playerID,
    credentials,
    debug: false,
    multiplayer: Turnhouse({ server, onError: (problem) => errors.push({ playerID, problem }) }),
  });
  // One subscription per client, which every wait shares: boardgame.io numbers subscriptions
  // by how many there are, so one made after another ended can replace a third.
  client.waiters = new Set();
  client.subscribe((state) => {
    for (const waiter of client.waiters) waiter(state);
  });
  client.start();
  return client;
}

/** Resolves once `test(state)` holds for the client's state (checked on every change). */
function until(client, what, test, ms = 10000) {
  return new Promise((resolve, reject) => {
    const waiter = (state) => {
      if (state && test(state)) {
        clearTimeout(timer);
        client.waiters.delete(waiter);
        resolve(state);
      }
    };
    const timer = setTimeout(() => {
      client.waiters.delete(waiter);
      reject(new Error(`timed out waiting for ${what}; state: ${JSON.stringify(client.getState())}`));
    }, ms);
    client.waiters.add(waiter);
    waiter(client.getState());
  });
}

const seatsOf = (game) => tokens.map((token, seat) => clientFor(game, String(seat), token));

/** Each move in turn by the seat named, every client waiting for it before the next. */
async function playCells(clients, cells) {
  for (const [i, cell] of cells.entries()) {
    const mover = clients[i % 2];
    await until(mover, `seat ${i % 2}'s turn`, (s) => s.isActive && s._stateID === i);
    mover.moves.clickCell(cell);
    for (const client of clients) {
      await until(client, `cell ${cell}`, (s) => s.G.cells[cell] === String(i % 2));
    }
  }
}

const scenarios = {
  async 'tictactoe-win'() {
    const clients = seatsOf(TicTacToe);
    const watcher = clientFor(TicTacToe, null, undefined);
    await playCells(clients, [0, 3, 1, 4, 2]);
    for (const client of [...clients, watcher]) {
      const state = await until(client, 'the win', (s) => s.ctx.gameover !== undefined);
      assert.deepEqual(state.ctx.gameover, { winner: '0' });
      assert.equal(state.isActive, false);
    }
    assert.deepEqual(
      clients[0].matchData.map((m) => m.id),
      [0, 1],
      'matchData names both seats',
    );
    return { gameover: clients[1].getState().ctx.gameover, matchData: clients[0].matchData };
  },

  async 'tictactoe-draw'() {
    const clients = seatsOf(TicTacToe);
    await playCells(clients, [0, 1, 2, 4, 3, 5, 7, 6, 8]);
    for (const client of clients) {
      const state = await until(client, 'the draw', (s) => s.ctx.gameover !== undefined);
      assert.deepEqual(state.ctx.gameover, { draw: true });
    }
    return { gameover: clients[0].getState().ctx.gameover };
  },

  async stages() {
    const clients = seatsOf(Auction);
    for (const client of clients) await until(client, 'bidding', (s) => s.ctx.phase === 'bidding');
    // Everyone bids at once, in any order.
    clients[2].moves.bid(5);
    clients[0].moves.bid(3);
    clients[1].moves.bid(9);
    const playing = await until(clients[0], 'the playing phase', (s) => s.ctx.phase === 'playing');
    assert.equal(playing.ctx.currentPlayer, '1', 'the highest bidder plays first');
    const order = ['1', '2', '0'];
    for (const [turn, player] of order.entries()) {
      const mover = clients[Number(player)];
      await until(mover, `${player} to play`, (s) => s.ctx.currentPlayer === player && s.isActive);
      mover.moves.play(10 + turn * (player === '2' ? 5 : 1));
      const others = clients.filter((_, seat) => String(seat) !== player);
      for (const other of others) {
        await until(other, 'the respond stage', (s) => s.ctx.activePlayers && s.ctx.activePlayers[other.playerID] === 'respond');
      }
      const waiting = await until(mover, 'the others to answer', (s) => s.ctx.activePlayers !== null);
      assert.equal(waiting.isActive, false, 'the player who played waits for the answers');
      for (const other of others) other.moves.answer(`seen by ${other.playerID}`);
      if (turn < 2) {
        await until(mover, 'the next turn', (s) => s.ctx.currentPlayer === order[turn + 1]);
      }
    }
    const over = await until(clients[0], 'the end', (s) => s.ctx.gameover !== undefined);
    assert.deepEqual(over.ctx.gameover, { winner: '2' });
    return { gameover: over.ctx.gameover, answers: over.G.answers.length };
  },

  async hands() {
    const clients = seatsOf(Cards);
    const watcher = clientFor(Cards, null, undefined);
    const seen = [];
    for (const [seat, client] of clients.entries()) {
      const state = await until(client, 'the deal', (s) => s.G.hands !== undefined);
      assert.ok(Array.isArray(state.G.hands[seat]), 'a seat sees its own hand');
      assert.equal(state.G.hands[1 - seat], 3, 'and only the size of the other');
      assert.equal(state.G.deck, 14, 'and only the size of the deck');
      seen.push(state.G.hands[seat]);
    }
    const watched = await until(watcher, 'the deal', (s) => s.G.hands !== undefined);
    assert.deepEqual(watched.G.hands, { 0: 3, 1: 3 }, 'a spectator sees no hand');
    // Each plays a card, then draws one (the draw runs on the server only), then plays again.
    const script = [
      ['0', 'play'], ['1', 'draw'], ['0', 'draw'], ['1', 'play'], ['0', 'play'], ['1', 'play'],
    ];
    for (const [step, [player, move]] of script.entries()) {
      const client = clients[Number(player)];
      const state = await until(client, `${player} to ${move}`, (s) => s.isActive && s._stateID === step);
      if (move === 'play') client.moves.play(state.G.hands[player][0]);
      else client.moves.draw();
      await until(client, `${move} taken`, (s) => s._stateID === step + 1);
    }
    const over = await until(watcher, 'the end', (s) => s.ctx.gameover !== undefined);
    assert.equal(over.G.table.length, 4);
    for (const played of over.G.table) assert.ok(played.roll >= 1 && played.roll <= 6);
    return { gameover: over.ctx.gameover, table: over.G.table, firstHands: seen };
  },
};

const timeout = setTimeout(() => {
  console.error(`scenario ${process.argv[2]} took over a minute`);
  process.exit(2);
}, 60000);
scenarios[process.argv[2]]()
  .then((result) => {
    const refused = errors.filter(({ problem }) => problem && problem.status !== undefined);
    assert.deepEqual(refused, [], 'no action the clients made was refused');
    console.log(JSON.stringify(result));
    clearTimeout(timeout);
    process.exit(0);
  })
  .catch((error) => {
    console.error(error.stack || String(error));
    console.error(JSON.stringify(errors));
    process.exit(1);
  });
