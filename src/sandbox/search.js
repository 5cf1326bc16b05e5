// The search a bot of an uploaded game runs, inside one realm that holds the game's own hooks:
// no playout crosses a process boundary. It uses the game's optional exports
// `enumerateMoves(roomState, player) -> move[]` (the legal moves of `player` now; none when it
// is not their turn) and `winners(roomState) -> playerId[]` (left out: `state.winner`, a
// player or an id), and its `onPlayerMove`. Every random choice comes from `options.seed`.
//
//   options: {seed, level: "easy" | "medium" | "hard", playouts, depth}
//
// Easy plays a uniformly random legal move; medium and hard run Monte Carlo tree search (UCT)
// for `playouts` playouts (the call's time limit stops it earlier). A playout that reaches
// `depth` moves without the game finishing counts as a draw.
(function (hooks, room, botId, options) {
  'use strict';
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const isArray = Array.isArray;
  const MAX_MOVES = 10000;
  const EXPLORATION = Math.SQRT2;

  // mulberry32: small, fast, and the same everywhere.
  let seed = options.seed >>> 0;
  function random() {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  const pick = (list) => list[Math.floor(random() * list.length)];
  const copy = (value) => parse(stringify(value));

  function movesOf(state, player) {
    const moves = hooks.enumerateMoves(copy(state), copy(player));
    if (!isArray(moves)) throw new TypeError('enumerateMoves must return an array of moves');
    if (moves.length > MAX_MOVES) {
      throw new RangeError(`enumerateMoves returned ${moves.length} moves; at most ${MAX_MOVES}`);
    }
    return moves;
  }

  // Who moves next, and their moves: the first seated player with any.
  function turn(state) {
    if (state.finished) return null;
    for (const player of state.players) {
      const moves = movesOf(state, player);
      if (moves.length > 0) return { player, moves };
    }
    return null;
  }

  function play(state, player, move) {
    const patch = hooks.onPlayerMove(copy(player), copy(move), copy(state));
    const next = copy(state);
    if (patch && typeof patch === 'object') {
      if ('state' in patch) next.state = copy(patch.state);
      if ('joinable' in patch) next.joinable = patch.joinable;
      if ('finished' in patch) next.finished = patch.finished;
    }
    next.version += 1;
    return next;
  }

  function winnersOf(state) {
    if (typeof hooks.winners === 'function') {
      const winners = hooks.winners(copy(state));
      if (!isArray(winners)) throw new TypeError('winners must return an array of player ids');
      return winners;
    }
    const winner = state.state && state.state.winner;
    if (winner === undefined || winner === null) return [];
    return [typeof winner === 'object' ? winner.id : winner];
  }

  // 1 for a win of the bot's, 0 for a loss, a half for a draw (or no end within the cap).
  function score(state) {
    if (!state.finished) return 0.5;
    const winners = winnersOf(state);
    if (winners.length === 0) return 0.5;
    return winners.includes(botId) ? 1 : 0;
  }

  const first = turn(room);
  if (!first || first.player.id !== botId) return null;
  if (options.level === 'easy' || first.moves.length === 1) return pick(first.moves);

  function node(state, parent, move, mover) {
    const next = turn(state);
    return {
      state, parent, move, mover, children: [], visits: 0, wins: 0,
      player: next ? next.player : null,
      untried: next ? next.moves.slice() : [],
    };
  }
  const root = node(room, null, null, null);
  for (let n = 0; n < options.playouts; n += 1) {
    let current = root;
    while (current.untried.length === 0 && current.children.length > 0) {
      const parent = current;
      let best = null;
      let bestValue = -Infinity;
      for (const child of parent.children) {
        const value = child.wins / child.visits
          + EXPLORATION * Math.sqrt(Math.log(parent.visits) / child.visits);
        if (value > bestValue) {
          bestValue = value;
          best = child;
        }
      }
      current = best;
    }
    if (current.untried.length > 0) {
      const index = Math.floor(random() * current.untried.length);
      const move = current.untried.splice(index, 1)[0];
      const child = node(play(current.state, current.player, move), current, move, current.player);
      current.children.push(child);
      current = child;
    }
    let state = current.state;
    for (let depth = 0; depth < options.depth; depth += 1) {
      const next = turn(state);
      if (!next) break;
      state = play(state, next.player, pick(next.moves));
    }
    const result = score(state);
    for (let up = current; up !== null; up = up.parent) {
      up.visits += 1;
      // Each node counts wins for whoever made the move that led to it.
      if (up.mover) up.wins += up.mover.id === botId ? result : 1 - result;
    }
  }
  let chosen = null;
  for (const child of root.children) {
    if (!chosen || child.visits > chosen.visits) chosen = child;
  }
  return chosen ? chosen.move : pick(first.moves);
})
