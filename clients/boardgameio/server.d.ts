// turnhouse-boardgameio/server: a boardgame.io 0.50 game object as Turnhouse's hooks.
import type { Ctx, Game as BoardgameioGame, LogEntry, PlayerID, State } from 'boardgame.io';
import type { Game } from './hooks';

/** An action as Turnhouse's API takes it (`POST /rooms/{id}/moves`). */
export type Action =
  | { type: string; args?: unknown[]; stateID?: number }
  | { event: string; args?: unknown[]; stateID?: number }
  | { undo: true; stateID?: number }
  | { redo: true; stateID?: number };

/** The room's state: the seats' player ids, the match's seed, boardgame.io's state. */
export interface MatchState<G = any> {
  seats: string[];
  seed: string;
  /** null until every seat is taken. */
  match: State<G> | null;
  /** The log entries of the action that made this version. */
  deltalog: LogEntry[];
}

/** What a viewer is shown: boardgame.io's player view; the seed only once the match is over. */
export interface MatchView<G = any> {
  seats: string[];
  seed?: string;
  match: State<G> | null;
  deltalog: LogEntry[];
}

export interface HooksOptions<G = any> {
  /** Seats in a room (default: the game's minPlayers, else 2). */
  numPlayers?: number;
  /** Passed to the game's setup. */
  setupData?: unknown;
  /** Every room's seed (default: the game's `seed`, else one drawn per room). */
  seed?: string;
  /** The events a player may send (default: those the game enables, but endGame). */
  playerEvents?: string[];
  /** What a quit does: a gameover value ends the match; undefined lets it go on. */
  onPlayerQuit?(context: { G: G; ctx: Ctx; playerID: PlayerID }): unknown;
}

export declare function hooks<G = any>(
  game: BoardgameioGame<G>,
  options?: HooksOptions<G>,
): Game<MatchState<G>, Action, MatchView<G>>;

/** A refusal: Turnhouse answers `422 game_refused` with `code` as the reason. */
export declare class Refusal extends Error {
  code: string;
  constructor(code: string, message: string);
}
