'use strict';
// Replays a finished match from its Turnhouse history (GET /rooms/{id}/events, read as a
// spectator, on standard input): the same hooks, given the seed the finished room shows, are
// run through every join and move again, and each version must come out exactly as the
// server stored it (compared as a spectator sees it). Usage: node replay.cjs GAME < events.json
const assert = require('node:assert/strict');
const { hooks } = require('turnhouse-boardgameio/server');

const games = {
  cards: () => require('./games/cards.js').Cards,
  tictactoe: () => require('./games/tictactoe.js').TicTacToe,
};
const { events } = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
const seed = events[events.length - 1].state.seed;
assert.equal(typeof seed, 'string', 'a finished match shows its seed');
const game = hooks(games[process.argv[2]](), { seed });
const context = { private: false };
let room = { players: [], state: null, joinable: true, finished: false, roomStartContext: context };
const apply = (patch) => {
  room = { ...room, ...patch };
};
for (const event of events) {
  if (event.kind === 'room_start') apply(game.onRoomStart({ ...room }));
  else if (event.kind === 'join') {
    room = { ...room, players: [...room.players, event.player] };
    apply(game.onPlayerJoin(event.player, { ...room }));
  } else if (event.kind === 'move') apply(game.onPlayerMove(event.player, event.move, { ...room }));
  else throw new Error(`no replay for a version of kind ${event.kind}`);
  const view = game.onPlayerView(null, { ...room });
  assert.deepEqual(
    JSON.parse(JSON.stringify(view)),
    event.state,
    `version ${event.version} replays as stored`,
  );
}
console.log(JSON.stringify({ versions: events.length, seed }));
