// The turns inbox: "Your move (N)" in the bar on every screen, the tab's title counting the
// same, and the list of rooms waiting on the player (#/turns). The server keeps whose move it
// is; the page asks again every half minute while it is seen, as soon as it is seen again,
// and after each version of the room on screen.

import { debounce, el, main, when } from './dom.js';
import { api, attempt, pageState, store } from './session.js';

const ASK_EVERY_MS = 30_000;

/** The rooms waiting on the player, as last asked. */
let turns = [];
/** Whether the room on screen waits on the player while the tab is hidden. */
let turnOnScreen = false;
let asking = null;
/** Asked for while a question was out: its answer may predate what changed, so ask again. */
let askAgain = false;

/** Asks the server for the player's turns and redraws what counts them. */
export async function refreshTurns() {
  if (!store.player) {
    turns = [];
    drawTurns();
    return;
  }
  if (asking) {
    askAgain = true;
    return asking;
  }
  asking = attempt(() => api.turns()).then((result) => {
    asking = null;
    if (result.ok) turns = result.data;
    drawTurns();
    if (askAgain) {
      askAgain = false;
      return refreshTurns();
    }
    return undefined;
  });
  return asking;
}

/** After a version of the room on screen: one question for a burst of them. */
export const refreshTurnsSoon = debounce(refreshTurns, 400);

/** The room on screen waits on the player (or no longer does). */
export function showTurnOnScreen(yours) {
  turnOnScreen = yours;
  drawTitle();
}

function drawTitle() {
  const count = store.player ? turns.length : 0;
  const waiting = turnOnScreen && document.hidden ? 'Your turn · ' : '';
  document.title = `${count > 0 ? `(${count}) ` : ''}${waiting}Turnhouse`;
}

function drawTurns() {
  const link = document.getElementById('turns');
  const count = store.player ? turns.length : 0;
  link.hidden = count === 0;
  link.textContent = `Your move (${count})`;
  link.setAttribute('aria-label', `Your move in ${count} room${count === 1 ? '' : 's'}`);
  drawTitle();
  if (location.hash === '#/turns' && document.getElementById('turn-list')) drawList();
}

/** The `#/turns` screen: every room waiting on the player, the soonest deadline first. */
export function showTurns() {
  main().replaceChildren(el('h1', {}, 'Your move'), el('ul', { id: 'turn-list', class: 'turn-list' }));
  drawList();
  refreshTurns();
}

function drawList() {
  const list = document.getElementById('turn-list');
  const me = store.player;
  if (!me || turns.length === 0) {
    list.replaceChildren(el('li', { class: 'muted', id: 'no-turns' }, me ? 'No game is waiting on you.' : 'Sign in to see your games.'));
    return;
  }
  list.replaceChildren(...turns.map((turn) => {
    const game = pageState.gamesById.get(turn.game);
    const others = turn.players.filter((p) => p.id !== me.id).map((p) => p.username);
    const against = others.length ? ` against ${others.join(', ')}` : '';
    const deadline = turn.deadline ? `; move by ${when(turn.deadline)}` : '';
    return el('li', { class: 'turn', dataset: { room: turn.id } },
      el('a', { href: `#/room/${turn.id}` }, `${game ? game.name : turn.game}${against}`),
      el('span', { class: 'muted' }, ` — waiting since ${when(turn.since)}${deadline}`));
  }));
}

/** The rooms the player muted (no mail or push about them), asked once. */
let muted = null;

/** Whether the player muted `roomId`; asks first, then calls `redraw`, the first time. */
export function isMuted(roomId, redraw) {
  if (muted === null && store.player) {
    muted = new Set();
    attempt(() => api.email()).then((result) => {
      if (result.ok) muted = new Set(result.data.mutedRooms);
      redraw();
    });
  }
  return Boolean(muted && muted.has(roomId));
}

/** Mutes the room for the player, or hears of it again. */
export async function setMuted(roomId, on) {
  const result = await attempt(() => api.muteRoom(roomId, on));
  if (result.ok && muted) {
    if (on) muted.add(roomId);
    else muted.delete(roomId);
  }
  return result;
}

setInterval(() => { if (!document.hidden) refreshTurns(); }, ASK_EVERY_MS);
document.addEventListener('visibilitychange', () => {
  if (!document.hidden) refreshTurns();
  drawTitle();
});
