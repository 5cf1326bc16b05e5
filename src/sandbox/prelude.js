// Runs first in every realm a hook call gets, before the game's module. It installs what the
// platform promises authors (console; structuredClone and Buffer, see below) and returns the
// helpers the sandbox itself uses. It keeps its own references to the built-ins it needs, so a
// game that replaces JSON.stringify or Array.prototype.map cannot bend how its result is read.
(function (emit, loadExtras, refuse) {
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

  // structuredClone and Buffer are built the first time a game reads (or replaces) either:
  // most hooks never touch them, and building them in every realm was a fifth of what a hook
  // call cost. `loadExtras` evaluates `extras.js` in this realm; it gets the built-ins it
  // relies on as they were before the game ran.
  const defineProperty = Object.defineProperty;
  const Bytes = Uint8Array;
  let extras;
  function settle(name, value, enumerable) {
    defineProperty(globalThis, name, { value, writable: true, enumerable, configurable: true });
  }
  function lazily(name, enumerable) {
    defineProperty(globalThis, name, {
      enumerable,
      configurable: true,
      get() {
        if (extras === undefined) extras = loadExtras()(isArray, keys, Bytes);
        const value = extras[name];
        settle(name, value, enumerable);
        return value;
      },
      set(value) {
        settle(name, value, enumerable);
      },
    });
  }
  lazily('structuredClone', true);
  lazily('Buffer', false);

  // A hook's return value as JSON text. `undefined` is the empty patch; a function, symbol or
  // BigInt anywhere is refused by name instead of being silently dropped (`refuse`, the
  // sandbox's own check on every value); a cycle makes stringify throw.
  function encode(value) {
    if (value === undefined) return '{}';
    const text = stringify(value, refuse);
    return text === undefined ? 'null' : text;
  }

  // What a hook throws is the game refusing, but for the errors the engine itself raises when
  // the code goes wrong (reading a property of undefined, calling what is not a function, an
  // undefined name): those are bugs in the game. Both are instances of the same classes, so
  // the errors the game makes itself (`new TypeError(…)`, `RangeError(…)`, a subclass) are
  // marked as they are made; the engine makes its own without calling these constructors.
  const authored = new WeakSet();
  const markAuthored = WeakSet.prototype.add;
  const isAuthored = WeakSet.prototype.has;
  const construct = Reflect.construct;
  const apply = Reflect.apply;
  const Marking = Proxy;
  const engineErrors = ['TypeError', 'ReferenceError', 'RangeError', 'SyntaxError'];
  for (let i = 0; i < engineErrors.length; i += 1) {
    const original = globalThis[engineErrors[i]];
    const marking = new Marking(original, {
      construct(target, args, newTarget) {
        const error = construct(target, args, newTarget);
        apply(markAuthored, authored, [error]);
        return error;
      },
      apply(target, self, args) {
        const error = apply(target, self, args);
        apply(markAuthored, authored, [error]);
        return error;
      },
    });
    const hidden = { value: marking, writable: true, enumerable: false, configurable: true };
    defineProperty(original.prototype, 'constructor', hidden);
    defineProperty(globalThis, engineErrors[i], hidden);
  }

  // The line of `game.js` an error was raised at, from its stack; 0 when it has none.
  function lineOf(error) {
    const stack = error.stack;
    if (typeof stack !== 'string') return 0;
    const at = stack.indexOf('game.js:');
    if (at < 0) return 0;
    const line = parseInt(stack.slice(at + 8), 10);
    return line > 0 ? line : 0;
  }

  // [reason, message, line] of anything a hook threw: the error's `code` when it is a string,
  // else its `name`; its `message`, else the value itself as text. `line` is 0 for a refusal;
  // for an error the engine raised (a bug in the game), the line of `game.js` it was raised
  // at, or -1 where that is not known.
  function describe(thrown) {
    try {
      if (thrown !== null && (typeof thrown === 'object' || typeof thrown === 'function')) {
        const code = thrown.code;
        const name = thrown.name;
        const message = thrown.message;
        const reason = typeof code === 'string' ? code : typeof name === 'string' ? name : 'Error';
        let line = 0;
        if (engineErrors.indexOf(name) >= 0 && typeof code !== 'string'
            && !apply(isAuthored, authored, [thrown])) {
          line = lineOf(thrown) || -1;
        }
        return [reason, typeof message === 'string' ? message : show(thrown), String(line)];
      }
      return ['Error', String(thrown), '0'];
    } catch (_) {
      return ['Error', 'the hook threw a value that could not be read', '0'];
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
