// Turnhouse's page: the lobby, rooms and games. Every call to the server goes through the
// same browser client any frontend can import (/client.js); no build step, no library. Every
// piece of text a user chose is set with textContent, never parsed as HTML.
import { Turnhouse, TurnhouseError } from './client.js';

// ---------------------------------------------------------------------------------------------
// Session: the token lives in this browser's storage, never in a URL.

// In `turnhouse dev`, each seat of the dev page is this page in a frame (`/?dev=<game>&seat=<n>`),
// signed in as that seat's local player. The seats share this browser's storage, so a seat
// keeps its player in memory only.
const devSeat = (() => {
  const params = new URLSearchParams(location.search);
  return params.has('dev') && params.has('seat') ? { game: params.get('dev'), seat: Number(params.get('seat')) } : null;
})();
let seatPlayer = null;

const store = {
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

const api = new Turnhouse(location.origin);
if (devSeat) {
  document.body.classList.add('dev-seat');
  // A bot's seat has no local player: it shows what a watcher sees.
  const session = await fetch(`/dev/${encodeURIComponent(devSeat.game)}/session`).then((r) => (r.ok ? r.json() : null), () => null);
  const player = session && !new URLSearchParams(location.search).has('bot') ? session.players[devSeat.seat - 1] : null;
  seatPlayer = player ? { id: player.id, username: player.username, token: player.token } : null;
}
api.token = store.player ? store.player.token : null;

/** Runs a client call; resolves to {ok, data} or, when refused, {ok: false, status, data: problem}. */
async function attempt(action) {
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
      accountNotice = `The key to “${name}” no longer works on this server: this device was signed out (from another device, or the server was reset). Sign in with a code from a device where you still are, or pick a new name.`;
      setTimeout(() => route(true));
    }
    return { ok: false, status: err.status, data: err.problem };
  }
}

/** What to show for a failed call: a game's refusal is its own message. */
function problemText(result) {
  const problem = result.data || {};
  if (problem.code === 'game_refused') return problem.detail;
  if (problem.code === 'invalid_game_code' && problem.line) return `Line ${problem.line}: ${problem.detail}`;
  return problem.detail || `The request failed (${result.status}).`;
}

// ---------------------------------------------------------------------------------------------
// Small DOM helpers.

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (value === true) node.setAttribute(key, '');
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function setMessage(node, text, kind) {
  node.textContent = text || '';
  node.className = `message ${kind || ''}`;
}

const main = () => document.getElementById('main');

// ---------------------------------------------------------------------------------------------
// Account bar and sign-up.

/** Why the player was signed out without asking, shown once in the account bar. */
let accountNotice = null;

function renderAccount() {
  const bar = document.getElementById('account');
  const me = store.player;
  if (me) {
    accountNotice = null;
    const signOut = async () => {
      await attempt(() => api.signOut());
      store.player = null;
      route(true);
    };
    const confirmSignOut = () => bar.replaceChildren(
      el('span', { id: 'sign-out-warning', role: 'alert', text: `To be “${me.username}” here again after signing out, you will need a sign-in code from another device where you are signed in (Devices shows one). Without one, this browser holds your only key.` }),
      el('button', { class: 'secondary', id: 'sign-out-confirm', onclick: signOut }, 'Sign out anyway'),
      el('button', { id: 'sign-out-cancel', onclick: renderAccount }, 'Stay signed in'));
    bar.replaceChildren(
      el('span', { id: 'me' }, 'Signed in as ', el('a', { href: `#/player/${me.id}`, id: 'my-profile', text: me.username })),
      el('a', { class: 'button secondary', id: 'devices', href: '#/account' }, 'Devices'),
      el('button', { class: 'secondary', id: 'sign-out', onclick: confirmSignOut }, 'Sign out'),
    );
  } else {
    // The notice stays until the player signs in or up again: every screen drawn meanwhile
    // says why they are signed out.
    bar.replaceChildren(el('span', { id: 'signed-out', role: accountNotice ? 'alert' : null, text: accountNotice || 'Not signed in' }));
  }
}

function signUpCard(after) {
  const message = el('p', { class: 'message', role: 'alert' });
  const input = el('input', {
    id: 'username', name: 'username', autocomplete: 'nickname', required: true,
    maxlength: '32', placeholder: 'e.g. alice', 'aria-describedby': 'username-help',
  });
  const form = el('form', {
    id: 'signup-form',
    onsubmit: async (event) => {
      event.preventDefault();
      const result = await attempt(() => api.signUp(input.value.trim()));
      if (!result.ok) return setMessage(message, problemText(result), 'error');
      store.player = result.data;
      renderAccount();
      after();
    },
  },
  el('label', { for: 'username' }, 'Pick a username'),
  el('div', { class: 'row' }, input, el('button', { id: 'signup', type: 'submit' }, 'Start playing')),
  el('p', { id: 'username-help', class: 'muted' }, 'Letters, digits, "-" and "_". Your key stays in this browser.'),
  message);
  return el('section', { class: 'card', 'aria-labelledby': 'signup-title' },
    el('h2', { id: 'signup-title' }, 'Sign up'), form, codeForm(after), passwordForm(after));
}

/** Signing in with a name and the password the player set. */
function passwordForm(after) {
  const message = el('p', { class: 'message', role: 'alert' });
  const name = el('input', { id: 'signin-name', name: 'username', autocomplete: 'username', required: true, maxlength: '32', placeholder: 'your username' });
  const password = el('input', { id: 'signin-password', name: 'password', type: 'password', autocomplete: 'current-password', required: true, placeholder: 'your password' });
  return el('form', {
    id: 'password-form',
    onsubmit: async (event) => {
      event.preventDefault();
      const result = await attempt(() => api.signInWithPassword(name.value.trim(), password.value));
      if (!result.ok) return setMessage(message, problemText(result), 'error');
      store.player = result.data;
      renderAccount();
      after();
    },
  },
  el('p', { class: 'label' }, 'Or sign in with your password'),
  el('div', { class: 'row' },
    el('span', { class: 'field' }, el('label', { for: 'signin-name' }, 'Username'), name),
    el('span', { class: 'field' }, el('label', { for: 'signin-password' }, 'Password'), password),
    el('button', { id: 'signin-password-button', type: 'submit', class: 'secondary' }, 'Sign in')),
  message);
}

/** Signing in on this device with a code shown on another; `code` fills it in. */
function codeForm(after, code = '') {
  const message = el('p', { class: 'message', role: 'alert' });
  const input = el('input', {
    id: 'code', name: 'code', autocomplete: 'one-time-code', required: true, value: code,
    maxlength: '16', placeholder: 'e.g. 7KX4MQ2P', 'aria-describedby': 'code-help',
  });
  const submit = async (event) => {
    if (event) event.preventDefault();
    const result = await attempt(() => api.signInWithCode(input.value.trim()));
    if (!result.ok) return setMessage(message, problemText(result), 'error');
    store.player = result.data;
    renderAccount();
    after();
  };
  const form = el('form', { id: 'code-form', onsubmit: submit },
    el('label', { for: 'code' }, 'Or sign in with a code'),
    el('div', { class: 'row' }, input, el('button', { id: 'signin-code', type: 'submit', class: 'secondary' }, 'Sign in')),
    el('p', { id: 'code-help', class: 'muted' }, 'Already playing on another device? Open Devices there for a code.'),
    message);
  form.submitCode = submit;
  return form;
}

/** `#/signin/<code>`: a link from another device, which signs this one in. */
function showSignIn(code) {
  if (store.player) {
    main().replaceChildren(el('h1', {}, 'Sign in'),
      el('p', { id: 'signin-note', text: `This browser is signed in as ${store.player.username}. Sign out first to sign in with this code.` }),
      el('a', { class: 'button', href: '#/' }, 'Back to the lobby'));
    return;
  }
  const form = codeForm(() => { location.hash = '#/'; }, code);
  main().replaceChildren(el('h1', {}, 'Sign in'), el('section', { class: 'card' }, form));
  form.submitCode();
}

/** Setting or changing the password (the current one is asked for when changing). */
function passwordSetter(message) {
  const current = el('input', { id: 'current-password', type: 'password', autocomplete: 'current-password', placeholder: 'Current password, if you have one' });
  const next = el('input', { id: 'new-password', type: 'password', autocomplete: 'new-password', minlength: '8', required: true, placeholder: 'New password, 8 characters or more' });
  return el('form', {
    id: 'set-password',
    onsubmit: async (event) => {
      event.preventDefault();
      const result = await attempt(() => api.setPassword(next.value, current.value || undefined));
      if (!result.ok) return setMessage(message, problemText(result), 'error');
      current.value = '';
      next.value = '';
      setMessage(message, 'Your password is set: sign in with it on any device.');
    },
  },
  el('span', { class: 'field' }, el('label', { for: 'current-password' }, 'Current password'), current),
  el('span', { class: 'field' }, el('label', { for: 'new-password' }, 'New password'), next),
  el('button', { id: 'set-password-button', type: 'submit' }, 'Set the password'));
}

/** `#/account`: this player's devices, and a code to add another. */
async function showAccount() {
  const me = store.player;
  if (!me) return showLobby();
  const codeLine = el('div', { id: 'code-shown', class: 'code-shown', hidden: true });
  const message = el('p', { id: 'account-message', class: 'message', role: 'alert' });
  const list = el('ul', { id: 'sessions', class: 'sessions', 'aria-label': 'Devices signed in' });
  const showCode = async () => {
    const result = await attempt(() => api.signInCode());
    if (!result.ok) return setMessage(message, problemText(result), 'error');
    const link = `${location.origin}/#/signin/${result.data.code}`;
    codeLine.hidden = false;
    codeLine.replaceChildren(
      el('p', {}, 'Type this code on the other device, or open the link there. It works once, until ',
        el('span', { text: new Date(result.data.expiresAt).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' }) }), '.'),
      el('p', { id: 'sign-in-code', class: 'code', text: result.data.code }),
      el('input', { id: 'sign-in-link', readonly: true, value: link, 'aria-label': 'Sign-in link' }));
  };
  const drawSessions = async () => {
    const result = await attempt(() => api.sessions());
    if (!result.ok) return setMessage(message, problemText(result), 'error');
    list.replaceChildren(...result.data.map((session) => el('li', { dataset: { session: session.id } },
      el('span', {}, el('strong', { text: session.label }),
        session.current ? ' (this device)' : '',
        el('span', { class: 'muted', text: ` · signed in ${when(session.createdAt)}, last used ${when(session.lastUsedAt)}` })),
      session.current ? null : el('button', { class: 'secondary end-session', onclick: async () => {
        const ended = await attempt(() => api.endSession(session.id));
        if (!ended.ok) setMessage(message, problemText(ended), 'error');
        drawSessions();
      } }, 'Sign out'))));
  };
  main().replaceChildren(
    el('h1', {}, `Your account: ${me.username}`),
    el('div', { class: 'grid' },
      el('section', { class: 'card', 'aria-labelledby': 'add-device' },
        el('h2', { id: 'add-device' }, 'Use this account on another device'),
        el('p', { class: 'muted' }, 'A code signs another browser or phone in as you.'),
        el('button', { id: 'new-code', onclick: showCode }, 'Show a code'),
        codeLine),
      el('section', { class: 'card', 'aria-labelledby': 'password-title' },
        el('h2', { id: 'password-title' }, 'Password'),
        el('p', { class: 'muted' }, 'With a password you can sign in as yourself on any device, and get your account back if this browser forgets it.'),
        passwordSetter(message)),
      el('section', { class: 'card', 'aria-labelledby': 'devices-title' },
        el('h2', { id: 'devices-title' }, 'Devices signed in'),
        list,
        el('div', { class: 'row' },
          el('button', { id: 'end-others', class: 'secondary', onclick: async () => {
            const ended = await attempt(() => api.endOtherSessions());
            // The list first, then the message: what the message says is on screen when it does.
            await drawSessions();
            if (ended.ok) setMessage(message, ended.data === 1 ? 'Signed out on 1 other device.' : `Signed out on ${ended.data} other devices.`);
            else setMessage(message, problemText(ended), 'error');
          } }, 'Sign out everywhere else')),
        message),
      el('p', {}, el('a', { href: '#/' }, '← Back to the lobby'))));
  drawSessions();
}

// ---------------------------------------------------------------------------------------------
// The lobby: games, open rooms, games in progress, your rooms, and uploading a game.

/** Stops the lobby's or the room's stream, whichever is open. */
let stopWatching = null;
/** Stops the other streams the screen opened (a game's log). */
const stoppers = new Set();

function closeStreams() {
  if (stopWatching) { stopWatching(); stopWatching = null; }
  for (const stop of stoppers) stop();
  stoppers.clear();
}

let gamesById = new Map();

async function loadGames() {
  const result = await attempt(() => api.games());
  if (result.ok) gamesById = new Map(result.data.map((game) => [game.id, game]));
  return result;
}

async function showLobby() {
  const message = el('p', { id: 'lobby-message', class: 'message', role: 'alert' });
  const gamesCard = el('section', { class: 'card', 'aria-labelledby': 'games-title' },
    el('h2', { id: 'games-title' }, 'Games'), el('div', { id: 'games' }, 'Loading…'));
  const openCard = el('section', { class: 'card', 'aria-labelledby': 'open-title' },
    el('h2', { id: 'open-title' }, 'Open rooms'), el('ul', { id: 'open-rooms', class: 'list' }));
  const liveCard = el('section', { class: 'card', 'aria-labelledby': 'live-title' },
    el('h2', { id: 'live-title' }, 'Being played'), el('ul', { id: 'live-rooms', class: 'list' }));
  const doneCard = el('section', { class: 'card', 'aria-labelledby': 'done-title' },
    el('h2', { id: 'done-title' }, 'Finished games'), el('ul', { id: 'finished-rooms', class: 'list' }));
  const mineCard = store.player ? el('section', { class: 'card', 'aria-labelledby': 'mine-title' },
    el('h2', { id: 'mine-title' }, 'Your rooms'), el('ul', { id: 'my-rooms', class: 'list' })) : null;
  // Two columns that stack on their own (the games are tall, the lists short), so neither
  // leaves a gap beside the other; on a phone, one column with the open rooms first.
  main().replaceChildren(
    el('h1', {}, 'Lobby'),
    el('p', { id: 'online-count', class: 'muted', 'aria-live': 'polite' }),
    message,
    ...(store.player ? [] : [signUpCard(() => route())]),
    el('div', { class: 'lobby' },
      el('div', { class: 'lobby-rooms' }, openCard, mineCard, liveCard, doneCard),
      el('div', { class: 'lobby-games' }, gamesCard, store.player ? uploadCard() : null)),
    el('p', { id: 'rating-legend', class: 'muted' },
      'A rating with a “?” is provisional: its player has played fewer than five rated games of that game, so it still moves a lot.'),
  );
  // Ratings change with games played anywhere, this player's on other devices too: a lobby
  // shown anew reads them anew.
  ratingCache.clear();

  const refresh = debounce(() => refreshLobby(message), 150);
  // Subscribe first, then list: a room that changes in between is in the list or an event.
  const onOnline = (players) => {
    const line = document.getElementById('online-count');
    if (line) line.textContent = `${players} ${players === 1 ? 'player' : 'players'} online`;
  };
  stopWatching = api.watchLobby(null, refresh, { onOnline });
  await refreshLobby(message);
}

function debounce(fn, ms) {
  let timer = null;
  return () => { clearTimeout(timer); timer = setTimeout(fn, ms); };
}

async function refreshLobby(message) {
  const games = await loadGames();
  // The lobby this refresh was for is gone (signed in, or navigated away, meanwhile): the
  // lobby on screen has a refresh of its own, and its game cards must report to its message.
  if (!message || !message.isConnected) return;
  if (!games.ok) return setMessage(message, problemText(games), 'error');
  const target = document.getElementById('games');
  if (!target) return;
  // Redrawn only when the games change, so a level or option being picked is not reset.
  const signature = [...gamesById.values()].map((game) => `${game.id}@${game.version}`).join(' ');
  if (target.dataset.signature !== signature) {
    target.dataset.signature = signature;
    target.replaceChildren(...[...gamesById.values()].map((game) => gameEntry(game, message)));
  }

  const [open, live, mine, done] = await Promise.all([
    attempt(() => api.rooms({ joinable: true, finished: false, limit: 50 })),
    attempt(() => api.rooms({ joinable: false, finished: false, limit: 20 })),
    store.player ? attempt(() => api.rooms({ player: store.player.id, limit: 20 })) : null,
    attempt(() => api.rooms({ finished: true, limit: 10 })),
  ]);
  if (!message.isConnected) return;
  forgetFinishedRatings([done, mine]);
  fillRooms('open-rooms', open, 'No open rooms. Open one with a game’s “New room”, or use quick play.');
  fillRooms('live-rooms', live, 'Nobody is playing right now.');
  fillRooms('finished-rooms', done, 'No game has finished yet.');
  if (mine) fillRooms('my-rooms', mine, 'You have no rooms yet.');
  await fillRatings(main());
}

function fillRooms(id, result, empty) {
  const list = document.getElementById(id);
  if (!list || !result) return;
  if (!result.ok) return list.replaceChildren(el('li', { class: 'message error', text: problemText(result) }));
  const rooms = result.data.rooms;
  if (!rooms.length) return list.replaceChildren(el('li', { class: 'muted', text: empty }));
  list.replaceChildren(...rooms.map(roomEntry));
}

function roomEntry(room) {
  const me = store.player;
  const game = gamesById.get(room.game);
  const names = room.players.length
    ? room.players.flatMap((p, i) => [i ? ' vs ' : null, playerName(p, room.game, room.online)])
    : ['nobody yet'];
  const mine = me && room.players.some((p) => p.id === me.id);
  const canJoin = me && room.joinable && !room.finished && !mine && !heldFromMe(room);
  const state = room.finished ? 'finished' : room.joinable ? 'waiting' : 'playing';
  return el('li', { dataset: { room: room.id, game: room.game } },
    el('span', {},
      el('strong', { text: game ? gameLabel(game) : room.game }), ' · ',
      el('span', { class: 'players-names' }, ...names), ' ',
      el('span', { class: 'badge', text: room.private ? `private, ${state}` : state }), ' ',
      room.clock ? el('span', { class: 'badge clock-badge', text: `${clockText(room.clock.moveSeconds)} a move` }) : null, ' ',
      el('span', { class: 'muted room-when', text: [resultOf(room), when(room.updatedAt)].filter(Boolean).join(', ') })),
    el('span', { class: 'row' },
      canJoin ? el('button', { class: 'join', onclick: () => joinRoom(room.id) }, 'Join') : null,
      room.finished
        // A finished game opens at its first version, to be stepped through.
        ? el('a', { class: 'button secondary replay-link', href: `#/room/${room.id}/v/1` }, 'Replay')
        : el('a', { class: 'button secondary watch', href: `#/room/${room.id}` }, mine ? 'Open' : 'Watch')));
}

/** How a finished room ended, seen by this player: "you won", "Bob won", "a draw". */
function resultOf(room) {
  if (!room.finished) return null;
  const winner = winnerOf(room);
  const mine = store.player;
  if (!winner && room.players.length < 2) return 'closed, nobody joined';
  if (!winner) return 'a draw';
  return mine && winner.id === mine.id ? 'you won' : `won by ${winner.username}`;
}

/** A moment, as a person says it: the time today, else the day and time. */
function when(at) {
  const moment = new Date(at);
  if (Number.isNaN(moment.getTime())) return null;
  const today = new Date().toDateString() === moment.toDateString();
  return today
    ? `today ${moment.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })}`
    : moment.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

async function joinRoom(id) {
  const result = await attempt(() => api.join(id));
  if (!result.ok) {
    const message = document.getElementById('lobby-message');
    if (message) setMessage(message, problemText(result), 'error');
    return;
  }
  location.hash = `#/room/${id}`;
}

/** The per-move times offered first, in seconds. */
const CLOCK_CHOICES = [5, 15, 30, 60, 300, 900, 3600, 86400];
const CLOCK_UNITS = { seconds: 1, minutes: 60, hours: 3600, days: 86400 };

/** A time per move as people say it: "5 s", "1 min 30 s", "2 h", "1 day". */
function clockText(seconds) {
  if (seconds >= 86400 && seconds % 86400 === 0) return seconds === 86400 ? '1 day' : `${seconds / 86400} days`;
  const parts = [];
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const sec = seconds % 60;
  if (h) parts.push(`${h} h`);
  if (m) parts.push(`${m} min`);
  if (sec) parts.push(`${sec} s`);
  return parts.join(' ');
}

function gameEntry(game, message) {
  const signedIn = Boolean(store.player);
  const open = async (body) => {
    if (!body) return;
    const result = await attempt(() => api.createRoom(body));
    if (!result.ok) return setMessage(message, problemText(result), 'error');
    location.hash = `#/room/${result.data.id}`;
  };
  // Games with an onTimeout hook may be played on a clock: the player to move has so long,
  // any time from 5 s to a day (a few usual ones, or any other).
  const clock = signedIn && game.onTimeout ? el('select', {
    class: 'clock', 'aria-label': `${game.name}: time per move`,
    onchange: () => { custom.hidden = clock.value !== 'custom'; },
  }, el('option', { value: '' }, 'no clock'),
  ...CLOCK_CHOICES.map((seconds) => el('option', { value: String(seconds) }, `${clockText(seconds)} a move`)),
  el('option', { value: 'custom' }, 'other…')) : null;
  const amount = el('input', { class: 'clock-amount', type: 'number', min: '1', step: '1', placeholder: '45', 'aria-label': `${game.name}: time per move, amount` });
  const unit = el('select', { class: 'clock-unit', 'aria-label': `${game.name}: time per move, unit` },
    ...Object.keys(CLOCK_UNITS).map((name) => el('option', { value: name }, name)));
  const custom = el('span', { class: 'row', hidden: true }, amount, unit);
  /** The body with the clock chosen; null (and a message) when the time is out of bounds. */
  const timed = (body) => {
    if (!clock || !clock.value) return body;
    const seconds = clock.value === 'custom' ? Number(amount.value) * CLOCK_UNITS[unit.value] : Number(clock.value);
    if (!Number.isInteger(seconds) || seconds < 5 || seconds > 86400) {
      setMessage(message, 'A move may be given from 5 seconds to 1 day.', 'error');
      return null;
    }
    return { ...body, clock: { moveSeconds: seconds } };
  };
  const quickPlay = async () => {
    const options = timed({});
    if (!options) return;
    const result = await attempt(() => api.quickPlay(game.id, options.clock));
    if (!result.ok) return setMessage(message, problemText(result), 'error');
    location.hash = `#/room/${result.data.id}`;
  };
  const about = game.builtin ? 'built in' : `uploaded by ${game.owner ? game.owner.username : '?'}, version ${game.version}${game.hasFrontend ? ', with its own page' : ''}`;
  const actions = signedIn ? el('div', { class: 'row' },
    el('button', { class: 'quick-play', onclick: quickPlay }, 'Quick play'),
    el('button', { class: 'new-room secondary', onclick: () => open(timed({ game: game.id })) }, 'New room'),
    el('button', { class: 'new-private secondary', onclick: () => open(timed({ game: game.id, private: true })) }, 'Private room'),
  ) : el('p', { class: 'muted', text: 'Sign up to play.' });
  // The clock applies to every way of starting a game above and below, so it gets a row of its own.
  const clockRow = clock ? el('div', { class: 'row' }, el('span', {}, 'Time per move:'), clock, custom) : null;
  let bots = null;
  if (signedIn && game.bots) {
    const level = el('select', { class: 'bot-level', 'aria-label': `${game.name}: computer level` },
      el('option', { value: 'easy' }, 'easy'), el('option', { value: 'medium' }, 'medium'),
      el('option', { value: 'hard' }, 'hard'));
    const first = el('input', { type: 'checkbox', class: 'bot-first', id: `bot-first-${game.id}` });
    bots = el('div', { class: 'row' },
      el('span', {}, 'Against the computer:'), level,
      el('label', { for: `bot-first-${game.id}` }, first, ' it moves first'),
      el('button', {
        class: 'play-bot secondary',
        onclick: () => open(timed({ game: game.id, bot: level.value, botPlaysFirst: first.checked })),
      }, 'Play'));
  }
  const mine = !game.builtin && game.owner && store.player && game.owner.id === store.player.id;
  return el('div', { class: 'game', dataset: { game: game.id } },
    el('div', {}, el('strong', { text: game.name }), ' ', el('span', { class: 'badge', text: about, title: about })),
    el('div', { class: 'muted', text: game.description }),
    actions, clockRow, bots, leaderboardOf(game), mine ? logsPanel(game) : null);
}

/**
 * A game's log, for its owner: what its hooks logged and how they failed, newest last,
 * followed live while open.
 */
function logsPanel(game) {
  const lines = el('ol', { class: 'log-lines', 'aria-live': 'polite' });
  let stop = null;
  const panel = el('details', {
    class: 'logs',
    ontoggle: async () => {
      if (!panel.open) {
        if (stop) { stoppers.delete(stop); stop(); stop = null; }
        return;
      }
      const page = await attempt(() => api.gameLogs(game.id, { limit: 200 }));
      if (!page.ok) return lines.replaceChildren(el('li', { class: 'message error', text: problemText(page) }));
      lines.replaceChildren(...page.data.lines.map(logLine));
      if (!page.data.lines.length) lines.append(el('li', { class: 'muted empty', text: 'Nothing logged yet.' }));
      stop = api.watchGameLogs(game.id, (line) => {
        lines.querySelector('.empty')?.remove();
        lines.append(logLine(line));
        while (lines.children.length > 500) lines.firstChild.remove();
      }, { after: page.data.nextAfter });
      stoppers.add(stop);
    },
  }, el('summary', {}, 'Logs (only you see them)'), lines);
  return panel;
}

/** One line of a game's log: when, where (room and version), which hook, and what. */
function logLine(line) {
  return el('li', { class: `log ${line.level}`, dataset: { level: line.level, version: String(line.version) } },
    el('span', { class: 'log-where' },
      el('time', { datetime: line.at, text: line.at.slice(11, 19) }), ' ',
      el('a', { href: `#/room/${line.room}/v/${line.version}`, text: `v${line.version}` }), ' ',
      el('span', { class: 'log-hook', text: line.hook }), ' ',
      el('span', { class: 'log-level', text: line.level })),
    ' ', el('span', { class: 'log-text', text: line.text }));
}

function uploadCard() {
  const message = el('p', { id: 'upload-message', class: 'message', role: 'alert' });
  const id = el('input', { id: 'upload-id', required: true, placeholder: 'my-game', pattern: '[a-z0-9][a-z0-9\\-]{1,39}' });
  const name = el('input', { id: 'upload-name', placeholder: 'My Game (optional)' });
  const description = el('textarea', { id: 'upload-description', maxlength: '1000', placeholder: 'What the game is, in a sentence or two (optional)' });
  const example = el('input', { id: 'upload-move-example', placeholder: '{"column": 3} (optional)' });
  const file = el('input', { id: 'upload-file', type: 'file', accept: '.js,.mjs,.cjs,text/javascript', required: true });
  const page = el('input', { id: 'upload-frontend', type: 'file', accept: '.html,.htm,.zip,.tar.gz,.tgz,text/html,application/zip,application/gzip' });
  const folder = el('input', { id: 'upload-folder', type: 'file', webkitdirectory: true, multiple: true });
  const form = el('form', {
    id: 'upload-form',
    onsubmit: async (event) => {
      event.preventDefault();
      const chosen = file.files[0];
      if (!chosen) return setMessage(message, 'Pick a .js file first.', 'error');
      const upload = new FormData();
      upload.append('source', chosen, chosen.name);
      if (name.value.trim()) upload.append('name', name.value.trim());
      if (description.value.trim()) upload.append('description', description.value.trim());
      if (example.value.trim()) {
        try { JSON.parse(example.value); } catch (err) {
          return setMessage(message, `The move example is not JSON: ${err.message}`, 'error');
        }
        upload.append('moveExample', example.value.trim());
      }
      if (folder.files.length) upload.append('frontend', await zipFolder([...folder.files]), 'build.zip');
      else if (page.files[0]) upload.append('frontend', page.files[0], page.files[0].name);
      setMessage(message, 'Uploading…');
      const result = await attempt(() => api.publishGame(id.value.trim(), upload));
      if (!result.ok) {
        const entry = result.data && result.data.entry ? ` (${result.data.entry})` : '';
        setMessage(message, `${problemText(result)}${entry}`, 'error');
        // A parser names the line where it noticed the mistake, which may be the line after
        // it: the two lines up to it are shown, numbered.
        const line = result.data && result.data.code === 'invalid_game_code' ? result.data.line : null;
        if (line) {
          const lines = (await chosen.text()).split('\n');
          const shown = lines.slice(Math.max(0, line - 2), line)
            .map((text, i) => `${String(Math.max(1, line - 1) + i).padStart(4)} | ${text}`).join('\n');
          message.append(el('pre', { id: 'upload-error-lines', class: 'error-lines', text: shown }));
        }
        return;
      }
      setMessage(message, `Published ${result.data.name}, version ${result.data.version}.`, 'ok');
      refreshLobby(document.getElementById('lobby-message'));
    },
  },
  el('label', { for: 'upload-id' }, 'Game id'), el('div', { class: 'row' }, id),
  el('label', { for: 'upload-name' }, 'Name'), el('div', { class: 'row' }, name),
  el('label', { for: 'upload-description' }, 'Description'), el('div', { class: 'row' }, description),
  el('label', { for: 'upload-move-example' }, 'A move, as JSON, for players to start from'), el('div', { class: 'row' }, example),
  el('label', { for: 'upload-file' }, 'JavaScript file (four hooks)'), el('div', { class: 'row' }, file),
  el('label', { for: 'upload-frontend' }, 'Its own page, optional: one HTML file, or a build folder as .zip or .tar.gz'),
  el('div', { class: 'row' }, page),
  el('label', { for: 'upload-folder' }, '…or the build folder itself'), el('div', { class: 'row' }, folder),
  el('div', { class: 'row' }, el('button', { id: 'upload', type: 'submit' }, 'Upload')),
  el('p', { class: 'muted' }, 'Uploading to an id you own publishes a new version; rooms keep the version they started with.'),
  message);
  return el('section', { class: 'card', 'aria-labelledby': 'upload-title' },
    el('h2', { id: 'upload-title' }, 'Upload a game'), form);
}

/**
 * A chosen folder as one .zip (stored, not compressed: the server gzips what pays), with the
 * paths the browser gives (`build/index.html`); the server takes off the single top folder.
 */
async function zipFolder(files) {
  const encoder = new TextEncoder();
  const parts = [];
  const central = [];
  let offset = 0;
  for (const file of files) {
    const path = encoder.encode(file.webkitRelativePath || file.name);
    const data = new Uint8Array(await file.arrayBuffer());
    const crc = crc32(data);
    const local = zipHeader(0x04034b50, [[20, 2], [0x0800, 2], [0, 2], [0, 4], [crc, 4], [data.length, 4], [data.length, 4], [path.length, 2], [0, 2]]);
    central.push(zipHeader(0x02014b50, [[20, 2], [20, 2], [0x0800, 2], [0, 2], [0, 4], [crc, 4], [data.length, 4], [data.length, 4],
      [path.length, 2], [0, 2], [0, 2], [0, 2], [0, 2], [0, 4], [offset, 4]]), path);
    parts.push(local, path, data);
    offset += local.length + path.length + data.length;
  }
  const size = central.reduce((n, part) => n + part.length, 0);
  const end = zipHeader(0x06054b50, [[0, 2], [0, 2], [files.length, 2], [files.length, 2], [size, 4], [offset, 4], [0, 2]]);
  return new Blob([...parts, ...central, end], { type: 'application/zip' });
}

/** A zip record: its signature, then little-endian fields of [value, bytes]. */
function zipHeader(signature, fields) {
  const bytes = new Uint8Array(4 + fields.reduce((n, [, width]) => n + width, 0));
  const view = new DataView(bytes.buffer);
  view.setUint32(0, signature, true);
  let at = 4;
  for (const [value, width] of fields) {
    if (width === 2) view.setUint16(at, value, true);
    else view.setUint32(at, value >>> 0, true);
    at += width;
  }
  return bytes;
}

let crcTable = null;
function crc32(data) {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n += 1) {
      let c = n;
      for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i += 1) crc = crcTable[(crc ^ data[i]) & 255] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

// ---------------------------------------------------------------------------------------------
// A room: drawn from one version at a time (from an action's answer or the room's stream).

const views = {
  tictactoe: {
    draw: drawGrid, moveOf: (cell) => ({ x: cell[0], y: cell[1] }),
    moveText: (move) => `row ${move.x + 1}, column ${move.y + 1}`,
  },
  tictactoe3d: {
    draw: drawCube, moveOf: (index) => ({ index }),
    moveText: (move) => {
      const index = Number.isInteger(move.index) ? move.index : move.x + 3 * move.y + 9 * move.z;
      return `layer ${Math.floor(index / 9) + 1}, row ${Math.floor((index % 9) / 3) + 1}, column ${(index % 3) + 1}`;
    },
  },
  battleship: {
    draw: drawBattleship, moveOf: ([row, col]) => ({ row, col }),
    moveText: (move) => (move.fleet ? 'their fleet' : `row ${move.row + 1}, column ${move.col + 1}`),
  },
};

/** A move as the board labels it ("row 3, column 3"), or as the game's JSON for a game the page does not draw itself. */
function moveText(game, move) {
  const view = views[game];
  try {
    if (view && view.moveText && move && typeof move === 'object') return view.moveText(move);
  } catch { /* a move of another shape: shown as it is */ }
  return JSON.stringify(move);
}

let current = null; // { id, game, version, players, state, joinable, finished, private }
let currentGame = null; // the game listing of the version the room plays

async function showRoom(id, replayAt) {
  const result = await attempt(() => api.room(id));
  if (!result.ok) {
    main().replaceChildren(el('h1', {}, 'Room'), el('p', { class: 'message error', role: 'alert', text: problemText(result) }),
      el('a', { class: 'button', href: '#/' }, 'Back to the lobby'));
    return;
  }
  if (!gamesById.has(result.data.game)) await loadGames();
  current = result.data;
  learnClaimSpan(current);
  // An uploaded game's room plays one version for its whole life: its page and move example
  // are that version's.
  const version = current.gameVersion
    ? await attempt(() => api.game(current.game, { version: current.gameVersion }))
    : null;
  currentGame = version && version.ok ? version.data : gamesById.get(current.game);
  const game = currentGame;
  const link = `${location.origin}/#/room/${id}`;
  // All of the link shows, wrapped: rooms' links differ only at their end.
  const linkInput = el('textarea', { id: 'share-link', readonly: true, rows: 2, spellcheck: 'false', 'aria-label': 'Link to this room' });
  linkInput.value = link;
  main().replaceChildren(
    el('h1', {}, el('span', { text: game ? gameLabel(game) : current.game }), ' ',
      el('span', { class: 'badge', id: 'room-kind', text: roomKind(current) })),
    el('div', { class: 'grid' },
      el('section', { class: 'card', 'aria-labelledby': 'status' },
        el('p', { id: 'status', class: 'status', 'aria-live': 'polite' }),
        current.clock
          ? el('p', { id: 'time-control', class: 'muted' }, `Time control: ${clockText(current.clock.moveSeconds)} a move.`)
          : null,
        el('p', { id: 'countdown', class: 'countdown', hidden: !current.clock }),
        el('ul', { id: 'players', class: 'players', 'aria-label': 'Players' }),
        el('p', { id: 'presence-note', class: 'muted', 'aria-live': 'polite', hidden: true }),
        el('p', { id: 'score', class: 'muted score', hidden: true }),
        el('div', { id: 'board' }),
        el('p', { id: 'room-message', class: 'message', role: 'alert' }),
        el('div', { id: 'actions', class: 'row' }),
        replayControl()),
      el('section', { class: 'card share-card' },
        el('h2', {}, 'Share'),
        el('div', { class: 'row share' }, linkInput,
          el('button', { class: 'secondary', id: 'copy-link', onclick: (event) => copyLink(event.target, linkInput) }, 'Copy link')),
        el('p', { class: 'muted' }, botOf(current)
          ? 'Anyone with the link can watch this game against the computer.'
          : 'Anyone with the link can watch; a friend can join while there is a free seat.'),
        el('p', {}, el('a', { href: '#/' }, '← Back to the lobby')))),
  );
  replayHistory = { room: id, entries: new Map(), complete: false };
  drawRoom();
  // The move that made the version shown, to mark it on the board once it is known.
  const latest = await attempt(() => api.history(id, { after: current.version - 1, limit: 1 }));
  if (!current || current.id !== id) return;
  const entry = latest.ok ? latest.data.events[0] : null;
  if (entry && entry.version === current.version && !current.lastEvent) {
    current.lastEvent = { version: entry.version, kind: entry.kind, player: entry.player, move: entry.move, ratingChanges: entry.ratingChanges };
    current.lastMove = current.lastMove || lastMoveOf(entry);
    drawRoom();
  }
  // Every version after the one drawn, in order, across reconnections; each is also a step
  // of the replay.
  stopWatching = api.watch(id, (version) => { replayHistory.entries.set(version.version, version); apply(version); },
    { after: current.version, onPresence: (online) => sawPresence(id, online) });
  if (replayAt) await replayTo(replayAt);
}

/** Whether `player` is a computer opponent (bots' names, "hard bot", can be no person's). */
function isBot(player) {
  return /^(easy|medium|hard) bot$/.test(player.username);
}

/** The computer opponent seated in `room`, if any. */
function botOf(room) {
  return [...room.players, ...(room.inactivePlayers || [])].find(isBot) || null;
}

/** What the room is, for its title's badge. */
function roomKind(room) {
  const bot = botOf(room);
  if (bot) return `Against the ${bot.username}`;
  return room.private ? 'Private room' : 'Public room';
}

/** Copies the room's link, and says whether it did. */
async function copyLink(button, input) {
  input.select();
  let copied = false;
  try {
    await navigator.clipboard.writeText(input.value);
    copied = true;
  } catch {
    // No clipboard (an insecure origin, or permission refused): the link is selected to copy.
  }
  button.textContent = copied ? 'Copied' : 'Press Ctrl+C to copy';
  setTimeout(() => { button.textContent = 'Copy link'; }, 2000);
}

/** The move that made a version (a history entry or a stream's version), if a move did. */
function lastMoveOf(entry) {
  return entry.kind === 'move' ? { player: entry.player, move: entry.move } : null;
}

/** What a room says beside its versions: kept from the last whole room read. */
const ROOM_FACTS = ['rematch', 'score', 'closesAt', 'claimableAt'];
/** Versions after which the room says something else beside them: a rematch offered, taken
 * or turned down, a seat filled or left, the room closed. (A game that finishes too.) */
const FACTS_CHANGE_ON = new Set(['reset', 'join', 'quit', 'declined', 'abandoned', 'closed']);

/** Keeps how long after its last version `room` can be claimed, which no move changes. */
function learnClaimSpan(room) {
  if (room.claimableAt) room.claimSpan = Date.parse(room.claimableAt) - Date.parse(room.updatedAt);
}

/** Takes a newer version of the room (from a stream event or an action's answer). */
function apply(version) {
  if (!current || version.version < current.version) return;
  if (version.version === current.version) {
    // The room reached this version by an action's answer, which does not say what happened
    // (a claim, a finishing move and its rating change): the stream's event does, whichever
    // of the two arrives first.
    if (version.kind && (!current.lastEvent || current.lastEvent.version !== version.version)) {
      learnEvent(version);
      drawRoom();
    }
    return;
  }
  // A stream's version names who is seated, not who left: those who left are kept here.
  const left = current.inactivePlayers || [];
  const gone = current.players.filter((p) => !version.players.some((q) => q.id === p.id) && !left.some((q) => q.id === p.id));
  const whole = 'id' in version;
  const wasFinished = current.finished;
  current = { ...current, ...version, inactivePlayers: version.inactivePlayers || [...left, ...gone] };
  if (whole) {
    for (const fact of ROOM_FACTS) if (!(fact in version)) delete current[fact];
    learnClaimSpan(current);
  } else {
    current.updatedAt = version.createdAt;
    // A move moves the time the game can be claimed on by the span the room last said.
    if (current.claimableAt && current.claimSpan !== undefined) {
      current.claimableAt = new Date(Date.parse(version.createdAt) + current.claimSpan).toISOString();
    }
  }
  if (version.kind) learnEvent(version);
  delete current.kind; delete current.player; delete current.move;
  drawRoom();
  // A stream's version says nothing of the rematch offer, the score or whether the room can
  // be claimed: the room itself does, read once the versions that change them settle.
  if (!whole && (FACTS_CHANGE_ON.has(version.kind) || version.finished !== wasFinished)) refreshRoomFacts();
}

/** What happened at `version` (a history entry or stream event): the last move, and the event. */
function learnEvent(version) {
  current.lastMove = lastMoveOf(version);
  current.lastEvent = {
    version: version.version, kind: version.kind, player: version.player, move: version.move, ratingChanges: version.ratingChanges,
  };
  ratingsChanged(current.game, version.ratingChanges);
}

const refreshRoomFacts = debounce(async () => {
  if (!current) return;
  const id = current.id;
  const result = await attempt(() => api.room(id));
  if (!result.ok || !current || current.id !== id) return;
  // A move arrived while the room was read (a quick player right after a join): the facts read
  // belong to a version already passed, so read them again rather than never learn them.
  if (result.data.version !== current.version) {
    refreshRoomFacts();
    return;
  }
  const same = (fact) => JSON.stringify(current[fact]) === JSON.stringify(result.data[fact]);
  if (ROOM_FACTS.every(same)) return;
  for (const fact of ROOM_FACTS) {
    if (fact in result.data) current[fact] = result.data[fact];
    else delete current[fact];
  }
  learnClaimSpan(current);
  drawRoom();
}, 250);

/** Whether `room` holds its seats for a rematch offered to others than this player. */
function heldFromMe(room) {
  const held = heldSeats(room);
  return Boolean(held) && !held.seats.some((p) => me() && p.id === me().id);
}

/** The rematch offer whose seats are still held, if there is one. */
function heldSeats(room) {
  const offer = room.rematch;
  return offer && offer.seats.length && Date.parse(offer.until) > Date.now() ? offer : null;
}

// ---------------------------------------------------------------------------------------------
// The replay: any version of the room, as this viewer saw it (the history per viewer, so a
// game's view hook applies, and other players' hidden moves stay hidden until the end).
// `#/room/<id>/v/<n>` links to version n; leaving the replay returns to the live room.

/** The room's history as this viewer sees it, by version, filled on the first step back. */
let replayHistory = null; // { room, entries: Map<version, entry>, complete }
/** The version the replay shows, or null when the room is shown live. */
let replaying = null;

function replayControl() {
  const step = (to) => () => replayTo(to());
  const slider = el('input', {
    id: 'replay-slider', type: 'range', min: '1', 'aria-label': 'Version to show',
    oninput: (event) => replayTo(Number(event.target.value)),
  });
  return el('div', { id: 'replay', class: 'replay', role: 'group', 'aria-label': 'Replay' },
    el('div', { class: 'row' },
      el('button', { id: 'replay-first', class: 'secondary', title: 'First version', 'aria-label': 'First version', onclick: step(() => 1) }, 'First'),
      el('button', { id: 'replay-prev', class: 'secondary', title: 'Previous version', 'aria-label': 'Previous version', onclick: step(() => (replaying || current.version) - 1) }, '◀'),
      slider,
      el('button', { id: 'replay-next', class: 'secondary', title: 'Next version', 'aria-label': 'Next version', onclick: step(() => (replaying || current.version) + 1) }, '▶'),
      el('button', { id: 'replay-last', class: 'secondary', title: 'Last version', 'aria-label': 'Last version', onclick: step(() => current.version) }, 'Last'),
      el('button', { id: 'replay-live', class: 'secondary', onclick: leaveReplay }, 'Back to live')),
    el('p', { id: 'replay-step', class: 'muted', 'aria-live': 'polite' }));
}

/** Reads the whole history (as this viewer may see it) once; later versions arrive live. */
async function loadHistory() {
  if (replayHistory.complete) return true;
  const room = replayHistory.room;
  let after = 0;
  for (;;) {
    const result = await attempt(() => api.history(room, { after, limit: 1000 }));
    if (!current || current.id !== room) return false;
    if (!result.ok) {
      setMessage(document.getElementById('room-message'), problemText(result), 'error');
      return false;
    }
    for (const entry of result.data.events) replayHistory.entries.set(entry.version, entry);
    if (result.data.nextAfter === null) break;
    after = result.data.nextAfter;
  }
  replayHistory.complete = true;
  return true;
}

/** Shows version `version` (clamped to the room's), with the replay's link in the address. */
async function replayTo(version) {
  if (!current) return;
  const target = Math.max(1, Math.min(Number(version) || 1, current.version));
  if (!(await loadHistory()) || !replayHistory.entries.has(target)) return;
  replaying = target;
  window.history.replaceState(null, '', `#/room/${current.id}/v/${target}`);
  drawRoom();
}

function leaveReplay() {
  if (!current) return;
  replaying = null;
  window.history.replaceState(null, '', `#/room/${current.id}`);
  drawRoom();
}

/** The room as the page shows it: the live room, or the version being replayed. */
function shownRoom() {
  const entry = replaying && replayHistory ? replayHistory.entries.get(replaying) : null;
  if (!entry) return current;
  return {
    ...current,
    version: entry.version, state: entry.state, players: entry.players,
    joinable: entry.joinable, finished: entry.finished, triggerTimeoutAt: null,
    lastMove: lastMoveOf(entry),
  };
}

/** What made a version, and who: "alice played row 2, column 1." */
function stepText(entry) {
  const who = entry.player ? entry.player.username : null;
  const hidden = entry.move === undefined || entry.move === null;
  switch (entry.kind) {
    case 'room_start': return 'The room opened.';
    case 'reset': return `${who} started a new game.`;
    case 'join': return `${who} joined.`;
    case 'quit': return `${who} left.`;
    case 'move': return hidden ? `${who} moved (hidden).` : `${who} played ${moveText(current.game, entry.move)}.`;
    case 'timeout': return 'Time ran out.';
    case 'timeout_fault': return "The game's timeout failed; the clock was stopped.";
    case 'closed': return closedBecause(entry) ? `A moderator closed the room (“${closedBecause(entry)}”).` : 'The room was closed: nobody joined it.';
    case 'renamed': return `A moderator renamed a player: ${who}.`;
    case 'abandoned': return `${who} stopped playing; the game was claimed.`;
    case 'declined': return `${who} declined the rematch.`;
    default: return entry.kind;
  }
}

function drawReplay() {
  const control = document.getElementById('replay');
  if (!control || !current) return;
  const at = replaying || current.version;
  const slider = document.getElementById('replay-slider');
  slider.max = String(current.version);
  slider.value = String(at);
  control.classList.toggle('active', Boolean(replaying));
  document.getElementById('replay-first').disabled = at <= 1;
  document.getElementById('replay-prev').disabled = at <= 1;
  document.getElementById('replay-next').disabled = at >= current.version;
  document.getElementById('replay-last').disabled = at >= current.version;
  document.getElementById('replay-live').hidden = !replaying;
  const entry = replaying ? replayHistory.entries.get(replaying) : null;
  const moves = movesSoFar();
  const made = moves === null ? '' : moves === 0 ? ', no moves yet' : `, after ${moves} ${moves === 1 ? 'move' : 'moves'}`;
  document.getElementById('replay-step').textContent = entry
    ? `Version ${entry.version} of ${current.version}: ${stepText(entry)}`
    : `Live${made}. Step back to replay.`;
}

/** The moves made in the room so far, once its history has been read (null before). */
function movesSoFar() {
  if (!replayHistory || !replayHistory.complete) return null;
  return [...replayHistory.entries.values()].filter((entry) => entry.kind === 'move').length;
}

function me() { return store.player; }
function seatOf(room, playerId) { return room.players.findIndex((p) => p.id === playerId); }

/** Whose turn the state says it is, for any game that keeps it in a usual place. */
function playerToMove(room) {
  const state = room.state || {};
  if (room.finished) return null;
  for (const key of ['plrToMoveIndex', 'turn', 'toMove', 'currentPlayer', 'nextPlayer', 'activePlayer']) {
    const value = state[key];
    if (value === undefined || value === null) continue;
    if (typeof value === 'number') return room.players[value] || null;
    if (typeof value === 'string' || typeof value === 'object') return playerIn({ players: room.players }, value);
  }
  return null;
}

function winnerOf(room) {
  const winner = (room.state || {}).winner;
  if (winner === undefined || winner === null) return null;
  if (typeof winner === 'number') return room.players[winner] || { username: `seat ${winner + 1}` };
  return playerIn(room, winner) || (typeof winner === 'string' ? { username: winner } : winner);
}

/**
 * The room's player a game's state names: by id or by name, or an object with either. A game
 * may keep ids in its state (ids are what `winners` returns); the page names people by their
 * names, whoever has left since.
 */
function playerIn(room, named) {
  const id = typeof named === 'string' ? named : named && typeof named === 'object' ? named.id : null;
  const name = typeof named === 'string' ? named : named && typeof named === 'object' ? named.username : null;
  const everyone = [...(room.players || []), ...(room.inactivePlayers || [])];
  return everyone.find((p) => p.id === id) || everyone.find((p) => name && p.username === name) || null;
}

/** Whether `player` was seated in the room and has left it (a forfeit, say). */
function hasLeft(room, player) {
  return Boolean(player) && seatOf(room, player.id) < 0 && (room.inactivePlayers || []).some((p) => p.id === player.id);
}

/** Why a moderator closed the room, from its `closed` version's move; null for a room closed unplayed. */
function closedBecause(event) {
  return event.move && typeof event.move.reason === 'string' ? event.move.reason : null;
}

/**
 * What the platform did to the room, which no game's page can know: a room closed unplayed, a
 * game claimed from a player who stopped, a rematch offered or declined. Null when none applies.
 */
function houseNote(room) {
  const mine = me();
  const last = replaying ? null : room.lastEvent;
  if (room.finished && last && last.kind === 'closed') {
    const why = closedBecause(last);
    return why ? `A moderator closed this room (“${why}”).` : 'This room was closed: nobody joined it for a long while.';
  }
  if (room.finished && last && last.kind === 'abandoned' && last.player) {
    return mine && last.player.id === mine.id
      ? 'You stopped playing, and the game was claimed.'
      : `${last.player.username} stopped playing, and the game was claimed.`;
  }
  const held = heldSeats(room);
  if (held && room.joinable) {
    const names = held.seats.map((p) => p.username).join(' and ');
    if (mine && held.by.id === mine.id) return `Waiting for ${names} to accept the rematch…`;
    if (mine && held.seats.some((p) => p.id === mine.id)) return `${held.by.username} wants a rematch.`;
    return `A rematch: the seats are held for ${names}.`;
  }
  if (last && last.kind === 'declined' && last.player && room.joinable) {
    return `${last.player.username} declined the rematch. Waiting for another player to join…`;
  }
  return null;
}

/** What the game that just finished did to the viewer's rating: "Your rating: 1512 (+12)." */
function ratingNote(room) {
  const mine = me();
  const changes = (!replaying && room.lastEvent && room.lastEvent.ratingChanges) || [];
  const change = mine && changes.find((c) => c.player.id === mine.id);
  if (!change) return '';
  const delta = change.after - change.before;
  return ` Your rating: ${change.after} (${delta >= 0 ? '+' : '−'}${Math.abs(delta)}).`;
}

/** The line under the board: the state of play, and once a rated game ends, the rating. */
function statusText(room, toMove) {
  const text = playText(room, toMove);
  return room.finished ? text + ratingNote(room) : text;
}

function playText(room, toMove) {
  const mine = me();
  const note = houseNote(room);
  if (note && !(room.lastEvent && room.lastEvent.kind === 'abandoned')) return note;
  if (room.finished) {
    const winner = winnerOf(room);
    if (!winner) return 'Game over: a draw.';
    // Sentences never start with a name: names keep the case their players chose.
    const wins = mine && winner.id === mine.id ? 'You win!' : `Game over: ${winner.username} wins!`;
    if ((room.state || {}).endedBy === 'timeout') {
      const loser = room.players.find((p) => p.id !== winner.id);
      if (loser && mine && loser.id === mine.id) return `You ran out of time. ${winner.username} wins!`;
      if (loser) return `Time ran out for ${loser.username}. ${mine && winner.id === mine.id ? 'You win!' : `${winner.username} wins!`}`;
    }
    if (note) return `${note} ${wins}`;
    if (hasLeft(room, mine)) return `You left the game. ${wins}`;
    return wins;
  }
  if (replaying) {
    // A step of the past says what the room was then, never what to do now.
    if (room.joinable && room.players.length < 2) return 'The room was waiting for players.';
    if (toMove) return mine && toMove.id === mine.id ? 'It was your move.' : `It was ${toMove.username}'s move.`;
    return 'In play.';
  }
  if (room.joinable && room.players.length < 2) return 'Waiting for another player to join…';
  if (toMove && isBot(toMove)) return `The ${toMove.username} is thinking…`;
  if (toMove) return mine && toMove.id === mine.id ? 'Your turn.' : `It is ${toMove.username}'s turn.`;
  if ((room.state || {}).status === 'placing') return 'The fleets are being placed.';
  return 'In play.';
}

function drawRoom() {
  const room = shownRoom();
  const mine = me();
  const seat = mine ? seatOf(room, mine.id) : -1;
  const toMove = playerToMove(room);
  const marks = ['tictactoe', 'tictactoe3d'].includes(room.game) ? ['X', 'O'] : [];
  let status = statusText(room, toMove);
  const offered = heldSeats(room) && mine && heldSeats(room).seats.some((p) => p.id === mine.id);
  if (seat < 0 && !replaying && !hasLeft(room, mine) && !offered) status = `${status} (You are watching.)`;
  yourTurn = !replaying && seat >= 0 && Boolean(toMove) && toMove.id === mine.id && !room.finished;
  drawTitle();
  if (replaying) status = `Replay, version ${room.version}: ${status}`;
  // A game's own page says whose turn it is and who won itself: the page adds only what the
  // frame cannot know (a replay, a watcher), so the status appears once.
  const framed = !views[room.game] && currentGame && currentGame.hasFrontend;
  if (framed) {
    const thinking = !room.finished && toMove && isBot(toMove) ? `The ${toMove.username} is thinking…` : '';
    status = replaying ? `Replay, version ${room.version}.`
      : houseNote(room) || thinking || (seat < 0 && !hasLeft(room, mine) && !offered ? 'You are watching.' : '');
  }
  const statusLine = document.getElementById('status');
  statusLine.textContent = status;
  statusLine.hidden = !status;
  const players = document.getElementById('players');
  players.replaceChildren(...room.players.map((p, i) =>
    el('li', { class: toMove && toMove.id === p.id ? 'turn' : '' },
      isBot(p) ? null : presenceDot(p, room.online), marks[i] ? `${marks[i]}: ` : '',
      playerName(p, room.game), mine && p.id === mine.id ? ' (you)' : '')));
  fillRatings(players);
  drawScore(room);
  const canMove = !replaying && seat >= 0 && !room.finished && (!toMove || toMove.id === mine.id);
  const view = views[room.game];
  const board = document.getElementById('board');
  if (view) {
    board.replaceChildren(view.draw(room, canMove, (cell) => send(view.moveOf(cell))));
  } else if (currentGame && currentGame.hasFrontend) {
    drawFrame(board, room);
  } else {
    drawGeneric(board, room, !replaying && seat >= 0 && !room.finished);
  }
  drawActions(room, replaying ? -1 : seat);
  drawCountdown();
  drawReplay();
}

/** Whether it is this player's turn in the room on screen: a hidden tab's title says so. */
let yourTurn = false;
function drawTitle() {
  document.title = yourTurn && document.hidden ? 'Your turn · Turnhouse' : 'Turnhouse';
}
document.addEventListener('visibilitychange', drawTitle);

/** The time the player to move has left, while the room has a deadline; ticks on its own. */
let countdownTimer = null;
function drawCountdown() {
  const line = document.getElementById('countdown');
  clearTimeout(countdownTimer);
  if (!line || !current) return;
  const toMove = playerToMove(current);
  const deadline = current.triggerTimeoutAt ? Date.parse(current.triggerTimeoutAt) : NaN;
  if (replaying || current.finished || !toMove || Number.isNaN(deadline)) {
    // A room on a clock keeps the line's place, so the board below never jumps.
    line.classList.add('idle');
    return;
  }
  line.classList.remove('idle');
  const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
  const mine = me();
  const clock = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}`;
  line.textContent = mine && toMove.id === mine.id ? `You have ${clock} left to move.` : `Time left for ${toMove.username} to move: ${clock}.`;
  line.classList.toggle('urgent', left <= 10);
  countdownTimer = setTimeout(drawCountdown, 250);
}

function drawActions(room, seat) {
  const actions = document.getElementById('actions');
  const buttons = [];
  clearTimeout(idleTimer);
  if (replaying) return actions.replaceChildren();
  const held = heldSeats(room);
  if (held) idleTimer = later(drawRoom, Date.parse(held.until));
  if (me() && held && held.seats.some((p) => p.id === me().id)) {
    buttons.push(
      el('button', { id: 'rematch-accept', onclick: () => act('join') }, 'Accept'),
      el('button', { id: 'rematch-decline', class: 'secondary', onclick: () => act('decline') }, 'Decline'));
  } else if (me() && seat < 0 && room.joinable && !room.finished && !held) {
    buttons.push(el('button', { id: 'join', onclick: () => act('join') }, 'Join this game'));
  }
  const claimable = seat >= 0 && !room.finished && room.claimableAt ? Date.parse(room.claimableAt) : NaN;
  const toMove = playerToMove(room);
  if (!Number.isNaN(claimable) && !(toMove && toMove.id === me().id)) {
    if (claimable <= Date.now()) {
      const waitingOn = toMove ? toMove.username : 'The others';
      buttons.push(
        el('span', { id: 'claim-note', class: 'muted', text: `${waitingOn} has not played since ${when(room.updatedAt)}.` }),
        el('button', { id: 'claim', onclick: () => act('claim') }, 'Claim the win'));
    } else {
      idleTimer = later(drawRoom, claimable);
    }
  }
  if (seat >= 0 && !room.finished) {
    if (room.joinable) {
      buttons.push(el('button', { id: 'forfeit', class: 'secondary', onclick: () => act('quit') }, 'Leave'));
    } else {
      const others = room.players.filter((p) => p.id !== me().id).map((p) => p.username).join(' and ');
      // The question stays asked while the room is redrawn (a version arriving, its facts
      // read again), until it is answered.
      const answer = (yes) => () => {
        askingForfeit = null;
        if (yes) act('quit');
        else drawActions(room, seat);
      };
      if (askingForfeit === room.id) {
        return actions.replaceChildren(
          el('span', { id: 'forfeit-warning', role: 'alert', text: `Forfeit? The game goes to ${others || 'the others'}.` }),
          el('button', { id: 'forfeit-confirm', class: 'secondary', onclick: answer(true) }, 'Yes, forfeit'),
          el('button', { id: 'forfeit-cancel', onclick: answer(false) }, 'Keep playing'));
      }
      const ask = () => { askingForfeit = room.id; drawActions(room, seat); };
      buttons.push(el('button', { id: 'forfeit', class: 'secondary', onclick: ask }, 'Forfeit'));
    }
  }
  if (seat >= 0 && room.finished) {
    const closed = room.lastEvent && room.lastEvent.kind === 'closed';
    buttons.push(el('button', { id: 'play-again', onclick: () => act('reset') }, closed ? 'Open it again' : 'Play again'));
  }
  if (!me()) buttons.push(el('a', { class: 'button secondary', href: '#/' }, 'Sign up to play'));
  actions.replaceChildren(...buttons);
}

const actions = {
  join: (id) => api.join(id),
  quit: (id) => api.quit(id),
  reset: (id) => api.playAgain(id),
  decline: (id) => api.decline(id),
  claim: (id) => api.claim(id),
};

/** When the room next needs drawing on its own: a rematch offer lapsing, a game claimable. */
let idleTimer = null;
/** The room whose player was asked "Forfeit?" and has not answered yet. */
let askingForfeit = null;

/** Runs `fn` at `at` (milliseconds since 1970), or in a day at the latest. */
function later(fn, at) {
  return setTimeout(fn, Math.min(Math.max(0, at - Date.now()) + 50, 86_400_000));
}

/** The room's running score, once a game has finished in it: "Score after 3 games: …". */
function drawScore(room) {
  const line = document.getElementById('score');
  if (!line) return;
  const score = room.score;
  line.hidden = !score || replaying;
  if (!score) return;
  const everyone = [...room.players, ...(room.inactivePlayers || [])];
  const seen = new Set();
  const people = everyone.filter((p) => !seen.has(p.id) && seen.add(p.id));
  const parts = people.map((p) => `${p.username} ${score.wins[p.id] || 0}`);
  if (score.draws) parts.push(score.draws === 1 ? '1 draw' : `${score.draws} draws`);
  const games = score.games === 1 ? '1 game' : `${score.games} games`;
  line.textContent = `Score after ${games}: ${parts.join(' · ')}`;
}

async function act(action) {
  const id = current.id;
  report(await attempt(() => actions[action](id)));
}

async function send(move) {
  const id = current.id;
  const result = await attempt(() => api.move(id, move));
  report(result);
  return result;
}

function report(result) {
  const message = document.getElementById('room-message');
  if (!message) return;
  if (!result.ok) return setMessage(message, problemText(result), 'error');
  setMessage(message, '');
  apply(result.data);
}

// ---------------------------------------------------------------------------------------------
// A game's own page: its version's folder, framed with sandbox="allow-scripts" (never
// allow-same-origin), so it runs in an opaque origin that cannot reach this page, its storage
// or the token. It talks to this page only by postMessage, and this page listens only to that
// frame's window. Two protocols, one listener: the first message a frame sends decides which
// it speaks, and a replaced or reloaded frame starts again.
//
// Turnhouse's own messages:
//   page -> frame  {type: "turnhouse:state", room, you}   on load and on every version
//   frame -> page  {type: "turnhouse:ready"}              asks for the state again
//   frame -> page  {type: "turnhouse:resize", height}     its page's height in pixels: the
//                                                         frame takes it (120 to 4000)
//   frame -> page  {type: "turnhouse:move", move}         sent as the viewer's move, answered by
//   page -> frame  {type: "turnhouse:result", ok, problem}
//
// penpal's (v5 and v6), which @urturn/client speaks: the frame sends {penpal: "syn"}, the page
// answers "synAck" with its methods (getLocalPlayer, makeMove, getServerTimeOffsetMS), the
// frame "ack" with its own (stateChanged); then "call" / "reply" by id, both ways. No state
// is sent before the "ack".

/** Moves from the frame waiting for an answer; past this, the frame is told to slow down. */
const FRAME_MOVES_IN_FLIGHT = 4;
let frameMoves = 0;

/** The frame's window and what it has said: {window, protocol: null | "turnhouse" | "penpal", acked}. */
let frameLink = null;

function gameFrame() {
  return document.getElementById('game-frame');
}

function drawFrame(board, room) {
  const src = api.frontendUrl(room.game, room.gameVersion);
  let frame = gameFrame();
  if (!frame || frame.dataset.src !== src) {
    frame = el('iframe', {
      id: 'game-frame', class: 'game-frame', src, sandbox: 'allow-scripts',
      title: `${currentGame.name}: the game's own page`, dataset: { src },
    });
    // The author's background shows through a page that paints none; the height is theirs,
    // within what the screen can show (see app.css).
    frame.style.background = currentGame.frontendBackground || 'white';
    frame.style.setProperty('--frame-height', `${currentGame.frontendHeight || 600}px`);
    frame.addEventListener('load', () => {
      // A frame that has said nothing yet is sent Turnhouse's state, as before it could choose.
      if (!frameLink || frameLink.window !== frame.contentWindow || !frameLink.protocol) postState();
    });
    frameLink = null;
    board.replaceChildren(frame);
    board.classList.add('framed');
  }
  postState();
}

/** A frame's page asked to be `height` pixels tall: it gets that, within the page's bounds. */
const FRAME_HEIGHTS = [120, 4000];
function resizeFrame(height) {
  const frame = gameFrame();
  if (!frame || typeof height !== 'number' || !Number.isFinite(height)) return;
  const [low, high] = FRAME_HEIGHTS;
  // The frame's border is inside its height (box-sizing: border-box).
  frame.style.setProperty('--frame-height', `${Math.round(Math.min(high, Math.max(low, height))) + 2}px`);
}

/** The link to the frame that sent `source`, started anew when the frame is a new window. */
function linkFor(source) {
  const frame = gameFrame();
  if (!frame || !frame.contentWindow || source !== frame.contentWindow) return null;
  if (!frameLink || frameLink.window !== source) frameLink = { window: source, protocol: null, acked: false };
  return frameLink;
}

/** Sends the room to the frame, in the protocol it speaks. */
function postState() {
  const frame = gameFrame();
  if (!frame || !frame.contentWindow || !current) return;
  // In a replay the frame is handed the past version as this viewer saw it.
  const room = shownRoom();
  const link = frameLink && frameLink.window === frame.contentWindow ? frameLink : null;
  if (link && link.protocol === 'penpal') {
    if (link.acked && link.methods.includes('stateChanged')) {
      penpalCall(link, 'stateChanged', [urturnRoomState(room)]);
    }
    return;
  }
  const mine = me();
  // A replay cannot be played: the frame shows the past version as a watcher would, so that
  // it offers no seat a turn.
  const you = mine && !replaying ? room.players.find((p) => p.id === mine.id) || null : null;
  // The frame's origin is opaque ("null"), so no narrower target can be named; what is sent
  // is what this viewer may see of the room, and never the token.
  frame.contentWindow.postMessage({ type: 'turnhouse:state', room, you: you && { id: you.id, username: you.username } }, '*');
}

/** A move from the frame, as the viewer's: resolves to {ok, problem}, never throws. */
async function moveFromFrame(move) {
  if (replaying) {
    return {
      ok: false,
      problem: { status: 409, code: 'replaying', detail: 'This is a replay of a past version; go back to live to move.' },
    };
  }
  if (frameMoves >= FRAME_MOVES_IN_FLIGHT) {
    return {
      ok: false,
      problem: { status: 429, code: 'too_many_moves', detail: 'Moves are already on their way; wait for their answers.' },
    };
  }
  frameMoves += 1;
  try {
    const result = await send(move);
    return { ok: result.ok, problem: result.ok ? null : result.data };
  } finally {
    frameMoves -= 1;
  }
}

// Turnhouse's own protocol.
async function onTurnhouseMessage(link, message) {
  if (message.type === 'turnhouse:ready') postState();
  else if (message.type === 'turnhouse:resize') resizeFrame(message.height);
  else if (message.type === 'turnhouse:move') {
    const { ok, problem } = await moveFromFrame(message.move);
    link.window.postMessage({ type: 'turnhouse:result', ok, problem: problem || null }, '*');
  }
}

// penpal's protocol, for @urturn/client.
const PENPAL_METHODS = ['getLocalPlayer', 'makeMove', 'getServerTimeOffsetMS'];
let penpalCalls = 0;

function penpalCall(link, methodName, args) {
  penpalCalls += 1;
  link.window.postMessage({ penpal: 'call', id: `turnhouse-${penpalCalls}`, methodName, args }, '*');
}

/** The room as UrTurn's client expects it, as this viewer may see it. */
function urturnRoomState(room) {
  return {
    players: room.players.map(({ id, username }) => ({ id, username })),
    joinable: room.joinable,
    finished: room.finished,
    state: room.state,
    version: room.version,
    roomStartContext: { private: Boolean(room.private) },
  };
}

/** Who the frame's player is: the signed-in player, or a watcher no player is. */
function localPlayer() {
  const mine = me();
  return mine ? { id: mine.id, username: mine.username } : { id: 'watcher', username: 'watcher' };
}

const penpalMethods = {
  getLocalPlayer: async () => localPlayer(),
  async makeMove(move) {
    const { ok, problem } = await moveFromFrame(move);
    if (ok) return { success: true };
    const name = (problem && (problem.reason || problem.code)) || 'error';
    return { error: { name, message: (problem && problem.detail) || 'The move was not made.' } };
  },
  getServerTimeOffsetMS: async () => serverClock.offset(),
};

async function onPenpalMessage(link, message) {
  if (message.penpal === 'syn') {
    // A frame that loads again says syn again: its earlier connection is gone.
    Object.assign(link, { acked: false, methods: [] });
    link.window.postMessage({ penpal: 'synAck', methodNames: PENPAL_METHODS }, '*');
  } else if (message.penpal === 'ack') {
    link.acked = true;
    link.methods = Array.isArray(message.methodNames) ? message.methodNames : [];
    serverClock.keepFresh();
    postState();
  } else if (message.penpal === 'call' && link.acked) {
    const method = Object.hasOwn(penpalMethods, message.methodName) ? penpalMethods[message.methodName] : null;
    let reply;
    if (!method) {
      reply = {
        resolution: 'rejected', returnValueIsError: true,
        returnValue: { name: 'Error', message: `The page has no method ${String(message.methodName)}.` },
      };
    } else {
      reply = { resolution: 'fulfilled', returnValue: await method(...(Array.isArray(message.args) ? message.args : [])) };
    }
    link.window.postMessage({ penpal: 'reply', id: message.id, ...reply }, '*');
  }
  // Replies to stateChanged need no answer.
}

window.addEventListener('message', (event) => {
  const link = linkFor(event.source);
  const message = event.data;
  if (!link || !message || typeof message !== 'object') return;
  const protocol = typeof message.penpal === 'string' ? 'penpal'
    : typeof message.type === 'string' && message.type.startsWith('turnhouse:') ? 'turnhouse' : null;
  if (!protocol) return;
  if (!link.protocol) link.protocol = protocol;
  if (link.protocol !== protocol) return;
  if (protocol === 'penpal') onPenpalMessage(link, message);
  else onTurnhouseMessage(link, message);
});

/**
 * The offset from this browser's clock to the server's, in milliseconds (Cristian's
 * algorithm: half the round trip is taken as the way back). A frame may ask twice a second;
 * the server is asked at most once a minute, and only while a frame listens.
 */
const serverClock = {
  value: 0,
  measuredAt: 0,
  pending: null,
  offset() { this.keepFresh(); return this.value; },
  keepFresh() {
    if (this.pending || Date.now() - this.measuredAt < 60_000) return;
    const sent = Date.now();
    this.pending = api.serverTime().then((now) => {
      const received = Date.now();
      this.value = Math.round(now + (received - sent) / 2 - received);
      this.measuredAt = received;
    }).catch(() => { this.measuredAt = Date.now() - 50_000; }).finally(() => { this.pending = null; });
  },
};

function cellButton(label, mark, { disabled, win, last, onclick, data }) {
  return el('button', {
    class: `cell${win ? ' win' : ''}${last ? ' last' : ''}`,
    'aria-label': `${label}: ${mark || 'empty'}${win ? ', winning line' : ''}${last ? ', the last move' : ''}`,
    disabled: disabled || Boolean(mark),
    dataset: data,
    onclick,
  }, mark || '');
}

/** Tic-tac-toe: `board[x][y]`, a move is `{x, y}`, the winning line `[[x, y], …]`. */
function drawGrid(room, canMove, play) {
  const state = room.state || {};
  const board = state.board || [[null, null, null], [null, null, null], [null, null, null]];
  const line = (state.winningLine || []).map(([x, y]) => `${x},${y}`);
  const last = room.lastMove && room.lastMove.move ? `${room.lastMove.move.x},${room.lastMove.move.y}` : null;
  const grid = el('div', { class: 'board', role: 'group', 'aria-label': 'Board' });
  for (let x = 0; x < 3; x += 1) {
    for (let y = 0; y < 3; y += 1) {
      grid.append(cellButton(`row ${x + 1}, column ${y + 1}`, board[x][y], {
        disabled: !canMove, win: line.includes(`${x},${y}`), last: last === `${x},${y}`, data: { cell: `${x},${y}` },
        onclick: () => play([x, y]),
      }));
    }
  }
  return grid;
}

/**
 * Battleship: two 10x10 grids. The server shows each viewer only what they may see: your own
 * fleet, and of the other only the ships already sunk (a watcher: no ship until it sinks).
 * While placing, your fleet is placed at random here and sent as one move.
 */
const FLEET = [5, 4, 3, 3, 2];
const SHIP_NAMES = { 5: ['carrier'], 4: ['battleship'], 3: ['cruiser', 'submarine'], 2: ['destroyer'] };

/**
 * The fleet being placed by hand, before it is sent as one move: placements in the order of
 * FLEET, and whether the next ship lies across. Kept per room; "R" turns the next ship.
 */
let fleetDraft = null; // { room, placements: [{row, col, across}], across }

/** The cells of a placement of a ship of `size`. */
function shipCells({ row, col, across }, size) {
  return Array.from({ length: size }, (_, i) => (across ? [row, col + i] : [row + i, col]));
}

/** Adds the next ship at (row, col) if it fits on the board and touches no other; else false. */
function placeNext(row, col) {
  const size = FLEET[fleetDraft.placements.length];
  if (!size) return false;
  const placement = { row, col, across: fleetDraft.across };
  const taken = new Set(fleetDraft.placements.flatMap((p, i) => shipCells(p, FLEET[i]).map(String)));
  const cells = shipCells(placement, size);
  if (cells.some(([r, c]) => r > 9 || c > 9 || taken.has(String([r, c])))) return false;
  fleetDraft.placements.push(placement);
  return true;
}

document.addEventListener('keydown', (event) => {
  const typing = event.target instanceof Element && event.target.matches('input, textarea, select');
  if (!fleetDraft || typing || event.key.toLowerCase() !== 'r') return;
  fleetDraft.across = !fleetDraft.across;
  drawRoom();
});

/** The ships sunk on one side, each named ("cruiser"): by size, the 3s in the order they sank. */
function sunkNames(shots) {
  const seen = {};
  return shots.filter((shot) => shot.sunk).map((shot) => {
    const names = SHIP_NAMES[shot.sunk.size] || ['ship'];
    const n = seen[shot.sunk.size] || 0;
    seen[shot.sunk.size] = n + 1;
    return names[Math.min(n, names.length - 1)];
  });
}

/** What the last shot did, in words: "Shot by bob at row 3, column 5: a hit, and sunk: the cruiser!" */
function shotNews(room, moverSeat, shots) {
  const shot = (shots[moverSeat] || []).at(-1);
  if (!shot) return '';
  const mine = me();
  const mover = room.players[moverSeat];
  const who = mine && mover && mover.id === mine.id ? 'Your shot' : `Shot by ${mover ? mover.username : 'a player'}`;
  const at = `at row ${shot.row + 1}, column ${shot.col + 1}`;
  if (!shot.hit) return `${who} ${at}: a miss.`;
  if (!shot.sunk) return `${who} ${at}: a hit!`;
  const names = sunkNames(shots[moverSeat]);
  return `${who} ${at}: a hit, and sunk: the ${names.at(-1)}!`;
}

/**
 * Battleship: two 10x10 grids side by side. The server shows each viewer only what they may
 * see: your own fleet, and of the other only the ships already sunk (a watcher: no ship until
 * it sinks). Your fleet is placed by hand (click where each ship starts; R turns it) or at
 * random, and sent as one move.
 */
function drawBattleship(room, canMove, play) {
  const state = room.state || {};
  const mine = me();
  const seat = mine ? seatOf(room, mine.id) : -1;
  const fleets = state.fleets || [null, null];
  const shots = state.shots || [[], []];
  const placed = state.placed || fleets.map(Boolean);
  const placing = !replaying && state.status === 'placing' && seat >= 0 && !placed[seat];
  if (!placing) fleetDraft = null;
  else if (!fleetDraft || fleetDraft.room !== room.id) fleetDraft = { room: room.id, placements: [], across: true };
  const wrap = el('div', { class: 'fleets' });
  // The last shot is public even when the move is not shown: the mover's latest shot.
  const moverSeat = room.lastMove && room.lastMove.player ? seatOf(room, room.lastMove.player.id) : -1;
  const lastShot = moverSeat >= 0 && state.status !== 'placing' ? (shots[moverSeat] || []).at(-1) : null;
  const draftCells = new Set(placing ? fleetDraft.placements.flatMap((p, i) => shipCells(p, FLEET[i]).map(([r, c]) => `${r},${c}`)) : []);
  // Seen from a seat: your waters first; a watcher sees the first player's waters first.
  const own = seat >= 0 ? seat : 0;
  const seas = el('div', { class: 'seas' });
  for (const side of [own, 1 - own]) {
    const player = room.players[side];
    const shipCellsShown = new Set((fleets[side] || []).flatMap((ship) => ship.cells.map(([r, c]) => `${r},${c}`)));
    const incoming = new Map((shots[1 - side] || []).map((shot) => [`${shot.row},${shot.col}`, shot]));
    const target = seat >= 0 && side !== seat;
    const drafting = placing && side === seat;
    const grid = el('div', { class: 'sea', role: 'group', 'aria-label': `${player ? player.username : 'empty seat'}'s waters` });
    for (let r = 0; r < 10; r += 1) {
      for (let c = 0; c < 10; c += 1) {
        const key = `${r},${c}`;
        const shot = incoming.get(key);
        const ship = shipCellsShown.has(key) || (drafting && draftCells.has(key));
        const mark = shot ? (shot.hit ? '✕' : '•') : '';
        const last = lastShot && side === 1 - moverSeat && lastShot.row === r && lastShot.col === c;
        grid.append(el('button', {
          class: `spot${ship ? ' ship' : ''}${shot && shot.hit ? ' hit' : ''}${last ? ' last' : ''}`,
          'aria-label': `row ${r + 1}, column ${c + 1}: ${shot ? (shot.hit ? 'hit' : 'miss') : ship ? 'ship' : 'water'}`,
          disabled: drafting ? fleetDraft.placements.length === FLEET.length
            : !(target && canMove && state.status === 'inGame' && !shot),
          dataset: { cell: key, side: String(side) },
          onclick: drafting ? () => { if (placeNext(r, c)) drawRoom(); } : () => play([r, c]),
        }, mark));
      }
    }
    // Ships afloat: five, less those the other side has sunk.
    const afloat = FLEET.length - (shots[1 - side] || []).filter((shot) => shot.sunk).length;
    const name = player ? player.username : null;
    const title = side === seat ? 'Your fleet'
      : !name ? 'Waiting for a player' : seat >= 0 ? `Fire here: the waters of ${name}` : `The waters of ${name}`;
    const sunk = sunkNames(shots[1 - side] || []);
    seas.append(el('div', { class: 'waters' },
      el('h3', { text: title }),
      el('p', { class: 'muted afloat', dataset: { side: String(side) }, text: `${afloat} of ${FLEET.length} ships afloat${sunk.length ? ` (sunk: ${sunk.join(', ')})` : ''}` }),
      grid));
  }
  const news = moverSeat >= 0 && state.status !== 'placing' ? shotNews(room, moverSeat, shots) : '';
  wrap.append(el('p', { id: 'shot-news', class: 'shot-news', 'aria-live': 'polite', text: news }), seas);
  if (placing) {
    const next = FLEET[fleetDraft.placements.length];
    const nextName = next ? SHIP_NAMES[next][FLEET.slice(0, fleetDraft.placements.length).filter((size) => size === next).length] || SHIP_NAMES[next][0] : null;
    wrap.append(el('p', { id: 'placing-help', class: 'muted' }, next
      ? `Place your ${nextName} (${next} cells, ${fleetDraft.across ? 'across' : 'down'}): click the cell where it starts. R turns it.`
      : 'Your fleet is ready.'),
    el('div', { class: 'row' },
      el('button', { id: 'turn-ship', class: 'secondary', disabled: !next, onclick: () => { fleetDraft.across = !fleetDraft.across; drawRoom(); } }, fleetDraft.across ? 'Turn: across → down' : 'Turn: down → across'),
      el('button', { id: 'undo-ship', class: 'secondary', disabled: !fleetDraft.placements.length, onclick: () => { fleetDraft.placements.pop(); drawRoom(); } }, 'Undo'),
      el('button', { id: 'random-fleet', class: 'secondary', onclick: () => { fleetDraft.placements = randomFleet(); drawRoom(); } }, 'At random'),
      el('button', { id: 'place-fleet', disabled: Boolean(next), onclick: () => send({ fleet: fleetDraft.placements }) }, 'Place my fleet')));
  }
  return wrap;
}

/** A random fleet that fits: one ship per size, none overlapping. */
function randomFleet() {
  for (;;) {
    const taken = new Set();
    const fleet = [];
    for (const size of FLEET) {
      const across = Math.random() < 0.5;
      const row = Math.floor(Math.random() * (across ? 10 : 11 - size));
      const col = Math.floor(Math.random() * (across ? 11 - size : 10));
      const cells = Array.from({ length: size }, (_, i) => (across ? `${row},${col + i}` : `${row + i},${col}`));
      if (cells.some((cell) => taken.has(cell))) break;
      cells.forEach((cell) => taken.add(cell));
      fleet.push({ row, col, across });
    }
    if (fleet.length === FLEET.length) return fleet;
  }
}

/** 3D tic-tac-toe: 27 cells, index `x + 3y + 9z`, drawn as three layers (z). */
function drawCube(room, canMove, play) {
  const state = room.state || {};
  const board = state.board || new Array(27).fill(null);
  const line = state.winningLine || [];
  const moved = room.lastMove && room.lastMove.move;
  const last = !moved ? null : Number.isInteger(moved.index) ? moved.index : moved.x + 3 * moved.y + 9 * moved.z;
  const layers = el('div', { class: 'layers' });
  for (let z = 0; z < 3; z += 1) {
    const grid = el('div', { class: 'board', role: 'group', 'aria-label': `Layer ${z + 1}` });
    for (let y = 0; y < 3; y += 1) {
      for (let x = 0; x < 3; x += 1) {
        const index = x + 3 * y + 9 * z;
        grid.append(cellButton(`layer ${z + 1}, row ${y + 1}, column ${x + 1}`, board[index], {
          disabled: !canMove, win: line.includes(index), last: last === index, data: { cell: String(index) },
          onclick: () => play(index),
        }));
      }
    }
    layers.append(el('div', { class: 'layer' }, el('h3', {}, `Layer ${z + 1}${z === 0 ? ' (top)' : z === 2 ? ' (bottom)' : ''}`), grid));
  }
  return layers;
}

/** Any game: the state as collapsible JSON, and a box that sends any JSON as the move. */
function drawGeneric(board, room, canMove) {
  // An example only where the game gives one: no one shape fits every game.
  const example = currentGame && currentGame.moveExample != null ? JSON.stringify(currentGame.moveExample) : undefined;
  // The move box is the same element across redraws, so what is being typed, the caret and
  // the focus survive a version arriving meanwhile.
  const moveBox = document.getElementById('move-json') || el('textarea', { id: 'move-json', 'aria-label': 'Move (JSON)' });
  if (example !== undefined) moveBox.placeholder = example;
  const typing = document.activeElement === moveBox;
  const [from, to] = [moveBox.selectionStart, moveBox.selectionEnd];
  const sendMove = () => {
    let move;
    try { move = JSON.parse(moveBox.value); } catch (err) {
      return setMessage(document.getElementById('room-message'), `That is not JSON: ${err.message}`, 'error');
    }
    send(move);
  };
  board.replaceChildren(
    el('h2', {}, `State at version ${room.version}`),
    jsonTree('state', room.state, true),
    el('div', { hidden: !canMove },
      el('label', { for: 'move-json' }, 'Your move, as JSON'), moveBox,
      el('div', { class: 'row' }, el('button', { id: 'send-move', onclick: sendMove }, 'Send move'))),
  );
  if (typing && canMove) {
    moveBox.focus();
    moveBox.setSelectionRange(from, to);
  }
}

function jsonTree(key, value, open, depth = 0) {
  const plain = (v) => v === null || typeof v !== 'object';
  // A row of plain values reads best on one line, and rows of them (a board) as a grid.
  if (Array.isArray(value) && value.every(plain)) {
    return el('div', { class: 'json leaf' }, el('span', { class: 'key', text: key }), ': ',
      el('span', { text: `[${value.map((v) => JSON.stringify(v)).join(', ')}]` }));
  }
  if (Array.isArray(value) && value.length && value.every((row) => Array.isArray(row) && row.every(plain))) {
    return el('div', { class: 'json leaf' }, el('span', { class: 'key', text: key }), ':',
      el('table', { class: 'json-grid' }, ...value.map((row) =>
        el('tr', {}, ...row.map((v) => el('td', { text: v === null ? '·' : typeof v === 'string' ? v : JSON.stringify(v) }))))));
  }
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
    const summary = Array.isArray(value) ? `[${value.length}]` : `{${entries.length}}`;
    return el('details', { class: 'json', open },
      el('summary', {}, el('span', { class: 'key', text: key }), `: ${summary}`),
      // The first two levels open: what a game keeps in its state is seen without a click.
      ...entries.map(([k, v]) => jsonTree(k, v, depth < 1, depth + 1)));
  }
  return el('div', { class: 'json leaf' }, el('span', { class: 'key', text: key }), ': ',
    el('span', { text: JSON.stringify(value) }));
}

// ---------------------------------------------------------------------------------------------
// Routing: `#/` is the lobby, `#/room/<id>` a room (a link that can be shared), and
// `#/room/<id>/v/<n>` its version n, replayed.

/** Shows what the address names; `redraw` rebuilds it even when it is the room on screen. */
// ---------------------------------------------------------------------------------------------
// Standing: ratings by names, leaderboards, profiles, and who is here.

/** Ratings read lately, by `${game} ${player}`: {at, standing} (null when never rated). */
const ratingCache = new Map();
const RATING_FRESH_MS = 60_000;

/** The ratings in `game` of `players` (ids), from memory when read in the last minute. */
async function ratingsOf(game, players) {
  const now = Date.now();
  const key = (id) => `${game} ${id}`;
  const stale = [...new Set(players)].filter((id) => {
    const known = ratingCache.get(key(id));
    return !known || now - known.at > RATING_FRESH_MS;
  });
  for (let start = 0; start < stale.length; start += 100) {
    const asked = stale.slice(start, start + 100);
    const result = await attempt(() => api.ratings(game, asked));
    if (!result.ok) continue;
    for (const id of asked) ratingCache.set(key(id), { at: now, standing: result.data[id] || null });
  }
  return new Map(players.map((id) => [id, (ratingCache.get(key(id)) || {}).standing || null]));
}

/** Forgets the ratings of the players of rooms listed as finished since their ratings were read. */
function forgetFinishedRatings(results) {
  for (const result of results) {
    if (!result || !result.ok) continue;
    for (const room of result.data.rooms.filter((r) => r.finished)) {
      const finished = new Date(room.updatedAt).getTime();
      for (const player of room.players) {
        const known = ratingCache.get(`${room.game} ${player.id}`);
        if (known && known.at < finished) ratingCache.delete(`${room.game} ${player.id}`);
      }
    }
  }
}

/** Forgets the ratings a finished game changed, so the names show the new ones. */
function ratingsChanged(game, changes) {
  for (const change of changes || []) ratingCache.delete(`${game} ${change.player.id}`);
}

/** A rating as it shows by a name: "1662", or "1500?" while provisional (under five games). */
function ratingText(standing) {
  return `${standing.rating}${standing.games < 5 ? '?' : ''}`;
}

/** What a rating's "?" means, for its tooltip. */
function ratingTitle(game, standing) {
  const games = `${standing.games} rated ${standing.games === 1 ? 'game' : 'games'}`;
  return standing.games < 5
    ? `rating in ${game}, provisional (the “?”): ${games}, fewer than five`
    : `rating in ${game}, ${games}`;
}

/**
 * A player's name, linking to their profile, with a place for their rating in `game` (filled
 * by `fillRatings`) and, given who is `online`, a dot saying whether they are here.
 */
function playerName(player, game, online) {
  if (isBot(player)) return el('span', { class: 'player-name', text: player.username });
  return el('span', { class: 'player-name' },
    online ? presenceDot(player, online) : null,
    el('a', { class: 'profile-link', href: `#/player/${player.id}`, text: player.username }),
    el('span', { class: 'rating muted', dataset: { game, player: player.id } }));
}

/** A dot by a name: filled while the player has the room open somewhere. */
function presenceDot(player, online) {
  const here = (online || []).includes(player.id);
  return el('span', {
    class: here ? 'dot here' : 'dot away',
    role: 'img',
    'aria-label': here ? `${player.username} is here` : `${player.username} is away`,
    title: here ? 'here' : 'away',
  });
}

/** Fills every rating place under `root` ([data-game][data-player]), a request per game. */
async function fillRatings(root) {
  const places = [...root.querySelectorAll('.rating[data-game][data-player]')];
  const byGame = new Map();
  for (const place of places) {
    const list = byGame.get(place.dataset.game) || [];
    list.push(place.dataset.player);
    byGame.set(place.dataset.game, list);
  }
  for (const [game, players] of byGame) {
    const ratings = await ratingsOf(game, players);
    for (const place of places.filter((p) => p.dataset.game === game)) {
      // Never rated in the game: where everyone starts, provisional.
      const standing = ratings.get(place.dataset.player) || { rating: 1500, games: 0 };
      place.textContent = ` (${ratingText(standing)})`;
      place.title = ratingTitle(game, standing);
    }
  }
}

/** Who was online in the room on screen when its stream last said, and who was seen to go. */
let presence = { room: null, online: null, gone: new Set() };

/** The room's stream says who of its players is online: dots, and "bob left the room". */
function sawPresence(roomId, online) {
  if (!current || current.id !== roomId) return;
  const before = presence.room === roomId ? presence.online : null;
  if (presence.room !== roomId) presence = { room: roomId, online: null, gone: new Set() };
  presence.online = online;
  current.online = online;
  const mine = me();
  const news = [];
  if (before) {
    for (const player of current.players) {
      if (mine && player.id === mine.id) continue;
      const was = before.includes(player.id);
      const is = online.includes(player.id);
      if (was && !is) {
        presence.gone.add(player.id);
        news.push(`${player.username} left the room`);
      } else if (!was && is && presence.gone.has(player.id)) {
        presence.gone.delete(player.id);
        news.push(`${player.username} is back`);
      }
    }
  }
  if (news.length) {
    const note = document.getElementById('presence-note');
    if (note) {
      note.textContent = `${news.join('; ')}.`;
      note.hidden = false;
    }
  }
  drawRoom();
}

/** A game's leaderboard, for its card: the top five, filled when it arrives. */
function leaderboardOf(game) {
  const list = el('ol', { class: 'leaderboard-list' });
  const box = el('div', { class: 'leaderboard', dataset: { game: game.id } },
    el('span', { class: 'muted' }, 'Leaderboard: '), list);
  (async () => {
    const result = await attempt(() => api.leaderboard(game.id, { limit: 5 }));
    if (!result.ok) return list.replaceChildren(el('li', { class: 'message error', text: problemText(result) }));
    const entries = result.data.entries;
    if (!entries.length) {
      list.replaceChildren(el('li', { class: 'muted', text: 'nobody yet (five rated games put a player on it)' }));
      return;
    }
    list.replaceChildren(...entries.map((entry) => el('li', {},
      el('a', { class: 'profile-link', href: `#/player/${entry.player.id}`, text: entry.player.username }),
      el('span', { class: 'muted', text: ` ${entry.rating}` }))));
    box.append(el('a', { class: 'whole-leaderboard', href: `#/leaderboard/${encodeURIComponent(game.id)}` }, 'The whole leaderboard'));
  })();
  return box;
}

/** `#/leaderboard/<game>`: every ranked player of a game, a page at a time. */
async function showLeaderboard(gameId) {
  if (!gamesById.size) await loadGames();
  const game = gamesById.get(gameId);
  const list = el('ol', { id: 'leaderboard', class: 'list ranking' });
  const more = el('button', { id: 'leaderboard-more', class: 'secondary', hidden: true }, 'More');
  const message = el('p', { class: 'message', role: 'alert' });
  main().replaceChildren(
    el('h1', { id: 'leaderboard-title', text: `Leaderboard: ${game ? gameLabel(game) : gameId}` }),
    el('p', { class: 'muted' }, 'Players with five rated games or more, best first.'),
    el('section', { class: 'card' }, list, more, message),
    el('p', {}, el('a', { href: '#/' }, '← Back to the lobby')));
  let cursor = null;
  const page = async () => {
    const result = await attempt(() => api.leaderboard(gameId, { limit: 50, cursor }));
    if (!list.isConnected) return;
    if (!result.ok) return setMessage(message, problemText(result), 'error');
    const { entries, nextCursor } = result.data;
    if (!entries.length && !list.children.length) {
      list.replaceWith(el('p', { id: 'leaderboard', class: 'muted', text: 'Nobody yet: five rated games put a player on it.' }));
    }
    list.append(...entries.map((entry) => el('li', { dataset: { player: entry.player.id } },
      el('span', { class: 'rank', text: `#${entry.rank} ` }),
      el('a', { class: 'profile-link', href: `#/player/${entry.player.id}`, text: entry.player.username }),
      el('span', { class: 'muted', text: ` ${entry.rating}, ${entry.games} rated games` }))));
    cursor = nextCursor;
    more.hidden = !cursor;
  };
  more.onclick = page;
  await page();
}

/** A game's name as the page shows it: an uploaded game's with its owner, so no upload can pass for another's. */
function gameLabel(game) {
  return game.builtin || !game.owner ? game.name : `${game.name} (by ${game.owner.username})`;
}

/** `#/player/<id>`: a player's ratings and ranks, and their latest finished rooms. */
async function showProfile(id) {
  const result = await attempt(() => api.profile(id));
  if (!result.ok) {
    main().replaceChildren(el('h1', {}, 'Player'),
      el('p', { class: 'message error', role: 'alert', text: problemText(result) }),
      el('a', { class: 'button', href: '#/' }, 'Back to the lobby'));
    return;
  }
  if (!gamesById.size) await loadGames();
  const profile = result.data;
  const gameName = (game) => (gamesById.has(game) ? gameLabel(gamesById.get(game)) : game);
  const ratings = profile.ratings.length
    ? el('table', { class: 'ratings' },
      el('thead', {}, el('tr', {}, ...['Game', 'Rating', 'Rank', 'Rated games'].map((h) => el('th', { text: h })))),
      el('tbody', {}, ...profile.ratings.map((r) => el('tr', { dataset: { game: r.game } },
        el('td', { text: gameName(r.game) }),
        el('td', { class: 'rating-value', text: ratingText(r) }),
        el('td', { text: r.rank ? `#${r.rank}` : '—' }),
        el('td', { text: String(r.games) })))))
    : el('p', { class: 'muted', text: 'No rated games yet.' });
  const rooms = profile.recentRooms.length
    ? el('ul', { class: 'list' }, ...profile.recentRooms.map(({ room, ratingChange, replay }) => {
      const change = ratingChange
        ? `${ratingChange.won ? 'won' : 'did not win'}, ${ratingChange.after} (${ratingChange.after >= ratingChange.before ? '+' : '−'}${Math.abs(ratingChange.after - ratingChange.before)})`
        : room.rated ? '' : 'unrated';
      const others = room.players.filter((p) => p.id !== profile.player.id).map((p) => p.username).join(', ');
      return el('li', { dataset: { room: room.id } },
        el('span', {}, el('strong', { text: gameName(room.game) }), others ? ` vs ${others}` : '', ' ',
          el('span', { class: 'muted', text: [change, when(room.updatedAt)].filter(Boolean).join(', ') })),
        el('a', { class: 'button secondary replay-link', href: replay.replace(/^\//, '') }, 'Replay'));
    }))
    : el('p', { class: 'muted', text: 'No finished games yet.' });
  main().replaceChildren(
    el('h1', { id: 'profile-name', text: profile.player.username }),
    el('p', { class: 'muted', text: `Playing here since ${when(profile.createdAt)}.` }),
    el('div', { class: 'grid' },
      el('section', { class: 'card', 'aria-labelledby': 'ratings-title' }, el('h2', { id: 'ratings-title' }, 'Ratings'), ratings),
      el('section', { class: 'card', 'aria-labelledby': 'recent-title' }, el('h2', { id: 'recent-title' }, 'Recent games'), rooms)),
    el('p', {}, el('a', { href: '#/' }, '← Back to the lobby')));
}

function route(redraw) {
  const match = location.hash.match(/^#\/room\/([0-9a-f]{32})(?:\/v\/([0-9]{1,18}))?$/);
  // Another version of the room on screen: a step of its replay, not a new page.
  if (!redraw && match && current && current.id === match[1] && document.getElementById('replay')) {
    if (match[2]) replayTo(Number(match[2]));
    else leaveReplay();
    return;
  }
  closeStreams();
  current = null;
  currentGame = null;
  askingForfeit = null;
  replayHistory = null;
  replaying = null;
  renderAccount();
  window.scrollTo(0, 0);
  const signIn = location.hash.match(/^#\/signin\/([A-Za-z0-9-]{1,16})$/);
  const player = location.hash.match(/^#\/player\/([0-9a-f]{32})$/);
  const board = location.hash.match(/^#\/leaderboard\/([a-z0-9-]{1,64})$/);
  if (match) showRoom(match[1], match[2] ? Number(match[2]) : null);
  else if (signIn) showSignIn(signIn[1]);
  else if (player) showProfile(player[1]);
  else if (board) showLeaderboard(board[1]);
  else if (location.hash === '#/account') showAccount();
  else if (location.hash.startsWith('#/room/')) {
    main().replaceChildren(el('h1', {}, 'Room'),
      el('p', { id: 'no-room', class: 'message error', role: 'alert', text: 'There is no room at this address: check the link you were given.' }),
      el('a', { class: 'button', href: '#/' }, 'Back to the lobby'));
  } else showLobby();
  main().focus({ preventScroll: true });
}

window.addEventListener('hashchange', () => route());
// Another tab signed in, out or as someone else: this one follows at once, so that its
// header, the room it shows and every call it makes agree on who is playing.
window.addEventListener('storage', (event) => {
  if (devSeat || (event.key !== null && event.key !== 'turnhouse.player')) return;
  api.token = store.player ? store.player.token : null;
  route(true);
});
route();
