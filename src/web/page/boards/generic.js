// The board of a game the page does not draw itself and that has no page of its own.

import { el, setMessage } from '../dom.js';
import { send } from '../play.js';
import { pageState } from '../session.js';

/** Any game: the state as collapsible JSON, and a box that sends any JSON as the move. */
export function drawGeneric(board, room, canMove) {
  // An example only where the game gives one: no one shape fits every game.
  const example = pageState.currentGame && pageState.currentGame.moveExample != null ? JSON.stringify(pageState.currentGame.moveExample) : undefined;
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

export function jsonTree(key, value, open, depth = 0) {
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
