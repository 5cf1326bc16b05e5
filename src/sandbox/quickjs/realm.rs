//! A fresh realm, for checking an upload and for a bot's search (hook calls start from their
//! game's warm realm, `warm.rs`): a new global object and built-ins, with the prelude installed
//! first, and nothing left of it afterwards.
//!
//! Making a realm and collecting the last one were half of what a call cost (the profile in
//! `docs/benchmarks.md`). The worker does both between calls, once it has answered
//! ([`QuickJs::prepare`]), so that neither is on the path of the next call; a call that finds
//! no realm ready makes its own, and a call that finds the last one uncollected collects it
//! first, so no hook ever runs beside another's garbage (it would count against its memory).

use rquickjs::{Context, Ctx, Exception, Function, Object, Type, Value};
use std::time::Duration;

use super::{cpu_time, far_future, message_of, run_bytecode, QuickJs};
use crate::sandbox::protocol::LogLevel;

impl QuickJs {
    /// Between calls: copies the warm realm's saved bytes back in after a hook call
    /// (`warm.rs`); after a fresh-realm call (a check, a search), collects what it left and
    /// makes the realm the next one gets. Nothing runs in either until the next call.
    pub fn prepare(&self) {
        if let Some(realms) = self.warm.borrow_mut().as_mut() {
            realms.tidy();
        }
        if !self.litter.get() {
            return;
        }
        self.collect();
        let mut next = self.next_realm.borrow_mut();
        if next.is_none() {
            // One that cannot be made now is tried again by the call, which reports it.
            *next = Context::full(&self.runtime).ok();
        }
    }

    fn collect(&self) {
        if self.litter.replace(false) {
            self.runtime.run_gc();
        }
    }

    /// Runs `work` in a new realm with the prelude installed, under the time limit. The realm
    /// and everything in it are unreachable afterwards. `Err` when the realm could not be made.
    pub(super) fn in_realm<R>(
        &self,
        time: Duration,
        work: impl for<'js> FnOnce(&Ctx<'js>, &Object<'js>) -> R,
    ) -> Result<R, String> {
        self.collect();
        self.interrupted.set(false);
        self.logs.borrow_mut().take();
        let ready = self.next_realm.borrow_mut().take();
        self.deadline.set(cpu_time() + time);
        let context = match ready {
            Some(context) => Ok(context),
            None => Context::full(&self.runtime)
                .map_err(|e| format!("could not make a realm for the hook: {e}")),
        };
        let result = context.and_then(|context| {
            let result = context.with(|ctx| {
                let (helpers, _natives) = self.install_prelude(&ctx)?;
                Ok(work(&ctx, &helpers))
            });
            drop(context);
            result
        });
        self.deadline.set(far_future());
        self.litter.set(true);
        result
    }

    /// Installs the prelude in this realm: the helpers it returns, and the native functions
    /// it was given.
    pub(super) fn install_prelude<'js>(
        &self,
        ctx: &Ctx<'js>,
    ) -> Result<(Object<'js>, Vec<Function<'js>>), String> {
        let logs = self.logs.clone();
        let emit = Function::new(ctx.clone(), move |level: String, text: String| {
            logs.borrow_mut().push(LogLevel::from_name(&level), text);
        })
        .map_err(|e| e.to_string())?;
        let extras = self.extras.clone();
        let load_extras = Function::new(ctx.clone(), move |ctx: Ctx<'js>| {
            run_bytecode(&ctx, &extras)
        })
        .map_err(|e| e.to_string())?;
        let refuse =
            Function::new(ctx.clone(), refuse_what_is_not_json).map_err(|e| e.to_string())?;
        let factory: Function = run_bytecode(ctx, &self.prelude)
            .and_then(|v| v.get())
            .map_err(|_| format!("the sandbox prelude failed: {}", message_of(&ctx.catch())))?;
        factory
            .call((emit.clone(), load_extras.clone(), refuse.clone()))
            .map(|helpers| (helpers, vec![emit, load_extras, refuse]))
            .map_err(|_| format!("the sandbox prelude failed: {}", message_of(&ctx.catch())))
    }
}

/// The check `JSON.stringify` calls on every value of a hook's answer (the prelude's
/// `encode`): a function, symbol or BigInt is refused by name instead of being silently
/// dropped. Native, since it runs once per value: written in JavaScript, the calls into it
/// were the largest part of encoding an answer (`docs/benchmarks.md`).
fn refuse_what_is_not_json<'js>(
    ctx: Ctx<'js>,
    key: Value<'js>,
    value: Value<'js>,
) -> rquickjs::Result<Value<'js>> {
    let kind = match value.type_of() {
        Type::Function | Type::Constructor => "function",
        Type::Symbol => "symbol",
        Type::BigInt => "bigint",
        _ => return Ok(value),
    };
    // Keys are strings here: stringify passes each property's name, and "" for the whole.
    let key = key.as_string().map(|k| k.to_string()).transpose()?;
    let place = match key.as_deref() {
        None | Some("") => "the returned value".to_owned(),
        Some(key) => format!("`{key}`"),
    };
    let message = format!("{place} is a {kind}; a patch holds only JSON values");
    Err(Exception::from_message(ctx, &message)?.throw())
}
