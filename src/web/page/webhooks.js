// A game's webhooks, for its owner: the endpoints that take its rooms' events, each with its
// delivery log and its actions (ping, pause, resume, a new secret, remove, redeliver).

import { el, setMessage } from './dom.js';
import { api, attempt, problemText } from './session.js';

const EVENT_TYPES = ['room.created', 'player.joined', 'room.started', 'room.finished', 'room.closed',
  'player.left', 'version.created', 'game.published'];

/** The panel, closed at first; opening it reads the endpoints. */
export function webhooksPanel(game) {
  const message = el('p', { class: 'message', role: 'alert' });
  const list = el('ul', { class: 'webhooks-list' });
  const secret = el('p', { class: 'webhook-secret', hidden: true });
  const refresh = async () => {
    const result = await attempt(() => api.webhooks(game.id));
    if (!result.ok) return setMessage(message, problemText(result), 'error');
    list.replaceChildren(...result.data.endpoints.map((endpoint) => endpointItem(game, endpoint, refresh, message, secret)));
    if (!result.data.endpoints.length) list.append(el('li', { class: 'muted', text: 'No endpoints yet.' }));
  };
  const url = el('input', { class: 'webhook-url', type: 'url', placeholder: 'https://example.org/turnhouse', 'aria-label': `${game.name}: webhook URL` });
  const boxes = EVENT_TYPES.map((type) => el('label', {},
    el('input', { type: 'checkbox', class: 'webhook-event', value: type, checked: type === 'room.finished' }), ` ${type}`));
  const add = async () => {
    const events = boxes.map((label) => label.firstChild).filter((box) => box.checked).map((box) => box.value);
    const result = await attempt(() => api.addWebhook(game.id, url.value.trim(), events));
    if (!result.ok) return setMessage(message, problemText(result), 'error');
    showSecret(secret, result.data.secret);
    url.value = '';
    setMessage(message, '');
    await refresh();
  };
  const panel = el('details', {
    class: 'webhooks',
    ontoggle: () => { if (panel.open) refresh(); },
  }, el('summary', {}, 'Webhooks (only you see them)'),
  el('p', { class: 'muted', text: 'Each event of your game\'s rooms is posted to these URLs, signed as Standard Webhooks specifies.' }),
  el('div', { class: 'row' }, url, el('button', { class: 'add-webhook secondary', onclick: add }, 'Add')),
  el('div', { class: 'row webhook-events' }, ...boxes),
  secret, message, list);
  return panel;
}

/** The secret of an endpoint just made or rotated: shown this once. */
function showSecret(box, secret) {
  box.hidden = false;
  box.replaceChildren('Its secret, shown this once: ', el('code', { text: secret }));
}

/** One endpoint: where, what, its state, its actions and (on demand) its delivery log. */
function endpointItem(game, endpoint, refresh, message, secretBox) {
  const log = el('ol', { class: 'deliveries' });
  const act = async (action) => {
    const result = await attempt(() => api.webhookAction(game.id, endpoint.id, action));
    if (!result.ok) return setMessage(message, problemText(result), 'error');
    if (action === 'rotate') showSecret(secretBox, result.data.secret);
    await refresh();
  };
  const showLog = async () => {
    const result = await attempt(() => api.webhookDeliveries(game.id, endpoint.id, { limit: 20 }));
    if (!result.ok) return setMessage(message, problemText(result), 'error');
    log.replaceChildren(...result.data.deliveries.map((delivery) => deliveryItem(game, endpoint, delivery, showLog, message)));
    if (!result.data.deliveries.length) log.append(el('li', { class: 'muted', text: 'Nothing delivered yet.' }));
  };
  const remove = async () => {
    const result = await attempt(() => api.removeWebhook(game.id, endpoint.id));
    if (!result.ok) return setMessage(message, problemText(result), 'error');
    await refresh();
  };
  const state = endpoint.status === 'disabled'
    ? `disabled: ${endpoint.disabledReason || ''}` : endpoint.status;
  const pausing = endpoint.status === 'active'
    ? el('button', { class: 'pause secondary', onclick: () => act('pause') }, 'Pause')
    : el('button', { class: 'resume secondary', onclick: () => act('resume') }, 'Resume');
  return el('li', { class: 'webhook', dataset: { hook: endpoint.id, status: endpoint.status } },
    el('div', {}, el('code', { class: 'webhook-target', text: endpoint.url }), ' ',
      el('span', { class: 'badge webhook-status', text: state })),
    el('div', { class: 'muted', text: endpoint.events.join(', ') }),
    el('div', { class: 'row' },
      el('button', { class: 'ping secondary', onclick: async () => { await act('ping'); await showLog(); } }, 'Send a ping'),
      pausing,
      el('button', { class: 'rotate secondary', onclick: () => act('rotate') }, 'New secret'),
      el('button', { class: 'show-deliveries secondary', onclick: showLog }, 'Deliveries'),
      el('button', { class: 'remove secondary', onclick: remove }, 'Remove')),
    log);
}

/** One delivery in the log: its event, state and last attempt, and a way to send it again. */
function deliveryItem(game, endpoint, delivery, showLog, message) {
  const last = delivery.attempts && delivery.attempts[delivery.attempts.length - 1];
  const outcome = !last ? 'not tried yet'
    : last.status !== null ? `HTTP ${last.status} in ${last.latencyMs} ms` : last.error;
  const again = async () => {
    const result = await attempt(() => api.redeliver(game.id, endpoint.id, delivery.id));
    if (!result.ok) return setMessage(message, problemText(result), 'error');
    await showLog();
  };
  return el('li', { class: `delivery ${delivery.state}`, dataset: { delivery: delivery.id, state: delivery.state } },
    el('span', { class: 'delivery-type', text: delivery.type }), ' ',
    el('span', { class: 'badge', text: delivery.state }), ' ',
    el('span', { class: 'muted', text: `${delivery.attemptCount} attempt${delivery.attemptCount === 1 ? '' : 's'}, ${outcome}` }), ' ',
    el('button', { class: 'redeliver secondary', onclick: again }, 'Send again'));
}
