// Routing: `#/` is the lobby, `#/room/<id>` a room (a link that can be shared), and
// `#/room/<id>/v/<n>` its version n, replayed.

import { renderAccount, showAccount, showSignIn } from './account.js';
import { el, main } from './dom.js';
import { closeStreams, showLobby } from './lobby.js';
import { leaveReplay, replayTo } from './replay.js';
import { showRoom } from './room.js';
import { pageState, resetScreen } from './session.js';
import { showLeaderboard, showProfile } from './standing.js';
import { showTurns } from './turns.js';
import { showForgotPassword, showResetPassword, showVerifyEmail } from './mail.js';

/** Shows what the address names; `redraw` rebuilds it even when it is the room on screen. */
export function route(redraw) {
  const match = location.hash.match(/^#\/room\/([0-9a-f]{32})(?:\/v\/([0-9]{1,18}))?$/);
  // Another version of the room on screen: a step of its replay, not a new page.
  if (!redraw && match && pageState.current && pageState.current.id === match[1] && document.getElementById('replay')) {
    if (match[2]) replayTo(Number(match[2]));
    else leaveReplay();
    return;
  }
  closeStreams();
  resetScreen();
  renderAccount();
  window.scrollTo(0, 0);
  const signIn = location.hash.match(/^#\/signin\/([A-Za-z0-9-]{1,16})$/);
  const player = location.hash.match(/^#\/player\/([0-9a-f]{32})$/);
  const board = location.hash.match(/^#\/leaderboard\/([a-z0-9-]{1,64})$/);
  if (match) showRoom(match[1], match[2] ? Number(match[2]) : null);
  else if (signIn) showSignIn(signIn[1]);
  else if (player) showProfile(player[1]);
  else if (board) showLeaderboard(board[1]);
  else if (location.hash === '#/account') showAccount();
  else if (location.hash === '#/turns') showTurns();
  else if (location.hash === '#/forgot-password') showForgotPassword();
  else if (location.hash.startsWith('#/verify-email?')) showVerifyEmail();
  else if (location.hash.startsWith('#/reset-password?')) showResetPassword();
  else if (location.hash.startsWith('#/room/')) {
    main().replaceChildren(el('h1', {}, 'Room'),
      el('p', { id: 'no-room', class: 'message error', role: 'alert', text: 'There is no room at this address: check the link you were given.' }),
      el('a', { class: 'button', href: '#/' }, 'Back to the lobby'));
  } else showLobby();
  main().focus({ preventScroll: true });
}
