// Mail on the page: the e-mail card of the account screen (the address, its link, what is
// mailed), "Forgot your password?", and the screens the links in mail open
// (#/verify-email?token=…, #/reset-password?token=…), which post their token to the API.
// None of it shows on a server that sends no mail.

import { el, main, setMessage } from './dom.js';
import { api, attempt, problemText } from './session.js';

let features = null;

/** Whether this server sends mail (asked once). */
export async function sendsMail() {
  if (!features) {
    const result = await attempt(() => api.features());
    features = result.ok ? result.data : { mail: false };
  }
  return features.mail;
}

/** The token a mailed link carries in the page's address. */
function tokenInAddress() {
  const query = location.hash.split('?')[1] || '';
  return new URLSearchParams(query).get('token') || '';
}

/** The account screen's card: the address, a new one, and what is mailed to it. */
export function emailCard() {
  const card = el('section', { class: 'card', id: 'email-card', 'aria-labelledby': 'email-title', hidden: true });
  drawEmailCard(card);
  return card;
}

async function drawEmailCard(card) {
  if (!(await sendsMail())) return;
  const message = el('p', { id: 'email-message', class: 'message', role: 'alert' });
  const result = await attempt(() => api.email());
  if (!result.ok) return setMessage(message, problemText(result), 'error');
  const settings = result.data;
  const input = el('input', { id: 'email', type: 'email', autocomplete: 'email', required: true, maxlength: '254', placeholder: 'you@example.org' });
  const form = el('form', {
    id: 'email-form',
    onsubmit: async (event) => {
      event.preventDefault();
      const asked = await attempt(() => api.setEmail(input.value.trim()));
      if (!asked.ok) return setMessage(message, problemText(asked), 'error');
      await drawEmailCard(card);
      setMessage(document.getElementById('email-message'), `A link is on its way to ${asked.data.pending}: follow it to confirm the address.`);
    },
  },
  el('label', { for: 'email' }, settings.address ? 'A new address' : 'Your address'),
  el('div', { class: 'row' }, input, el('button', { id: 'email-save', type: 'submit' }, 'Send the link')));
  const choice = (id, label, key) => {
    const box = el('input', { id, type: 'checkbox', checked: settings[key] });
    box.addEventListener('change', async () => {
      const saved = await attempt(() => api.setMail({ [key]: box.checked }));
      if (!saved.ok) {
        box.checked = !box.checked;
        return setMessage(message, problemText(saved), 'error');
      }
      setMessage(message, 'Saved.');
    });
    return el('label', { class: 'check', for: id }, box, ` ${label}`);
  };
  card.hidden = false;
  // Wrapped in one element: `el` leaves out what is null, `replaceChildren` would not.
  card.replaceChildren(el('div', {},
    el('h2', { id: 'email-title' }, 'E-mail'),
    el('p', { id: 'email-address' }, settings.address
      ? ['Mail goes to ', el('strong', { text: settings.address }), '.']
      : 'No address yet: with one, you can get your account back, and hear of games waiting for you while you are away.'),
    settings.pending ? el('p', { id: 'email-pending', class: 'muted', text: `Waiting for you to follow the link sent to ${settings.pending}.` }) : null,
    settings.address ? el('div', { class: 'checks' },
      choice('turn-mail', 'Mail me the games waiting for my move while I am away (at most twice a day)', 'turnMail'),
      choice('clock-mail', 'Warn me before a clock runs out', 'clockMail')) : null,
    form,
    message));
}

/** "Forgot your password?" under the sign-in form, on a server that sends mail. */
export function forgotLink() {
  const link = el('a', { id: 'forgot-password', href: '#/forgot-password', hidden: true }, 'Forgot your password?');
  sendsMail().then((on) => { link.hidden = !on; });
  return link;
}

/** `#/forgot-password`: a name or an address, and the same answer whoever it is. */
export function showForgotPassword() {
  const message = el('p', { class: 'message', role: 'alert', id: 'forgot-message' });
  const input = el('input', { id: 'forgot-who', required: true, maxlength: '254', autocomplete: 'username', placeholder: 'your username or e-mail address' });
  const form = el('form', {
    id: 'forgot-form',
    onsubmit: async (event) => {
      event.preventDefault();
      const who = input.value.trim();
      const asked = await attempt(() => api.requestPasswordReset(who.includes('@') ? { email: who } : { username: who }));
      if (!asked.ok) return setMessage(message, problemText(asked), 'error');
      setMessage(message, 'If an account has that name or a confirmed address, a link is on its way to it. It works once, for 30 minutes.');
    },
  },
  el('label', { for: 'forgot-who' }, 'Your username or e-mail address'),
  el('div', { class: 'row' }, input, el('button', { id: 'forgot-send', type: 'submit' }, 'Send a link')));
  main().replaceChildren(el('h1', {}, 'Forgot your password?'), el('section', { class: 'card' }, form, message));
}

/** `#/verify-email?token=…`: the link that confirms an address. */
export async function showVerifyEmail() {
  const message = el('p', { class: 'message', role: 'alert', id: 'verify-message' }, 'Confirming…');
  main().replaceChildren(el('h1', {}, 'Your e-mail address'), el('section', { class: 'card' }, message,
    el('a', { class: 'button', href: '#/' }, 'To the lobby')));
  const result = await attempt(() => api.verifyEmail(tokenInAddress()));
  if (!result.ok) return setMessage(message, problemText(result), 'error');
  setMessage(message, `${result.data.address} is confirmed: mail about your account goes there.`);
}

/** `#/reset-password?token=…`: a new password, and every device signed out. */
export function showResetPassword() {
  const message = el('p', { class: 'message', role: 'alert', id: 'reset-message' });
  const password = el('input', { id: 'reset-password', type: 'password', autocomplete: 'new-password', minlength: '8', required: true, placeholder: '8 characters or more' });
  const form = el('form', {
    id: 'reset-form',
    onsubmit: async (event) => {
      event.preventDefault();
      const result = await attempt(() => api.resetPassword(tokenInAddress(), password.value));
      if (!result.ok) return setMessage(message, problemText(result), 'error');
      // Every session of the account ended: a browser signed in as it learns so at its next call.
      password.value = '';
      form.hidden = true;
      setMessage(message, 'Your password is replaced, and every device was signed out. Sign in with the new one.');
    },
  },
  el('label', { for: 'reset-password' }, 'A new password'),
  el('div', { class: 'row' }, password, el('button', { id: 'reset-save', type: 'submit' }, 'Set it')));
  main().replaceChildren(el('h1', {}, 'Choose a new password'), el('section', { class: 'card' }, form, message,
    el('a', { class: 'button secondary', href: '#/' }, 'To the lobby')));
}
