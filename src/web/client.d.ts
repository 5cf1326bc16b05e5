// Types for Turnhouse's browser client, served at /client.d.ts beside /client.js.

/** Any JSON value: a game's state, a move. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface Player {
  id: string;
  username: string;
}

/** What signing up (or rotating a token) answers: the token is shown this once. */
export interface Account extends Player {
  token: string;
  /** The session the token belongs to. */
  session: string;
}

/** One device a player is signed in on. */
export interface Session {
  id: string;
  label: string;
  createdAt: string;
  /** To the minute. */
  lastUsedAt: string;
  /** Whether this is the session the call was made with. */
  current: boolean;
}

export interface SignInCode {
  code: string;
  expiresAt: string;
}

export interface Game {
  id: string;
  name: string;
  description: string;
  minPlayers: number;
  maxPlayers: number;
  /** Whether rooms can seat computer opponents. */
  bots: boolean;
  builtin: boolean;
  owner: Player | null;
  /** The latest version of an uploaded game; null for built-in games. */
  version: number | null;
  format: "commonjs" | "module" | null;
  sha256: string | null;
  publishedAt: string | null;
  /** Whether the game ships its own page (see Turnhouse.frontendUrl). */
  hasFrontend: boolean;
  /** Uploaded games: the CSS colour behind the frame of the game's page ("white" by default). */
  frontendBackground?: string;
  /** Uploaded games: the height of the frame of the game's page, in pixels (600 by default). */
  frontendHeight?: number;
  /** A move as the game expects it, when the game gives one. */
  moveExample: Json | null;
  /** Whether the game exports `onTimeout`, so that its rooms may have a clock. */
  onTimeout: boolean;
  /** Whether the game exports `onPlayerView`: each viewer sees their own view of a room. */
  onPlayerView: boolean;
  /** Whether the game exports `winners(roomState)`, naming who won its finished rooms. */
  winners: boolean;
  /** Whether the game exports `toMove(roomState)`, naming whose move it is. */
  toMove: boolean;
}

export interface GameUpload {
  /** The four hooks; left out, the previous version's are kept. */
  source?: string;
  /** One HTML document (scripts and styles inline); null removes it. A build folder is sent
   * as a FormData upload instead. */
  frontend?: string | null;
  moveExample?: Json | null;
  name?: string;
  description?: string;
  minPlayers?: number;
  maxPlayers?: number;
  /** A CSS colour behind the frame of the game's page. */
  frontendBackground?: string;
  /** The height of the frame of the game's page, in pixels (200 to 2,000). */
  frontendHeight?: number;
}

export interface Room {
  id: string;
  game: string;
  /** The version of an uploaded game this room plays; absent for built-in games. */
  gameVersion?: number;
  private: boolean;
  /** Whether finishing its games changes the players' ratings. */
  rated: boolean;
  version: number;
  joinable: boolean;
  finished: boolean;
  state: Json;
  players: Player[];
  inactivePlayers: Player[];
  /** When the game's `onTimeout` runs (RFC 3339, UTC); null when no deadline is set. */
  triggerTimeoutAt: string | null;
  /** The ids of the players the version waits on to move; null when the game could not say. */
  toMove: string[] | null;
  /** The clock the room was created with; absent when it has none. */
  clock?: Clock;
  /** Seats "Play again" holds for the last game's other players, until `until`. */
  rematch?: Rematch;
  /** The room's games so far; absent until one finishes. */
  score?: Score;
  /** For a room waiting for players: when it is closed if nobody joins before. */
  closesAt?: string;
  /** For a game in play without a clock: from when it can be claimed if nobody moves. */
  claimableAt?: string;
  createdAt: string;
  updatedAt: string;
  /** The ids of its players with a stream of it open now, on any server. */
  online: string[];
}

/** A player's address and what they want mailed to it. */
export interface EmailSettings {
  /** Whether this server sends mail at all. */
  mail: boolean;
  /** The confirmed address, the only one mail goes to. */
  address: string | null;
  verifiedAt: string | null;
  /** The address asked for last, while its link works. */
  pending: string | null;
  turnMail: boolean;
  clockMail: boolean;
  mutedRooms: string[];
}

/** A room of the turns inbox: it waits on the caller's move. */
export interface Turn {
  id: string;
  game: string;
  version: number;
  players: Player[];
  /** When the room's deadline passes, if it has one. */
  deadline?: string;
  clock?: Clock;
  /** Since when it has been the caller's move. */
  since: string;
}

export interface Rematch {
  by: Player;
  /** Whom the seats are held for: those who have neither joined nor declined yet. */
  seats: Player[];
  until: string;
}

export interface Score {
  games: number;
  draws: number;
  /** Games won, by player id. */
  wins: Record<string, number>;
}

/** How long the player to move has (1 to 86,400 seconds), for games with `onTimeout`. */
export interface Clock {
  moveSeconds: number;
}

export interface RoomPage {
  rooms: Room[];
  nextCursor: string | null;
}

export type EventKind =
  | "room_start"
  | "reset"
  | "join"
  | "quit"
  | "move"
  | "timeout"
  | "timeout_fault"
  | "closed"
  | "abandoned"
  | "declined"
  | "renamed";

export interface HistoryEntry {
  version: number;
  kind: EventKind;
  player: Player | null;
  move: Json | null;
  state: Json;
  joinable: boolean;
  finished: boolean;
  players: Player[];
  triggerTimeoutAt: string | null;
  /** The ids of the players the version waits on to move; null when the game could not say. */
  toMove: string[] | null;
  createdAt: string;
  /** Only on the version that finished a rated game: each player's rating before and after. */
  ratingChanges?: { player: Player; before: number; after: number }[];
}

export interface HistoryPage {
  events: HistoryEntry[];
  /** Pass as `after` for the next page; null on the last one. */
  nextAfter: number | null;
}

/** One version of a room, as a room stream delivers it: its history entry, and whose it is. */
export interface RoomVersion extends HistoryEntry {
  /** The room's id. */
  room: string;
  game: string;
  gameVersion?: number;
}

/** A line of an uploaded game's log: what a hook logged, or how it failed (owner only). */
export interface GameLogLine {
  id: number;
  gameVersion: number;
  at: string;
  room: string;
  /** The room's version the call made (or would have); the version shown, for views and bots. */
  version: number;
  hook: string;
  level: 'info' | 'warn' | 'error';
  text: string;
}

export interface GameLogPage {
  lines: GameLogLine[];
  /** Pass as `after` for the lines logged since. */
  nextAfter: number;
}

export type LobbyChange =
  | { change: "created" | "updated"; room: Room }
  | { change: "resync" };

export interface RoomFilters {
  game?: string;
  joinable?: boolean;
  finished?: boolean;
  player?: string;
  limit?: number;
  cursor?: string;
}

export interface NewRoom {
  game: string;
  private?: boolean;
  bot?: "easy" | "medium" | "hard";
  botPlaysFirst?: boolean;
  clock?: Clock;
  /** `false` opts a public room out of ratings. */
  rated?: boolean;
}

/** A refusal or failure: the RFC 9457 problem the server answered with. */
export declare class TurnhouseError extends Error {
  /** The HTTP status; 0 when the server could not be reached. */
  readonly status: number;
  /** The problem's stable code (`game_refused`, `version_mismatch`, …; `network_error`). */
  readonly code: string;
  /** The game's own name for a refusal (`not_your_turn`, …), with `game_refused`. */
  readonly reason?: string;
  readonly detail: string;
  readonly requestId?: string;
  readonly problem: { [key: string]: Json };
}

/** A player's rating in a game. */
export interface Standing {
  rating: number;
  deviation: number;
  /** Rated games counted (fewer than five: provisional, not on the leaderboard). */
  games: number;
}

export interface Leaderboard {
  game: string;
  entries: Array<Standing & { rank: number; player: Player }>;
  nextCursor: string | null;
}

export interface Profile {
  player: Player;
  createdAt: string;
  ratings: Array<Standing & { game: string; rank: number | null }>;
  recentRooms: Array<{
    room: Room;
    /** The path of its replay on the page. */
    replay: string;
    ratingChange?: { before: number; after: number; won: boolean };
  }>;
}

/** A chat message: plain text, to be shown as text, never as HTML. */
export interface ChatMessage {
  id: number;
  /** The room it was written in; null in the lobby. */
  room: string | null;
  channel: 'table' | 'gallery' | 'lobby';
  player: Player;
  /** Null once an admin deleted it. */
  text: string | null;
  deleted: boolean;
  /** The room's version when it was written (a replay shows it there). */
  version: number | null;
  createdAt: string;
}

export interface ChatPage {
  messages: ChatMessage[];
  /** Where the next page starts (`after`). */
  nextAfter: number;
}

/** A room's chat (`room` null: the lobby's). */
export interface Chat {
  send(room: string | null, text: string, options?: { channel?: 'table' | 'gallery' }): Promise<ChatMessage>;
  history(
    room: string | null,
    options?: { channel?: 'table' | 'gallery'; after?: number; before?: number; limit?: number },
  ): Promise<ChatPage>;
  report(message: number, reason?: string): Promise<null>;
  block(player: string): Promise<null>;
  unblock(player: string): Promise<null>;
  blocks(): Promise<{ blocks: Player[] }>;
  closeGallery(room: string): Promise<null>;
}

/** Stops a watch. */
export type Stop = () => void;

export declare class Turnhouse {
  constructor(baseUrl?: string, options?: { token?: string | null });
  /** The bearer token sent with every call. */
  token: string | null;
  readonly baseUrl: string;

  signUp(username?: string | null): Promise<Account>;
  rotateToken(): Promise<Account>;
  signInWithCode(code: string, label?: string): Promise<Account>;
  signInWithPassword(username: string, password: string, label?: string): Promise<Account>;
  setPassword(password: string, currentPassword?: string): Promise<void>;
  signInCode(): Promise<SignInCode>;
  sessions(): Promise<Session[]>;
  turns(): Promise<Turn[]>;
  features(): Promise<{ mail: boolean }>;
  email(): Promise<EmailSettings>;
  setEmail(email: string): Promise<{ pending: string }>;
  removeEmail(): Promise<void>;
  setMail(settings: { turnMail?: boolean; clockMail?: boolean }): Promise<{ turnMail: boolean; clockMail: boolean }>;
  muteRoom(roomId: string, muted?: boolean): Promise<void>;
  verifyEmail(token: string): Promise<{ player: string; address: string }>;
  requestPasswordReset(who: { username: string } | { email: string }): Promise<void>;
  resetPassword(token: string, password: string): Promise<void>;
  pushKey(): Promise<string>;
  addPushSubscription(subscription: PushSubscriptionJSON | { endpoint: string; keys: { p256dh: string; auth: string } }): Promise<{ id: string }>;
  pushSubscriptions(): Promise<{ id: string; endpoint: string; createdAt: string }[]>;
  removePushSubscription(id: string): Promise<void>;
  endSession(id: string): Promise<void>;
  endOtherSessions(): Promise<number>;
  signOut(): Promise<void>;

  games(): Promise<Game[]>;
  game(id: string, options?: { version?: number }): Promise<Game>;
  publishGame(id: string, upload: GameUpload | FormData): Promise<Game>;
  gameSource(id: string, options?: { version?: number }): Promise<string>;
  frontendUrl(id: string, version?: number | null): string;
  serverTime(): Promise<number>;

  rooms(filters?: RoomFilters): Promise<RoomPage>;
  room(id: string): Promise<Room>;
  history(id: string, options?: { after?: number; limit?: number }): Promise<HistoryPage>;

  createRoom(options: NewRoom): Promise<Room>;
  quickPlay(game: string, clock?: Clock): Promise<Room>;
  join(id: string): Promise<Room>;
  quit(id: string): Promise<Room>;
  move(id: string, move: Json, options?: { ifMatch?: number }): Promise<Room>;
  playAgain(id: string): Promise<Room>;
  /** Turns down the rematch offered to you. */
  decline(id: string): Promise<Room>;
  /** Claims a game that stood still from the player it waits on. */
  claim(id: string): Promise<Room>;

  watch(
    id: string,
    onVersion: (version: RoomVersion) => void,
    options?: {
      after?: number;
      onPresence?: (online: string[]) => void;
      /** Each message you may read as it is written; again with `deleted: true` if deleted. */
      onChat?: (message: ChatMessage) => void;
      /** Resume the chat after this message (0: all of it); from now without it. */
      chatAfter?: number;
    },
  ): Stop;
  watchLobby(
    game: string | null,
    onChange: (change: LobbyChange) => void,
    options?: {
      onOnline?: (players: number) => void;
      onChat?: (message: ChatMessage) => void;
      chatAfter?: number;
    },
  ): Stop;
  /** Chat: `chat.send`, `chat.history`, reports and blocks. */
  readonly chat: Chat;

  /** A page of a game's leaderboard. */
  leaderboard(game: string, options?: { limit?: number; cursor?: string }): Promise<Leaderboard>;
  /** The ratings in `game` of up to 100 players, by id; those never rated in it are left out. */
  ratings(game: string, players: string[]): Promise<{ [player: string]: Standing }>;
  /** A player's profile (`me`: yours). */
  profile(id: string): Promise<Profile>;

  /** The newest lines of your game's log (or those after `after`), oldest first. */
  gameLogs(id: string, options?: { after?: number; limit?: number }): Promise<GameLogPage>;
  /** Each line of your game's log as it is stored, after `after` (from now on without it). */
  watchGameLogs(id: string, onLine: (line: GameLogLine) => void, options?: { after?: number }): Stop;

  /** Your game's webhook endpoints. */
  webhooks(game: string): Promise<{ endpoints: WebhookEndpoint[] }>;
  /** A new endpoint taking `events` of your game at `url`; its `secret` is shown this once. */
  addWebhook(game: string, url: string, events: WebhookEventType[]): Promise<WebhookEndpoint>;
  /** Pauses, resumes, rotates the secret of, or pings one of your game's endpoints. */
  webhookAction(game: string, hook: string, action: 'pause' | 'resume' | 'rotate' | 'ping'): Promise<WebhookEndpoint | WebhookDelivery>;
  /** Removes one of your game's endpoints and its delivery log. */
  removeWebhook(game: string, hook: string): Promise<null>;
  /** An endpoint's delivery log, newest first. */
  webhookDeliveries(game: string, hook: string, options?: { limit?: number; cursor?: string }): Promise<{ deliveries: WebhookDelivery[]; nextCursor: string | null }>;
  /** Delivers one event again, with the same webhook-id. */
  redeliver(game: string, hook: string, delivery: string): Promise<WebhookDelivery>;
}

/** The events a webhook endpoint may take. */
export type WebhookEventType = 'room.created' | 'room.started' | 'room.finished' | 'room.closed'
  | 'player.joined' | 'player.left' | 'version.created' | 'game.published';

/** A webhook endpoint, as its owner sees it. */
export interface WebhookEndpoint {
  id: string;
  game: string | null;
  url: string;
  events: WebhookEventType[];
  status: 'active' | 'paused' | 'disabled';
  pausedAt: string | null;
  disabledAt: string | null;
  disabledReason: string | null;
  failingSince: string | null;
  previousSecretUntil: string | null;
  createdAt: string;
  activeFrom: string;
  /** Only when it is new (made or rotated). */
  secret?: string;
}

/** One event on its way to an endpoint, with its attempts. */
export interface WebhookDelivery {
  id: string;
  type: string;
  roomId: string | null;
  state: 'pending' | 'delivered' | 'failed';
  createdAt: string;
  nextAttemptAt: string | null;
  retryUntil: string;
  attemptCount: number;
  lastStatus: number | null;
  attempts?: { attempt: number; at: string; status: number | null; latencyMs: number; response: string; error: string | null }[];
}
