// What the prelude (`prelude.js`) puts on a realm's global object only when a game first reads
// it: structuredClone and Node's Buffer. It is evaluated in that realm and called with the
// built-ins it relies on, taken before the game's module ran.
(function (isArray, keys, Bytes) {
  'use strict';

  // The structured clone algorithm for the values a game keeps: primitives, arrays, plain
  // objects, Date, RegExp, Map, Set, with shared and cyclic references preserved.
  function clone(value, seen) {
    const type = typeof value;
    if (type === 'function' || type === 'symbol') {
      throw new TypeError(`a ${type} could not be cloned`);
    }
    if (type !== 'object' || value === null) return value;
    if (seen.has(value)) return seen.get(value);
    let copy;
    if (isArray(value)) {
      copy = [];
      seen.set(value, copy);
      for (let i = 0; i < value.length; i += 1) copy[i] = clone(value[i], seen);
    } else if (value instanceof Date) {
      copy = new Date(value.getTime());
      seen.set(value, copy);
    } else if (value instanceof RegExp) {
      copy = new RegExp(value.source, value.flags);
      seen.set(value, copy);
    } else if (value instanceof Map) {
      copy = new Map();
      seen.set(value, copy);
      for (const [k, v] of value) copy.set(clone(k, seen), clone(v, seen));
    } else if (value instanceof Set) {
      copy = new Set();
      seen.set(value, copy);
      for (const v of value) copy.add(clone(v, seen));
    } else {
      copy = {};
      seen.set(value, copy);
      for (const k of keys(value)) copy[k] = clone(value[k], seen);
    }
    return copy;
  }
  function structuredClone(value) {
    return clone(value, new Map());
  }

  // Node's Buffer, as far as games written for a Node runner use it: bytes from and to text
  // as UTF-8, base64 or hex. Plain JavaScript over Uint8Array: it adds no capability.
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  function encoding(name) {
    const lower = String(name === undefined ? 'utf8' : name).toLowerCase();
    if (lower === 'utf8' || lower === 'utf-8') return 'utf8';
    if (lower === 'base64' || lower === 'base64url' || lower === 'hex') return lower;
    if (lower === 'latin1' || lower === 'binary' || lower === 'ascii') return 'latin1';
    throw new TypeError(`Unknown encoding: ${name}`);
  }
  function utf8Bytes(text) {
    const out = [];
    for (let i = 0; i < text.length; i += 1) {
      let c = text.charCodeAt(i);
      if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
        const d = text.charCodeAt(i + 1);
        if (d >= 0xdc00 && d < 0xe000) { c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00); i += 1; }
      }
      if (c >= 0xd800 && c < 0xe000) c = 0xfffd;
      if (c < 0x80) out.push(c);
      else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
      else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    }
    return out;
  }
  function utf8Text(bytes) {
    let text = '';
    for (let i = 0; i < bytes.length;) {
      const b = bytes[i];
      const need = b < 0x80 ? 0 : b >= 0xf0 && b < 0xf8 ? 3 : b >= 0xe0 ? 2 : b >= 0xc0 ? 1 : -1;
      let c = need === 0 ? b : need === 1 ? b & 31 : need === 2 ? b & 15 : b & 7;
      let ok = need >= 0 && i + need < bytes.length + (need === 0 ? 1 : 0);
      for (let k = 1; ok && k <= need; k += 1) {
        const next = bytes[i + k];
        if ((next & 0xc0) !== 0x80) ok = false;
        else c = (c << 6) | (next & 63);
      }
      if (!ok || c > 0x10ffff) { text += '\ufffd'; i += 1; continue; }
      text += String.fromCodePoint(c);
      i += need + 1;
    }
    return text;
  }
  function base64Bytes(text) {
    const clean = String(text).replace(/[-_]/g, (c) => (c === '-' ? '+' : '/')).replace(/[^A-Za-z0-9+/]/g, '');
    const out = [];
    let bits = 0;
    let value = 0;
    for (let i = 0; i < clean.length; i += 1) {
      value = (value << 6) | B64.indexOf(clean[i]);
      bits += 6;
      if (bits >= 8) { bits -= 8; out.push((value >> bits) & 255); }
    }
    return out;
  }
  function base64Text(bytes, url) {
    let text = '';
    for (let i = 0; i < bytes.length; i += 3) {
      const n = (bytes[i] << 16) | ((bytes[i + 1] || 0) << 8) | (bytes[i + 2] || 0);
      text += B64[(n >> 18) & 63] + B64[(n >> 12) & 63];
      text += i + 1 < bytes.length ? B64[(n >> 6) & 63] : url ? '' : '=';
      text += i + 2 < bytes.length ? B64[n & 63] : url ? '' : '=';
    }
    return url ? text.replace(/[+/]/g, (c) => (c === '+' ? '-' : '_')) : text;
  }
  class Buffer extends Bytes {
    static from(value, encodingOrOffset, length) {
      if (typeof value === 'string') {
        const kind = encoding(encodingOrOffset);
        const bytes = kind === 'utf8' ? utf8Bytes(value)
          : kind === 'hex' ? (value.match(/[0-9a-fA-F]{2}/g) || []).map((h) => parseInt(h, 16))
            : kind === 'latin1' ? Array.from(value, (c) => c.charCodeAt(0) & 255)
              : base64Bytes(value);
        return new Buffer(bytes);
      }
      if (value instanceof ArrayBuffer) return new Buffer(value, encodingOrOffset || 0, length);
      if (value !== null && typeof value === 'object' && value.type === 'Buffer' && isArray(value.data)) {
        return new Buffer(value.data);
      }
      if (value !== null && typeof value === 'object' && typeof value.length === 'number') {
        return new Buffer(Array.from(value, (b) => Number(b) & 255));
      }
      throw new TypeError('Buffer.from takes a string, an array, an ArrayBuffer or a Buffer');
    }
    static alloc(size, fill) {
      const buffer = new Buffer(size);
      if (fill !== undefined) buffer.fill(typeof fill === 'number' ? fill : Buffer.from(String(fill))[0] || 0);
      return buffer;
    }
    static isBuffer(value) { return value instanceof Buffer; }
    static byteLength(value, kind) {
      return typeof value === 'string' ? Buffer.from(value, kind).length : value.byteLength;
    }
    static concat(list, total) {
      const size = total === undefined ? list.reduce((n, b) => n + b.length, 0) : total;
      const out = Buffer.alloc(size);
      let at = 0;
      for (const part of list) {
        if (at >= size) break;
        out.set(part.subarray(0, size - at), at);
        at += part.length;
      }
      return out;
    }
    toString(kind, start, end) {
      const bytes = this.subarray(start || 0, end === undefined ? this.length : end);
      switch (encoding(kind)) {
        case 'utf8': return utf8Text(bytes);
        case 'hex': return Array.from(bytes, (b) => (b < 16 ? '0' : '') + b.toString(16)).join('');
        case 'latin1': return Array.from(bytes, (b) => String.fromCharCode(b)).join('');
        case 'base64url': return base64Text(bytes, true);
        default: return base64Text(bytes, false);
      }
    }
    toJSON() { return { type: 'Buffer', data: Array.from(this) }; }
    equals(other) { return this.length === other.length && this.every((b, i) => b === other[i]); }
  }

  return { structuredClone, Buffer };
})
