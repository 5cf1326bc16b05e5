// Small DOM helpers every screen uses: elements built from plain values (text is set as
// text, never parsed as HTML), messages, and times as people say them.



export function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (value === true) node.setAttribute(key, '');
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function setMessage(node, text, kind) {
  node.textContent = text || '';
  node.className = `message ${kind || ''}`;
}

export const main = () => document.getElementById('main');

export function debounce(fn, ms) {
  let timer = null;
  return () => { clearTimeout(timer); timer = setTimeout(fn, ms); };
}

/** A moment, as a person says it: the time today, else the day and time. */
export function when(at) {
  const moment = new Date(at);
  if (Number.isNaN(moment.getTime())) return null;
  const today = new Date().toDateString() === moment.toDateString();
  return today
    ? `today ${moment.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })}`
    : moment.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}
