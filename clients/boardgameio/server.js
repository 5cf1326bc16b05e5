'use strict';
// A boardgame.io 0.50 game object as Turnhouse's hooks: the bundle an author uploads is
// `export default hooks(Game)`, with boardgame.io's own reducer inside it.
//
// The room's state is {seats, seed, match, deltalog}:
//   seats    the players' ids in join order; seat i is boardgame.io's playerID String(i);
//   seed     the match's random seed, fixed when the room starts (so replays and bots are exact);
//   match    boardgame.io's state ({G, ctx, plugins, _stateID, _undo, _redo}), null until every
//            seat is taken;
//   deltalog the log entries of the action that made this version.
// What a viewer is shown goes through boardgame.io's own player view (getFilterPlayerView).
const {
  CreateGameReducer,
  InitializeGame,
  ProcessGameConfig,
  getFilterPlayerView,
} = require('boardgame.io/internal');

const MAKE_MOVE = 'MAKE_MOVE';
const GAME_EVENT = 'GAME_EVENT';
const UNDO = 'UNDO';
const REDO = 'REDO';

/** A refusal: Turnhouse answers `422 game_refused` with `code` as the reason. */
class Refusal extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'Refusal';
    this.code = code;
  }
}

function refuse(code, message) {
  throw new Refusal(code, message);
}

/** How many seats a room has: the option, else the game's `minPlayers`, else 2. */
function seatsOf(game, options) {
  const seats = options.numPlayers ?? game.minPlayers ?? 2;
  if (!Number.isInteger(seats) || seats < 1) {
    throw new TypeError(`numPlayers must be a whole number of seats, not ${seats}`);
  }
  return seats;
}

/** The Turnhouse move as boardgame.io's action for `playerID`. */
function actionOf(move, playerID) {
  if (move === null || typeof move !== 'object' || Array.isArray(move)) {
    refuse('invalid_action', 'an action is {type, args}, {event, args}, {undo: true} or {redo: true}');
  }
  const args = move.args === undefined ? [] : move.args;
  if (!Array.isArray(args)) refuse('invalid_action', 'args must be a list');
  if (typeof move.type === 'string') {
    return { type: MAKE_MOVE, payload: { type: move.type, args, playerID } };
  }
  if (typeof move.event === 'string') {
    return { type: GAME_EVENT, payload: { type: move.event, args, playerID } };
  }
  if (move.undo === true) return { type: UNDO, payload: { type: null, args: null, playerID } };
  if (move.redo === true) return { type: REDO, payload: { type: null, args: null, playerID } };
  return refuse('invalid_action', 'an action is {type, args}, {event, args}, {undo: true} or {redo: true}');
}

/** The Master's rule (master.ts): undo and redo only by the one player who may act now. */
function mayUndo(ctx, playerID) {
  if (ctx.activePlayers === null) return ctx.currentPlayer === playerID;
  return ctx.activePlayers[playerID] !== undefined && Object.keys(ctx.activePlayers).length === 1;
}

const WHY = {
  'action/stale_state_id': 'the action was made on an older state of the match',
  'action/unavailable_move': 'that move is not available now',
  'action/invalid_move': 'the game declared the move invalid',
  'action/inactive_player': 'that player may not act now',
  'action/gameover': 'the game is over',
  'action/action_disabled': 'that action is disabled now',
  'action/action_invalid': 'that action is not possible now',
  'action/plugin_invalid': 'a plugin declared the action invalid',
};

function refuseAs(type, detail) {
  refuse(type, detail ? `${WHY[type] || type}: ${detail}` : WHY[type] || type);
}

/** The ids of the seats boardgame.io names (playerIDs "0", "1", …). */
function idsOf(seats, playerIDs) {
  return playerIDs.map((playerID) => seats[Number(playerID)]).filter((id) => id !== undefined);
}

/** A forfeit: whoever is left wins. */
function forfeit(seats, seat) {
  const others = seats.map((_, i) => String(i)).filter((playerID) => playerID !== String(seat));
  return others.length === 1
    ? { winner: others[0], forfeit: String(seat) }
    : { winners: others, forfeit: String(seat) };
}

function randomSeed() {
  return Math.random().toString(36).slice(2, 12);
}

/**
 * Turnhouse's hooks for a boardgame.io game object.
 *
 * options.numPlayers  seats in a room (default: the game's minPlayers, else 2)
 * options.setupData   passed to the game's setup
 * options.onPlayerQuit({G, ctx, playerID}) what a quit does: a gameover value ends the match
 *                     with it; undefined lets it go on. By default the one who left forfeits.
 * options.playerEvents the events a player may send (default: those the game enables, but
 *                     endGame, which would let any player declare any result)
 */
function hooks(gameObject, options = {}) {
  // ProcessGameConfig changes the object it is given, so it gets a copy. This runs once, at
  // the bundle's top level, which the sandbox saves with the game's realm: no call pays for
  // it again, nor for the reducer.
  const game = ProcessGameConfig({ ...gameObject });
  const reduce = CreateGameReducer({ game });
  const filter = getFilterPlayerView(game);
  const numPlayers = seatsOf(gameObject, options);
  // boardgame.io's server runs any event a client sends, enabled or not; here only these.
  const playerEvents = new Set(
    options.playerEvents ?? game.flow.enabledEventNames.filter((name) => name !== 'endGame'),
  );

  /** The patch for a new match state, with the room's clock re-armed when the turn changed. */
  function patchFor(room, match, deltalog) {
    const state = { ...room.state, match, deltalog };
    const finished = match.ctx.gameover !== undefined;
    const patch = { state, finished };
    const clock = room.roomStartContext && room.roomStartContext.clock;
    const before = room.state.match;
    const newTurn = !before || before.ctx.turn !== match.ctx.turn;
    if (clock && !finished && newTurn) {
      patch.triggerTimeoutAt = new Date(Date.now() + clock.moveSeconds * 1000);
    }
    return patch;
  }

  /** Runs `action` through the reducer; a refusal carries boardgame.io's reason. */
  function apply(room, action) {
    const next = reduce(room.state.match, action);
    if (next.transients && next.transients.error) {
      const { type, payload } = next.transients.error;
      refuseAs(type, payload === undefined ? '' : JSON.stringify(payload));
    }
    const { deltalog = [], transients, ...match } = next;
    return patchFor(room, match, deltalog);
  }

  const hooksObject = {
    // Not the game's `name`: boardgame.io's is an identifier, and may be a built-in game's.
    settings: {
      minPlayers: numPlayers,
      maxPlayers: numPlayers,
    },

    onRoomStart() {
      const seed = options.seed ?? gameObject.seed ?? randomSeed();
      return { state: { seats: [], seed, match: null, deltalog: [] }, joinable: true };
    },

    onPlayerJoin(player, room) {
      const seats = [...room.state.seats, player.id];
      if (seats.length < numPlayers) return { state: { ...room.state, seats } };
      const match = InitializeGame({
        game: { ...game, seed: room.state.seed },
        numPlayers,
        setupData: options.setupData,
      });
      const started = { ...room, state: { ...room.state, seats } };
      return { ...patchFor(started, match, []), joinable: false };
    },

    onPlayerQuit(player, room) {
      const { seats, match } = room.state;
      if (!match) {
        return { state: { ...room.state, seats: seats.filter((id) => id !== player.id) } };
      }
      const seat = seats.indexOf(player.id);
      if (seat < 0 || match.ctx.gameover !== undefined) return {};
      const gameover = options.onPlayerQuit
        ? options.onPlayerQuit({ G: match.G, ctx: match.ctx, playerID: String(seat) })
        : forfeit(seats, seat);
      if (gameover === undefined) return {};
      const ended = { ...match, ctx: { ...match.ctx, gameover }, _stateID: match._stateID + 1 };
      return patchFor(room, ended, []);
    },

    onPlayerMove(player, move, room) {
      const { seats, match } = room.state;
      if (!match) refuse('not_started', 'the match starts once every seat is taken');
      const seat = seats.indexOf(player.id);
      if (seat < 0) refuse('not_seated', 'only the players seated in the match may act');
      const playerID = String(seat);
      const action = actionOf(move, playerID);
      // The Master's checks (master.ts onUpdate), in its order.
      const { ctx } = match;
      if (ctx.gameover !== undefined) refuseAs('action/gameover');
      if ((action.type === UNDO || action.type === REDO) && !mayUndo(ctx, playerID)) {
        refuseAs('action/action_disabled', `player ${playerID} cannot undo or redo now`);
      }
      if (!game.flow.isPlayerActive(match.G, ctx, playerID)) {
        refuseAs('action/inactive_player', `player ${playerID}`);
      }
      const found = action.type === MAKE_MOVE ? game.flow.getMove(ctx, move.type, playerID) : null;
      if (action.type === MAKE_MOVE && !found) refuseAs('action/unavailable_move', move.type);
      if (action.type === GAME_EVENT && !playerEvents.has(move.event)) {
        refuseAs('action/action_disabled', `players may not send ${move.event}`);
      }
      const ignoresStale = found && typeof found === 'object' && found.ignoreStaleStateID;
      if (move.stateID !== undefined && move.stateID !== match._stateID && !ignoresStale) {
        refuseAs('action/stale_state_id', `was ${move.stateID}, the match is at ${match._stateID}`);
      }
      return apply(room, action);
    },

    // The room's clock ran out: the turn ends, as if its player had ended it.
    onTimeout(room) {
      const { match } = room.state;
      if (!match || match.ctx.gameover !== undefined) return {};
      return apply(room, { type: GAME_EVENT, payload: { type: 'endTurn', args: [] } });
    },

    // The seed is shown once the match is over (so anyone can replay it), never before: it
    // would tell what every die and shuffle will give.
    onPlayerView(viewer, room) {
      const { seats, seed, match, deltalog } = room.state;
      if (!match) return { seats, match: null, deltalog: [] };
      const seat = viewer ? seats.indexOf(viewer.id) : -1;
      const playerID = seat < 0 ? null : String(seat);
      const [, view, log] = filter(playerID, {
        type: 'update',
        args: [null, { ...match, deltalog }],
      }).args;
      delete view.deltalog;
      const over = match.ctx.gameover !== undefined;
      return over
        ? { seats, seed, match: view, deltalog: log || [] }
        : { seats, match: view, deltalog: log || [] };
    },

    winners(room) {
      const { seats, match } = room.state;
      const gameover = match && match.ctx.gameover;
      if (!gameover || typeof gameover !== 'object') return [];
      if (gameover.winner !== undefined) return idsOf(seats, [String(gameover.winner)]);
      if (Array.isArray(gameover.winners)) return idsOf(seats, gameover.winners.map(String));
      return [];
    },

    toMove(room) {
      const { seats, match } = room.state;
      if (!match || match.ctx.gameover !== undefined) return [];
      const { activePlayers, currentPlayer } = match.ctx;
      return idsOf(seats, activePlayers ? Object.keys(activePlayers) : [currentPlayer]);
    },
  };

  if (gameObject.ai && typeof gameObject.ai.enumerate === 'function') {
    const enumerate = gameObject.ai.enumerate;
    hooksObject.enumerateMoves = (room, player) => {
      const { seats, match } = room.state;
      const seat = seats.indexOf(player.id);
      if (!match || seat < 0 || match.ctx.gameover !== undefined) return [];
      const playerID = String(seat);
      if (!game.flow.isPlayerActive(match.G, match.ctx, playerID)) return [];
      return enumerate(match.G, match.ctx, playerID).map((choice) => {
        const payload = choice.payload || choice;
        if (choice.type === GAME_EVENT || payload.event !== undefined) {
          return { event: payload.event ?? payload.type, args: payload.args ?? [] };
        }
        return { type: payload.move ?? payload.type, args: payload.args ?? [] };
      });
    };
  }
  return hooksObject;
}

module.exports = { hooks, Refusal };
