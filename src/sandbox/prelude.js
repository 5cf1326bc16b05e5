// Runs first in every realm a hook call gets, before the game's module. It installs what the
// platform promises authors (console, structuredClone) and returns the helpers the sandbox
// itself uses. It keeps its own references to the built-ins it needs, so a game that replaces
// JSON.stringify or Array.prototype.map cannot bend how its result is read.
(function (emit) {
  'use strict';
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const isArray = Array.isArray;
  const keys = Object.keys;
  const join = (parts) => Array.prototype.join.call(parts, ' ');

  function show(value) {
    if (typeof value === 'string') return value;
    try {
      const text = stringify(value);
      return text === undefined ? String(value) : text;
    } catch (_) {
      try {
        return String(value);
      } catch (_) {
        return '[unprintable]';
      }
    }
  }

  function writer(level) {
    return function (...args) {
      const parts = [];
      for (let i = 0; i < args.length; i += 1) parts.push(show(args[i]));
      emit(level, join(parts));
    };
  }

  function makeLogger() {
    return { info: writer('info'), warn: writer('warn'), error: writer('error') };
  }

  const console = {
    log: writer('info'),
    info: writer('info'),
    debug: writer('info'),
    warn: writer('warn'),
    error: writer('error'),
  };
  Object.defineProperty(globalThis, 'console', { value: console, writable: true, configurable: true });

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
  globalThis.structuredClone = function structuredClone(value) {
    return clone(value, new Map());
  };

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
  class Buffer extends Uint8Array {
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
  Object.defineProperty(globalThis, 'Buffer', { value: Buffer, writable: true, configurable: true });

  // A hook's return value as JSON text. `undefined` is the empty patch; a function, symbol or
  // BigInt anywhere is refused by name instead of being silently dropped; a cycle makes
  // stringify throw.
  function encode(value) {
    if (value === undefined) return '{}';
    const text = stringify(value, function (key, v) {
      const type = typeof v;
      if (type === 'function' || type === 'symbol' || type === 'bigint') {
        const where = key === '' ? 'the returned value' : `\`${key}\``;
        throw new TypeError(`${where} is a ${type}; a patch holds only JSON values`);
      }
      return v;
    });
    return text === undefined ? 'null' : text;
  }

  // [reason, message] of anything a hook threw: the error's `code` when it is a string, else
  // its `name`; its `message`, else the value itself as text.
  function describe(thrown) {
    try {
      if (thrown !== null && (typeof thrown === 'object' || typeof thrown === 'function')) {
        const code = thrown.code;
        const name = thrown.name;
        const message = thrown.message;
        const reason = typeof code === 'string' ? code : typeof name === 'string' ? name : 'Error';
        return [reason, typeof message === 'string' ? message : show(thrown)];
      }
      return ['Error', String(thrown)];
    } catch (_) {
      return ['Error', 'the hook threw a value that could not be read'];
    }
  }

  // Calls the hook `name` as a method of the game's exports, with fresh arguments parsed from
  // JSON; the last one is the room's record, which gets a logger.
  function invoke(hooks, name, argsJson) {
    const args = parse(argsJson);
    const room = args[args.length - 1];
    room.logger = makeLogger();
    return hooks[name](...args);
  }

  // Runs a CommonJS module's wrapper the way Node does and returns what it exported; an
  // ES-module-interop bundle's hooks may sit under `default`.
  function loadCommonJs(wrapper) {
    const module = { exports: {} };
    const require = function require(name) {
      const shown = typeof name === 'string' ? stringify(name) : show(name);
      throw new Error(`require(${shown}) is not available: a game is one self-contained file`);
    };
    wrapper.call(module.exports, module.exports, require, module, 'game.js', '/');
    const exports = module.exports;
    if (exports !== null && typeof exports === 'object' && typeof exports.onRoomStart !== 'function'
        && exports.default !== null && typeof exports.default === 'object') {
      return exports.default;
    }
    return exports;
  }

  return { encode, describe, invoke, loadCommonJs };
})
