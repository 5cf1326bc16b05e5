// turnhouse-boardgameio's declarations in use: a typed game bundled as hooks, and boardgame.io's
// Client on the Turnhouse transport. The tests run tsc over it (tsconfig.json).
import type { Game } from 'boardgame.io';
import { Client } from 'boardgame.io/client';
import { INVALID_MOVE } from 'boardgame.io/core';
import { hooks, Refusal, type Action, type MatchState } from 'turnhouse-boardgameio/server';
import { Turnhouse } from 'turnhouse-boardgameio/client';
import type { Player, RoomState } from 'turnhouse-boardgameio/hooks';

interface Cells {
  cells: Array<string | null>;
}

const Marks: Game<Cells> = {
  name: 'marks',
  setup: () => ({ cells: Array(9).fill(null) }),
  moves: {
    mark: ({ G, playerID }, id: number) => {
      if (G.cells[id] !== null) return INVALID_MOVE;
      G.cells[id] = playerID;
    },
  },
  ai: { enumerate: (G) => G.cells.flatMap((c, id) => (c === null ? [{ move: 'mark', args: [id] }] : [])) },
};

const game = hooks(Marks, { numPlayers: 2, onPlayerQuit: ({ ctx }) => ({ winner: ctx.currentPlayer }) });
const move: Action = { type: 'mark', args: [4], stateID: 0 };
const seats = (room: RoomState<MatchState<Cells>>): string[] => room.state.seats;
const player: Player = { id: 'p', username: 'alice' };
const refusal = new Refusal('action/invalid_move', 'taken');
console.log(move, seats, player, refusal.code, typeof game.enumerateMoves);

const client = Client({
  game: Marks,
  matchID: 'room',
  playerID: '0',
  credentials: 'token',
  multiplayer: Turnhouse({ server: 'http://127.0.0.1:8080', onError: (problem) => console.log(problem) }),
});
client.start();

export default game;
