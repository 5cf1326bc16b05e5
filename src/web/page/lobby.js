// The lobby: games, open rooms, games in progress, your rooms and finished games, each game's
// card (quick play, rooms, bots, clocks, its log and webhooks for its owner), live from the lobby's stream.

import { chatPanel, lobbyChatHistory } from './chat.js';
import { signUpCard } from './account.js';
import { debounce, el, main, setMessage, when } from './dom.js';
import { winnerOf } from './play.js';
import { heldFromMe } from './room.js';
import { route } from './router.js';
import { api, attempt, pageState, problemText, screenCheck, store } from './session.js';
import { fillRatings, forgetFinishedRatings, gameLabel, leaderboardOf, playerName, ratingCache } from './standing.js';
import { uploadCard } from './upload.js';
import { webhooksPanel } from './webhooks.js';

/** Stops the other streams the screen opened (a game's log). */
export const stoppers = new Set();

export function closeStreams() {
  if (pageState.stopWatching) { pageState.stopWatching(); pageState.stopWatching = null; }
  for (const stop of stoppers) stop();
  stoppers.clear();
}


export async function loadGames() {
  const result = await attempt(() => api.games());
  if (result.ok) pageState.gamesById = new Map(result.data.map((game) => [game.id, game]));
  return result;
}

export async function showLobby() {
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
  const chat = chatPanel(null);
  main().replaceChildren(
    el('h1', {}, 'Lobby'),
    el('p', { id: 'online-count', class: 'muted', 'aria-live': 'polite' }),
    message,
    ...(store.player ? [] : [signUpCard(() => route())]),
    el('div', { class: 'lobby' },
      el('div', { class: 'lobby-rooms' }, openCard, mineCard, liveCard, doneCard, chat.node),
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
  const onScreen = screenCheck();
  const chatAfter = await lobbyChatHistory(chat);
  if (!onScreen()) return;
  pageState.stopWatching = api.watchLobby(null, refresh, { onOnline, onChat: chat.take, chatAfter });
  await refreshLobby(message);
}


export async function refreshLobby(message) {
  const games = await loadGames();
  // The lobby this refresh was for is gone (signed in, or navigated away, meanwhile): the
  // lobby on screen has a refresh of its own, and its game cards must report to its message.
  if (!message || !message.isConnected) return;
  if (!games.ok) return setMessage(message, problemText(games), 'error');
  const target = document.getElementById('games');
  if (!target) return;
  // Redrawn only when the games change, so a level or option being picked is not reset.
  const signature = [...pageState.gamesById.values()].map((game) => `${game.id}@${game.version}`).join(' ');
  if (target.dataset.signature !== signature) {
    target.dataset.signature = signature;
    target.replaceChildren(...[...pageState.gamesById.values()].map((game) => gameEntry(game, message)));
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

export function fillRooms(id, result, empty) {
  const list = document.getElementById(id);
  if (!list || !result) return;
  if (!result.ok) return list.replaceChildren(el('li', { class: 'message error', text: problemText(result) }));
  const rooms = result.data.rooms;
  if (!rooms.length) return list.replaceChildren(el('li', { class: 'muted', text: empty }));
  list.replaceChildren(...rooms.map(roomEntry));
}

export function roomEntry(room) {
  const me = store.player;
  const game = pageState.gamesById.get(room.game);
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
export function resultOf(room) {
  if (!room.finished) return null;
  const winner = winnerOf(room);
  const mine = store.player;
  if (!winner && room.players.length < 2) return 'closed, nobody joined';
  if (!winner) return 'a draw';
  return mine && winner.id === mine.id ? 'you won' : `won by ${winner.username}`;
}


export async function joinRoom(id) {
  const result = await attempt(() => api.join(id));
  if (!result.ok) {
    const message = document.getElementById('lobby-message');
    if (message) setMessage(message, problemText(result), 'error');
    return;
  }
  location.hash = `#/room/${id}`;
}

/** The per-move times offered first, in seconds. */
export const CLOCK_CHOICES = [5, 15, 30, 60, 300, 900, 3600, 86400, 3 * 86400, 7 * 86400];
/** The longest time per move: fourteen days, for correspondence games. */
const LONGEST_MOVE = 14 * 86400;
export const CLOCK_UNITS = { seconds: 1, minutes: 60, hours: 3600, days: 86400 };

/** A time per move as people say it: "5 s", "1 min 30 s", "2 h", "1 day". */
export function clockText(seconds) {
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

export function gameEntry(game, message) {
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
    if (!Number.isInteger(seconds) || seconds < 5 || seconds > LONGEST_MOVE) {
      setMessage(message, 'A move may be given from 5 seconds to 14 days.', 'error');
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
    actions, clockRow, bots, leaderboardOf(game), mine ? logsPanel(game) : null,
    mine ? webhooksPanel(game) : null);
}

/**
 * A game's log, for its owner: what its hooks logged and how they failed, newest last,
 * followed live while open.
 */
export function logsPanel(game) {
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
export function logLine(line) {
  return el('li', { class: `log ${line.level}`, dataset: { level: line.level, version: String(line.version) } },
    el('span', { class: 'log-where' },
      el('time', { datetime: line.at, text: line.at.slice(11, 19) }), ' ',
      el('a', { href: `#/room/${line.room}/v/${line.version}`, text: `v${line.version}` }), ' ',
      el('span', { class: 'log-hook', text: line.hook }), ' ',
      el('span', { class: 'log-level', text: line.level })),
    ' ', el('span', { class: 'log-text', text: line.text }));
}
