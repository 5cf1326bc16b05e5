// Notifications in this browser: the account screen's card turns web push on (the service
// worker at /sw.js shows each turn pushed, and a click opens the room) or off. A browser
// without the Push API sees no card.

import { el, setMessage } from './dom.js';
import { api, attempt, problemText } from './session.js';

/** The key as the Push API takes it. */
function keyBytes(base64url) {
  const text = atob(base64url.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (base64url.length % 4)) % 4));
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

function supported() {
  return 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
}

/** The account screen's card. */
export function pushCard() {
  const card = el('section', { class: 'card', id: 'push-card', 'aria-labelledby': 'push-title', hidden: !supported() });
  if (supported()) drawPushCard(card);
  return card;
}

async function drawPushCard(card) {
  const message = el('p', { id: 'push-message', class: 'message', role: 'alert' });
  const registration = await navigator.serviceWorker.register('/sw.js');
  const current = await registration.pushManager.getSubscription();
  const turnOn = async () => {
    if ((await Notification.requestPermission()) !== 'granted') {
      return setMessage(message, 'Notifications are blocked for this site: allow them in the browser’s settings first.', 'error');
    }
    const key = await attempt(() => api.pushKey());
    if (!key.ok) return setMessage(message, problemText(key), 'error');
    let subscription;
    try {
      subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key.data) });
    } catch (err) {
      return setMessage(message, `This browser could not subscribe: ${err.message}`, 'error');
    }
    const kept = await attempt(() => api.addPushSubscription(subscription));
    if (!kept.ok) return setMessage(message, problemText(kept), 'error');
    await drawPushCard(card);
    setMessage(document.getElementById('push-message'), 'Notifications are on: each of your turns shows here, even with the page closed.');
  };
  const turnOff = async () => {
    const mine = await attempt(() => api.pushSubscriptions());
    const kept = mine.ok ? mine.data.find((s) => s.endpoint === current.endpoint) : null;
    if (kept) await attempt(() => api.removePushSubscription(kept.id));
    await current.unsubscribe();
    await drawPushCard(card);
  };
  card.replaceChildren(
    el('h2', { id: 'push-title' }, 'Notifications in this browser'),
    el('p', { class: 'muted' }, current
      ? 'On: each of your turns shows here as it comes, unless you are looking at the room.'
      : 'Off: turn them on to hear of each of your turns here, even with the page closed.'),
    current
      ? el('button', { id: 'push-off', class: 'secondary', onclick: turnOff }, 'Turn notifications off')
      : el('button', { id: 'push-on', onclick: turnOn }, 'Turn notifications on'),
    message);
}
