// The search a bot of an uploaded game runs, inside one realm that holds the game's own hooks:
// no playout crosses a process boundary. It uses the game's optional exports
// `enumerateMoves(roomState, player) -> move[]` (the legal moves of `player` now; none when it
// is not their turn) and `winners(roomState) -> playerId[]` (left out: `state.winner`, a
// player or an id), and its `onPlayerMove`. Every random choice comes from `options.seed`.
//
//   options: {seed, level: "easy" | "medium" | "hard", playouts, depth, timeMs, stats}
//
// With `stats` (benchmarks), the answer is {move, playouts}: the move and the playouts run.
//
// Easy plays a uniformly random legal move; medium and hard run Monte Carlo tree search (UCT)
// for `playouts` playouts, or until `timeMs` have passed, whichever comes first (the realm's
// own time limit, above that, stops a hook that never returns). A playout that reaches
// `depth` moves without the game finishing counts as a draw.
//
// The search never changes a record it holds, so records share what did not change.
// `onPlayerMove` gets a copy of its own, since games change their arguments there (most do).
// `enumerateMoves` and `winners` get the search's own records, unchanged by contract: copying
// them took more time than the game's code itself. A game that breaks the contract only
// misleads its own bot, whose move still goes through the real `onPlayerMove` in the room.
//
// The answer is `{move}` (`null` when the bot has no move), or `{fault}` for a fault of the
// game's exports other than `onPlayerMove` refusing a move, which the server reports as the
// search having crashed.
(function () {
'use strict';
// A fault of the game's exports, as opposed to a refusal or a stop by the engine.
class SearchFault extends Error {}

const choose = async function (hooks, room, botId, options) {
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const isArray = Array.isArray;
  const now = Date.now;
  const MAX_MOVES = 10000;
  const EXPLORATION = Math.SQRT2;
  const started = now();

  // mulberry32: small, fast, and the same everywhere.
  let seed = options.seed >>> 0;
  function random() {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  const pick = (list) => list[Math.floor(random() * list.length)];
  // Hooks may log; thousands of imagined moves must not fill the server's log.
  const quiet = () => {};
  const logger = Object.freeze({ info: quiet, warn: quiet, error: quiet, log: quiet });
  const clone = (value) => (value === undefined ? undefined : parse(stringify(value)));
  // A copy of a record for `onPlayerMove` (the logger, a function, is not JSON).
  function copy(record) {
    const fresh = clone(record);
    fresh.logger = logger;
    return fresh;
  }

  // The engine's own stops (time, memory, stack) pass through untouched, to be reported as
  // what they are.
  const isLimit = (error) => error instanceof Error
    && (error.name === 'InternalError' || /call stack|stack overflow/.test(error.message));
  function exported(name, ...args) {
    try {
      return hooks[name](...args);
    } catch (error) {
      if (isLimit(error)) throw error;
      const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      throw new SearchFault(`${name} threw ${what}`);
    }
  }

  function movesOf(state, player) {
    const moves = exported('enumerateMoves', state, player);
    if (!isArray(moves)) throw new SearchFault('enumerateMoves must return an array of moves');
    if (moves.length > MAX_MOVES) {
      throw new SearchFault(`enumerateMoves returned ${moves.length} moves; at most ${MAX_MOVES}`);
    }
    return moves;
  }

  // Who moves next, and their moves: the first seated player with any.
  function turn(state) {
    if (state.finished) return null;
    for (let seat = 0; seat < state.players.length; seat += 1) {
      const moves = movesOf(state, state.players[seat]);
      if (moves.length > 0) return { seat, moves };
    }
    return null;
  }

  // The record after the player in `seat` makes `move`: a new one; `state` is left as it was.
  async function play(state, seat, move) {
    const argument = copy(state);
    // A hook may return a promise of its patch, in a room as here.
    const patch = await hooks.onPlayerMove(argument.players[seat], clone(move), argument);
    const after = { ...state, version: state.version + 1 };
    if (patch && typeof patch === 'object') {
      // Made from the hook's own copy, which nothing else holds.
      if ('state' in patch) after.state = patch.state;
      if ('joinable' in patch) after.joinable = patch.joinable;
      if ('finished' in patch) after.finished = patch.finished;
    }
    return after;
  }

  function winnersOf(state) {
    if (typeof hooks.winners === 'function') {
      const winners = exported('winners', state);
      if (!isArray(winners)) throw new SearchFault('winners must return an array of player ids');
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

  // The bot moves whenever it has moves: the game need not be asked about anyone else.
  room.logger = logger;
  const seat = room.players.findIndex((player) => player.id === botId);
  if (room.finished || seat < 0) return null;
  const first = { seat, moves: movesOf(room, room.players[seat]) };
  if (first.moves.length === 0) return null;
  let playouts = 0;
  const answer = (move) => (options.stats ? { move, playouts } : move);
  if (options.level === 'easy' || first.moves.length === 1) return answer(pick(first.moves));

  // A node of the tree: a record, the move that led to it and who made it, and what the
  // playouts through it found. `proven` is the exact result for the bot once the tree below
  // settles it (MCTS-Solver): a finished record, a player to move who has a winning reply,
  // or every reply known. Proven nodes get no more playouts, and a proven loss is never
  // chosen while something else is left, so small games are played exactly.
  function node(state, parent, move, mover, next = turn(state)) {
    return {
      state, parent, move, mover, children: [], visits: 0, wins: 0,
      seat: next ? next.seat : null,
      untried: next ? next.moves.slice() : [],
      proven: next ? null : score(state),
    };
  }

  // Proves `n` from its children if they settle it: the player to move (the bot maximising
  // its result, anyone else minimising it) has a reply proven best, or every reply is proven.
  function settle(n) {
    const botMoves = n.state.players[n.seat].id === botId;
    const best = botMoves ? 1 : 0;
    let all = n.untried.length === 0;
    let bound = botMoves ? 0 : 1;
    for (const child of n.children) {
      if (child.proven === null) {
        all = false;
      } else if (child.proven === best) {
        n.proven = best;
        return true;
      } else {
        bound = botMoves ? Math.max(bound, child.proven) : Math.min(bound, child.proven);
      }
    }
    if (all) n.proven = bound;
    return all;
  }

  const root = node(room, null, null, null, first);
  for (; playouts < options.playouts && root.proven === null
    && now() - started < options.timeMs; playouts += 1) {
    let current = root;
    while (current.untried.length === 0) {
      const parent = current;
      let best = null;
      let bestValue = -Infinity;
      for (const child of parent.children) {
        if (child.proven !== null) continue;
        const value = child.wins / child.visits
          + EXPLORATION * Math.sqrt(Math.log(parent.visits) / child.visits);
        if (value > bestValue) {
          bestValue = value;
          best = child;
        }
      }
      current = best;
    }
    const index = Math.floor(random() * current.untried.length);
    const move = current.untried.splice(index, 1)[0];
    const mover = current.state.players[current.seat].id;
    const child = node(await play(current.state, current.seat, move), current, move, mover);
    current.children.push(child);
    current = child;
    let result = child.proven;
    if (result === null) {
      let state = current.state;
      for (let depth = 0; depth < options.depth; depth += 1) {
        const next = turn(state);
        if (!next) break;
        state = await play(state, next.seat, pick(next.moves));
      }
      result = score(state);
    } else {
      for (let up = child.parent; up !== null && up.proven === null && settle(up);) up = up.parent;
    }
    for (let up = current; up !== null; up = up.parent) {
      up.visits += 1;
      // Each node counts wins for whoever made the move that led to it.
      if (up.mover !== null) up.wins += up.mover === botId ? result : 1 - result;
    }
  }
  // A proven best reply if there is one; else the most searched reply not proven lost, unless
  // a proven result is better than what the playouts through that one found. Lost whatever
  // it does, the bot plays the most searched reply: the one that was longest to refute.
  const lost = root.proven === 0;
  let chosen = null;
  for (const child of root.children) {
    if (root.proven !== null && !lost) {
      if (child.proven === root.proven) return answer(child.move);
    } else if ((lost || child.proven === null) && (!chosen || child.visits > chosen.visits)) {
      chosen = child;
    }
  }
  if (lost) return answer(chosen.move);
  let expected = chosen ? chosen.wins / chosen.visits : -1;
  for (const child of root.children) {
    if (child.proven !== null && child.proven > expected) {
      chosen = child;
      expected = child.proven;
    }
  }
  return answer(chosen ? chosen.move : pick(first.moves));
};

return async function (hooks, room, botId, options) {
  try {
    const move = await choose(hooks, room, botId, options);
    return { move: move === undefined ? null : move };
  } catch (error) {
    if (error instanceof SearchFault) return { fault: error.message };
    throw error;
  }
};
})()
