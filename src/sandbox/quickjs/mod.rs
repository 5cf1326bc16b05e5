//! QuickJS inside a sandbox process. A game's source is compiled once to bytecode. A hook call
//! starts from the game's warm realm (`warm.rs`): a realm made once, with the prelude and the
//! module's top level run, saved byte for byte and copied back in before every call, so that
//! nothing one call does — to `globalThis`, to a prototype, to module-level variables — is seen
//! by the next. Checking an upload and a bot's search get a brand-new realm instead (`realm.rs`).
//! Time is bounded by the engine's interrupt check, memory by the runtime's allocation limit
//! (and, for warm realms, the arena they live in), recursion by its stack limit; the process
//! around it adds a watchdog and a data-size limit for whatever slips past those.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use rquickjs::{qjs, Context, Ctx, Function, Module, Object, Runtime, Value};
use serde::{Deserialize, Serialize};

use super::protocol::{Fault, Format, LogLine, Outcome, SearchOptions};
use crate::game::Hook;
use logs::LogBuffer;
use patch::read_patch;

const PRELUDE: &str = include_str!("../prelude.js");
const EXTRAS: &str = include_str!("../extras.js");
const SEARCH: &str = include_str!("../search.js");

/// What the search (`search.js`) answers: the move chosen (`null` when the bot has none), or a
/// fault of the game's exports (other than `onPlayerMove` refusing a move), which is reported
/// as the search having crashed.
#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum SearchAnswer {
    Move(serde_json::Value),
    Fault(String),
}

/// The limits every hook call runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    pub time: Duration,
    pub memory_bytes: usize,
    pub stack_bytes: usize,
}

/// A game's source, compiled (bytecode any runtime of this build can load).
#[derive(Clone)]
pub struct Compiled {
    pub format: Format,
    bytecode: Vec<u8>,
    /// The SHA-256 of the format and the bytecode: which warm realm is this game's.
    fingerprint: [u8; 32],
}

impl Compiled {
    fn new(format: Format, bytecode: Vec<u8>) -> Self {
        use sha2::{Digest, Sha256};
        let fingerprint = Sha256::new()
            .chain_update([format as u8])
            .chain_update(&bytecode)
            .finalize()
            .into();
        Self {
            format,
            bytecode,
            fingerprint,
        }
    }
}

/// Why a source cannot be hosted, for its author.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeError {
    pub message: String,
    pub line: Option<u32>,
}

impl CodeError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            line: None,
        }
    }
}

pub struct QuickJs {
    runtime: Runtime,
    limits: Limits,
    /// When the running code is stopped, in this thread's CPU time ([`cpu_time`]).
    deadline: Rc<Cell<Duration>>,
    interrupted: Rc<Cell<bool>>,
    logs: Rc<RefCell<LogBuffer>>,
    prelude: Vec<u8>,
    /// `extras.js`, compiled once; a realm evaluates it only if its game asks for it.
    extras: Rc<[u8]>,
    /// `search.js`, compiled once.
    search: Vec<u8>,
    /// The realm the next fresh-realm call gets, made by [`QuickJs::prepare`] after the last.
    next_realm: RefCell<Option<Context>>,
    /// Hook calls' saved realms (`warm.rs`), made with the first call.
    warm: RefCell<Option<warm::WarmRealms>>,
    /// Whether the last call's realm is still to be collected.
    litter: Cell<bool>,
    /// A realm no game's code ever runs in, made first: see [`QuickJs::new`].
    _host: Context,
}

impl QuickJs {
    pub fn new(limits: Limits) -> Result<Self, CodeError> {
        let runtime = Runtime::new().map_err(|e| CodeError::new(e.to_string()))?;
        // The engine's bindings keep, for the life of the runtime, the prototype the first
        // native function was given: the `Function.prototype` of the realm it was made in,
        // which holds that whole realm, and whatever a game left on its global object, alive.
        // Making the first one here, in a realm of our own, keeps every call's realm free to go.
        let host = Context::base(&runtime).map_err(|e| CodeError::new(e.to_string()))?;
        host.with(|ctx| Function::new(ctx, || ()).map(drop))
            .map_err(|e| CodeError::new(e.to_string()))?;
        let mut js = Self {
            runtime,
            limits,
            deadline: Rc::new(Cell::new(far_future())),
            interrupted: Rc::new(Cell::new(false)),
            logs: Rc::new(RefCell::new(LogBuffer::default())),
            prelude: Vec::new(),
            extras: Rc::from([]),
            search: Vec::new(),
            next_realm: RefCell::new(None),
            warm: RefCell::new(None),
            litter: Cell::new(false),
            _host: host,
        };
        js.limit(&js.runtime);
        js.prelude = js.compile_text(PRELUDE, false, "prelude.js")?;
        js.extras = js.compile_text(EXTRAS, false, "extras.js")?.into();
        js.search = js.compile_text(SEARCH, false, "search.js")?;
        Ok(js)
    }

    /// Puts `runtime` under the hook limits: memory, stack, and CPU time by [`QuickJs::deadline`].
    fn limit(&self, runtime: &Runtime) {
        runtime.set_memory_limit(self.limits.memory_bytes);
        runtime.set_max_stack_size(self.limits.stack_bytes);
        let (watch, flag) = (self.deadline.clone(), self.interrupted.clone());
        runtime.set_interrupt_handler(Some(Box::new(move || {
            let over = cpu_time() >= watch.get();
            if over {
                flag.set(true);
            }
            over
        })));
    }

    /// Runs one hook in the game's warm realm (`warm.rs`), or a fresh one when this process has
    /// no arena. `args_json` is the JSON array of its arguments, the room's record last.
    pub fn call(
        &self,
        compiled: &Compiled,
        hook: Hook,
        args_json: &str,
    ) -> (Outcome, Vec<LogLine>) {
        self.logs.borrow_mut().take();
        let warm = self.in_warm_realm(compiled, |ctx, helpers, hooks| {
            let value = invoke(&helpers, hooks, hook, args_json);
            self.settle(ctx, &helpers, value)
        });
        match warm {
            Some(outcome) => (
                outcome.unwrap_or_else(|fault| fault),
                self.logs.borrow_mut().take(),
            ),
            None => self.with_hooks(compiled, self.limits.time, |_ctx, helpers, hooks| {
                invoke(helpers, hooks, hook, args_json)
            }),
        }
    }

    /// Chooses a bot's move in a fresh realm holding the game's hooks, with the search that
    /// ships with the server (`search.js`), under `time` rather than the hook time limit.
    /// `room_json` is the room's record; the outcome's value is the move, or `null` when the
    /// bot has none to make. `onPlayerMove` refusing a move `enumerateMoves` gave is a
    /// refusal, as it would be in the room; any other export throwing (or returning what is
    /// not a list) is a crash.
    pub fn search(
        &self,
        compiled: &Compiled,
        room_json: &str,
        bot_id: &str,
        options: &SearchOptions,
        time: Duration,
    ) -> (Outcome, Vec<LogLine>) {
        let options = serde_json::to_string(options).expect("options always serialise");
        let outcome = self.with_hooks(compiled, time, |ctx, _helpers, hooks| {
            let search: Function = run_bytecode(ctx, &self.search)?.get()?;
            let room: Value = ctx.json_parse(room_json)?;
            let options: Value = ctx.json_parse(options)?;
            search.call::<_, Value>((hooks, room, bot_id, options))
        });
        match outcome {
            (Outcome::Patch { patch }, logs) => match serde_json::from_value(patch) {
                Ok(SearchAnswer::Move(chosen)) => (Outcome::Patch { patch: chosen }, logs),
                Ok(SearchAnswer::Fault(message)) => (Outcome::Crashed { message }, logs),
                Err(err) => (crashed(&format!("the search answered {err}")), logs),
            },
            other => other,
        }
    }

    /// Runs `work` on the game's hooks in a fresh realm under `time`, and reads what it
    /// returned as [`QuickJs::settle`] does.
    fn with_hooks(
        &self,
        compiled: &Compiled,
        time: Duration,
        work: impl for<'js> FnOnce(&Ctx<'js>, &Object<'js>, Object<'js>) -> rquickjs::Result<Value<'js>>,
    ) -> (Outcome, Vec<LogLine>) {
        let outcome = self
            .in_realm(time, |ctx, helpers| {
                match self.instantiate(ctx, helpers, compiled) {
                    Ok(hooks) => self.settle(ctx, helpers, work(ctx, helpers, hooks)),
                    Err(thrown) => self.module_fault(helpers, &thrown),
                }
            })
            .unwrap_or_else(|message| Outcome::Crashed { message });
        (outcome, self.logs.borrow_mut().take())
    }

    /// What evaluating the module throwing `thrown` makes of the call.
    fn module_fault<'js>(&self, helpers: &Object<'js>, thrown: &Value<'js>) -> Outcome {
        let (_, message) = describe(helpers, thrown);
        self.fault_of(thrown).map_or_else(
            || Outcome::Crashed {
                message: format!("evaluating the module threw: {message}"),
            },
            Outcome::from,
        )
    }

    /// Reads what a hook returned (waiting for a promise to settle) as JSON within the
    /// platform's limits; `Err` when it threw.
    fn settle<'js>(
        &self,
        ctx: &Ctx<'js>,
        helpers: &Object<'js>,
        returned: rquickjs::Result<Value<'js>>,
    ) -> Outcome {
        let value = match returned {
            Ok(value) => value,
            Err(_) => return self.thrown(ctx, helpers),
        };
        let value = match value.as_promise() {
            Some(promise) => match promise.finish::<Value>() {
                Ok(value) => value,
                Err(rquickjs::Error::WouldBlock) => {
                    return Outcome::InvalidResult {
                        message: "the hook returned a promise that never settles \
                                  (there are no timers or I/O to wait for)"
                            .into(),
                    }
                }
                Err(_) => return self.thrown(ctx, helpers),
            },
            None => value,
        };
        let encode: Function = match helpers.get("encode") {
            Ok(encode) => encode,
            Err(_) => return crashed("the sandbox's helpers are missing"),
        };
        let text: String = match encode.call((value,)) {
            Ok(text) => text,
            Err(_) => {
                let thrown = ctx.catch();
                if let Some(fault) = self.fault_of(&thrown) {
                    return fault.into();
                }
                let (_, message) = describe(helpers, &thrown);
                return Outcome::InvalidResult {
                    message: format!("the returned value is not JSON: {message}"),
                };
            }
        };
        read_patch(&text)
    }

    /// Evaluates the game's module in this realm and returns the object holding its hooks:
    /// `module.exports` (or its `default`) for CommonJS, the default export (or the named
    /// exports) for an ES module. `Err` holds what was thrown.
    fn instantiate<'js>(
        &self,
        ctx: &Ctx<'js>,
        helpers: &Object<'js>,
        compiled: &Compiled,
    ) -> Result<Object<'js>, Value<'js>> {
        let exports: Object = match compiled.format {
            Format::Commonjs => {
                let wrapper: Function = run_bytecode(ctx, &compiled.bytecode)
                    .and_then(|v| v.get())
                    .map_err(|_| ctx.catch())?;
                let load: Function = helpers.get("loadCommonJs").map_err(|_| ctx.catch())?;
                load.call((wrapper,)).map_err(|_| ctx.catch())?
            }
            Format::Module => {
                // SAFETY: the bytes are bytecode this process compiled from source with
                // `compile_text`; they live (in `compiled`) until the realm is dropped.
                let module = unsafe { Module::load(ctx.clone(), &compiled.bytecode) }
                    .map_err(|_| ctx.catch())?;
                let (module, done) = module.eval().map_err(|_| ctx.catch())?;
                match done.finish::<Value>() {
                    Ok(_) => {}
                    Err(rquickjs::Error::WouldBlock) => {
                        return Err(rquickjs::String::from_str(
                            ctx.clone(),
                            "the module waits on something that never comes (top-level await)",
                        )
                        .map(|s| s.into_value())
                        .unwrap_or_else(|_| Value::new_undefined(ctx.clone())))
                    }
                    Err(_) => return Err(ctx.catch()),
                }
                let namespace = module.namespace().map_err(|_| ctx.catch())?;
                match namespace.get::<_, Value>("default") {
                    Ok(default) if default.is_object() => {
                        default.into_object().expect("checked to be an object")
                    }
                    _ => namespace,
                }
            }
        };
        Ok(exports)
    }

    /// The outcome of a hook that threw (or whose promise rejected).
    fn thrown<'js>(&self, ctx: &Ctx<'js>, helpers: &Object<'js>) -> Outcome {
        let thrown = ctx.catch();
        if let Some(fault) = self.fault_of(&thrown) {
            return fault.into();
        }
        match described(helpers, &thrown) {
            (name, message, Some(line)) => Outcome::Failed {
                error: truncate(format!("{name}: {message}"), 1000),
                line,
            },
            (reason, message, None) => Outcome::Refused {
                reason: truncate(reason, 100),
                message: truncate(message, 1000),
            },
        }
    }

    /// Whether a thrown value is the engine stopping the hook rather than the game refusing.
    fn fault_of(&self, thrown: &Value<'_>) -> Option<Fault> {
        if self.interrupted.get() {
            return Some(Fault::Timeout);
        }
        let object = thrown.as_object()?;
        let name: String = object.get("name").unwrap_or_default();
        let message = message_of(thrown);
        match (name.as_str(), message.as_str()) {
            ("InternalError", "out of memory" | "string too long") => {
                Some(Fault::OutOfMemory { detail: message })
            }
            (_, "Maximum call stack size exceeded" | "stack overflow") => {
                Some(Fault::StackOverflow)
            }
            _ => None,
        }
    }
}

/// Calls the hook `hook` of `hooks` through the prelude's `invoke`.
fn invoke<'js>(
    helpers: &Object<'js>,
    hooks: Object<'js>,
    hook: Hook,
    args_json: &str,
) -> rquickjs::Result<Value<'js>> {
    let invoke: Function = helpers.get("invoke")?;
    invoke.call((hooks, hook.name(), args_json))
}

fn crashed(message: &str) -> Outcome {
    Outcome::Crashed {
        message: message.into(),
    }
}

/// Reads compiled bytecode into this realm and evaluates it; for a script, the value of its
/// last expression.
fn run_bytecode<'js>(ctx: &Ctx<'js>, bytecode: &[u8]) -> rquickjs::Result<Value<'js>> {
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: the bytes are bytecode this process wrote with `JS_WriteObject` from source it
    // compiled; `JS_READ_OBJ_BYTECODE` without ROM data copies what it reads. The returned
    // value is owned and handed to `Value`, which frees it.
    unsafe {
        let function = qjs::JS_ReadObject(
            raw,
            bytecode.as_ptr(),
            bytecode.len() as _,
            qjs::JS_READ_OBJ_BYTECODE as i32,
        );
        if qjs::JS_IsException(function) {
            return Err(rquickjs::Error::Exception);
        }
        let value = qjs::JS_EvalFunction(raw, function);
        if qjs::JS_IsException(value) {
            return Err(rquickjs::Error::Exception);
        }
        Ok(Value::from_raw(ctx.clone(), value))
    }
}

/// `[reason, message]` for a thrown value, from the prelude's `describe`.
fn describe<'js>(helpers: &Object<'js>, thrown: &Value<'js>) -> (String, String) {
    let (reason, message, _) = described(helpers, thrown);
    (reason, message)
}

/// What a hook threw: the reason and message, and whether the engine raised it (a bug in the
/// game rather than its refusal), with the line of `game.js` it was raised at when known.
fn described<'js>(
    helpers: &Object<'js>,
    thrown: &Value<'js>,
) -> (String, String, Option<Option<u32>>) {
    helpers
        .get::<_, Function>("describe")
        .and_then(|describe| describe.call::<_, Vec<String>>((thrown.clone(),)))
        .ok()
        .and_then(|parts| <[String; 3]>::try_from(parts).ok())
        .map(|[reason, message, line]| {
            let bug = match line.parse::<i64>().unwrap_or(0) {
                0 => None,
                line => Some(u32::try_from(line).ok()),
            };
            (reason, message, bug)
        })
        .unwrap_or_else(|| ("Error".into(), message_of(thrown), None))
}

fn message_of(value: &Value<'_>) -> String {
    value
        .as_object()
        .and_then(|o| o.get::<_, String>("message").ok())
        .or_else(|| value.as_string().and_then(|s| s.to_string().ok()))
        .unwrap_or_else(|| "an unknown error".into())
}

pub(super) fn truncate(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

fn far_future() -> Duration {
    Duration::MAX
}

/// The CPU time this thread has used. Limits count it rather than the time on the clock, so
/// that code is charged only for what it ran: on a busy machine a hook may wait for a core,
/// and that waiting is not the game's doing. (The pool's watchdog counts the process's CPU
/// time too, with a backstop by the clock for a process that runs nothing at all.)
fn cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec to write to; the clock exists on every Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

mod arena;
mod brackets;
mod compile;
#[cfg(test)]
mod error_tests;
mod logs;
mod patch;
mod realm;
#[cfg(test)]
mod tests;
mod warm;
pub use warm::most_memory as warm_realms_memory;
