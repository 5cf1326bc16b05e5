'use strict';
// A transport for boardgame.io 0.50's Client: `multiplayer: Turnhouse({server, token})`.
//
// With `server`, it speaks Turnhouse's API itself: each action is a POST to the room's moves,
// and every version comes from the room's stream (fetch-based server-sent events, so the token
// travels in the Authorization header and the same code runs in Node and in browsers).
// Without `server`, inside a Turnhouse page's frame, it speaks the page's postMessage protocol
// (turnhouse:state / turnhouse:move / turnhouse:result): the page holds the token and the
// network, and the frame has neither.
//
// The match is the Turnhouse room (matchID = room id), the credentials are the session token,
// and boardgame.io's playerID is the seat: the viewer's index in the room state's `seats`.
const { Transport } = require('boardgame.io/internal');

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 10000;

/** The Turnhouse move for a boardgame.io action made on `state`. */
function moveOf(state, action) {
  const stateID = state ? state._stateID : undefined;
  const { type, args } = action.payload;
  switch (action.type) {
    case 'MAKE_MOVE':
      return { type, args: args ?? [], stateID };
    case 'GAME_EVENT':
      return { event: type, args: args ?? [], stateID };
    case 'UNDO':
      return { undo: true, stateID };
    case 'REDO':
      return { redo: true, stateID };
    default:
      return null;
  }
}

/** Reads a text/event-stream body, calling `onEvent({id, event, data})` per event. */
async function readEvents(body, onEvent) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = { id: undefined, event: 'message', data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, end).replace(/\r$/, '');
      buffer = buffer.slice(end + 1);
      if (line === '') {
        if (event.data.length) onEvent({ ...event, data: event.data.join('\n') });
        event = { id: event.id, event: 'message', data: [] };
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') event.data.push(text);
      else if (field === 'event') event.event = text;
      else if (field === 'id') event.id = text;
    }
  }
}

class TurnhouseTransport extends Transport {
  constructor(opts) {
    super(opts);
    this.server = opts.server ? String(opts.server).replace(/\/+$/, '') : null;
    this.token = opts.token ?? null;
    this.onError = opts.onError ?? null;
    this.names = new Map();
    this.room = null;
    this.match = null;
    this.matchDataKey = '';
    this.generation = 0;
    this.pending = new Map();
    this.nextMove = 0;
    this.running = false;
    this.onMessage = null;
  }

  /** The session token: the client's credentials, else the one given to Turnhouse(). */
  bearer() {
    return this.credentials || this.token;
  }

  connect() {
    this.running = true;
    this.generation += 1;
    const generation = this.generation;
    if (this.server) {
      this.follow(generation);
      return;
    }
    this.onMessage = (event) => {
      if (event.source !== window.parent || !event.data || typeof event.data !== 'object') return;
      const message = event.data;
      if (message.type === 'turnhouse:state') {
        this.setConnectionStatus(true);
        this.receive(message.room);
      } else if (message.type === 'turnhouse:result') {
        const settle = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (settle) settle(message.ok ? null : message.problem || { title: 'refused' });
      }
    };
    window.addEventListener('message', this.onMessage);
    window.parent.postMessage({ type: 'turnhouse:ready' }, '*');
    // The frame takes the board's height, so the whole board shows without a scrollbar.
    if (typeof ResizeObserver === 'function' && !this.resizer) {
      this.resizer = new ResizeObserver(() => {
        const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
        window.parent.postMessage({ type: 'turnhouse:resize', height }, '*');
      });
      this.resizer.observe(document.body);
    }
  }

  disconnect() {
    this.running = false;
    this.generation += 1;
    if (this.abort) this.abort.abort();
    if (this.onMessage) window.removeEventListener('message', this.onMessage);
    this.onMessage = null;
    if (this.resizer) this.resizer.disconnect();
    this.resizer = null;
    this.setConnectionStatus(false);
  }

  /** Follows the room's stream, resuming after the last version seen, until disconnected. */
  async follow(generation) {
    let delay = RETRY_MIN_MS;
    while (generation === this.generation) {
      this.abort = new AbortController();
      try {
        const headers = { Accept: 'text/event-stream' };
        if (this.bearer()) headers.Authorization = `Bearer ${this.bearer()}`;
        if (this.room) headers['Last-Event-ID'] = String(this.room.version);
        const url = `${this.server}/rooms/${encodeURIComponent(this.matchID)}/stream`;
        const response = await fetch(url, { headers, signal: this.abort.signal });
        if (response.status === 409) this.room = null; // the room was played again: start over
        if (!response.ok) throw new Error(`stream answered ${response.status}`);
        this.setConnectionStatus(true);
        delay = RETRY_MIN_MS;
        await readEvents(response.body, ({ event, data }) => {
          if (event === 'version' && generation === this.generation) this.receive(JSON.parse(data));
        });
      } catch (error) {
        if (generation !== this.generation) return;
        this.report(error);
      }
      this.setConnectionStatus(false);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
  }

  report(problem) {
    if (this.onError) this.onError(problem);
  }

  /** A version of the room as this viewer sees it: boardgame.io's sync, update and matchData. */
  receive(room) {
    // The stream and an action's answer may bring one version twice, or an older one late.
    if (!room || (this.room && room.version < this.room.version)) return;
    this.room = room;
    for (const player of room.players || []) this.names.set(player.id, player.username);
    const state = room.state || {};
    const seats = Array.isArray(state.seats) ? state.seats : [];
    const present = new Set((room.players || []).map((player) => player.id));
    const matchData = seats.map((id, seat) => ({
      id: seat,
      name: this.names.get(id),
      isConnected: present.has(id),
    }));
    const key = JSON.stringify(matchData);
    if (key !== this.matchDataKey) {
      this.matchDataKey = key;
      this.notifyClient({ type: 'matchData', args: [this.matchID, matchData] });
    }
    const match = state.match;
    if (!match) return;
    const previous = this.match;
    this.match = match;
    if (!previous || match._stateID < previous._stateID) {
      // The first state, or one from before (a replay, or the room played again).
      this.sync(matchData);
    } else {
      this.notifyClient({ type: 'update', args: [this.matchID, match, state.deltalog || []] });
    }
  }

  /** Puts the client on the last state the server sent, whatever it holds now. */
  sync(matchData) {
    const log = this.room.state.deltalog || [];
    this.notifyClient({
      type: 'sync',
      args: [this.matchID, { state: this.match, filteredMetadata: matchData, initialState: this.match, log }],
    });
  }

  /** After a refused action: the client's own guess at it is undone. */
  resync() {
    if (this.match) this.sync(JSON.parse(this.matchDataKey || '[]'));
  }

  sendAction(state, action) {
    const move = moveOf(state, action);
    if (!move) return;
    this.send(move).then((problem) => {
      if (problem) {
        this.report(problem);
        this.resync();
      }
    });
  }

  /** Sends a move; resolves to null when it was taken, or to the problem that refused it. */
  async send(move) {
    if (!this.server) {
      this.nextMove += 1;
      const id = this.nextMove;
      const answer = new Promise((resolve) => this.pending.set(id, resolve));
      window.parent.postMessage({ type: 'turnhouse:move', move, id }, '*');
      return answer;
    }
    try {
      const headers = { 'Content-Type': 'application/json' };
      if (this.bearer()) headers.Authorization = `Bearer ${this.bearer()}`;
      const url = `${this.server}/rooms/${encodeURIComponent(this.matchID)}/moves`;
      const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(move) });
      const body = await response.json().catch(() => null);
      if (!response.ok) return body || { status: response.status };
      // The answer is the room after the action: shown at once, ahead of the stream.
      this.receive(body);
      return null;
    } catch (error) {
      return { title: String(error) };
    }
  }

  sendChatMessage() {
    // Turnhouse's rooms have no chat for boardgame.io's client yet: messages are dropped.
  }

  requestSync() {
    const room = this.room;
    this.match = null;
    if (room) this.receive(room);
  }

  updateMatchID(matchID) {
    this.matchID = matchID;
    this.room = null;
    this.match = null;
    this.matchDataKey = '';
    this.reconnect();
  }

  updatePlayerID(playerID) {
    this.playerID = playerID;
  }

  updateCredentials(credentials) {
    this.credentials = credentials;
    this.reconnect();
  }

  /** Starts over with the new match or credentials, if the client is running. */
  reconnect() {
    if (!this.running) return;
    this.disconnect();
    this.connect();
  }
}

/** boardgame.io's `multiplayer:` for Turnhouse: `Turnhouse({server, token})`, or `Turnhouse()` in a frame. */
function Turnhouse(options = {}) {
  return (transportOpts) => new TurnhouseTransport({ ...transportOpts, ...options });
}

module.exports = { Turnhouse, TurnhouseTransport };
