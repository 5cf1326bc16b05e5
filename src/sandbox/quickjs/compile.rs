//! Compiling a game's source once, to bytecode any runtime of this build can load, and
//! checking at upload that its module evaluates and exports the four hooks.

use std::ffi::CString;
use std::time::Duration;

use rquickjs::{qjs, Context, Value};

use super::brackets::unclosed_bracket;
use super::{cpu_time, describe, far_future, message_of, CodeError, Compiled, QuickJs};
use crate::game::{Capabilities, Hook};
use crate::sandbox::protocol::{Fault, Format};

/// How long compiling a source may take; parsing is linear in the source (at most 1 MiB).
const COMPILE_TIME: Duration = Duration::from_secs(2);

impl QuickJs {
    /// Compiles a game's source, as a CommonJS script or an ES module (whichever it is).
    /// CommonJS is tried first: `import`/`export` statements cannot appear inside its wrapper
    /// function, so a module fails there and compiles as what it is.
    pub fn compile(&self, source: &str) -> Result<Compiled, CodeError> {
        // Wrapped the way Node wraps a CommonJS file. The wrapper shares the source's first
        // line, so the engine's line numbers are the author's.
        let wrapped =
            format!("(function (exports, require, module, __filename, __dirname) {{{source}\n}})");
        let script_error = match self.compile_text(&wrapped, false, "game.js") {
            Ok(bytecode) => return Ok(Compiled::new(Format::Commonjs, bytecode)),
            Err(error) => error,
        };
        match self.compile_text(source, true, "game.js") {
            Ok(bytecode) => Ok(Compiled::new(Format::Module, bytecode)),
            // A module importing something: parsed as a module, then the import failed.
            Err(module_error) if module_error.message.starts_with("could not load module") => {
                Err(CodeError::new(format!(
                    "{}: imports are not available, a game is one self-contained file",
                    module_error.message
                )))
            }
            // Wrong either way: the reading that got further is the one the author meant.
            Err(module_error) if module_error.line > script_error.line => {
                Err(at_the_opener(source, module_error))
            }
            Err(_) => Err(at_the_opener(source, script_error)),
        }
    }

    pub(super) fn compile_text(
        &self,
        text: &str,
        module: bool,
        name: &str,
    ) -> Result<Vec<u8>, CodeError> {
        let source = CString::new(text)
            .map_err(|_| CodeError::new("the source contains a NUL character"))?;
        let name = CString::new(name).expect("file names have no NUL");
        let kind = if module {
            qjs::JS_EVAL_TYPE_MODULE
        } else {
            qjs::JS_EVAL_TYPE_GLOBAL
        };
        let context = Context::full(&self.runtime).map_err(|e| CodeError::new(e.to_string()))?;
        self.deadline.set(cpu_time() + COMPILE_TIME);
        let result = context.with(|ctx| {
            let raw = ctx.as_raw().as_ptr();
            // SAFETY: `source` is NUL-terminated and outlives the call; the compiled object is
            // freed here after being serialised, and the buffer QuickJS allocated for the
            // bytecode is copied, then freed with the context's allocator.
            unsafe {
                let compiled = qjs::JS_Eval(
                    raw,
                    source.as_ptr(),
                    text.len() as _,
                    name.as_ptr(),
                    (kind | qjs::JS_EVAL_FLAG_COMPILE_ONLY) as i32,
                );
                if qjs::JS_IsException(compiled) {
                    let error = ctx.catch();
                    return Err(code_error(&error));
                }
                let mut size: qjs::size_t = 0;
                let buffer = qjs::JS_WriteObject(
                    raw,
                    &mut size,
                    compiled,
                    qjs::JS_WRITE_OBJ_BYTECODE as i32,
                );
                qjs::JS_FreeValue(raw, compiled);
                if buffer.is_null() {
                    ctx.catch();
                    return Err(CodeError::new("the compiled game could not be stored"));
                }
                let bytes = std::slice::from_raw_parts(buffer, size as usize).to_vec();
                qjs::js_free(raw, buffer.cast());
                Ok(bytes)
            }
        });
        self.deadline.set(far_future());
        drop(context);
        self.runtime.run_gc();
        result
    }

    /// Evaluates the module in a fresh realm, under the hook limits, and checks that it
    /// exports the four hooks as functions; which optional hooks it also exports, and its
    /// `settings` export (as JSON text) if it has one.
    pub fn check(&self, compiled: &Compiled) -> Result<(Capabilities, Option<String>), CodeError> {
        let limit_ms = self.limits.time.as_millis();
        self.in_realm(self.limits.time, |ctx, helpers| {
            let hooks = match self.instantiate(ctx, helpers, compiled) {
                Ok(hooks) => hooks,
                Err(thrown) => {
                    return Err(match self.fault_of(&thrown) {
                        Some(Fault::Timeout) => CodeError::new(format!(
                            "evaluating the module ran past the time limit of {limit_ms} ms"
                        )),
                        Some(Fault::OutOfMemory { detail }) => CodeError::new(format!(
                            "evaluating the module ran out of memory ({detail})"
                        )),
                        _ => {
                            let (_, message) = describe(helpers, &thrown);
                            let mut error = code_error(&thrown);
                            error.message = format!("evaluating the module threw: {message}");
                            error
                        }
                    })
                }
            };
            let exports = |hook: Hook| {
                hooks
                    .get::<_, Value>(hook.name())
                    .is_ok_and(|v| v.is_function())
            };
            let missing: Vec<&str> = (Hook::REQUIRED.into_iter())
                .filter(|hook| !exports(*hook))
                .map(Hook::name)
                .collect();
            if missing.is_empty() {
                let capabilities = Capabilities {
                    timeouts: exports(Hook::Timeout),
                    player_view: exports(Hook::PlayerView),
                    bots: exports(Hook::EnumerateMoves),
                    winners: exports(Hook::Winners),
                    to_move: exports(Hook::ToMove),
                };
                Ok((capabilities, settings_export(helpers, &hooks)?))
            } else {
                Err(CodeError::new(format!(
                    "the module must export the four hooks as functions; missing: {}",
                    missing.join(", ")
                )))
            }
        })
        .unwrap_or_else(|error| Err(CodeError::new(error)))
    }
}

/// The module's `settings` export (name, player counts…, read by the catalog) as JSON text:
/// `None` when it has none.
fn settings_export<'js>(
    helpers: &rquickjs::Object<'js>,
    hooks: &rquickjs::Object<'js>,
) -> Result<Option<String>, CodeError> {
    let settings: Value = hooks
        .get("settings")
        .unwrap_or_else(|_| Value::new_undefined(hooks.ctx().clone()));
    if settings.is_undefined() {
        return Ok(None);
    }
    if !settings.is_object() || settings.is_function() || settings.is_array() {
        return Err(CodeError::new(
            "the `settings` export must be an object, such as { name: 'Rock paper scissors', minPlayers: 2 }",
        ));
    }
    let encode: rquickjs::Function = helpers
        .get("encode")
        .map_err(|_| CodeError::new("the sandbox's helpers are missing"))?;
    encode
        .call::<_, String>((settings,))
        .map(Some)
        .map_err(|_| {
            let thrown = hooks.ctx().catch();
            let (_, message) = describe(helpers, &thrown);
            CodeError::new(format!("the `settings` export is not JSON: {message}"))
        })
}

/// An error the parser met at the end of the source (where a missing `}` is noticed) names
/// the line of the bracket left open instead, when one is.
fn at_the_opener(source: &str, error: CodeError) -> CodeError {
    let last_line = source.trim_end().lines().count().max(1) as u32;
    match (error.line, unclosed_bracket(source)) {
        (Some(line), Some((bracket, opened))) if line >= last_line && opened < line => {
            let closer = match bracket {
                '{' => '}',
                '(' => ')',
                _ => ']',
            };
            CodeError {
                message: format!(
                    "the `{bracket}` opened here is never closed: the file ends before its `{closer}`"
                ),
                line: Some(opened),
            }
        }
        _ => error,
    }
}

/// A syntax (or evaluation) error with the line it points at in `game.js`.
fn code_error(error: &Value<'_>) -> CodeError {
    let stack: String = error
        .as_object()
        .and_then(|o| o.get("stack").ok())
        .unwrap_or_default();
    let line = stack.split("game.js:").nth(1).and_then(|rest| {
        rest.split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse().ok())
    });
    CodeError {
        message: message_of(error),
        line,
    }
}
