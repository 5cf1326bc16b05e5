// Connect Four for Turnhouse, as an uploaded game written as an ES module.
// Seven columns, six rows; a move is {"column": 0..6} and the disc falls to the lowest empty
// cell. Four in a row (across, down or diagonally) wins; a full board is a draw.
//
//   curl -X PUT "$API/games/connect-four?name=Connect%20Four&minPlayers=2&maxPlayers=2" \
//        -H "Authorization: Bearer $TOKEN" \
//        -H 'Content-Type: application/javascript' --data-binary @examples/connect-four.js

const COLUMNS = 7;
const ROWS = 6;
const DISCS = ['red', 'yellow'];
const DIRECTIONS = [[0, 1], [1, 0], [1, 1], [1, -1]];

class Refusal extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'Refusal';
    this.code = code;
  }
}

// board[row][column], row 0 at the bottom.
const emptyBoard = () => Array.from({ length: ROWS }, () => Array(COLUMNS).fill(null));

function discAt(board, row, column) {
  return row >= 0 && row < ROWS && column >= 0 && column < COLUMNS ? board[row][column] : undefined;
}

// The four (or more) cells in a line through [row, column], if its disc made one.
function lineThrough(board, row, column) {
  const disc = board[row][column];
  for (const [dr, dc] of DIRECTIONS) {
    const line = [[row, column]];
    for (const sign of [1, -1]) {
      let [r, c] = [row + sign * dr, column + sign * dc];
      while (discAt(board, r, c) === disc) {
        line.push([r, c]);
        [r, c] = [r + sign * dr, c + sign * dc];
      }
    }
    if (line.length >= 4) return line.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  }
  return null;
}

export default {
  onRoomStart() {
    return {
      state: { status: 'waiting', board: emptyBoard(), turn: 0, moves: 0, winner: null, line: null },
      joinable: true,
    };
  },

  onPlayerJoin(player, room) {
    const { players, state } = room;
    room.logger.info(`${player.username} sits down (${players.length} of 2)`);
    if (players.length > 2 || state.status !== 'waiting') throw new Refusal('room_full', 'both seats are taken');
    if (players.length < 2) return { joinable: true };
    return { state: { ...state, status: 'playing' }, joinable: false };
  },

  onPlayerQuit(player, room) {
    const { players, state } = room;
    if (state.status === 'waiting') return { joinable: true };
    if (state.status === 'playing') {
      return { state: { ...state, status: 'over', winner: players[0] ?? null }, finished: true };
    }
    return {};
  },

  onPlayerMove(player, move, room) {
    const { players, state } = room;
    if (state.status !== 'playing') {
      throw new Refusal(state.status === 'waiting' ? 'game_not_started' : 'game_over',
        state.status === 'waiting' ? 'waiting for a second player' : 'the game is over');
    }
    const seat = players.findIndex((p) => p.id === player.id);
    if (seat !== state.turn) {
      throw new Refusal('not_your_turn', `it is ${players[state.turn]?.username ?? 'the other player'}'s turn`);
    }
    const column = move?.column;
    if (!Number.isInteger(column) || column < 0 || column >= COLUMNS) {
      throw new Refusal('invalid_move', 'a move looks like {"column": 0..6}');
    }
    const board = state.board;
    const row = board.findIndex((cells) => cells[column] === null);
    if (row < 0) throw new Refusal('column_full', `column ${column} is full`);
    board[row][column] = DISCS[seat];
    const moves = state.moves + 1;
    const line = lineThrough(board, row, column);
    if (line) {
      return { state: { ...state, board, moves, status: 'over', winner: player, line }, finished: true };
    }
    if (moves === ROWS * COLUMNS) {
      return { state: { ...state, board, moves, status: 'over' }, finished: true };
    }
    return { state: { ...state, board, moves, turn: 1 - seat } };
  },

  // The columns `player` can drop a disc into now: none unless it is their turn. With this
  // export the room can seat bots (`"bot": "easy" | "medium" | "hard"`); `state.winner` tells
  // them who won.
  enumerateMoves(room, player) {
    const { players, state } = room;
    if (room.finished || state.status !== 'playing' || players[state.turn]?.id !== player.id) return [];
    const top = state.board[ROWS - 1];
    return top.flatMap((cell, column) => (cell === null ? [{ column }] : []));
  },
};
