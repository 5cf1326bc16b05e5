// Turnhouse's page: the lobby, rooms and games, as ES modules under /page/ (no build step, no
// library). Every call to the server goes through the same browser client any frontend can
// import (/client.js). Every piece of text a user chose is set with textContent, never parsed
// as HTML. This module starts the page: the modules, each a part of it, are in `page/`.

import { route } from './page/router.js';
import { api, devSeat, store } from './page/session.js';

window.addEventListener('hashchange', () => route());
// Another tab signed in, out or as someone else: this one follows at once, so that its
// header, the room it shows and every call it makes agree on who is playing.
window.addEventListener('storage', (event) => {
  if (devSeat || (event.key !== null && event.key !== 'turnhouse.player')) return;
  api.token = store.player ? store.player.token : null;
  route(true);
});
route();
