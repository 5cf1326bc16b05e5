// The dev page of `turnhouse dev`: every seat of the room side by side (each the page itself,
// signed in as that seat's local player, so each shows its own onPlayerView), the room's
// stored truth and its history, the hooks' logs, and the author's buttons. It talks to the
// dev session's routes (/dev/<game>/...) and, as the game's author, to the game's log.
import { Turnhouse, TurnhouseError } from './client.js';

const game = decodeURIComponent(location.pathname.split('/')[2] || '');
const base = `/dev/${encodeURIComponent(game)}`;
const author = new Turnhouse(location.origin);
const $ = (id) => document.getElementById(id);

let session = null; // the dev session's state
let listing = null; // the game as published (its capabilities)
let truth = null; // {room, events} of the room the seats show
let scrubbed = null; // the version shown, or null for live
let keptVersion = null; // the game version the author chose to keep the room on
let stopRoom = null;
let stopLogs = null;

async function call(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new TurnhouseError(response.status, data);
  return data;
}

function say(text, kind) {
  $('dev-message').textContent = text || '';
  $('dev-message').className = `message ${kind || ''}`;
}

async function attempt(action) {
  try {
    await action();
    say('');
  } catch (err) {
    say(err instanceof TurnhouseError && err.problem ? err.problem.detail : String(err), 'error');
  }
}

// --- The session: new versions, failed uploads, the room the seats show. -------------------

async function follow() {
  let after = null;
  for (;;) {
    try {
      const next = await call('GET', `${base}/session${after === null ? '' : `?after=${after}`}`);
      after = next.generation;
      await take(next);
    } catch {
      await new Promise((done) => setTimeout(done, 1000));
    }
  }
}

async function take(next) {
  const previous = session;
  session = next;
  author.token = session.author.token;
  if (!previous || previous.gameVersion !== session.gameVersion) {
    listing = await author.game(game).catch(() => listing);
  }
  $('dev-game').textContent = `${game}${session.gameVersion ? `, version ${session.gameVersion}` : ''}`;
  const error = session.error;
  $('dev-error').hidden = !error;
  $('dev-error').textContent = error
    ? `${error.file}${error.line ? `:${error.line}` : ''}: ${error.message}` +
      (session.gameVersion ? ` The server keeps serving version ${session.gameVersion}.` : '')
    : '';
  $('seat-count').value = String(session.layout.seats);
  drawControls();
  if (!previous || previous.room !== session.room) await showRoom();
  else if (previous.gameVersion !== session.gameVersion && $('auto-restart').checked) restart();
  drawNewer();
  if (!stopLogs) followLogs();
}

// --- The seats. ------------------------------------------------------------------------------

async function showRoom() {
  if (stopRoom) stopRoom();
  scrubbed = null;
  keptVersion = null;
  truth = null;
  const room = session.room;
  const seats = $('seats');
  if (!room) {
    seats.replaceChildren(Object.assign(document.createElement('p'), { className: 'muted', textContent: 'No room yet: the game has not been published.' }));
    return;
  }
  const bot = session.layout.bot;
  seats.replaceChildren(...Array.from({ length: session.layout.seats }, (_, i) => {
    const seat = i + 1;
    const isBot = bot && bot.seat === seat;
    const who = isBot ? `${bot.level} bot` : session.players[i].username;
    const frame = document.createElement('iframe');
    frame.className = 'seat-frame';
    frame.dataset.seat = String(seat);
    frame.title = `Seat ${seat}: ${who}`;
    frame.src = `/?dev=${encodeURIComponent(game)}&seat=${seat}${isBot ? '&bot=1' : ''}#/room/${room}`;
    const label = document.createElement('h2');
    label.textContent = `Seat ${seat}: ${who}`;
    const box = document.createElement('div');
    box.className = 'seat card';
    box.append(label, frame);
    return box;
  }));
  await loadTruth();
  // Each new version: the truth and the history follow.
  stopRoom = author.watch(room, () => loadTruth(), { after: truth ? truth.room.version : undefined });
}

async function loadTruth() {
  const room = session.room;
  try {
    const next = await call('GET', `${base}/truth?room=${room}`);
    if (room !== session.room) return;
    truth = next;
  } catch (err) {
    say(err.problem ? err.problem.detail : String(err), 'error');
    return;
  }
  drawTruth();
  drawControls();
  drawNewer();
}

// --- The truth and its history. --------------------------------------------------------------

function drawTruth() {
  if (!truth) return;
  const latest = truth.room.version;
  const at = scrubbed === null ? latest : Math.min(scrubbed, latest);
  const entry = truth.events.find((e) => e.version === at);
  const slider = $('scrubber');
  slider.max = String(latest);
  slider.value = String(at);
  $('scrub-prev').disabled = at <= 1;
  $('scrub-next').disabled = at >= latest;
  $('scrub-live').disabled = scrubbed === null;
  const by = entry && entry.player ? ` by ${entry.player.username}` : '';
  $('scrub-step').textContent = entry
    ? `${scrubbed === null ? 'Live: ' : ''}version ${at} of ${latest}, ${entry.kind}${by}`
    : '';
  $('truth').textContent = entry ? pretty({
    version: entry.version,
    state: entry.state,
    players: entry.players,
    joinable: entry.joinable,
    finished: entry.finished,
    triggerTimeoutAt: entry.triggerTimeoutAt ?? null,
    made: { kind: entry.kind, player: entry.player, move: entry.move },
  }) : '';
  $('truth').dataset.version = String(at);
}

/** JSON, indented, with each array of plain values (a board's row) on one line. */
function pretty(value) {
  return JSON.stringify(value, null, 2)
    .replace(/\[\s+([^[\]{}"]*?|(?:"[^"]*"|[^[\]{}"])*?)\s+\]/g, (_, inner) => `[${inner.split(/,\s+/).join(', ')}]`);
}

/** Shows version `version` everywhere: each seat as that seat saw it, the truth as stored. */
function scrubTo(version) {
  if (!truth) return;
  const latest = truth.room.version;
  scrubbed = version === null ? null : Math.max(1, Math.min(version, latest));
  const hash = scrubbed === null ? `#/room/${session.room}` : `#/room/${session.room}/v/${scrubbed}`;
  for (const frame of document.querySelectorAll('.seat-frame')) {
    if (frame.contentWindow && frame.contentWindow.location.hash !== hash) frame.contentWindow.location.hash = hash;
  }
  drawTruth();
}

$('scrubber').addEventListener('input', (event) => scrubTo(Number(event.target.value)));
$('scrub-prev').addEventListener('click', () => scrubTo((scrubbed ?? truth.room.version) - 1));
$('scrub-next').addEventListener('click', () => scrubTo((scrubbed ?? truth.room.version) + 1));
$('scrub-live').addEventListener('click', () => scrubTo(null));

// --- The author's buttons. -------------------------------------------------------------------

function drawControls() {
  const seats = Number($('seat-count').value);
  const botSeat = $('bot-seat');
  if (botSeat.options.length !== seats) {
    botSeat.replaceChildren(...Array.from({ length: seats }, (_, i) => new Option(String(i + 1))));
  }
  $('bot-controls').hidden = !(listing && listing.bots);
  const deadline = Boolean(truth && truth.room.triggerTimeoutAt && !truth.room.finished);
  $('fire-deadline').hidden = !(listing && listing.onTimeout);
  $('fire-deadline').disabled = !deadline;
}

function drawNewer() {
  const roomVersion = truth && truth.room.gameVersion;
  const newer = session.gameVersion && roomVersion && session.gameVersion > roomVersion && keptVersion !== session.gameVersion;
  $('dev-newer').hidden = !newer;
  if (newer) {
    $('dev-newer-text').textContent = `Version ${session.gameVersion} is published; this room plays version ${roomVersion}.`;
  }
}

function restart() {
  return attempt(() => call('POST', `${base}/rooms`, {}));
}

$('new-room').addEventListener('click', () => attempt(() => call('POST', `${base}/rooms`, { seats: Number($('seat-count').value), bot: null })));
$('seat-count').addEventListener('change', drawControls);
$('restart-room').addEventListener('click', restart);
$('keep-room').addEventListener('click', () => { keptVersion = session.gameVersion; drawNewer(); });
$('seat-bot').addEventListener('click', () => attempt(() => call('POST', `${base}/rooms`, {
  seats: Number($('seat-count').value),
  bot: { seat: Number($('bot-seat').value), level: $('bot-level').value },
})));
$('fire-deadline').addEventListener('click', () => attempt(() => call('POST', `${base}/deadline`, { room: session.room })));

// --- The hooks' logs, live. ------------------------------------------------------------------

async function followLogs() {
  stopLogs = () => {};
  let page = { lines: [], nextAfter: 0 };
  try {
    page = await author.gameLogs(game, { limit: 200 });
  } catch {
    // No game yet (the first upload failed): follow from the start.
  }
  const list = $('dev-logs');
  list.replaceChildren(...page.lines.map(logLine));
  stopLogs = author.watchGameLogs(game, (line) => {
    list.append(logLine(line));
    while (list.children.length > 1000) list.firstChild.remove();
    list.lastChild.scrollIntoView({ block: 'nearest' });
  }, { after: page.nextAfter });
}

function logLine(line) {
  const item = document.createElement('li');
  item.className = `log ${line.level}`;
  item.dataset.level = line.level;
  item.dataset.version = String(line.version);
  item.dataset.hook = line.hook;
  const where = document.createElement('span');
  where.className = 'log-where';
  // A room id begins with its time, shared by rooms opened close together: its random end
  // tells them apart (the whole id is in the tooltip).
  where.textContent = `${line.at.slice(11, 19)} room …${line.room.slice(-6)} v${line.version} ${line.hook} `;
  where.title = `room ${line.room}`;
  const level = document.createElement('span');
  level.className = 'log-level';
  level.textContent = line.level;
  const text = document.createElement('span');
  text.className = 'log-text';
  text.textContent = ` ${line.text}`;
  item.append(where, level, text);
  return item;
}

follow();
