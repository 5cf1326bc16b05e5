// The replay: any version of the room, as this viewer saw it (the history per viewer, so a
// game's view hook applies, and other players' hidden moves stay hidden until the end).
// `#/room/<id>/v/<n>` links to version n; leaving the replay returns to the live room.

import { moveText } from './boards/index.js';
import { el, setMessage } from './dom.js';
import { closedBecause, drawRoom } from './play.js';
import { lastMoveOf } from './room.js';
import { api, attempt, pageState, problemText } from './session.js';

export function replayControl() {
  const step = (to) => () => replayTo(to());
  const slider = el('input', {
    id: 'replay-slider', type: 'range', min: '1', 'aria-label': 'Version to show',
    oninput: (event) => replayTo(Number(event.target.value)),
  });
  return el('div', { id: 'replay', class: 'replay', role: 'group', 'aria-label': 'Replay' },
    el('div', { class: 'row' },
      el('button', { id: 'replay-first', class: 'secondary', title: 'First version', 'aria-label': 'First version', onclick: step(() => 1) }, 'First'),
      el('button', { id: 'replay-prev', class: 'secondary', title: 'Previous version', 'aria-label': 'Previous version', onclick: step(() => (pageState.replaying || pageState.current.version) - 1) }, '◀'),
      slider,
      el('button', { id: 'replay-next', class: 'secondary', title: 'Next version', 'aria-label': 'Next version', onclick: step(() => (pageState.replaying || pageState.current.version) + 1) }, '▶'),
      el('button', { id: 'replay-last', class: 'secondary', title: 'Last version', 'aria-label': 'Last version', onclick: step(() => pageState.current.version) }, 'Last'),
      el('button', { id: 'replay-live', class: 'secondary', onclick: leaveReplay }, 'Back to live')),
    el('p', { id: 'replay-step', class: 'muted', 'aria-live': 'polite' }));
}

/** Reads the whole history (as this viewer may see it) once; later versions arrive live. */
export async function loadHistory() {
  if (pageState.replayHistory.complete) return true;
  const room = pageState.replayHistory.room;
  let after = 0;
  for (;;) {
    const result = await attempt(() => api.history(room, { after, limit: 1000 }));
    if (!pageState.current || pageState.current.id !== room) return false;
    if (!result.ok) {
      setMessage(document.getElementById('room-message'), problemText(result), 'error');
      return false;
    }
    for (const entry of result.data.events) pageState.replayHistory.entries.set(entry.version, entry);
    if (result.data.nextAfter === null) break;
    after = result.data.nextAfter;
  }
  pageState.replayHistory.complete = true;
  return true;
}

/** Shows version `version` (clamped to the room's), with the replay's link in the address. */
export async function replayTo(version) {
  if (!pageState.current) return;
  const target = Math.max(1, Math.min(Number(version) || 1, pageState.current.version));
  if (!(await loadHistory()) || !pageState.replayHistory.entries.has(target)) return;
  pageState.replaying = target;
  window.history.replaceState(null, '', `#/room/${pageState.current.id}/v/${target}`);
  drawRoom();
}

export function leaveReplay() {
  if (!pageState.current) return;
  pageState.replaying = null;
  window.history.replaceState(null, '', `#/room/${pageState.current.id}`);
  drawRoom();
}

/** The room as the page shows it: the live room, or the version being replayed. */
export function shownRoom() {
  const entry = pageState.replaying && pageState.replayHistory ? pageState.replayHistory.entries.get(pageState.replaying) : null;
  if (!entry) return pageState.current;
  return {
    ...pageState.current,
    version: entry.version, state: entry.state, players: entry.players,
    joinable: entry.joinable, finished: entry.finished, triggerTimeoutAt: null,
    lastMove: lastMoveOf(entry),
  };
}

/** What made a version, and who: "alice played row 2, column 1." */
export function stepText(entry) {
  const who = entry.player ? entry.player.username : null;
  const hidden = entry.move === undefined || entry.move === null;
  switch (entry.kind) {
    case 'room_start': return 'The room opened.';
    case 'reset': return `${who} started a new game.`;
    case 'join': return `${who} joined.`;
    case 'quit': return `${who} left.`;
    case 'move': return hidden ? `${who} moved (hidden).` : `${who} played ${moveText(pageState.current.game, entry.move)}.`;
    case 'timeout': return 'Time ran out.';
    case 'timeout_fault': return "The game's timeout failed; the clock was stopped.";
    case 'closed': return closedBecause(entry) ? `A moderator closed the room (“${closedBecause(entry)}”).` : 'The room was closed: nobody joined it.';
    case 'renamed': return `A moderator renamed a player: ${who}.`;
    case 'abandoned': return `${who} stopped playing; the game was claimed.`;
    case 'declined': return `${who} declined the rematch.`;
    default: return entry.kind;
  }
}

export function drawReplay() {
  const control = document.getElementById('replay');
  if (!control || !pageState.current) return;
  const at = pageState.replaying || pageState.current.version;
  const slider = document.getElementById('replay-slider');
  slider.max = String(pageState.current.version);
  slider.value = String(at);
  control.classList.toggle('active', Boolean(pageState.replaying));
  if (pageState.chat) pageState.chat.replayAt(pageState.replaying || null);
  document.getElementById('replay-first').disabled = at <= 1;
  document.getElementById('replay-prev').disabled = at <= 1;
  document.getElementById('replay-next').disabled = at >= pageState.current.version;
  document.getElementById('replay-last').disabled = at >= pageState.current.version;
  document.getElementById('replay-live').hidden = !pageState.replaying;
  const entry = pageState.replaying ? pageState.replayHistory.entries.get(pageState.replaying) : null;
  const moves = movesSoFar();
  const made = moves === null ? '' : moves === 0 ? ', no moves yet' : `, after ${moves} ${moves === 1 ? 'move' : 'moves'}`;
  document.getElementById('replay-step').textContent = entry
    ? `Version ${entry.version} of ${pageState.current.version}: ${stepText(entry)}`
    : `Live${made}. Step back to replay.`;
}

/** The moves made in the room so far, once its history has been read (null before). */
export function movesSoFar() {
  if (!pageState.replayHistory || !pageState.replayHistory.complete) return null;
  return [...pageState.replayHistory.entries.values()].filter((entry) => entry.kind === 'move').length;
}
