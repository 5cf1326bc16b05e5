// Nim in TypeScript, typed by Turnhouse's /hooks.d.ts (downloaded beside it as hooks.d.ts):
// fifteen stones, each player takes one to three in turn, and whoever takes the last one wins.
import type { Game, Player, RoomState } from './hooks';

interface Nim {
  pile: number;
  /** The seat to move: 0 or 1. */
  next: number;
  winner: string | null;
}

interface Take {
  take: number;
}

/** A refusal: the client gets 422 game_refused with `code` as the reason. */
class Refusal extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

const toMove = (room: RoomState<Nim>): Player[] =>
  room.finished || room.joinable ? [] : [room.players[room.state.next]];

const nim: Game<Nim, Take> = {
  settings: {
    name: 'Nim',
    description: 'Fifteen stones: take one to three; whoever takes the last one wins.',
    minPlayers: 2,
    maxPlayers: 2,
    moveExample: { take: 2 },
  },
  onRoomStart: () => ({ state: { pile: 15, next: 0, winner: null } }),
  onPlayerJoin: (_player, room) => (room.players.length === 2 ? { joinable: false } : {}),
  onPlayerQuit: (player, room) => {
    if (room.joinable) return {};
    const other = room.players.find((p) => p.id !== player.id);
    return { state: { ...room.state, winner: other ? other.id : null }, finished: true };
  },
  onPlayerMove(player, move, room) {
    if (toMove(room)[0]?.id !== player.id) throw new Refusal('not_your_turn', 'Wait for your turn.');
    const { pile, next } = room.state;
    if (!Number.isInteger(move.take) || move.take < 1 || move.take > Math.min(3, pile)) {
      throw new Refusal('bad_take', `Take one to ${Math.min(3, pile)} stones.`);
    }
    const left = pile - move.take;
    const winner = left === 0 ? player.id : null;
    return { state: { pile: left, next: 1 - next, winner }, finished: left === 0 };
  },
  winners: (room) => (room.state.winner ? [room.state.winner] : []),
  toMove,
  enumerateMoves: (room, player) =>
    toMove(room)[0]?.id === player.id
      ? [1, 2, 3].filter((take) => take <= room.state.pile).map((take) => ({ take }))
      : [],
};

export default nim;
