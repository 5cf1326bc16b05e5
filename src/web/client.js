// Turnhouse's browser client: one ES module, no build step, no dependencies. Served by every
// Turnhouse server at /client.js; a page on any origin imports it with
//   import { Turnhouse } from "http://HOST/client.js";
// Types are at /client.d.ts. Every method resolves to the API's own JSON and throws a
// TurnhouseError (the problem's status, code, reason, detail and requestId) when refused.

/** A refusal or failure, carrying the RFC 9457 problem the server answered with. */
export class TurnhouseError extends Error {
  constructor(status, problem) {
    const body = problem && typeof problem === 'object' ? problem : {};
    super(body.detail || `The request failed (${status}).`);
    this.name = 'TurnhouseError';
    /** The HTTP status; 0 when the server could not be reached. */
    this.status = status;
    this.code = body.code || (status === 0 ? 'network_error' : 'unexpected_response');
    /** The game's own name for a refusal (`game_refused`), else undefined. */
    this.reason = body.reason;
    this.detail = body.detail || this.message;
    this.requestId = body.requestId;
    /** The whole problem object, extension members included (`currentVersion`, `line`). */
    this.problem = body;
  }
}

/** How long to wait before opening a stream again after the server refused it. */
const REOPEN_MS = 2000;

export class Turnhouse {
  /**
   * @param baseUrl the server, e.g. "http://127.0.0.1:8080" ("" for the page's own server)
   * @param options.token a player's token, if already signed up
   */
  constructor(baseUrl = '', { token = null } = {}) {
    this.baseUrl = String(baseUrl).replace(/\/+$/, '');
    /** The bearer token sent with every call; set by signUp() and rotateToken(). */
    this.token = token;
  }

  // -------------------------------------------------------------------------------------------
  // Players.

  /** Signs up (a name is generated when none is given) and keeps the new token. */
  async signUp(username) {
    const body = username === undefined || username === null ? {} : { username };
    const player = await this.#call('POST', '/players', { body, auth: false });
    this.token = player.token;
    return player;
  }

  /** Replaces this session's token; the old one stops working at once. */
  async rotateToken() {
    const player = await this.#call('POST', '/players/me/token');
    this.token = player.token;
    return player;
  }

  /** Signs in with a code shown on another device, and keeps the new session's token. */
  async signInWithCode(code, label) {
    const body = label ? { code, label } : { code };
    const player = await this.#call('POST', '/sessions', { body, auth: false });
    this.token = player.token;
    return player;
  }

  /** Signs in with a name and password, and keeps the new session's token. */
  async signInWithPassword(username, password, label) {
    const body = label ? { username, password, label } : { username, password };
    const player = await this.#call('POST', '/sessions', { body, auth: false });
    this.token = player.token;
    return player;
  }

  /** Sets this player's password; `currentPassword` is needed to change one. */
  async setPassword(password, currentPassword) {
    const body = currentPassword ? { password, currentPassword } : { password };
    await this.#call('PUT', '/players/me/password', { body });
  }

  /** A code that signs this player in on another device: once, within ten minutes. */
  async signInCode() {
    return this.#call('POST', '/players/me/sign-in-codes');
  }

  /** This player's sessions, each device signed in, the current one marked. */
  async sessions() {
    return (await this.#call('GET', '/players/me/sessions')).sessions;
  }

  /** What this server offers beyond the games: `{mail}`, whether it sends mail. */
  async features() {
    return this.#call('GET', '/features');
  }

  /** This player's address, the one waiting for its link, their mail settings and muted rooms. */
  async email() {
    return this.#call('GET', '/players/me/email');
  }

  /** Mails a link that makes `email` this player's once followed. */
  async setEmail(email) {
    return this.#call('PUT', '/players/me/email', { body: { email } });
  }

  /** This player no longer has an address. */
  async removeEmail() {
    await this.#call('DELETE', '/players/me/email');
  }

  /** Turns turn mail and clock warnings on or off (each left out stays as it is). */
  async setMail(settings) {
    return this.#call('PUT', '/players/me/mail', { body: settings });
  }

  /** Nothing is mailed or pushed about the room (`muted`), or it is again. */
  async muteRoom(roomId, muted = true) {
    await this.#call(muted ? 'PUT' : 'DELETE', `/players/me/muted-rooms/${encodeURIComponent(roomId)}`);
  }

  /** Follows a mailed link that confirms an address. */
  async verifyEmail(token) {
    return this.#call('POST', '/email-verifications', { body: { token } });
  }

  /** Asks for a reset link, by `{username}` or `{email}`: the answer is the same either way. */
  async requestPasswordReset(who) {
    await this.#call('POST', '/password-resets', { body: who });
  }

  /** Follows a reset link: a new password, and every session of the account ends. */
  async resetPassword(token, password) {
    await this.#call('POST', '/password-resets/confirm', { body: { token, password } });
  }

  /** The key browsers subscribe to this server's pushes with (base64url). */
  async pushKey() {
    return (await this.#call('GET', '/push/key')).key;
  }

  /** Turns notifications on in a browser, given its `PushSubscription` (or its `toJSON()`). */
  async addPushSubscription(subscription) {
    const json = typeof subscription.toJSON === 'function' ? subscription.toJSON() : subscription;
    return this.#call('POST', '/players/me/push-subscriptions', { body: json });
  }

  /** This player's browsers with notifications on. */
  async pushSubscriptions() {
    return (await this.#call('GET', '/players/me/push-subscriptions')).subscriptions;
  }

  /** Turns notifications off in one of this player's browsers. */
  async removePushSubscription(id) {
    await this.#call('DELETE', `/players/me/push-subscriptions/${encodeURIComponent(id)}`);
  }

  /** Every unfinished room waiting on this player's move, the soonest deadline first. */
  async turns() {
    return (await this.#call('GET', '/players/me/turns')).rooms;
  }

  /** Ends one of this player's sessions. */
  async endSession(id) {
    return this.#call('DELETE', `/players/me/sessions/${encodeURIComponent(id)}`);
  }

  /** Signs out everywhere else; how many sessions ended. */
  async endOtherSessions() {
    return (await this.#call('DELETE', '/players/me/sessions')).ended;
  }

  /** Signs this session out: its token stops working. */
  async signOut() {
    await this.#call('DELETE', '/sessions/current');
    this.token = null;
  }

  // -------------------------------------------------------------------------------------------
  // Games.

  /** Every game: built in, then uploaded. */
  async games() {
    return (await this.#call('GET', '/games')).games;
  }

  /** One game; an uploaded one at `version` (its latest by default). */
  async game(id, { version } = {}) {
    return this.#call('GET', `/games/${encodeURIComponent(id)}${query({ version })}`);
  }

  /**
   * Publishes a game (the first upload creates it) or its next version. `upload` is
   * {source?, frontend?, moveExample?, name?, description?, minPlayers?, maxPlayers?,
   * frontendBackground?, frontendHeight?}: what is left out keeps the previous version's
   * value; `frontend: null` removes the page. Or a FormData with a `source` file, a `frontend`
   * file (one .html, or a build folder as a .zip or .tar.gz) and the settings as fields.
   */
  async publishGame(id, upload) {
    return this.#call('PUT', `/games/${encodeURIComponent(id)}`, { body: upload });
  }

  /** The source of a version (the latest by default), as text. */
  async gameSource(id, { version } = {}) {
    return this.#call('GET', `/games/${encodeURIComponent(id)}/source${query({ version })}`, { text: true });
  }

  /**
   * Where a version's own page is served (sandboxed; frame it with sandbox="allow-scripts"):
   * the version's folder, or without a version the latest page.
   */
  frontendUrl(id, version) {
    const game = encodeURIComponent(id);
    if (version === undefined || version === null) return `${this.baseUrl}/games/${game}/frontend`;
    return `${this.baseUrl}/games/${game}/versions/${encodeURIComponent(version)}/frontend/`;
  }

  /** The server's clock, in milliseconds since 1970. */
  async serverTime() {
    return (await this.#call('GET', '/time', { auth: false })).now;
  }

  /** The newest lines of your game's log, or those after `after`: {lines, nextAfter}. */
  async gameLogs(id, { after, limit } = {}) {
    return this.#call('GET', `/games/${encodeURIComponent(id)}/logs${query({ after, limit })}`);
  }

  // -------------------------------------------------------------------------------------------
  // Webhooks, for a game's owner.

  /** Your game's webhook endpoints: {endpoints: [...]}. */
  async webhooks(game) {
    return this.#call('GET', `/games/${encodeURIComponent(game)}/webhooks`);
  }

  /** A new endpoint taking `events` of your game at `url`; its `secret` is shown this once. */
  async addWebhook(game, url, events) {
    return this.#call('POST', `/games/${encodeURIComponent(game)}/webhooks`, { body: { url, events } });
  }

  /** `action` (`pause`, `resume`, `rotate` or `ping`) on one of your game's endpoints. */
  async webhookAction(game, hook, action) {
    return this.#call('POST', `/games/${encodeURIComponent(game)}/webhooks/${encodeURIComponent(hook)}/${action}`);
  }

  /** Removes one of your game's endpoints and its delivery log. */
  async removeWebhook(game, hook) {
    return this.#call('DELETE', `/games/${encodeURIComponent(game)}/webhooks/${encodeURIComponent(hook)}`);
  }

  /** An endpoint's delivery log, newest first: {deliveries, nextCursor}. */
  async webhookDeliveries(game, hook, { limit, cursor } = {}) {
    return this.#call('GET', `/games/${encodeURIComponent(game)}/webhooks/${encodeURIComponent(hook)}/deliveries${query({ limit, cursor })}`);
  }

  /** Delivers one event again, with the same webhook-id. */
  async redeliver(game, hook, delivery) {
    return this.#call('POST', `/games/${encodeURIComponent(game)}/webhooks/${encodeURIComponent(hook)}/deliveries/${encodeURIComponent(delivery)}/redeliver`);
  }

  // -------------------------------------------------------------------------------------------
  // Standing.

  /** A page of a game's leaderboard: {game, entries: [{rank, player, rating, deviation, games}], nextCursor}. */
  async leaderboard(game, { limit, cursor } = {}) {
    return this.#call('GET', `/games/${encodeURIComponent(game)}/leaderboard${query({ limit, cursor })}`);
  }

  /** The ratings in `game` of up to 100 players (ids), by id; those never rated are left out. */
  async ratings(game, players) {
    if (!players.length) return {};
    const path = `/games/${encodeURIComponent(game)}/ratings${query({ players: players.join(',') })}`;
    return (await this.#call('GET', path)).ratings;
  }

  /** A player's profile (`me`: yours): {player, createdAt, ratings, recentRooms}. */
  async profile(id) {
    return this.#call('GET', `/players/${encodeURIComponent(id)}`);
  }

  // -------------------------------------------------------------------------------------------
  // Rooms: reads.

  /** A page of rooms: {rooms, nextCursor}. Filters: game, joinable, finished, player, limit, cursor. */
  async rooms(filters = {}) {
    return this.#call('GET', `/rooms${query(filters)}`);
  }

  async room(id) {
    return this.#call('GET', `/rooms/${encodeURIComponent(id)}`);
  }

  /** A page of a room's history: {events, …}, one entry per version after `after`. */
  async history(id, { after, limit } = {}) {
    return this.#call('GET', `/rooms/${encodeURIComponent(id)}/events${query({ after, limit })}`);
  }

  // -------------------------------------------------------------------------------------------
  // Rooms: actions. Each resolves to the room after its hooks (and any bot's reply).

  /** A new room, with the caller seated: {game, private?, bot?, botPlaysFirst?, clock?}. */
  async createRoom(options) {
    return this.#call('POST', '/rooms', { body: options });
  }

  /** Joins the oldest open public room of `game` (with the same `clock`, if given), or opens one. */
  async quickPlay(game, clock) {
    return this.#call('POST', '/rooms/quickplay', { body: clock ? { game, clock } : { game } });
  }

  async join(id) {
    return this.#call('POST', `/rooms/${encodeURIComponent(id)}/join`);
  }

  async quit(id) {
    return this.#call('POST', `/rooms/${encodeURIComponent(id)}/quit`);
  }

  /** Sends a move (any JSON); with `ifMatch`, only onto that version (else 412). */
  async move(id, move, { ifMatch } = {}) {
    const headers = ifMatch === undefined || ifMatch === null ? {} : { 'If-Match': `"${ifMatch}"` };
    return this.#call('POST', `/rooms/${encodeURIComponent(id)}/moves`, { body: move, headers });
  }

  /** Starts a fresh game in a finished room. */
  async playAgain(id) {
    return this.#call('POST', `/rooms/${encodeURIComponent(id)}/reset`);
  }

  /** Turns down the rematch offered to you: your seat is no longer held. */
  async decline(id) {
    return this.#call('POST', `/rooms/${encodeURIComponent(id)}/decline`);
  }

  /** Claims a game that stood still (see `claimableAt`) from the player it waits on. */
  async claim(id) {
    return this.#call('POST', `/rooms/${encodeURIComponent(id)}/claim`);
  }

  // -------------------------------------------------------------------------------------------
  // Live updates.

  /**
   * Calls `onVersion` with every version of the room, in order, none skipped or repeated:
   * from the current one (or every one after `after`), then each as it is committed, across
   * reconnections; `onPresence` with the ids of the room's players online whenever that
   * changes; and `onChat` with each message of the room's chat you may read as it is written
   * (after message `chatAfter`, 0 for all of them; from now without it), and again, with
   * `deleted: true`, if an admin deletes it. Signed in, you count as online while watching.
   * Returns a function that stops.
   */
  watch(id, onVersion, { after, onPresence, onChat, chatAfter } = {}) {
    let last = after === undefined || after === null ? null : Number(after);
    const chat = chatFollower(onChat, chatAfter);
    // EventSource cannot send headers: a signed-in client signs the stream with its token in
    // the query (RFC 6750 §2.3), so a game with hidden information shows it its own view.
    const path = () => `/rooms/${encodeURIComponent(id)}/stream${query({ after: last, chat_after: chat.last, access_token: this.token })}`;
    return this.#stream(path, (source, reopen) => {
      source.addEventListener('version', (event) => {
        chat.saw(event.lastEventId);
        const version = JSON.parse(event.data);
        if (last !== null && version.version <= last) return; // already delivered
        if (last !== null && version.version > last + 1) {
          // Never expected: the server replays from its history. Ask it to, from `last`.
          reopen();
          return;
        }
        last = version.version;
        onVersion(version);
      });
      if (onPresence) source.addEventListener('presence', (event) => onPresence(JSON.parse(event.data).online));
      source.addEventListener('chat', chat.listener);
    });
  }

  /**
   * Calls `onChange` with each lobby event of `game` (every game when null):
   * {change: "created" | "updated", room}, or {change: "resync"} when events may have been
   * missed (on every (re)connection): list the rooms again then; `onOnline` with how many
   * players are online whenever that changes (signed in, you count); and `onChat` with each
   * message of the lobby's chat (after `chatAfter`; from now without it), as `watch` does.
   * Returns a function that stops.
   */
  watchLobby(game, onChange, { onOnline, onChat, chatAfter } = {}) {
    const chat = chatFollower(onChat, chatAfter);
    const path = () => `/rooms/stream${query({ game, after: chat.last, access_token: this.token })}`;
    return this.#stream(path, (source) => {
      if (onOnline) source.addEventListener('online', (event) => onOnline(JSON.parse(event.data).players));
      source.addEventListener('room', (event) => onChange(JSON.parse(event.data)));
      source.addEventListener('resync', () => onChange({ change: 'resync' }));
      source.addEventListener('open', () => onChange({ change: 'resync' }));
      source.addEventListener('chat', chat.listener);
    });
  }

  // -------------------------------------------------------------------------------------------
  // Chat.

  /**
   * A room's chat (`room` null: the lobby's). Messages are plain text: show them as text,
   * never as HTML.
   */
  get chat() {
    const at = (room) => (room ? `/rooms/${encodeURIComponent(room)}/chat` : '/lobby/chat');
    return {
      /** Writes at the room's table (`channel: "gallery"` for its watchers), or in the lobby. */
      send: (room, text, { channel = 'table' } = {}) =>
        this.#call('POST', at(room), { body: room ? { text, channel } : { text } }),
      /**
       * A page of messages, oldest first: a room's channel after `after`; the lobby's newest
       * page, or the one before `before`. `{messages, nextAfter}`.
       */
      history: (room, { channel = 'table', after, before, limit } = {}) =>
        this.#call('GET', `${at(room)}${query(room ? { channel, after, limit } : { after, before, limit })}`),
      /** Reports a message to the admins. */
      report: (message, reason) => this.#call('POST', `/chat/${encodeURIComponent(message)}/report`, { body: reason ? { reason } : {} }),
      /** Hides a player's messages from you, everywhere (streams included). */
      block: (player) => this.#call('POST', '/players/me/blocks', { body: { player } }),
      unblock: (player) => this.#call('DELETE', `/players/me/blocks/${encodeURIComponent(player)}`),
      /** The players you blocked. */
      blocks: () => this.#call('GET', '/players/me/blocks'),
      /** The room's opener closes its gallery. */
      closeGallery: (room) => this.#call('POST', `${at(room)}/gallery/close`),
    };
  }

  /**
   * Calls `onLine` with each line of your game's log as it is stored, after the line `after`
   * (from now on without it), across reconnections. Returns a function that stops.
   */
  watchGameLogs(id, onLine, { after } = {}) {
    let last = after === undefined || after === null ? null : Number(after);
    const path = () => `/games/${encodeURIComponent(id)}/logs/stream${query({ after: last, access_token: this.token })}`;
    return this.#stream(path, (source) => {
      source.addEventListener('log', (event) => {
        const line = JSON.parse(event.data);
        if (last !== null && line.id <= last) return;
        last = line.id;
        onLine(line);
      });
    });
  }

  /**
   * An EventSource on `path()`, set up by `listen`. The browser reconnects by itself (with
   * Last-Event-ID); when the server refuses the stream outright (a restart answering 503, say)
   * it gives up, so this opens it again, from wherever `path()` then says.
   */
  #stream(path, listen) {
    let source = null;
    let timer = null;
    let stopped = false;
    const open = () => {
      if (stopped) return;
      source = new EventSource(`${this.baseUrl}${path()}`);
      listen(source, reopen);
      source.addEventListener('error', () => {
        if (source.readyState === EventSource.CLOSED) {
          clearTimeout(timer);
          timer = setTimeout(open, REOPEN_MS);
        }
      });
    };
    const reopen = () => {
      source.close();
      open();
    };
    open();
    return () => {
      stopped = true;
      clearTimeout(timer);
      source.close();
    };
  }

  // -------------------------------------------------------------------------------------------

  async #call(method, path, { body, headers = {}, auth = true, text = false } = {}) {
    const sent = { ...headers };
    if (auth && this.token) sent.Authorization = `Bearer ${this.token}`;
    let payload;
    if (typeof FormData !== 'undefined' && body instanceof FormData) {
      payload = body; // the browser sets multipart/form-data with its boundary
    } else if (body !== undefined) {
      sent['Content-Type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(`${this.baseUrl}${path}`, { method, headers: sent, body: payload });
    } catch (err) {
      throw new TurnhouseError(0, { code: 'network_error', detail: `The server cannot be reached (${err.message}).` });
    }
    const raw = await response.text();
    if (response.ok && text) return raw;
    let data = null;
    if (raw) {
      try { data = JSON.parse(raw); } catch { data = { detail: raw }; }
    }
    if (!response.ok) throw new TurnhouseError(response.status, data);
    return data;
  }
}

/**
 * Follows a stream's chat for `onChat`: `last` is the last message the stream accounted for
 * (from its events' ids, `<version>:<message>` on a room's, `<message>` on the lobby's), where a
 * stream this client reopens resumes; a message already delivered is not delivered again.
 */
function chatFollower(onChat, after) {
  const chat = { last: after === undefined || after === null ? null : Number(after) };
  chat.saw = (id) => {
    const message = Number(String(id || '').split(':').pop());
    if (id && Number.isInteger(message) && (chat.last === null || message > chat.last)) chat.last = message;
  };
  chat.listener = (event) => {
    const message = JSON.parse(event.data);
    if (event.lastEventId && !message.deleted) {
      const seen = chat.last;
      chat.saw(event.lastEventId);
      if (seen !== null && message.id <= seen) return;
    }
    if (onChat) onChat(message);
  };
  return chat;
}

/** `?a=1&b=2` from the members that are set. */
function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value !== undefined && value !== null) search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}
