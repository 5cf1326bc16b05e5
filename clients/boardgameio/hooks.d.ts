// Turnhouse's game hooks: the types of a game written in JavaScript or TypeScript and uploaded
// with `PUT /games/{id}` (see docs/hosting.md, "Writing a game in JavaScript"). Served at
// `/hooks.d.ts`. A game is `export default { onRoomStart, … } satisfies Game<MyState, MyMove>`.

/** A player: seated in a room, or the one making a move. */
export interface Player {
  id: string;
  username: string;
}

/** A room's clock, when it was created with one: the time each move may take. */
export interface Clock {
  moveSeconds: number;
}

/** What a hook is told about how the room was created. */
export interface RoomStartContext {
  private: boolean;
  clock?: Clock;
}

/** Lines written to the server's log (and the game's log), tagged with the room and hook. */
export interface Logger {
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

/** The room as a hook sees it: a fresh copy for each call, which the hook may change freely. */
export interface RoomState<S = unknown> {
  /** Seated players, in the order they joined. */
  players: Player[];
  version: number;
  joinable: boolean;
  finished: boolean;
  /** The game's own state: `null` in `onRoomStart`, then whatever the hooks last set. */
  state: S;
  /** When `onTimeout` runs next (RFC 3339), or null. */
  triggerTimeoutAt: string | null;
  roomStartContext: RoomStartContext;
  logger: Logger;
}

/**
 * What a hook changes; a key left out keeps its value. `state` replaces the old state whole
 * and must be JSON (at most 1 MiB); `finished: true` closes the room; `triggerTimeoutAt` is a
 * `Date` or an RFC 3339 string (null cancels it), for a game that exports `onTimeout`.
 */
export interface Patch<S = unknown> {
  state?: S;
  joinable?: boolean;
  finished?: boolean;
  triggerTimeoutAt?: Date | string | null;
}

/** A hook's answer: a patch, nothing (no change), or a promise of either. */
export type HookResult<S> = Patch<S> | void | Promise<Patch<S> | void>;

/** Settings the file may carry itself; what an upload says beats them. */
export interface Settings {
  name?: string;
  description?: string;
  minPlayers?: number;
  maxPlayers?: number;
  /** Shown to players as an example of a move (at most 1 KiB of JSON). */
  moveExample?: unknown;
}

/**
 * A game: `S` is its state, `M` a move as clients send it, `V` what `onPlayerView` shows.
 * To refuse an action, throw: the client gets `422 game_refused`, with the error's `code`
 * (when a string) or `name` as the reason and its `message` as the detail.
 */
export interface Game<S = any, M = any, V = unknown> {
  settings?: Settings;
  /** A room is created, or played again. */
  onRoomStart(roomState: RoomState<null>): HookResult<S>;
  /** `player` was appended to `roomState.players`. */
  onPlayerJoin(player: Player, roomState: RoomState<S>): HookResult<S>;
  /** `player` was removed from `roomState.players`: they quit, or stopped playing. */
  onPlayerQuit(player: Player, roomState: RoomState<S>): HookResult<S>;
  /** `move` is whatever JSON the client sent. */
  onPlayerMove(player: Player, move: M, roomState: RoomState<S>): HookResult<S>;
  /** The room's `triggerTimeoutAt` has passed. */
  onTimeout?(roomState: RoomState<S>): HookResult<S>;
  /** What `viewer` may see of the state (`null` for anyone not seated now or before). */
  onPlayerView?(viewer: Player | null, roomState: RoomState<S>): V | Promise<V>;
  /** Who won a finished room (players or their ids; none for a draw). */
  winners?(roomState: RoomState<S>): Array<Player | string>;
  /** Who the room waits on now (players or their ids; none when nobody is to move). */
  toMove?(roomState: RoomState<S>): Array<Player | string>;
  /** The legal moves of `player` now (none when they cannot move): gives the game bots. */
  enumerateMoves?(roomState: RoomState<S>, player: Player): M[];
}
