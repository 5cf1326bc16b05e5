// The session and the page's state: the player (whose token lives in this browser's storage,
// never in a URL), the client every call goes through, and the one object that holds what the
// page shows now (`pageState`).

import { Turnhouse, TurnhouseError } from '../client.js';
import { route } from './router.js';

// In `turnhouse dev`, each seat of the dev page is this page in a frame (`/?dev=<game>&seat=<n>`),
// signed in as that seat's local player. The seats share this browser's storage, so a seat
// keeps its player in memory only.
export const devSeat = (() => {
  const params = new URLSearchParams(location.search);
  return params.has('dev') && params.has('seat') ? { game: params.get('dev'), seat: Number(params.get('seat')) } : null;
})();
export let seatPlayer = null;

export const store = {
  get player() {
    if (devSeat) return seatPlayer;
    try { return JSON.parse(localStorage.getItem('turnhouse.player')); } catch { return null; }
  },
  set player(player) {
    if (devSeat) seatPlayer = player;
    else if (player) localStorage.setItem('turnhouse.player', JSON.stringify(player));
    else localStorage.removeItem('turnhouse.player');
    api.token = player ? player.token : null;
  },
};

export const api = new Turnhouse(location.origin);

/**
 * What the page shows now, shared by its screens: the one owner of the page's state. `route`
 * resets what belongs to a screen when another one is drawn (`resetScreen`).
 */
export const pageState = {
  /** The room on screen: { id, game, version, players, state, joinable, finished, private }. */
  current: null,
  /** The game listing of the version the room on screen plays. */
  currentGame: null,
  /** The room's history as read for its replay: { room, entries: Map<version, entry>, complete }. */
  replayHistory: null,
  /** The version the replay shows, or null when the room is shown live. */
  replaying: null,
  /** The forfeit being asked about ("are you sure?"), if any. */
  askingForfeit: null,
  /** Stops the lobby's or the room's stream, whichever is open. */
  stopWatching: null,
  /** The games, by id, as last listed. */
  gamesById: new Map(),
  /** Why the player was signed out without asking, shown once in the account bar. */
  accountNotice: null,
  /** The room's chat panel (`chat.js`), while a room is on screen. */
  chat: null,
  /** Counts the screens drawn: see `screenCheck`. */
  screen: 0,
};

/**
 * A check that the screen being drawn is still the one on screen. A screen that awaits an
 * answer before drawing gives up when another was drawn meanwhile (the player navigated, or
 * was signed out and sent elsewhere), rather than draw over it or open a stream nobody stops.
 */
export function screenCheck() {
  const screen = pageState.screen;
  return () => screen === pageState.screen;
}

/** Forgets what belonged to the screen being left. */
export function resetScreen() {
  pageState.screen += 1;
  pageState.current = null;
  pageState.currentGame = null;
  pageState.askingForfeit = null;
  pageState.replayHistory = null;
  pageState.replaying = null;
  pageState.chat = null;
}
if (devSeat) {
  document.body.classList.add('dev-seat');
  // A bot's seat has no local player: it shows what a watcher sees.
  const session = await fetch(`/dev/${encodeURIComponent(devSeat.game)}/session`).then((r) => (r.ok ? r.json() : null), () => null);
  const player = session && !new URLSearchParams(location.search).has('bot') ? session.players[devSeat.seat - 1] : null;
  seatPlayer = player ? { id: player.id, username: player.username, token: player.token } : null;
}
api.token = store.player ? store.player.token : null;

/** Runs a client call; resolves to {ok, data} or, when refused, {ok: false, status, data: problem}. */
export async function attempt(action) {
  try {
    return { ok: true, data: await action() };
  } catch (err) {
    if (!(err instanceof TurnhouseError)) throw err;
    if (err.status === 401 && store.player && (!err.problem || err.problem.code === 'invalid_token')) {
      // The token no longer works (signed out from another device, a fresh database): say
      // so, and redraw the screen without the buttons only a signed-in player has, rather
      // than fail forever.
      const name = store.player.username;
      store.player = null;
      pageState.accountNotice = `The key to “${name}” no longer works on this server: this device was signed out (from another device, or the server was reset). Sign in with a code from a device where you still are, or pick a new name.`;
      setTimeout(() => route(true));
    }
    return { ok: false, status: err.status, data: err.problem };
  }
}

/** What to show for a failed call: a game's refusal is its own message. */
export function problemText(result) {
  const problem = result.data || {};
  if (problem.code === 'game_refused') return problem.detail;
  if (problem.code === 'invalid_game_code' && problem.line) return `Line ${problem.line}: ${problem.detail}`;
  return problem.detail || `The request failed (${result.status}).`;
}
