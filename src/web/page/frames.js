// A game's own page: its version's folder, framed with sandbox="allow-scripts" (never
// allow-same-origin), so it runs in an opaque origin that cannot reach this page, its storage
// or the token. It talks to this page only by postMessage, and this page listens only to that
// frame's window. Two protocols, one listener: the first message a frame sends decides which
// it speaks, and a replaced or reloaded frame starts again.
//
// Turnhouse's own messages:
//   page -> frame  {type: "turnhouse:state", room, you}   on load and on every version
//   frame -> page  {type: "turnhouse:ready"}              asks for the state again
//   frame -> page  {type: "turnhouse:resize", height}     its page's height in pixels: the
//                                                         frame takes it (120 to 4000)
//   frame -> page  {type: "turnhouse:move", move, id?}    sent as the viewer's move, answered by
//   page -> frame  {type: "turnhouse:result", ok, problem, id?}  (id echoed when the move had one)
//   frame -> page  {type: "turnhouse:chat"}               asks for the room's chat: a frame is
//   page -> frame  {type: "turnhouse:chat", message}      sent none unless it asks; then each
//                                                         message the viewer reads, as the panel
//                                                         shows it (a deletion again, deleted)
//
// penpal's (v5 and v6), which @urturn/client speaks: the frame sends {penpal: "syn"}, the page
// answers "synAck" with its methods (getLocalPlayer, makeMove, getServerTimeOffsetMS), the
// frame "ack" with its own (stateChanged); then "call" / "reply" by id, both ways. No state
// is sent before the "ack".

import { el } from './dom.js';
import { me, send } from './play.js';
import { shownRoom } from './replay.js';
import { api, pageState } from './session.js';

/** Moves from the frame waiting for an answer; past this, the frame is told to slow down. */
export const FRAME_MOVES_IN_FLIGHT = 4;
export let frameMoves = 0;

/** The frame's window and what it has said: {window, protocol: null | "turnhouse" | "penpal", acked}. */
export let frameLink = null;

export function gameFrame() {
  return document.getElementById('game-frame');
}

/**
 * The frame's address. The room's id lets the server link a game's page opened on its own back
 * to this room; a page written for boardgame.io's Client reads it as `matchID`. A game whose
 * state keeps `seats` (the players' ids in seat order, as boardgame.io games on Turnhouse do)
 * is told the viewer's seat as `playerID`, from the live room, so a replay never reloads it.
 */
function frameSrc(room) {
  const id = encodeURIComponent(room.id);
  let src = `${api.frontendUrl(room.game, room.gameVersion)}?room=${id}&matchID=${id}`;
  const live = pageState.current || room;
  const seats = live.state && Array.isArray(live.state.seats) ? live.state.seats : null;
  const mine = me();
  const seat = seats && mine ? seats.indexOf(mine.id) : -1;
  if (seat >= 0) src += `&playerID=${seat}`;
  return src;
}

export function drawFrame(board, room) {
  const src = frameSrc(room);
  let frame = gameFrame();
  if (!frame || frame.dataset.src !== src) {
    frame = el('iframe', {
      id: 'game-frame', class: 'game-frame', src, sandbox: 'allow-scripts',
      title: `${pageState.currentGame.name}: the game's own page`, dataset: { src },
    });
    // The author's background shows through a page that paints none; the height is theirs,
    // within what the screen can show (see app.css).
    frame.style.background = pageState.currentGame.frontendBackground || 'white';
    frame.style.setProperty('--frame-height', `${pageState.currentGame.frontendHeight || 600}px`);
    frame.addEventListener('load', () => {
      // A frame that has said nothing yet is sent Turnhouse's state, as before it could choose.
      if (!frameLink || frameLink.window !== frame.contentWindow || !frameLink.protocol) postState();
    });
    frameLink = null;
    board.replaceChildren(frame);
    board.classList.add('framed');
  }
  postState();
}

/** A frame's page asked to be `height` pixels tall: it gets that, within the page's bounds. */
export const FRAME_HEIGHTS = [120, 4000];
export function resizeFrame(height) {
  const frame = gameFrame();
  if (!frame || typeof height !== 'number' || !Number.isFinite(height)) return;
  const [low, high] = FRAME_HEIGHTS;
  // The frame's border is inside its height (box-sizing: border-box).
  frame.style.setProperty('--frame-height', `${Math.round(Math.min(high, Math.max(low, height))) + 2}px`);
}

/** The link to the frame that sent `source`, started anew when the frame is a new window. */
export function linkFor(source) {
  const frame = gameFrame();
  if (!frame || !frame.contentWindow || source !== frame.contentWindow) return null;
  if (!frameLink || frameLink.window !== source) frameLink = { window: source, protocol: null, acked: false };
  return frameLink;
}

/** Sends the room to the frame, in the protocol it speaks. */
export function postState() {
  const frame = gameFrame();
  if (!frame || !frame.contentWindow || !pageState.current) return;
  // In a replay the frame is handed the past version as this viewer saw it.
  const room = shownRoom();
  const link = frameLink && frameLink.window === frame.contentWindow ? frameLink : null;
  if (link && link.protocol === 'penpal') {
    if (link.acked && link.methods.includes('stateChanged')) {
      penpalCall(link, 'stateChanged', [urturnRoomState(room)]);
    }
    return;
  }
  const mine = me();
  // A replay cannot be played: the frame shows the past version as a watcher would, so that
  // it offers no seat a turn.
  const you = mine && !pageState.replaying ? room.players.find((p) => p.id === mine.id) || null : null;
  // The frame's origin is opaque ("null"), so no narrower target can be named; what is sent
  // is what this viewer may see of the room, and never the token.
  frame.contentWindow.postMessage({ type: 'turnhouse:state', room, you: you && { id: you.id, username: you.username } }, '*');
}

/** A move from the frame, as the viewer's: resolves to {ok, problem}, never throws. */
export async function moveFromFrame(move) {
  if (pageState.replaying) {
    return {
      ok: false,
      problem: { status: 409, code: 'replaying', detail: 'This is a replay of a past version; go back to live to move.' },
    };
  }
  if (frameMoves >= FRAME_MOVES_IN_FLIGHT) {
    return {
      ok: false,
      problem: { status: 429, code: 'too_many_moves', detail: 'Moves are already on their way; wait for their answers.' },
    };
  }
  frameMoves += 1;
  try {
    const result = await send(move);
    return { ok: result.ok, problem: result.ok ? null : result.data };
  } finally {
    frameMoves -= 1;
  }
}

// Turnhouse's own protocol.
export async function onTurnhouseMessage(link, message) {
  if (message.type === 'turnhouse:ready') postState();
  else if (message.type === 'turnhouse:chat' && !link.chat && pageState.chat) {
    link.chat = true;
    // Until the frame is replaced: a new frame asks again.
    pageState.chat.follow((chat) => {
      if (frameLink !== link) return false;
      link.window.postMessage({ type: 'turnhouse:chat', message: chat }, '*');
      return true;
    });
  }
  else if (message.type === 'turnhouse:resize') resizeFrame(message.height);
  else if (message.type === 'turnhouse:move') {
    const { ok, problem } = await moveFromFrame(message.move);
    // A move may carry an id, which its result echoes (answers can pass each other).
    const id = message.id === undefined ? {} : { id: message.id };
    link.window.postMessage({ type: 'turnhouse:result', ok, problem: problem || null, ...id }, '*');
  }
}

// penpal's protocol, for @urturn/client.
export const PENPAL_METHODS = ['getLocalPlayer', 'makeMove', 'getServerTimeOffsetMS'];
export let penpalCalls = 0;

export function penpalCall(link, methodName, args) {
  penpalCalls += 1;
  link.window.postMessage({ penpal: 'call', id: `turnhouse-${penpalCalls}`, methodName, args }, '*');
}

/** The room as UrTurn's client expects it, as this viewer may see it. */
export function urturnRoomState(room) {
  return {
    players: room.players.map(({ id, username }) => ({ id, username })),
    joinable: room.joinable,
    finished: room.finished,
    state: room.state,
    version: room.version,
    roomStartContext: { private: Boolean(room.private) },
  };
}

/** Who the frame's player is: the signed-in player, or a watcher no player is. */
export function localPlayer() {
  const mine = me();
  return mine ? { id: mine.id, username: mine.username } : { id: 'watcher', username: 'watcher' };
}

export const penpalMethods = {
  getLocalPlayer: async () => localPlayer(),
  async makeMove(move) {
    const { ok, problem } = await moveFromFrame(move);
    if (ok) return { success: true };
    const name = (problem && (problem.reason || problem.code)) || 'error';
    return { error: { name, message: (problem && problem.detail) || 'The move was not made.' } };
  },
  getServerTimeOffsetMS: async () => serverClock.offset(),
};

export async function onPenpalMessage(link, message) {
  if (message.penpal === 'syn') {
    // A frame that loads again says syn again: its earlier connection is gone.
    Object.assign(link, { acked: false, methods: [] });
    link.window.postMessage({ penpal: 'synAck', methodNames: PENPAL_METHODS }, '*');
  } else if (message.penpal === 'ack') {
    link.acked = true;
    link.methods = Array.isArray(message.methodNames) ? message.methodNames : [];
    serverClock.keepFresh();
    postState();
  } else if (message.penpal === 'call' && link.acked) {
    const method = Object.hasOwn(penpalMethods, message.methodName) ? penpalMethods[message.methodName] : null;
    let reply;
    if (!method) {
      reply = {
        resolution: 'rejected', returnValueIsError: true,
        returnValue: { name: 'Error', message: `The page has no method ${String(message.methodName)}.` },
      };
    } else {
      reply = { resolution: 'fulfilled', returnValue: await method(...(Array.isArray(message.args) ? message.args : [])) };
    }
    link.window.postMessage({ penpal: 'reply', id: message.id, ...reply }, '*');
  }
  // Replies to stateChanged need no answer.
}

window.addEventListener('message', (event) => {
  const link = linkFor(event.source);
  const message = event.data;
  if (!link || !message || typeof message !== 'object') return;
  const protocol = typeof message.penpal === 'string' ? 'penpal'
    : typeof message.type === 'string' && message.type.startsWith('turnhouse:') ? 'turnhouse' : null;
  if (!protocol) return;
  if (!link.protocol) link.protocol = protocol;
  if (link.protocol !== protocol) return;
  if (protocol === 'penpal') onPenpalMessage(link, message);
  else onTurnhouseMessage(link, message);
});

/**
 * The offset from this browser's clock to the server's, in milliseconds (Cristian's
 * algorithm: half the round trip is taken as the way back). A frame may ask twice a second;
 * the server is asked at most once a minute, and only while a frame listens.
 */
export const serverClock = {
  value: 0,
  measuredAt: 0,
  pending: null,
  offset() { this.keepFresh(); return this.value; },
  keepFresh() {
    if (this.pending || Date.now() - this.measuredAt < 60_000) return;
    const sent = Date.now();
    this.pending = api.serverTime().then((now) => {
      const received = Date.now();
      this.value = Math.round(now + (received - sent) / 2 - received);
      this.measuredAt = received;
    }).catch(() => { this.measuredAt = Date.now() - 50_000; }).finally(() => { this.pending = null; });
  },
};
