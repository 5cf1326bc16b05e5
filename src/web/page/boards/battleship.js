// Battleship's board.

import { el } from '../dom.js';
import { drawRoom, me, seatOf, send } from '../play.js';
import { pageState } from '../session.js';

/**
 * Battleship: two 10x10 grids. The server shows each viewer only what they may see: your own
 * fleet, and of the other only the ships already sunk (a watcher: no ship until it sinks).
 * While placing, your fleet is placed at random here and sent as one move.
 */
export const FLEET = [5, 4, 3, 3, 2];
export const SHIP_NAMES = { 5: ['carrier'], 4: ['battleship'], 3: ['cruiser', 'submarine'], 2: ['destroyer'] };

/**
 * The fleet being placed by hand, before it is sent as one move: placements in the order of
 * FLEET, and whether the next ship lies across. PreparedStatements per room; "R" turns the next ship.
 */
export let fleetDraft = null; // { room, placements: [{row, col, across}], across }

/** The cells of a placement of a ship of `size`. */
export function shipCells({ row, col, across }, size) {
  return Array.from({ length: size }, (_, i) => (across ? [row, col + i] : [row + i, col]));
}

/** Adds the next ship at (row, col) if it fits on the board and touches no other; else false. */
export function placeNext(row, col) {
  const size = FLEET[fleetDraft.placements.length];
  if (!size) return false;
  const placement = { row, col, across: fleetDraft.across };
  const taken = new Set(fleetDraft.placements.flatMap((p, i) => shipCells(p, FLEET[i]).map(String)));
  const cells = shipCells(placement, size);
  if (cells.some(([r, c]) => r > 9 || c > 9 || taken.has(String([r, c])))) return false;
  fleetDraft.placements.push(placement);
  return true;
}

document.addEventListener('keydown', (event) => {
  const typing = event.target instanceof Element && event.target.matches('input, textarea, select');
  if (!fleetDraft || typing || event.key.toLowerCase() !== 'r') return;
  fleetDraft.across = !fleetDraft.across;
  drawRoom();
});

/** The ships sunk on one side, each named ("cruiser"): by size, the 3s in the order they sank. */
export function sunkNames(shots) {
  const seen = {};
  return shots.filter((shot) => shot.sunk).map((shot) => {
    const names = SHIP_NAMES[shot.sunk.size] || ['ship'];
    const n = seen[shot.sunk.size] || 0;
    seen[shot.sunk.size] = n + 1;
    return names[Math.min(n, names.length - 1)];
  });
}

/** What the last shot did, in words: "Shot by bob at row 3, column 5: a hit, and sunk: the cruiser!" */
export function shotNews(room, moverSeat, shots) {
  const shot = (shots[moverSeat] || []).at(-1);
  if (!shot) return '';
  const mine = me();
  const mover = room.players[moverSeat];
  const who = mine && mover && mover.id === mine.id ? 'Your shot' : `Shot by ${mover ? mover.username : 'a player'}`;
  const at = `at row ${shot.row + 1}, column ${shot.col + 1}`;
  if (!shot.hit) return `${who} ${at}: a miss.`;
  if (!shot.sunk) return `${who} ${at}: a hit!`;
  const names = sunkNames(shots[moverSeat]);
  return `${who} ${at}: a hit, and sunk: the ${names.at(-1)}!`;
}

/**
 * Battleship: two 10x10 grids side by side. The server shows each viewer only what they may
 * see: your own fleet, and of the other only the ships already sunk (a watcher: no ship until
 * it sinks). Your fleet is placed by hand (click where each ship starts; R turns it) or at
 * random, and sent as one move.
 */
export function drawBattleship(room, canMove, play) {
  const state = room.state || {};
  const mine = me();
  const seat = mine ? seatOf(room, mine.id) : -1;
  const fleets = state.fleets || [null, null];
  const shots = state.shots || [[], []];
  const placed = state.placed || fleets.map(Boolean);
  const placing = !pageState.replaying && state.status === 'placing' && seat >= 0 && !placed[seat];
  if (!placing) fleetDraft = null;
  else if (!fleetDraft || fleetDraft.room !== room.id) fleetDraft = { room: room.id, placements: [], across: true };
  const wrap = el('div', { class: 'fleets' });
  // The last shot is public even when the move is not shown: the mover's latest shot.
  const moverSeat = room.lastMove && room.lastMove.player ? seatOf(room, room.lastMove.player.id) : -1;
  const lastShot = moverSeat >= 0 && state.status !== 'placing' ? (shots[moverSeat] || []).at(-1) : null;
  const draftCells = new Set(placing ? fleetDraft.placements.flatMap((p, i) => shipCells(p, FLEET[i]).map(([r, c]) => `${r},${c}`)) : []);
  // Seen from a seat: your waters first; a watcher sees the first player's waters first.
  const own = seat >= 0 ? seat : 0;
  const seas = el('div', { class: 'seas' });
  for (const side of [own, 1 - own]) {
    const player = room.players[side];
    const shipCellsShown = new Set((fleets[side] || []).flatMap((ship) => ship.cells.map(([r, c]) => `${r},${c}`)));
    const incoming = new Map((shots[1 - side] || []).map((shot) => [`${shot.row},${shot.col}`, shot]));
    const target = seat >= 0 && side !== seat;
    const drafting = placing && side === seat;
    const grid = el('div', { class: 'sea', role: 'group', 'aria-label': `${player ? player.username : 'empty seat'}'s waters` });
    for (let r = 0; r < 10; r += 1) {
      for (let c = 0; c < 10; c += 1) {
        const key = `${r},${c}`;
        const shot = incoming.get(key);
        const ship = shipCellsShown.has(key) || (drafting && draftCells.has(key));
        const mark = shot ? (shot.hit ? '✕' : '•') : '';
        const last = lastShot && side === 1 - moverSeat && lastShot.row === r && lastShot.col === c;
        grid.append(el('button', {
          class: `spot${ship ? ' ship' : ''}${shot && shot.hit ? ' hit' : ''}${last ? ' last' : ''}`,
          'aria-label': `row ${r + 1}, column ${c + 1}: ${shot ? (shot.hit ? 'hit' : 'miss') : ship ? 'ship' : 'water'}`,
          disabled: drafting ? fleetDraft.placements.length === FLEET.length
            : !(target && canMove && state.status === 'inGame' && !shot),
          dataset: { cell: key, side: String(side) },
          onclick: drafting ? () => { if (placeNext(r, c)) drawRoom(); } : () => play([r, c]),
        }, mark));
      }
    }
    // Ships afloat: five, less those the other side has sunk.
    const afloat = FLEET.length - (shots[1 - side] || []).filter((shot) => shot.sunk).length;
    const name = player ? player.username : null;
    const title = side === seat ? 'Your fleet'
      : !name ? 'Waiting for a player' : seat >= 0 ? `Fire here: the waters of ${name}` : `The waters of ${name}`;
    const sunk = sunkNames(shots[1 - side] || []);
    seas.append(el('div', { class: 'waters' },
      el('h3', { text: title }),
      el('p', { class: 'muted afloat', dataset: { side: String(side) }, text: `${afloat} of ${FLEET.length} ships afloat${sunk.length ? ` (sunk: ${sunk.join(', ')})` : ''}` }),
      grid));
  }
  const news = moverSeat >= 0 && state.status !== 'placing' ? shotNews(room, moverSeat, shots) : '';
  wrap.append(el('p', { id: 'shot-news', class: 'shot-news', 'aria-live': 'polite', text: news }), seas);
  if (placing) {
    const next = FLEET[fleetDraft.placements.length];
    const nextName = next ? SHIP_NAMES[next][FLEET.slice(0, fleetDraft.placements.length).filter((size) => size === next).length] || SHIP_NAMES[next][0] : null;
    wrap.append(el('p', { id: 'placing-help', class: 'muted' }, next
      ? `Place your ${nextName} (${next} cells, ${fleetDraft.across ? 'across' : 'down'}): click the cell where it starts. R turns it.`
      : 'Your fleet is ready.'),
    el('div', { class: 'row' },
      el('button', { id: 'turn-ship', class: 'secondary', disabled: !next, onclick: () => { fleetDraft.across = !fleetDraft.across; drawRoom(); } }, fleetDraft.across ? 'Turn: across → down' : 'Turn: down → across'),
      el('button', { id: 'undo-ship', class: 'secondary', disabled: !fleetDraft.placements.length, onclick: () => { fleetDraft.placements.pop(); drawRoom(); } }, 'Undo'),
      el('button', { id: 'random-fleet', class: 'secondary', onclick: () => { fleetDraft.placements = randomFleet(); drawRoom(); } }, 'At random'),
      el('button', { id: 'place-fleet', disabled: Boolean(next), onclick: () => send({ fleet: fleetDraft.placements }) }, 'Place my fleet')));
  }
  return wrap;
}

/** A random fleet that fits: one ship per size, none overlapping. */
export function randomFleet() {
  for (;;) {
    const taken = new Set();
    const fleet = [];
    for (const size of FLEET) {
      const across = Math.random() < 0.5;
      const row = Math.floor(Math.random() * (across ? 10 : 11 - size));
      const col = Math.floor(Math.random() * (across ? 11 - size : 10));
      const cells = Array.from({ length: size }, (_, i) => (across ? `${row},${col + i}` : `${row + i},${col}`));
      if (cells.some((cell) => taken.has(cell))) break;
      cells.forEach((cell) => taken.add(cell));
      fleet.push({ row, col, across });
    }
    if (fleet.length === FLEET.length) return fleet;
  }
}
