// The chat panel beside a room and in the lobby. Messages are plain text and are only ever
// set as text. A room's players talk at its table; anyone else in its gallery, which the
// players read too once the game is over. Messages arrive on the screen's stream (`onChat`),
// each once; a deletion arrives as the message again, without its text.

import { el, when } from './dom.js';
import { api, attempt, pageState, problemText, store } from './session.js';

/** Whether `player` plays, or played, in `room`. */
function seatedIn(room, player) {
  return Boolean(player) && [...room.players, ...(room.inactivePlayers || [])].some((p) => p.id === player.id);
}

/**
 * A chat panel: `room` (null: the lobby's). Its `node` goes on the screen; `take` is the
 * stream's `onChat`; `roomChanged` is told each version of the room (a seat taken, the game
 * over). Narrow screens start with it folded, counting what arrives unread.
 */
export function chatPanel(room) {
  const unread = el('span', { id: 'chat-unread', class: 'badge', hidden: true, 'aria-live': 'polite' });
  const channelNote = el('p', { id: 'chat-channel', class: 'muted' });
  const log = el('ol', { id: 'chat-log', class: 'chat-log', 'aria-label': 'Messages' });
  const note = el('p', { id: 'chat-note', class: 'message', role: 'status' });
  const text = el('input', {
    id: 'chat-text', maxlength: 500, autocomplete: 'off', 'aria-label': 'Message', placeholder: 'Say something…',
  });
  const form = el('form', { id: 'chat-form', class: 'row chat-form' }, text, el('button', { type: 'submit' }, 'Send'));
  const panel = el('details', { id: 'chat', class: 'card chat' },
    el('summary', {}, el('h2', {}, 'Chat'), ' ', unread),
    channelNote, log, note, store.player ? form : el('p', { class: 'muted' }, 'Sign up to chat.'));
  panel.open = !window.matchMedia('(max-width: 40rem)').matches;

  const lines = new Map();
  const messages = new Map();
  // Who else hears each message: a game's frame that asked for the chat.
  const followers = new Set();
  let count = 0;
  // The version a replay shows: the chat shows what had been written by then.
  let replaying = null;
  let channel = room ? null : 'lobby';
  const markRead = () => {
    if (!panel.open || document.hidden) return;
    count = 0;
    unread.hidden = true;
  };
  panel.addEventListener('toggle', markRead);
  document.addEventListener('visibilitychange', markRead);

  const say = (message, kind) => {
    note.textContent = message || '';
    note.className = `message ${kind || ''}`;
  };

  const line = (message) => {
    const author = el('strong', { class: 'chat-author', text: message.player.username });
    const body = message.deleted
      ? el('span', { class: 'chat-text muted', text: 'removed by a moderator' })
      : el('span', { class: 'chat-text', text: message.text });
    const tag = room && message.channel !== channel ? el('span', { class: 'badge', text: message.channel }) : null;
    const mine = store.player && store.player.id === message.player.id;
    const actions = !store.player || mine || message.deleted ? null : el('span', { class: 'chat-actions' },
      el('button', { type: 'button', class: 'link chat-report', onclick: (event) => report(message, event.target) }, 'Report'),
      el('button', { type: 'button', class: 'link chat-block', onclick: () => block(message.player) }, 'Block'));
    const written = message.version === null || message.version === undefined ? '' : String(message.version);
    return el('li', { class: 'chat-line', hidden: replaying !== null && Number(written) > replaying, dataset: { id: String(message.id), player: message.player.id, version: written } },
      author, ' ', tag, tag ? ' ' : null, body, actions);
  };

  const take = (message) => {
    const known = lines.get(message.id);
    const node = line(message);
    if (known) {
      known.replaceWith(node);
    } else {
      const stick = log.scrollTop + log.clientHeight >= log.scrollHeight - 8;
      // In the order they were written: the gallery's earlier messages come in once the game
      // is over, after the table's later ones.
      const later = [...lines.entries()].find(([id]) => id > message.id);
      if (later) later[1].before(node);
      else log.append(node);
      if (stick) log.scrollTop = log.scrollHeight;
      if (!panel.open || document.hidden) {
        count += 1;
        unread.textContent = `${count} new`;
        unread.hidden = false;
      }
    }
    lines.set(message.id, node);
    messages.set(message.id, message);
    for (const follower of followers) follower(message);
  };

  /** Calls `follower` with each message shown so far, then each as it comes; it returns
   * false to stop. */
  const follow = (follower) => {
    for (const message of [...messages.values()].sort((a, b) => a.id - b.id)) follower(message);
    const wrapped = (message) => { if (follower(message) === false) followers.delete(wrapped); };
    followers.add(wrapped);
  };

  const report = async (message, button) => {
    const result = await attempt(() => api.chat.report(message.id, 'reported from the page'));
    if (result.ok) {
      button.textContent = 'Reported';
      button.disabled = true;
    } else say(problemText(result), 'error');
  };

  const block = async (player) => {
    const result = await attempt(() => api.chat.block(player.id));
    if (!result.ok) {
      say(problemText(result), 'error');
      return;
    }
    for (const [id, node] of lines) {
      if (node.dataset.player === player.id) {
        node.remove();
        lines.delete(id);
        messages.delete(id);
      }
    }
    say(`You blocked ${player.username}: you no longer see their messages.`, 'success');
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!text.value.trim()) return;
    const result = await attempt(() => api.chat.send(room ? room.id : null, text.value, { channel }));
    if (result.ok) {
      text.value = '';
      say('');
      take(result.data);
    } else if (result.data && result.data.code === 'chat_muted') {
      say(`You are muted in chat until ${when(result.data.mutedUntil)}.`, 'error');
    } else {
      say(problemText(result), 'error');
    }
  });

  let galleryRead = false;
  const roomChanged = (current) => {
    const seated = seatedIn(current, store.player);
    if (seated && current.finished && !galleryRead) {
      // The players read the gallery once the game is over: what it said before too.
      galleryRead = true;
      attempt(() => api.chat.history(current.id, { channel: 'gallery', limit: 100 })).then((result) => {
        if (result.ok) for (const message of result.data.messages) if (!lines.has(message.id)) take(message);
      });
    }
    channel = seated ? 'table' : 'gallery';
    channelNote.textContent = seated
      ? (current.finished ? 'At the table, with the players; the watchers’ gallery shows too now the game is over.' : 'At the table: the players only.')
      : 'In the gallery: the watchers. The players read it once the game is over.';
  };
  if (room) roomChanged(room);
  else channelNote.textContent = 'The lobby: everyone here.';

  /** Shows the messages written by `version` (a replay's), or all of them with null. */
  const replayAt = (version) => {
    replaying = version;
    for (const node of lines.values()) node.hidden = version !== null && Number(node.dataset.version) > version;
    if (room) roomChanged(pageState.current || room);
    if (version !== null) channelNote.textContent = `The chat as it was at version ${version}.`;
  };

  return { node: panel, take, roomChanged, replayAt, follow };
}

/** The lobby's latest messages, then the panel follows the lobby's stream after them. */
export async function lobbyChatHistory(panel) {
  const result = await attempt(() => api.chat.history(null, { limit: 50 }));
  if (!result.ok) return null;
  for (const message of result.data.messages) panel.take(message);
  return result.data.nextAfter;
}
