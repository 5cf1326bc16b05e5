// turnhouse-boardgameio/client: a transport for boardgame.io 0.50's Client.
import { Transport } from 'boardgame.io/internal';

type TransportOpts = ConstructorParameters<typeof Transport>[0];

export interface TurnhouseOptions {
  /** The API's address; left out inside a Turnhouse page's frame, which talks to the page. */
  server?: string;
  /** The session token, when the client is not given `credentials`. */
  token?: string;
  /** Called with the RFC 9457 problem when an action is refused. */
  onError?(problem: unknown): void;
}

/** `multiplayer: Turnhouse({server})` for boardgame.io's `Client`. */
export declare function Turnhouse(options?: TurnhouseOptions): (opts: TransportOpts) => TurnhouseTransport;

export declare class TurnhouseTransport extends Transport {
  constructor(opts: TransportOpts & TurnhouseOptions);
  connect(): void;
  disconnect(): void;
  sendAction(state: unknown, action: unknown): void;
  sendChatMessage(matchID: string, chatMessage: unknown): void;
  requestSync(): void;
  updateMatchID(id: string): void;
  updatePlayerID(id: string): void;
  updateCredentials(credentials?: string): void;
}
