// Uploading a game from the page: the form, and a chosen build folder zipped in the browser.

import { el, setMessage } from './dom.js';
import { refreshLobby } from './lobby.js';
import { api, attempt, problemText } from './session.js';

export function uploadCard() {
  const message = el('p', { id: 'upload-message', class: 'message', role: 'alert' });
  const id = el('input', { id: 'upload-id', required: true, placeholder: 'my-game', pattern: '[a-z0-9][a-z0-9\\-]{1,39}' });
  const name = el('input', { id: 'upload-name', placeholder: 'My Game (optional)' });
  const description = el('textarea', { id: 'upload-description', maxlength: '1000', placeholder: 'What the game is, in a sentence or two (optional)' });
  const example = el('input', { id: 'upload-move-example', placeholder: '{"column": 3} (optional)' });
  const file = el('input', { id: 'upload-file', type: 'file', accept: '.js,.mjs,.cjs,text/javascript', required: true });
  const page = el('input', { id: 'upload-frontend', type: 'file', accept: '.html,.htm,.zip,.tar.gz,.tgz,text/html,application/zip,application/gzip' });
  const folder = el('input', { id: 'upload-folder', type: 'file', webkitdirectory: true, multiple: true });
  const form = el('form', {
    id: 'upload-form',
    onsubmit: async (event) => {
      event.preventDefault();
      const chosen = file.files[0];
      if (!chosen) return setMessage(message, 'Pick a .js file first.', 'error');
      const upload = new FormData();
      upload.append('source', chosen, chosen.name);
      if (name.value.trim()) upload.append('name', name.value.trim());
      if (description.value.trim()) upload.append('description', description.value.trim());
      if (example.value.trim()) {
        try { JSON.parse(example.value); } catch (err) {
          return setMessage(message, `The move example is not JSON: ${err.message}`, 'error');
        }
        upload.append('moveExample', example.value.trim());
      }
      if (folder.files.length) upload.append('frontend', await zipFolder([...folder.files]), 'build.zip');
      else if (page.files[0]) upload.append('frontend', page.files[0], page.files[0].name);
      setMessage(message, 'Uploading…');
      const result = await attempt(() => api.publishGame(id.value.trim(), upload));
      if (!result.ok) {
        const entry = result.data && result.data.entry ? ` (${result.data.entry})` : '';
        setMessage(message, `${problemText(result)}${entry}`, 'error');
        // A parser names the line where it noticed the mistake, which may be the line after
        // it: the two lines up to it are shown, numbered.
        const line = result.data && result.data.code === 'invalid_game_code' ? result.data.line : null;
        if (line) {
          const lines = (await chosen.text()).split('\n');
          const shown = lines.slice(Math.max(0, line - 2), line)
            .map((text, i) => `${String(Math.max(1, line - 1) + i).padStart(4)} | ${text}`).join('\n');
          message.append(el('pre', { id: 'upload-error-lines', class: 'error-lines', text: shown }));
        }
        return;
      }
      setMessage(message, `Published ${result.data.name}, version ${result.data.version}.`, 'ok');
      refreshLobby(document.getElementById('lobby-message'));
    },
  },
  el('label', { for: 'upload-id' }, 'Game id'), el('div', { class: 'row' }, id),
  el('label', { for: 'upload-name' }, 'Name'), el('div', { class: 'row' }, name),
  el('label', { for: 'upload-description' }, 'Description'), el('div', { class: 'row' }, description),
  el('label', { for: 'upload-move-example' }, 'A move, as JSON, for players to start from'), el('div', { class: 'row' }, example),
  el('label', { for: 'upload-file' }, 'JavaScript file (four hooks)'), el('div', { class: 'row' }, file),
  el('label', { for: 'upload-frontend' }, 'Its own page, optional: one HTML file, or a build folder as .zip or .tar.gz'),
  el('div', { class: 'row' }, page),
  el('label', { for: 'upload-folder' }, '…or the build folder itself'), el('div', { class: 'row' }, folder),
  el('div', { class: 'row' }, el('button', { id: 'upload', type: 'submit' }, 'Upload')),
  el('p', { class: 'muted' }, 'Uploading to an id you own publishes a new version; rooms keep the version they started with.'),
  message);
  return el('section', { class: 'card', 'aria-labelledby': 'upload-title' },
    el('h2', { id: 'upload-title' }, 'Upload a game'), form);
}

/**
 * A chosen folder as one .zip (stored, not compressed: the server gzips what pays), with the
 * paths the browser gives (`build/index.html`); the server takes off the single top folder.
 */
export async function zipFolder(files) {
  const encoder = new TextEncoder();
  const parts = [];
  const central = [];
  let offset = 0;
  for (const file of files) {
    const path = encoder.encode(file.webkitRelativePath || file.name);
    const data = new Uint8Array(await file.arrayBuffer());
    const crc = crc32(data);
    const local = zipHeader(0x04034b50, [[20, 2], [0x0800, 2], [0, 2], [0, 4], [crc, 4], [data.length, 4], [data.length, 4], [path.length, 2], [0, 2]]);
    central.push(zipHeader(0x02014b50, [[20, 2], [20, 2], [0x0800, 2], [0, 2], [0, 4], [crc, 4], [data.length, 4], [data.length, 4],
      [path.length, 2], [0, 2], [0, 2], [0, 2], [0, 2], [0, 4], [offset, 4]]), path);
    parts.push(local, path, data);
    offset += local.length + path.length + data.length;
  }
  const size = central.reduce((n, part) => n + part.length, 0);
  const end = zipHeader(0x06054b50, [[0, 2], [0, 2], [files.length, 2], [files.length, 2], [size, 4], [offset, 4], [0, 2]]);
  return new Blob([...parts, ...central, end], { type: 'application/zip' });
}

/** A zip record: its signature, then little-endian fields of [value, bytes]. */
export function zipHeader(signature, fields) {
  const bytes = new Uint8Array(4 + fields.reduce((n, [, width]) => n + width, 0));
  const view = new DataView(bytes.buffer);
  view.setUint32(0, signature, true);
  let at = 4;
  for (const [value, width] of fields) {
    if (width === 2) view.setUint16(at, value, true);
    else view.setUint32(at, value >>> 0, true);
    at += width;
  }
  return bytes;
}

export let crcTable = null;
export function crc32(data) {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n += 1) {
      let c = n;
      for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i += 1) crc = crcTable[(crc ^ data[i]) & 255] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
