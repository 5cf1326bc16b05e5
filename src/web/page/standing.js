// Standing: ratings by names, leaderboards, profiles, and who is here.

import { el, main, setMessage, when } from './dom.js';
import { loadGames } from './lobby.js';
import { drawRoom, me } from './play.js';
import { isBot } from './room.js';
import { api, attempt, pageState, problemText, screenCheck } from './session.js';

/** Ratings read lately, by `${game} ${player}`: {at, standing} (null when never rated). */
export const ratingCache = new Map();
export const RATING_FRESH_MS = 60_000;

/** The ratings in `game` of `players` (ids), from memory when read in the last minute. */
export async function ratingsOf(game, players) {
  const now = Date.now();
  const key = (id) => `${game} ${id}`;
  const stale = [...new Set(players)].filter((id) => {
    const known = ratingCache.get(key(id));
    return !known || now - known.at > RATING_FRESH_MS;
  });
  for (let start = 0; start < stale.length; start += 100) {
    const asked = stale.slice(start, start + 100);
    const result = await attempt(() => api.ratings(game, asked));
    if (!result.ok) continue;
    for (const id of asked) ratingCache.set(key(id), { at: now, standing: result.data[id] || null });
  }
  return new Map(players.map((id) => [id, (ratingCache.get(key(id)) || {}).standing || null]));
}

/** Forgets the ratings of the players of rooms listed as finished since their ratings were read. */
export function forgetFinishedRatings(results) {
  for (const result of results) {
    if (!result || !result.ok) continue;
    for (const room of result.data.rooms.filter((r) => r.finished)) {
      const finished = new Date(room.updatedAt).getTime();
      for (const player of room.players) {
        const known = ratingCache.get(`${room.game} ${player.id}`);
        if (known && known.at < finished) ratingCache.delete(`${room.game} ${player.id}`);
      }
    }
  }
}

/** Forgets the ratings a finished game changed, so the names show the new ones. */
export function ratingsChanged(game, changes) {
  for (const change of changes || []) ratingCache.delete(`${game} ${change.player.id}`);
}

/** A rating as it shows by a name: "1662", or "1500?" while provisional (under five games). */
export function ratingText(standing) {
  return `${standing.rating}${standing.games < 5 ? '?' : ''}`;
}

/** What a rating's "?" means, for its tooltip. */
export function ratingTitle(game, standing) {
  const games = `${standing.games} rated ${standing.games === 1 ? 'game' : 'games'}`;
  return standing.games < 5
    ? `rating in ${game}, provisional (the “?”): ${games}, fewer than five`
    : `rating in ${game}, ${games}`;
}

/**
 * A player's name, linking to their profile, with a place for their rating in `game` (filled
 * by `fillRatings`) and, given who is `online`, a dot saying whether they are here.
 */
export function playerName(player, game, online) {
  if (isBot(player)) return el('span', { class: 'player-name', text: player.username });
  return el('span', { class: 'player-name' },
    online ? presenceDot(player, online) : null,
    el('a', { class: 'profile-link', href: `#/player/${player.id}`, text: player.username }),
    el('span', { class: 'rating muted', dataset: { game, player: player.id } }));
}

/** A dot by a name: filled while the player has the room open somewhere. */
export function presenceDot(player, online) {
  const here = (online || []).includes(player.id);
  return el('span', {
    class: here ? 'dot here' : 'dot away',
    role: 'img',
    'aria-label': here ? `${player.username} is here` : `${player.username} is away`,
    title: here ? 'here' : 'away',
  });
}

/** Fills every rating place under `root` ([data-game][data-player]), a request per game. */
export async function fillRatings(root) {
  const places = [...root.querySelectorAll('.rating[data-game][data-player]')];
  const byGame = new Map();
  for (const place of places) {
    const list = byGame.get(place.dataset.game) || [];
    list.push(place.dataset.player);
    byGame.set(place.dataset.game, list);
  }
  for (const [game, players] of byGame) {
    const ratings = await ratingsOf(game, players);
    for (const place of places.filter((p) => p.dataset.game === game)) {
      // Never rated in the game: where everyone starts, provisional.
      const standing = ratings.get(place.dataset.player) || { rating: 1500, games: 0 };
      place.textContent = ` (${ratingText(standing)})`;
      place.title = ratingTitle(game, standing);
    }
  }
}

/** Who was online in the room on screen when its stream last said, and who was seen to go. */
export let presence = { room: null, online: null, gone: new Set() };

/** The room's stream says who of its players is online: dots, and "bob left the room". */
export function sawPresence(roomId, online) {
  if (!pageState.current || pageState.current.id !== roomId) return;
  const before = presence.room === roomId ? presence.online : null;
  if (presence.room !== roomId) presence = { room: roomId, online: null, gone: new Set() };
  presence.online = online;
  pageState.current.online = online;
  const mine = me();
  const news = [];
  if (before) {
    for (const player of pageState.current.players) {
      if (mine && player.id === mine.id) continue;
      const was = before.includes(player.id);
      const is = online.includes(player.id);
      if (was && !is) {
        presence.gone.add(player.id);
        news.push(`${player.username} left the room`);
      } else if (!was && is && presence.gone.has(player.id)) {
        presence.gone.delete(player.id);
        news.push(`${player.username} is back`);
      }
    }
  }
  if (news.length) {
    const note = document.getElementById('presence-note');
    if (note) {
      note.textContent = `${news.join('; ')}.`;
      note.hidden = false;
    }
  }
  drawRoom();
}

/** A game's leaderboard, for its card: the top five, filled when it arrives. */
export function leaderboardOf(game) {
  const list = el('ol', { class: 'leaderboard-list' });
  const box = el('div', { class: 'leaderboard', dataset: { game: game.id } },
    el('span', { class: 'muted' }, 'Leaderboard: '), list);
  (async () => {
    const result = await attempt(() => api.leaderboard(game.id, { limit: 5 }));
    if (!result.ok) return list.replaceChildren(el('li', { class: 'message error', text: problemText(result) }));
    const entries = result.data.entries;
    if (!entries.length) {
      list.replaceChildren(el('li', { class: 'muted', text: 'nobody yet (five rated games put a player on it)' }));
      return;
    }
    list.replaceChildren(...entries.map((entry) => el('li', {},
      el('a', { class: 'profile-link', href: `#/player/${entry.player.id}`, text: entry.player.username }),
      el('span', { class: 'muted', text: ` ${entry.rating}` }))));
    box.append(el('a', { class: 'whole-leaderboard', href: `#/leaderboard/${encodeURIComponent(game.id)}` }, 'The whole leaderboard'));
  })();
  return box;
}

/** `#/leaderboard/<game>`: every ranked player of a game, a page at a time. */
export async function showLeaderboard(gameId) {
  const onScreen = screenCheck();
  if (!pageState.gamesById.size) await loadGames();
  if (!onScreen()) return;
  const game = pageState.gamesById.get(gameId);
  const list = el('ol', { id: 'leaderboard', class: 'list ranking' });
  const more = el('button', { id: 'leaderboard-more', class: 'secondary', hidden: true }, 'More');
  const message = el('p', { class: 'message', role: 'alert' });
  main().replaceChildren(
    el('h1', { id: 'leaderboard-title', text: `Leaderboard: ${game ? gameLabel(game) : gameId}` }),
    el('p', { class: 'muted' }, 'Players with five rated games or more, best first.'),
    el('section', { class: 'card' }, list, more, message),
    el('p', {}, el('a', { href: '#/' }, '← Back to the lobby')));
  let cursor = null;
  const page = async () => {
    const result = await attempt(() => api.leaderboard(gameId, { limit: 50, cursor }));
    if (!list.isConnected) return;
    if (!result.ok) return setMessage(message, problemText(result), 'error');
    const { entries, nextCursor } = result.data;
    if (!entries.length && !list.children.length) {
      list.replaceWith(el('p', { id: 'leaderboard', class: 'muted', text: 'Nobody yet: five rated games put a player on it.' }));
    }
    list.append(...entries.map((entry) => el('li', { dataset: { player: entry.player.id } },
      el('span', { class: 'rank', text: `#${entry.rank} ` }),
      el('a', { class: 'profile-link', href: `#/player/${entry.player.id}`, text: entry.player.username }),
      el('span', { class: 'muted', text: ` ${entry.rating}, ${entry.games} rated games` }))));
    cursor = nextCursor;
    more.hidden = !cursor;
  };
  more.onclick = page;
  await page();
}

/** A game's name as the page shows it: an uploaded game's with its owner, so no upload can pass for another's. */
export function gameLabel(game) {
  return game.builtin || !game.owner ? game.name : `${game.name} (by ${game.owner.username})`;
}

/** `#/player/<id>`: a player's ratings and ranks, and their latest finished rooms. */
export async function showProfile(id) {
  const onScreen = screenCheck();
  const result = await attempt(() => api.profile(id));
  if (!onScreen()) return;
  if (!result.ok) {
    main().replaceChildren(el('h1', {}, 'Player'),
      el('p', { class: 'message error', role: 'alert', text: problemText(result) }),
      el('a', { class: 'button', href: '#/' }, 'Back to the lobby'));
    return;
  }
  if (!pageState.gamesById.size) await loadGames();
  if (!onScreen()) return;
  const profile = result.data;
  const gameName = (game) => (pageState.gamesById.has(game) ? gameLabel(pageState.gamesById.get(game)) : game);
  const ratings = profile.ratings.length
    ? el('table', { class: 'ratings' },
      el('thead', {}, el('tr', {}, ...['Game', 'Rating', 'Rank', 'Rated games'].map((h) => el('th', { text: h })))),
      el('tbody', {}, ...profile.ratings.map((r) => el('tr', { dataset: { game: r.game } },
        el('td', { text: gameName(r.game) }),
        el('td', { class: 'rating-value', text: ratingText(r) }),
        el('td', { text: r.rank ? `#${r.rank}` : '—' }),
        el('td', { text: String(r.games) })))))
    : el('p', { class: 'muted', text: 'No rated games yet.' });
  const rooms = profile.recentRooms.length
    ? el('ul', { class: 'list' }, ...profile.recentRooms.map(({ room, ratingChange, replay }) => {
      const change = ratingChange
        ? `${ratingChange.won ? 'won' : 'did not win'}, ${ratingChange.after} (${ratingChange.after >= ratingChange.before ? '+' : '−'}${Math.abs(ratingChange.after - ratingChange.before)})`
        : room.rated ? '' : 'unrated';
      const others = room.players.filter((p) => p.id !== profile.player.id).map((p) => p.username).join(', ');
      return el('li', { dataset: { room: room.id } },
        el('span', {}, el('strong', { text: gameName(room.game) }), others ? ` vs ${others}` : '', ' ',
          el('span', { class: 'muted', text: [change, when(room.updatedAt)].filter(Boolean).join(', ') })),
        el('a', { class: 'button secondary replay-link', href: replay.replace(/^\//, '') }, 'Replay'));
    }))
    : el('p', { class: 'muted', text: 'No finished games yet.' });
  main().replaceChildren(
    el('h1', { id: 'profile-name', text: profile.player.username }),
    el('p', { class: 'muted', text: `Playing here since ${when(profile.createdAt)}.` }),
    el('div', { class: 'grid' },
      el('section', { class: 'card', 'aria-labelledby': 'ratings-title' }, el('h2', { id: 'ratings-title' }, 'Ratings'), ratings),
      el('section', { class: 'card', 'aria-labelledby': 'recent-title' }, el('h2', { id: 'recent-title' }, 'Recent games'), rooms)),
    el('p', {}, el('a', { href: '#/' }, '← Back to the lobby')));
}
