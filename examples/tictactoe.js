'use strict';
// Tic-tac-toe for Turnhouse, as an uploaded game. It behaves exactly like the built-in
// `tictactoe`: the same state, the same moves ({"x": row, "y": col}), the same refusals.
//
//   curl -X PUT $API/games/js-tictactoe -H "Authorization: Bearer $TOKEN" \
//        -H 'Content-Type: application/javascript' --data-binary @examples/tictactoe.js

// Rows, columns, then the two diagonals, as cell indices (row * 3 + col).
const LINES = [
  [0, 1, 2], [3, 4, 5], [6, 7, 8],
  [0, 3, 6], [1, 4, 7], [2, 5, 8],
  [0, 4, 8], [2, 4, 6],
];
const MARKS = ['X', 'O'];
const MOVE_EXAMPLE = '{"x": row, "y": col} with row and col in 0..=2';

// A refusal: `code` becomes the problem's `reason`, the message its `detail`.
function refuse(code, message) {
  const error = new Error(message);
  error.code = code;
  return error;
}

function initialState() {
  return {
    status: 'preGame',
    board: [[null, null, null], [null, null, null], [null, null, null]],
    plrToMoveIndex: 0,
    winner: null,
    winningLine: null,
    moveCount: 0,
  };
}

function cells(state) {
  const board = state && state.board;
  if (!Array.isArray(board) || board.length !== 3 || !board.every((row) => Array.isArray(row) && row.length === 3)) {
    throw refuse('invalid_state', "the room's state is not a game of this kind");
  }
  return board.flat();
}

function field(move, key) {
  const value = move[key];
  if (value === undefined) return undefined;
  if (!Number.isInteger(value)) {
    throw refuse('invalid_move', `\`${key}\` must be an integer; a move looks like ${MOVE_EXAMPLE}`);
  }
  return value;
}

function parseMove(move) {
  const shape = () => refuse('invalid_move', `a move looks like ${MOVE_EXAMPLE}`);
  if (move === null || typeof move !== 'object' || Array.isArray(move)) throw shape();
  const row = field(move, 'x');
  if (row === undefined) throw shape();
  const col = field(move, 'y');
  if (col === undefined) throw shape();
  if (row < 0 || row > 2 || col < 0 || col > 2) {
    throw refuse('off_board', `(${row}, ${col}) is off the board: row and col go from 0 to 2`);
  }
  return row * 3 + col;
}

function onRoomStart() {
  return { state: initialState(), joinable: true, finished: false };
}

function onPlayerJoin(player, room) {
  const { players, state } = room;
  if (players.length > 2 || state.status !== 'preGame') {
    throw refuse('room_full', 'both seats are taken');
  }
  if (players.length < 2) return { joinable: true };
  return { state: { ...state, status: 'inGame', plrToMoveIndex: 0 }, joinable: false };
}

function onPlayerQuit(player, room) {
  const { players, state } = room;
  switch (state.status) {
    case 'preGame':
      return { joinable: true };
    case 'inGame':
      // A quit mid-game is a forfeit: whoever is left wins.
      return { state: { ...state, status: 'endGame', winner: players[0] ?? null }, finished: true };
    default:
      return {};
  }
}

function onPlayerMove(player, move, room) {
  const { players, state } = room;
  const board = cells(state);
  if (state.status === 'preGame') {
    throw refuse('game_not_started', 'the game has not started: it is waiting for a second player');
  }
  if (state.status === 'endGame') throw refuse('game_over', 'the game is over');
  const seat = players.findIndex((p) => p.id === player.id);
  if (seat < 0) throw refuse('not_a_player', "only the room's players can move");
  if (seat !== state.plrToMoveIndex) {
    const whose = players[state.plrToMoveIndex]?.username ?? 'the other player';
    throw refuse('not_your_turn', `it is ${whose}'s turn`);
  }
  const cell = parseMove(move);
  if (board[cell] !== null) throw refuse('cell_taken', 'that cell is already taken');
  const moveCount = board.filter((mark) => mark !== null).length;
  if (MARKS[moveCount % 2] !== MARKS[seat]) {
    throw refuse('invalid_state', 'the board does not agree with whose turn it is');
  }
  board[cell] = MARKS[seat];
  const next = {
    ...state,
    board: [board.slice(0, 3), board.slice(3, 6), board.slice(6, 9)],
    moveCount: moveCount + 1,
  };
  const line = LINES.find((l) => l.includes(cell) && l.every((c) => board[c] === MARKS[seat]));
  if (line) {
    next.status = 'endGame';
    next.winner = player;
    next.winningLine = line.map((c) => [Math.floor(c / 3), c % 3]);
    return { state: next, finished: true };
  }
  if (next.moveCount === 9) {
    next.status = 'endGame';
    return { state: next, finished: true };
  }
  next.plrToMoveIndex = (seat + 1) % 2;
  return { state: next };
}

// The moves `player` can make now (every empty cell, on their turn), so that the platform can
// seat computer opponents in rooms of this game.
function enumerateMoves(room, player) {
  const { players, state } = room;
  const toMove = players[state.plrToMoveIndex];
  if (room.finished || state.status !== 'inGame' || !toMove || toMove.id !== player.id) return [];
  return cells(state).flatMap((mark, cell) => (mark === null ? [{ x: Math.floor(cell / 3), y: cell % 3 }] : []));
}

module.exports = { onRoomStart, onPlayerJoin, onPlayerQuit, onPlayerMove, enumerateMoves };
