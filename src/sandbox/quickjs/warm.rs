//! Warm realms: a hook call starts from a realm saved once per game, byte for byte, instead
//! of a realm made (and collected) for every call.
//!
//! Each game gets an engine runtime of its own whose every allocation comes from one
//! [`Arena`]. The first call makes the realm there, installs the prelude, runs the module's
//! top level, and saves the arena's bytes. Every call after starts from those bytes, copied back
//! in: whatever a call changed — `globalThis`, a built-in prototype, a module-level variable,
//! the engine's own heap and counters — is gone, as if the realm were new; only the time the
//! top level took is not spent again. Making a realm and collecting the last one were most of
//! what a call cost (`docs/benchmarks.md`).
//!
//! All the games share the one arena: running one is copying its bytes in. Everything Rust
//! holds of a game's engine (its runtime, context and handles) points into the arena, so it is
//! touched only while the arena holds that game's bytes, and dropped only after they have been
//! copied back.
//!
//! One stop in the life of a move: `docs/internals.md`.

use rquickjs::{Context, Ctx, Function, Object, Persistent, Runtime};

use super::arena::Arena;
use super::{cpu_time, far_future, Compiled, QuickJs};
use crate::sandbox::protocol::Outcome;

/// Games whose saved realm a process keeps, most recently used first.
const WARM_GAMES: usize = 8;

/// The arena for a heap limit of `memory_bytes`, which counts what the engine asked for: a
/// block also holds a 16-byte header and its class's rounding (up to a quarter), and a freed
/// block serves only its own class or a little below. Only the pages used are ever backed.
fn arena_size(memory_bytes: usize) -> usize {
    memory_bytes * 3 + (4 << 20)
}

/// What the saved realms may hold together; the one just saved is kept whatever its size.
fn saved_budget(memory_bytes: usize) -> usize {
    memory_bytes * 2
}

/// The most memory the warm realms of a process take: the arena, the saved realms, and one
/// realm's bytes being saved.
pub fn most_memory(memory_bytes: usize) -> usize {
    2 * arena_size(memory_bytes) + saved_budget(memory_bytes)
}

pub(super) struct WarmRealms {
    arena: Arena,
    games: Vec<WarmGame>,
    /// Whether the arena holds what the last call left rather than `games[0]`'s saved bytes.
    dirty: bool,
    /// What the saved realms may hold together.
    budget: usize,
}

/// A game's saved realm, and Rust's handles into it (valid only while the arena holds it).
/// Fields drop in order: the handles before the context, the context before the runtime.
struct WarmGame {
    fingerprint: [u8; 32],
    saved: Box<[u8]>,
    helpers: Persistent<Object<'static>>,
    hooks: Persistent<Object<'static>>,
    /// The native functions the realm holds (the prelude's and `Math.random`), kept alive from
    /// here: one a call let go of would otherwise be freed with its Rust closure, while the
    /// saved bytes still point at it.
    _natives: Vec<Persistent<Function<'static>>>,
    _context: Context,
    _runtime: Runtime,
}

impl WarmRealms {
    pub(super) fn new(memory_bytes: usize) -> std::io::Result<Self> {
        Ok(Self {
            arena: Arena::new(arena_size(memory_bytes))?,
            games: Vec::new(),
            dirty: true,
            budget: saved_budget(memory_bytes),
        })
    }

    /// Copies the last game's saved bytes back in, if a call has run since.
    pub(super) fn tidy(&mut self) {
        if self.dirty {
            if let Some(game) = self.games.first() {
                self.arena.restore(&game.saved);
                self.dirty = false;
            }
        }
    }

    /// Moves the game with `fingerprint` to the front, its saved bytes in the arena.
    fn bring(&mut self, fingerprint: &[u8; 32]) -> bool {
        let Some(index) = self
            .games
            .iter()
            .position(|g| &g.fingerprint == fingerprint)
        else {
            return false;
        };
        if index != 0 {
            let game = self.games.remove(index);
            self.games.insert(0, game);
            self.dirty = true;
        }
        self.tidy();
        true
    }

    fn saved_bytes(&self) -> usize {
        self.games.iter().map(|g| g.saved.len()).sum()
    }

    /// Drops the least recently used games until at most `keep` are left, and those within
    /// the budget; the arena then holds none of them until [`WarmRealms::tidy`].
    fn evict_beyond(&mut self, keep: usize) {
        while self.games.len() > keep || (self.games.len() > 1 && self.saved_bytes() > self.budget)
        {
            let game = self.games.pop().expect("longer than keep");
            self.arena.restore(&game.saved);
            drop(game);
            self.dirty = true;
        }
    }
}

impl Drop for WarmRealms {
    fn drop(&mut self) {
        self.evict_beyond(0);
    }
}

impl QuickJs {
    /// Runs `work` on the game's hooks in its warm realm under the hook time limit; `Err` with
    /// the outcome when the realm cannot be made (its module throws, say), or `None` when this
    /// process has no arena (the caller makes a fresh realm instead).
    pub(super) fn in_warm_realm<R>(
        &self,
        compiled: &Compiled,
        work: impl for<'js> FnOnce(&Ctx<'js>, Object<'js>, Object<'js>) -> R,
    ) -> Option<Result<R, Outcome>> {
        let mut slot = self.warm.borrow_mut();
        if slot.is_none() {
            *slot = Some(WarmRealms::new(self.limits.memory_bytes).ok()?);
        }
        let realms = slot.as_mut().expect("just made");
        if !realms.bring(&compiled.fingerprint) {
            if let Err(outcome) = self.warm_up(realms, compiled) {
                return Some(Err(outcome));
            }
        }
        let game = &realms.games[0];
        realms.dirty = true;
        self.interrupted.set(false);
        self.deadline.set(cpu_time() + self.limits.time);
        let result = game._context.with(|ctx| {
            let helpers = game.helpers.clone().restore(&ctx);
            let hooks = game.hooks.clone().restore(&ctx);
            match (helpers, hooks) {
                (Ok(helpers), Ok(hooks)) => Ok(work(&ctx, helpers, hooks)),
                _ => Err(super::crashed(
                    "the sandbox's saved realm is missing its hooks",
                )),
            }
        });
        self.deadline.set(far_future());
        Some(result)
    }

    /// Makes the game's realm in the arena, runs its module's top level, and saves it.
    fn warm_up(&self, realms: &mut WarmRealms, compiled: &Compiled) -> Result<(), Outcome> {
        realms.evict_beyond(WARM_GAMES - 1);
        realms.arena.reset();
        realms.dirty = true;
        let unavailable = |e: rquickjs::Error| Outcome::Crashed {
            message: format!("could not make a realm for the hook: {e}"),
        };
        let runtime = Runtime::new_with_alloc(realms.arena.allocator()).map_err(unavailable)?;
        self.limit(&runtime);
        let context = Context::full(&runtime).map_err(unavailable)?;
        self.interrupted.set(false);
        self.deadline.set(cpu_time() + self.limits.time);
        let made = context.with(|ctx| {
            let (helpers, mut natives) = self
                .install_prelude(&ctx)
                .map_err(|message| Outcome::Crashed { message })?;
            natives.push(random(&ctx).map_err(|e| super::crashed(&e.to_string()))?);
            let hooks = self
                .instantiate(&ctx, &helpers, compiled)
                .map_err(|thrown| self.module_fault(&helpers, &thrown))?;
            Ok::<_, Outcome>((
                Persistent::save(&ctx, helpers),
                Persistent::save(&ctx, hooks),
                natives
                    .into_iter()
                    .map(|f| Persistent::save(&ctx, f))
                    .collect::<Vec<_>>(),
            ))
        });
        self.deadline.set(far_future());
        let (helpers, hooks, natives) = made?;
        // The top level's garbage goes now, not into every call's heap.
        runtime.run_gc();
        realms.games.insert(
            0,
            WarmGame {
                fingerprint: compiled.fingerprint,
                saved: realms.arena.save(),
                helpers,
                hooks,
                _natives: natives,
                _context: context,
                _runtime: runtime,
            },
        );
        realms.dirty = false;
        realms.evict_beyond(WARM_GAMES);
        realms.tidy();
        Ok(())
    }
}

/// `Math.random` from outside the realm: the engine's own generator keeps its state in the
/// realm, and so would start every call from the same saved seed.
fn random<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Function<'js>> {
    let random = Function::new(ctx.clone(), rand::random::<f64>)?.with_name("random")?;
    let math: Object = ctx.globals().get("Math")?;
    math.set("random", random.clone())?;
    Ok(random)
}
