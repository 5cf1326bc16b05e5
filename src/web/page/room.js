// A room: opened from its address, then kept to its versions as they arrive (from an action's
// answer or the room's stream), with what the room says beside its state (rematches, idle times).

import { chatPanel } from './chat.js';
import { debounce, el, main } from './dom.js';
import { clockText, loadGames } from './lobby.js';
import { drawRoom, me } from './play.js';
import { replayControl, replayTo } from './replay.js';
import { api, attempt, pageState, problemText, screenCheck } from './session.js';
import { gameLabel, ratingsChanged, sawPresence } from './standing.js';
import { refreshTurnsSoon } from './turns.js';

export async function showRoom(id, replayAt) {
  const onScreen = screenCheck();
  const result = await attempt(() => api.room(id));
  if (!onScreen()) return;
  if (!result.ok) {
    main().replaceChildren(el('h1', {}, 'Room'), el('p', { class: 'message error', role: 'alert', text: problemText(result) }),
      el('a', { class: 'button', href: '#/' }, 'Back to the lobby'));
    return;
  }
  if (!pageState.gamesById.has(result.data.game)) await loadGames();
  if (!onScreen()) return;
  pageState.current = result.data;
  learnClaimSpan(pageState.current);
  // An uploaded game's room plays one version for its whole life: its page and move example
  // are that version's.
  const version = pageState.current.gameVersion
    ? await attempt(() => api.game(pageState.current.game, { version: pageState.current.gameVersion }))
    : null;
  if (!onScreen()) return;
  pageState.currentGame = version && version.ok ? version.data : pageState.gamesById.get(pageState.current.game);
  const game = pageState.currentGame;
  const link = `${location.origin}/#/room/${id}`;
  // All of the link shows, wrapped: rooms' links differ only at their end.
  const linkInput = el('textarea', { id: 'share-link', readonly: true, rows: 2, spellcheck: 'false', 'aria-label': 'Link to this room' });
  linkInput.value = link;
  const chat = chatPanel(pageState.current);
  pageState.chat = chat;
  main().replaceChildren(
    el('h1', {}, el('span', { text: game ? gameLabel(game) : pageState.current.game }), ' ',
      el('span', { class: 'badge', id: 'room-kind', text: roomKind(pageState.current) })),
    el('div', { class: 'grid' },
      el('section', { class: 'card', 'aria-labelledby': 'status' },
        el('p', { id: 'status', class: 'status', 'aria-live': 'polite' }),
        pageState.current.clock
          ? el('p', { id: 'time-control', class: 'muted' }, `Time control: ${clockText(pageState.current.clock.moveSeconds)} a move.`)
          : null,
        el('p', { id: 'countdown', class: 'countdown', hidden: !pageState.current.clock }),
        el('ul', { id: 'players', class: 'players', 'aria-label': 'Players' }),
        el('p', { id: 'presence-note', class: 'muted', 'aria-live': 'polite', hidden: true }),
        el('p', { id: 'score', class: 'muted score', hidden: true }),
        el('div', { id: 'board' }),
        el('p', { id: 'room-message', class: 'message', role: 'alert' }),
        el('div', { id: 'actions', class: 'row' }),
        replayControl()),
      el('div', { class: 'room-side' }, el('section', { class: 'card share-card' },
        el('h2', {}, 'Share'),
        el('div', { class: 'row share' }, linkInput,
          el('button', { class: 'secondary', id: 'copy-link', onclick: (event) => copyLink(event.target, linkInput) }, 'Copy link')),
        el('p', { class: 'muted' }, botOf(pageState.current)
          ? 'Anyone with the link can watch this game against the computer.'
          : 'Anyone with the link can watch; a friend can join while there is a free seat.'),
        el('p', {}, el('a', { href: '#/' }, '← Back to the lobby'))),
      chat.node)),
  );
  pageState.replayHistory = { room: id, entries: new Map(), complete: false };
  drawRoom();
  // The move that made the version shown, to mark it on the board once it is known.
  const latest = await attempt(() => api.history(id, { after: pageState.current.version - 1, limit: 1 }));
  if (!onScreen()) return;
  const entry = latest.ok ? latest.data.events[0] : null;
  if (entry && entry.version === pageState.current.version && !pageState.current.lastEvent) {
    pageState.current.lastEvent = { version: entry.version, kind: entry.kind, player: entry.player, move: entry.move, ratingChanges: entry.ratingChanges };
    pageState.current.lastMove = pageState.current.lastMove || lastMoveOf(entry);
    drawRoom();
  }
  // Every version after the one drawn, in order, across reconnections; each is also a step
  // of the replay.
  pageState.stopWatching = api.watch(id, (version) => { pageState.replayHistory.entries.set(version.version, version); apply(version); },
    { after: pageState.current.version, onPresence: (online) => sawPresence(id, online), onChat: chat.take, chatAfter: 0 });
  if (replayAt) await replayTo(replayAt);
}

/** Whether `player` is a computer opponent (bots' names, "hard bot", can be no person's). */
export function isBot(player) {
  return /^(easy|medium|hard) bot$/.test(player.username);
}

/** The computer opponent seated in `room`, if any. */
export function botOf(room) {
  return [...room.players, ...(room.inactivePlayers || [])].find(isBot) || null;
}

/** What the room is, for its title's badge. */
export function roomKind(room) {
  const bot = botOf(room);
  if (bot) return `Against the ${bot.username}`;
  return room.private ? 'Private room' : 'Public room';
}

/** Copies the room's link, and says whether it did. */
export async function copyLink(button, input) {
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
export function lastMoveOf(entry) {
  return entry.kind === 'move' ? { player: entry.player, move: entry.move } : null;
}

/** What a room says beside its versions: kept from the last whole room read. */
export const ROOM_FACTS = ['rematch', 'score', 'closesAt', 'claimableAt'];
/** Versions after which the room says something else beside them: a rematch offered, taken
 * or turned down, a seat filled or left, the room closed. (A game that finishes too.) */
export const FACTS_CHANGE_ON = new Set(['reset', 'join', 'quit', 'declined', 'abandoned', 'closed']);

/** Keeps how long after its last version `room` can be claimed, which no move changes. */
export function learnClaimSpan(room) {
  if (room.claimableAt) room.claimSpan = Date.parse(room.claimableAt) - Date.parse(room.updatedAt);
}

/** Takes a newer version of the room (from a stream event or an action's answer). */
export function apply(version) {
  if (!pageState.current || version.version < pageState.current.version) return;
  if (version.version === pageState.current.version) {
    // The room reached this version by an action's answer, which does not say what happened
    // (a claim, a finishing move and its rating change): the stream's event does, whichever
    // of the two arrives first.
    if (version.kind && (!pageState.current.lastEvent || pageState.current.lastEvent.version !== version.version)) {
      learnEvent(version);
      drawRoom();
    }
    return;
  }
  // A stream's version names who is seated, not who left: those who left are kept here.
  const left = pageState.current.inactivePlayers || [];
  const gone = pageState.current.players.filter((p) => !version.players.some((q) => q.id === p.id) && !left.some((q) => q.id === p.id));
  const whole = 'id' in version;
  const wasFinished = pageState.current.finished;
  refreshTurnsSoon();
  pageState.current = { ...pageState.current, ...version, inactivePlayers: version.inactivePlayers || [...left, ...gone] };
  if (whole) {
    for (const fact of ROOM_FACTS) if (!(fact in version)) delete pageState.current[fact];
    learnClaimSpan(pageState.current);
  } else {
    pageState.current.updatedAt = version.createdAt;
    // A move moves the time the game can be claimed on by the span the room last said.
    if (pageState.current.claimableAt && pageState.current.claimSpan !== undefined) {
      pageState.current.claimableAt = new Date(Date.parse(version.createdAt) + pageState.current.claimSpan).toISOString();
    }
  }
  if (version.kind) learnEvent(version);
  if (pageState.chat) pageState.chat.roomChanged(pageState.current);
  delete pageState.current.kind; delete pageState.current.player; delete pageState.current.move;
  drawRoom();
  // A stream's version says nothing of the rematch offer, the score or whether the room can
  // be claimed: the room itself does, read once the versions that change them settle.
  if (!whole && (FACTS_CHANGE_ON.has(version.kind) || version.finished !== wasFinished)) refreshRoomFacts();
}

/** What happened at `version` (a history entry or stream event): the last move, and the event. */
export function learnEvent(version) {
  pageState.current.lastMove = lastMoveOf(version);
  pageState.current.lastEvent = {
    version: version.version, kind: version.kind, player: version.player, move: version.move, ratingChanges: version.ratingChanges,
  };
  ratingsChanged(pageState.current.game, version.ratingChanges);
}

export const refreshRoomFacts = debounce(async () => {
  if (!pageState.current) return;
  const id = pageState.current.id;
  const result = await attempt(() => api.room(id));
  if (!result.ok || !pageState.current || pageState.current.id !== id) return;
  // A move arrived while the room was read (a quick player right after a join): the facts read
  // belong to a version already passed, so read them again rather than never learn them.
  if (result.data.version !== pageState.current.version) {
    refreshRoomFacts();
    return;
  }
  const same = (fact) => JSON.stringify(pageState.current[fact]) === JSON.stringify(result.data[fact]);
  if (ROOM_FACTS.every(same)) return;
  for (const fact of ROOM_FACTS) {
    if (fact in result.data) pageState.current[fact] = result.data[fact];
    else delete pageState.current[fact];
  }
  learnClaimSpan(pageState.current);
  drawRoom();
}, 250);

/** Whether `room` holds its seats for a rematch offered to others than this player. */
export function heldFromMe(room) {
  const held = heldSeats(room);
  return Boolean(held) && !held.seats.some((p) => me() && p.id === me().id);
}

/** The rematch offer whose seats are still held, if there is one. */
export function heldSeats(room) {
  const offer = room.rematch;
  return offer && offer.seats.length && Date.parse(offer.until) > Date.now() ? offer : null;
}
