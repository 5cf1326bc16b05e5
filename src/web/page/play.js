// The room on screen, drawn from its version: whose turn it is and who won (in words), the
// board, the clock, the score, and the buttons (join, quit, play again, claim, forfeit).

import { drawGeneric } from './boards/generic.js';
import { views } from './boards/index.js';
import { el, setMessage, when } from './dom.js';
import { drawFrame } from './frames.js';
import { drawReplay, shownRoom } from './replay.js';
import { apply, heldSeats, isBot } from './room.js';
import { api, attempt, pageState, problemText, store } from './session.js';
import { fillRatings, playerName, presenceDot } from './standing.js';
import { isMuted, setMuted, showTurnOnScreen } from './turns.js';

export function me() { return store.player; }
export function seatOf(room, playerId) { return room.players.findIndex((p) => p.id === playerId); }

/**
 * Whose turn it is: the first of the room's `toMove` the server keeps (from the game's
 * `toMove` export or its state), else what the state says in a usual place.
 */
export function playerToMove(room) {
  const state = room.state || {};
  if (room.finished) return null;
  if (Array.isArray(room.toMove) && room.toMove.length > 0) {
    return room.players.find((p) => room.toMove.includes(p.id)) || null;
  }
  for (const key of ['plrToMoveIndex', 'turn', 'toMove', 'currentPlayer', 'nextPlayer', 'activePlayer']) {
    const value = state[key];
    if (value === undefined || value === null) continue;
    if (typeof value === 'number') return room.players[value] || null;
    if (typeof value === 'string' || typeof value === 'object') return playerIn({ players: room.players }, value);
  }
  return null;
}

export function winnerOf(room) {
  const winner = (room.state || {}).winner;
  if (winner === undefined || winner === null) return null;
  if (typeof winner === 'number') return room.players[winner] || { username: `seat ${winner + 1}` };
  return playerIn(room, winner) || (typeof winner === 'string' ? { username: winner } : winner);
}

/**
 * The room's player a game's state names: by id or by name, or an object with either. A game
 * may keep ids in its state (ids are what `winners` returns); the page names people by their
 * names, whoever has left since.
 */
export function playerIn(room, named) {
  const id = typeof named === 'string' ? named : named && typeof named === 'object' ? named.id : null;
  const name = typeof named === 'string' ? named : named && typeof named === 'object' ? named.username : null;
  const everyone = [...(room.players || []), ...(room.inactivePlayers || [])];
  return everyone.find((p) => p.id === id) || everyone.find((p) => name && p.username === name) || null;
}

/** Whether `player` was seated in the room and has left it (a forfeit, say). */
export function hasLeft(room, player) {
  return Boolean(player) && seatOf(room, player.id) < 0 && (room.inactivePlayers || []).some((p) => p.id === player.id);
}

/** Why a moderator closed the room, from its `closed` version's move; null for a room closed unplayed. */
export function closedBecause(event) {
  return event.move && typeof event.move.reason === 'string' ? event.move.reason : null;
}

/**
 * What the platform did to the room, which no game's page can know: a room closed unplayed, a
 * game claimed from a player who stopped, a rematch offered or declined. Null when none applies.
 */
export function houseNote(room) {
  const mine = me();
  const last = pageState.replaying ? null : room.lastEvent;
  if (room.finished && last && last.kind === 'closed') {
    const why = closedBecause(last);
    return why ? `A moderator closed this room (“${why}”).` : 'This room was closed: nobody joined it for a long while.';
  }
  if (room.finished && last && last.kind === 'abandoned' && last.player) {
    return mine && last.player.id === mine.id
      ? 'You stopped playing, and the game was claimed.'
      : `${last.player.username} stopped playing, and the game was claimed.`;
  }
  const held = heldSeats(room);
  if (held && room.joinable) {
    const names = held.seats.map((p) => p.username).join(' and ');
    if (mine && held.by.id === mine.id) return `Waiting for ${names} to accept the rematch…`;
    if (mine && held.seats.some((p) => p.id === mine.id)) return `${held.by.username} wants a rematch.`;
    return `A rematch: the seats are held for ${names}.`;
  }
  if (last && last.kind === 'declined' && last.player && room.joinable) {
    return `${last.player.username} declined the rematch. Waiting for another player to join…`;
  }
  return null;
}

/** What the game that just finished did to the viewer's rating: "Your rating: 1512 (+12)." */
export function ratingNote(room) {
  const mine = me();
  const changes = (!pageState.replaying && room.lastEvent && room.lastEvent.ratingChanges) || [];
  const change = mine && changes.find((c) => c.player.id === mine.id);
  if (!change) return '';
  const delta = change.after - change.before;
  return ` Your rating: ${change.after} (${delta >= 0 ? '+' : '−'}${Math.abs(delta)}).`;
}

/** The line under the board: the state of play, and once a rated game ends, the rating. */
export function statusText(room, toMove) {
  const text = playText(room, toMove);
  return room.finished ? text + ratingNote(room) : text;
}

export function playText(room, toMove) {
  const mine = me();
  const note = houseNote(room);
  if (note && !(room.lastEvent && room.lastEvent.kind === 'abandoned')) return note;
  if (room.finished) {
    const winner = winnerOf(room);
    if (!winner) return 'Game over: a draw.';
    // Sentences never start with a name: names keep the case their players chose.
    const wins = mine && winner.id === mine.id ? 'You win!' : `Game over: ${winner.username} wins!`;
    if ((room.state || {}).endedBy === 'timeout') {
      const loser = room.players.find((p) => p.id !== winner.id);
      if (loser && mine && loser.id === mine.id) return `You ran out of time. ${winner.username} wins!`;
      if (loser) return `Time ran out for ${loser.username}. ${mine && winner.id === mine.id ? 'You win!' : `${winner.username} wins!`}`;
    }
    if (note) return `${note} ${wins}`;
    if (hasLeft(room, mine)) return `You left the game. ${wins}`;
    return wins;
  }
  if (pageState.replaying) {
    // A step of the past says what the room was then, never what to do now.
    if (room.joinable && room.players.length < 2) return 'The room was waiting for players.';
    if (toMove) return mine && toMove.id === mine.id ? 'It was your move.' : `It was ${toMove.username}'s move.`;
    return 'In play.';
  }
  if (room.joinable && room.players.length < 2) return 'Waiting for another player to join…';
  if (toMove && isBot(toMove)) return `The ${toMove.username} is thinking…`;
  if (toMove) return mine && toMove.id === mine.id ? 'Your turn.' : `It is ${toMove.username}'s turn.`;
  if ((room.state || {}).status === 'placing') return 'The fleets are being placed.';
  return 'In play.';
}

export function drawRoom() {
  const room = shownRoom();
  const mine = me();
  const seat = mine ? seatOf(room, mine.id) : -1;
  const toMove = playerToMove(room);
  const marks = (views[room.game] && views[room.game].marks) || [];
  let status = statusText(room, toMove);
  const offered = heldSeats(room) && mine && heldSeats(room).seats.some((p) => p.id === mine.id);
  if (seat < 0 && !pageState.replaying && !hasLeft(room, mine) && !offered) status = `${status} (You are watching.)`;
  showTurnOnScreen(!pageState.replaying && seat >= 0 && Boolean(toMove) && toMove.id === mine.id && !room.finished);
  if (pageState.replaying) status = `Replay, version ${room.version}: ${status}`;
  // A game's own page says whose turn it is and who won itself: the page adds only what the
  // frame cannot know (a replay, a watcher), so the status appears once.
  const framed = !views[room.game] && pageState.currentGame && pageState.currentGame.hasFrontend;
  if (framed) {
    const thinking = !room.finished && toMove && isBot(toMove) ? `The ${toMove.username} is thinking…` : '';
    status = pageState.replaying ? `Replay, version ${room.version}.`
      : houseNote(room) || thinking || (seat < 0 && !hasLeft(room, mine) && !offered ? 'You are watching.' : '');
  }
  const statusLine = document.getElementById('status');
  statusLine.textContent = status;
  statusLine.hidden = !status;
  const players = document.getElementById('players');
  players.replaceChildren(...room.players.map((p, i) =>
    el('li', { class: toMove && toMove.id === p.id ? 'turn' : '' },
      isBot(p) ? null : presenceDot(p, room.online), marks[i] ? `${marks[i]}: ` : '',
      playerName(p, room.game), mine && p.id === mine.id ? ' (you)' : '')));
  fillRatings(players);
  drawScore(room);
  const canMove = !pageState.replaying && seat >= 0 && !room.finished && (!toMove || toMove.id === mine.id);
  const view = views[room.game];
  const board = document.getElementById('board');
  if (view) {
    board.replaceChildren(view.draw(room, canMove, (cell) => send(view.moveOf(cell))));
  } else if (pageState.currentGame && pageState.currentGame.hasFrontend) {
    drawFrame(board, room);
  } else {
    drawGeneric(board, room, !pageState.replaying && seat >= 0 && !room.finished);
  }
  drawActions(room, pageState.replaying ? -1 : seat);
  drawCountdown();
  drawReplay();
}

/** The time the player to move has left, while the room has a deadline; ticks on its own. */
export let countdownTimer = null;
export function drawCountdown() {
  const line = document.getElementById('countdown');
  clearTimeout(countdownTimer);
  if (!line || !pageState.current) return;
  const toMove = playerToMove(pageState.current);
  const deadline = pageState.current.triggerTimeoutAt ? Date.parse(pageState.current.triggerTimeoutAt) : NaN;
  if (pageState.replaying || pageState.current.finished || !toMove || Number.isNaN(deadline)) {
    // A room on a clock keeps the line's place, so the board below never jumps.
    line.classList.add('idle');
    return;
  }
  line.classList.remove('idle');
  const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
  const mine = me();
  const clock = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}`;
  line.textContent = mine && toMove.id === mine.id ? `You have ${clock} left to move.` : `Time left for ${toMove.username} to move: ${clock}.`;
  line.classList.toggle('urgent', left <= 10);
  countdownTimer = setTimeout(drawCountdown, 250);
}

export function drawActions(room, seat) {
  const actions = document.getElementById('actions');
  const buttons = [];
  clearTimeout(idleTimer);
  if (pageState.replaying) return actions.replaceChildren();
  const held = heldSeats(room);
  if (held) idleTimer = later(drawRoom, Date.parse(held.until));
  if (me() && held && held.seats.some((p) => p.id === me().id)) {
    buttons.push(
      el('button', { id: 'rematch-accept', onclick: () => act('join') }, 'Accept'),
      el('button', { id: 'rematch-decline', class: 'secondary', onclick: () => act('decline') }, 'Decline'));
  } else if (me() && seat < 0 && room.joinable && !room.finished && !held) {
    buttons.push(el('button', { id: 'join', onclick: () => act('join') }, 'Join this game'));
  }
  const claimable = seat >= 0 && !room.finished && room.claimableAt ? Date.parse(room.claimableAt) : NaN;
  const toMove = playerToMove(room);
  if (!Number.isNaN(claimable) && !(toMove && toMove.id === me().id)) {
    if (claimable <= Date.now()) {
      const waitingOn = toMove ? toMove.username : 'The others';
      buttons.push(
        el('span', { id: 'claim-note', class: 'muted', text: `${waitingOn} has not played since ${when(room.updatedAt)}.` }),
        el('button', { id: 'claim', onclick: () => act('claim') }, 'Claim the win'));
    } else {
      idleTimer = later(drawRoom, claimable);
    }
  }
  if (seat >= 0 && !room.finished) {
    if (room.joinable) {
      buttons.push(el('button', { id: 'forfeit', class: 'secondary', onclick: () => act('quit') }, 'Leave'));
    } else {
      const others = room.players.filter((p) => p.id !== me().id).map((p) => p.username).join(' and ');
      // The question stays asked while the room is redrawn (a version arriving, its facts
      // read again), until it is answered.
      const answer = (yes) => () => {
        pageState.askingForfeit = null;
        if (yes) act('quit');
        else drawActions(room, seat);
      };
      if (pageState.askingForfeit === room.id) {
        return actions.replaceChildren(
          el('span', { id: 'forfeit-warning', role: 'alert', text: `Forfeit? The game goes to ${others || 'the others'}.` }),
          el('button', { id: 'forfeit-confirm', class: 'secondary', onclick: answer(true) }, 'Yes, forfeit'),
          el('button', { id: 'forfeit-cancel', onclick: answer(false) }, 'Keep playing'));
      }
      const ask = () => { pageState.askingForfeit = room.id; drawActions(room, seat); };
      buttons.push(el('button', { id: 'forfeit', class: 'secondary', onclick: ask }, 'Forfeit'));
    }
  }
  if (seat >= 0 && !room.finished) {
    const redraw = () => drawActions(room, seat);
    const quiet = isMuted(room.id, redraw);
    buttons.push(el('button', {
      id: 'mute-room', class: 'secondary', 'aria-pressed': String(quiet),
      title: 'No mail or push about this room', onclick: async () => { await setMuted(room.id, !quiet); redraw(); },
    }, quiet ? 'Unmute this room' : 'Mute this room'));
  }
  if (seat >= 0 && room.finished) {
    const closed = room.lastEvent && room.lastEvent.kind === 'closed';
    buttons.push(el('button', { id: 'play-again', onclick: () => act('reset') }, closed ? 'Open it again' : 'Play again'));
  }
  if (!me()) buttons.push(el('a', { class: 'button secondary', href: '#/' }, 'Sign up to play'));
  actions.replaceChildren(...buttons);
}

export const actions = {
  join: (id) => api.join(id),
  quit: (id) => api.quit(id),
  reset: (id) => api.playAgain(id),
  decline: (id) => api.decline(id),
  claim: (id) => api.claim(id),
};

/** When the room next needs drawing on its own: a rematch offer lapsing, a game claimable. */
export let idleTimer = null;

/** Runs `fn` at `at` (milliseconds since 1970), or in a day at the latest. */
export function later(fn, at) {
  return setTimeout(fn, Math.min(Math.max(0, at - Date.now()) + 50, 86_400_000));
}

/** The room's running score, once a game has finished in it: "Score after 3 games: …". */
export function drawScore(room) {
  const line = document.getElementById('score');
  if (!line) return;
  const score = room.score;
  line.hidden = !score || pageState.replaying;
  if (!score) return;
  const everyone = [...room.players, ...(room.inactivePlayers || [])];
  const seen = new Set();
  const people = everyone.filter((p) => !seen.has(p.id) && seen.add(p.id));
  const parts = people.map((p) => `${p.username} ${score.wins[p.id] || 0}`);
  if (score.draws) parts.push(score.draws === 1 ? '1 draw' : `${score.draws} draws`);
  const games = score.games === 1 ? '1 game' : `${score.games} games`;
  line.textContent = `Score after ${games}: ${parts.join(' · ')}`;
}

export async function act(action) {
  const id = pageState.current.id;
  report(await attempt(() => actions[action](id)));
}

export async function send(move) {
  const id = pageState.current.id;
  const result = await attempt(() => api.move(id, move));
  report(result);
  return result;
}

export function report(result) {
  const message = document.getElementById('room-message');
  if (!message) return;
  if (!result.ok) return setMessage(message, problemText(result), 'error');
  setMessage(message, '');
  apply(result.data);
}
