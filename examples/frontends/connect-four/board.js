// Connect Four's page: draws each version it is sent and posts the player's moves.
'use strict';

const COLUMNS = 7;
const ROWS = 6;
const drops = [];
for (let column = 0; column < COLUMNS; column += 1) {
  const drop = document.createElement('button');
  drop.className = 'drop';
  drop.dataset.column = String(column);
  drop.textContent = '↓';
  drop.setAttribute('aria-label', `drop a disc in column ${column + 1}`);
  drop.disabled = true;
  drop.addEventListener('click', () => parent.postMessage({ type: 'turnhouse:move', move: { column } }, '*'));
  document.getElementById('drops').append(drop);
  drops.push(drop);
}
const slots = [];
for (let row = ROWS - 1; row >= 0; row -= 1) {
  for (let column = 0; column < COLUMNS; column += 1) {
    const slot = document.createElement('span');
    slot.className = 'slot';
    slot.dataset.cell = `${row},${column}`;
    document.getElementById('board').append(slot);
    slots.push(slot);
  }
}

function draw(room, you) {
  const state = room.state || {};
  const board = state.board || [];
  const seat = you ? room.players.findIndex((p) => p.id === you.id) : -1;
  const myTurn = seat >= 0 && state.status === 'playing' && state.turn === seat;
  const line = (state.line || []).map(([r, c]) => `${r},${c}`);
  for (const slot of slots) {
    const [row, column] = slot.dataset.cell.split(',').map(Number);
    const disc = board[row] ? board[row][column] : null;
    slot.className = `slot${disc ? ` ${disc}` : ''}${line.includes(slot.dataset.cell) ? ' win' : ''}`;
  }
  drops.forEach((drop, column) => {
    drop.disabled = !myTurn || !board[ROWS - 1] || board[ROWS - 1][column] !== null;
  });
  let status = 'Waiting for a second player…';
  if (state.status === 'over') {
    status = !state.winner ? 'A draw: the board is full.' : you && state.winner.id === you.id ? 'You win!' : `${state.winner.username} wins!`;
  } else if (state.status === 'playing') {
    const toMove = room.players[state.turn];
    status = myTurn ? `Your turn (${['red', 'yellow'][seat]}): pick a column.` : `${toMove ? toMove.username : 'The other player'}'s turn.`;
  }
  document.getElementById('status').textContent = seat < 0 ? `${status} (watching)` : status;
}

window.addEventListener('message', (event) => {
  if (event.source !== parent) return;
  const message = event.data || {};
  if (message.type === 'turnhouse:state') draw(message.room, message.you);
  if (message.type === 'turnhouse:result') {
    document.getElementById('error').textContent = message.ok ? '' : message.problem.detail;
  }
});
// Tells the page how tall this page is, so the frame shows all of it without a scrollbar.
new ResizeObserver(() => parent.postMessage({ type: 'turnhouse:resize', height: Math.ceil(document.body.getBoundingClientRect().height) }, '*'))
  .observe(document.body);
parent.postMessage({ type: 'turnhouse:ready' }, '*');
