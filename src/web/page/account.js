// The account: the bar at the top, signing up and in (a name, a code, a password), and the
// devices screen (#/account).

import { el, main, setMessage, when } from './dom.js';
import { showLobby } from './lobby.js';
import { route } from './router.js';
import { api, attempt, pageState, problemText, store } from './session.js';
import { emailCard, forgotLink } from './mail.js';
import { pushCard } from './push.js';
import { refreshTurns } from './turns.js';

export function renderAccount() {
  const bar = document.getElementById('account');
  const me = store.player;
  if (me) {
    pageState.accountNotice = null;
    const signOut = async () => {
      await attempt(() => api.signOut());
      store.player = null;
      route(true);
    };
    const confirmSignOut = () => bar.replaceChildren(
      el('span', { id: 'sign-out-warning', role: 'alert', text: `To be “${me.username}” here again after signing out, you will need a sign-in code from another device where you are signed in (Devices shows one). Without one, this browser holds your only key.` }),
      el('button', { class: 'secondary', id: 'sign-out-confirm', onclick: signOut }, 'Sign out anyway'),
      el('button', { id: 'sign-out-cancel', onclick: renderAccount }, 'Stay signed in'));
    bar.replaceChildren(
      el('span', { id: 'me' }, 'Signed in as ', el('a', { href: `#/player/${me.id}`, id: 'my-profile', text: me.username })),
      el('a', { class: 'button secondary', id: 'devices', href: '#/account' }, 'Devices'),
      el('button', { class: 'secondary', id: 'sign-out', onclick: confirmSignOut }, 'Sign out'),
    );
    refreshTurns();
  } else {
    refreshTurns();
    // The notice stays until the player signs in or up again: every screen drawn meanwhile
    // says why they are signed out.
    bar.replaceChildren(el('span', { id: 'signed-out', role: pageState.accountNotice ? 'alert' : null, text: pageState.accountNotice || 'Not signed in' }));
  }
}

export function signUpCard(after) {
  const message = el('p', { class: 'message', role: 'alert' });
  const input = el('input', {
    id: 'username', name: 'username', autocomplete: 'nickname', required: true,
    maxlength: '32', placeholder: 'e.g. alice', 'aria-describedby': 'username-help',
  });
  const form = el('form', {
    id: 'signup-form',
    onsubmit: async (event) => {
      event.preventDefault();
      const result = await attempt(() => api.signUp(input.value.trim()));
      if (!result.ok) return setMessage(message, problemText(result), 'error');
      store.player = result.data;
      renderAccount();
      after();
    },
  },
  el('label', { for: 'username' }, 'Pick a username'),
  el('div', { class: 'row' }, input, el('button', { id: 'signup', type: 'submit' }, 'Start playing')),
  el('p', { id: 'username-help', class: 'muted' }, 'Letters, digits, "-" and "_". Your key stays in this browser.'),
  message);
  return el('section', { class: 'card', 'aria-labelledby': 'signup-title' },
    el('h2', { id: 'signup-title' }, 'Sign up'), form, codeForm(after), passwordForm(after));
}

/** Signing in with a name and the password the player set. */
export function passwordForm(after) {
  const message = el('p', { class: 'message', role: 'alert' });
  const name = el('input', { id: 'signin-name', name: 'username', autocomplete: 'username', required: true, maxlength: '32', placeholder: 'your username' });
  const password = el('input', { id: 'signin-password', name: 'password', type: 'password', autocomplete: 'current-password', required: true, placeholder: 'your password' });
  return el('form', {
    id: 'password-form',
    onsubmit: async (event) => {
      event.preventDefault();
      const result = await attempt(() => api.signInWithPassword(name.value.trim(), password.value));
      if (!result.ok) return setMessage(message, problemText(result), 'error');
      store.player = result.data;
      renderAccount();
      after();
    },
  },
  el('p', { class: 'label' }, 'Or sign in with your password'),
  el('div', { class: 'row' },
    el('span', { class: 'field' }, el('label', { for: 'signin-name' }, 'Username'), name),
    el('span', { class: 'field' }, el('label', { for: 'signin-password' }, 'Password'), password),
    el('button', { id: 'signin-password-button', type: 'submit', class: 'secondary' }, 'Sign in')),
  forgotLink(),
  message);
}

/** Signing in on this device with a code shown on another; `code` fills it in. */
export function codeForm(after, code = '') {
  const message = el('p', { class: 'message', role: 'alert' });
  const input = el('input', {
    id: 'code', name: 'code', autocomplete: 'one-time-code', required: true, value: code,
    maxlength: '16', placeholder: 'e.g. 7KX4MQ2P', 'aria-describedby': 'code-help',
  });
  const submit = async (event) => {
    if (event) event.preventDefault();
    const result = await attempt(() => api.signInWithCode(input.value.trim()));
    if (!result.ok) return setMessage(message, problemText(result), 'error');
    store.player = result.data;
    renderAccount();
    after();
  };
  const form = el('form', { id: 'code-form', onsubmit: submit },
    el('label', { for: 'code' }, 'Or sign in with a code'),
    el('div', { class: 'row' }, input, el('button', { id: 'signin-code', type: 'submit', class: 'secondary' }, 'Sign in')),
    el('p', { id: 'code-help', class: 'muted' }, 'Already playing on another device? Open Devices there for a code.'),
    message);
  form.submitCode = submit;
  return form;
}

/** `#/signin/<code>`: a link from another device, which signs this one in. */
export function showSignIn(code) {
  if (store.player) {
    main().replaceChildren(el('h1', {}, 'Sign in'),
      el('p', { id: 'signin-note', text: `This browser is signed in as ${store.player.username}. Sign out first to sign in with this code.` }),
      el('a', { class: 'button', href: '#/' }, 'Back to the lobby'));
    return;
  }
  const form = codeForm(() => { location.hash = '#/'; }, code);
  main().replaceChildren(el('h1', {}, 'Sign in'), el('section', { class: 'card' }, form));
  form.submitCode();
}

/** Setting or changing the password (the current one is asked for when changing). */
export function passwordSetter(message) {
  const current = el('input', { id: 'current-password', type: 'password', autocomplete: 'current-password', placeholder: 'Current password, if you have one' });
  const next = el('input', { id: 'new-password', type: 'password', autocomplete: 'new-password', minlength: '8', required: true, placeholder: 'New password, 8 characters or more' });
  return el('form', {
    id: 'set-password',
    onsubmit: async (event) => {
      event.preventDefault();
      const result = await attempt(() => api.setPassword(next.value, current.value || undefined));
      if (!result.ok) return setMessage(message, problemText(result), 'error');
      current.value = '';
      next.value = '';
      setMessage(message, 'Your password is set: sign in with it on any device.');
    },
  },
  el('span', { class: 'field' }, el('label', { for: 'current-password' }, 'Current password'), current),
  el('span', { class: 'field' }, el('label', { for: 'new-password' }, 'New password'), next),
  el('button', { id: 'set-password-button', type: 'submit' }, 'Set the password'));
}

/** `#/account`: this player's devices, and a code to add another. */
export async function showAccount() {
  const me = store.player;
  if (!me) return showLobby();
  const codeLine = el('div', { id: 'code-shown', class: 'code-shown', hidden: true });
  const message = el('p', { id: 'account-message', class: 'message', role: 'alert' });
  const list = el('ul', { id: 'sessions', class: 'sessions', 'aria-label': 'Devices signed in' });
  const showCode = async () => {
    const result = await attempt(() => api.signInCode());
    if (!result.ok) return setMessage(message, problemText(result), 'error');
    const link = `${location.origin}/#/signin/${result.data.code}`;
    codeLine.hidden = false;
    codeLine.replaceChildren(
      el('p', {}, 'Type this code on the other device, or open the link there. It works once, until ',
        el('span', { text: new Date(result.data.expiresAt).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' }) }), '.'),
      el('p', { id: 'sign-in-code', class: 'code', text: result.data.code }),
      el('input', { id: 'sign-in-link', readonly: true, value: link, 'aria-label': 'Sign-in link' }));
  };
  const drawSessions = async () => {
    const result = await attempt(() => api.sessions());
    if (!result.ok) return setMessage(message, problemText(result), 'error');
    list.replaceChildren(...result.data.map((session) => el('li', { dataset: { session: session.id } },
      el('span', {}, el('strong', { text: session.label }),
        session.current ? ' (this device)' : '',
        el('span', { class: 'muted', text: ` · signed in ${when(session.createdAt)}, last used ${when(session.lastUsedAt)}` })),
      session.current ? null : el('button', { class: 'secondary end-session', onclick: async () => {
        const ended = await attempt(() => api.endSession(session.id));
        if (!ended.ok) setMessage(message, problemText(ended), 'error');
        drawSessions();
      } }, 'Sign out'))));
  };
  main().replaceChildren(
    el('h1', {}, `Your account: ${me.username}`),
    el('div', { class: 'grid' },
      el('section', { class: 'card', 'aria-labelledby': 'add-device' },
        el('h2', { id: 'add-device' }, 'Use this account on another device'),
        el('p', { class: 'muted' }, 'A code signs another browser or phone in as you.'),
        el('button', { id: 'new-code', onclick: showCode }, 'Show a code'),
        codeLine),
      el('section', { class: 'card', 'aria-labelledby': 'password-title' },
        el('h2', { id: 'password-title' }, 'Password'),
        el('p', { class: 'muted' }, 'With a password you can sign in as yourself on any device, and get your account back if this browser forgets it.'),
        passwordSetter(message)),
      emailCard(),
      pushCard(),
      el('section', { class: 'card', 'aria-labelledby': 'devices-title' },
        el('h2', { id: 'devices-title' }, 'Devices signed in'),
        list,
        el('div', { class: 'row' },
          el('button', { id: 'end-others', class: 'secondary', onclick: async () => {
            const ended = await attempt(() => api.endOtherSessions());
            // The list first, then the message: what the message says is on screen when it does.
            await drawSessions();
            if (ended.ok) setMessage(message, ended.data === 1 ? 'Signed out on 1 other device.' : `Signed out on ${ended.data} other devices.`);
            else setMessage(message, problemText(ended), 'error');
          } }, 'Sign out everywhere else')),
        message),
      el('p', {}, el('a', { href: '#/' }, '← Back to the lobby'))));
  drawSessions();
}
