//! The sandbox process: `turnhouse sandbox-worker`, started by the server's pool. It reads one
//! request per line from stdin, answers one response per line on stdout, and holds the games
//! it has compiled. It limits itself before reading anything (no core dumps, a cap on its data
//! segment, few file descriptors, a lower CPU priority than the server, death with the server),
//! so that even a fault in the engine stays inside this process.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::value::RawValue;

use super::protocol::{LogLine, Outcome, Request, Response, SearchOptions};
use super::quickjs::{warm_realms_memory, Compiled, Limits, QuickJs};

/// Compiled games kept per process, most recently used first.
const CACHED_GAMES: usize = 32;

/// Room for the process itself (its code, the engine's realms, buffers) above the JS heap limit.
const PROCESS_HEADROOM: usize = 256 << 20;

/// Extra stack for the thread running JS, above the engine's own stack limit.
const THREAD_STACK_HEADROOM: usize = 16 << 20;

/// How often the process checks that the server that started it is still there.
const PARENT_CHECK: std::time::Duration = std::time::Duration::from_millis(250);

pub fn run(limits: Limits) -> ExitCode {
    confine(&limits);
    exit_with_parent();
    let thread = std::thread::Builder::new()
        .name("sandbox".into())
        .stack_size(limits.stack_bytes + THREAD_STACK_HEADROOM)
        .spawn(move || serve(limits));
    match thread.map(|t| t.join()) {
        Ok(Ok(Ok(()))) => ExitCode::SUCCESS,
        Ok(Ok(Err(message))) => {
            eprintln!("sandbox worker: {message}");
            ExitCode::FAILURE
        }
        _ => ExitCode::FAILURE,
    }
}

/// Limits this process can set on itself; each failure is harmless and so ignored.
fn confine(limits: &Limits) {
    // SAFETY: plain system calls with valid arguments; none touches memory we own.
    unsafe {
        // When authors' code and the server want the same core, the server comes first.
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
        let set = |resource, value: usize| {
            let limit = libc::rlimit {
                rlim_cur: value as libc::rlim_t,
                rlim_max: value as libc::rlim_t,
            };
            libc::setrlimit(resource, &limit);
        };
        set(libc::RLIMIT_CORE, 0);
        // A second line behind the engine's own allocation limits: two runtimes making fresh
        // realms (checks here, searches on their thread) and the hook calls' warm realms.
        set(
            libc::RLIMIT_DATA,
            2 * limits.memory_bytes + warm_realms_memory(limits.memory_bytes) + PROCESS_HEADROOM,
        );
        // stdin, stdout, stderr and a few for the runtime; nothing to open files with.
        set(libc::RLIMIT_NOFILE, 16);
    }
}

/// Ends this process as soon as the server that started it is gone (killed, crashed), even
/// while a hook is running. A thread watches rather than `PR_SET_PDEATHSIG`, which fires when
/// the spawning *thread* ends, and the server spawns from a pool whose threads come and go.
fn exit_with_parent() {
    // SAFETY: getppid cannot fail and touches no memory.
    let parent = unsafe { libc::getppid() };
    let watcher = std::thread::Builder::new()
        .name("parent-watch".into())
        .stack_size(64 * 1024)
        .spawn(move || loop {
            std::thread::sleep(PARENT_CHECK);
            // SAFETY: as above; `_exit` ends the process without running anything else.
            if unsafe { libc::getppid() } != parent {
                unsafe { libc::_exit(1) };
            }
        });
    if watcher.is_err() {
        std::process::exit(1);
    }
}

fn serve(limits: Limits) -> Result<(), String> {
    let js = QuickJs::new(limits).map_err(|e| e.message)?;
    let mut games = GameCache::default();
    let mut searcher = None;
    let mut stdout = std::io::stdout().lock();
    // Each answer is encoded here and written whole, in one write: encoded straight into
    // stdout, its many small pieces each went through the line buffer's search for a newline.
    let mut answer = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| e.to_string())?;
        let request: Request = serde_json::from_str(&line).map_err(|e| e.to_string())?;
        let response = handle(&js, &mut games, &mut searcher, limits, request);
        answer.clear();
        serde_json::to_writer(&mut answer, &response).map_err(|e| e.to_string())?;
        answer.push(b'\n');
        stdout
            .write_all(&answer)
            .and_then(|()| stdout.flush())
            .map_err(|e| e.to_string())?;
        // Answered: the server goes on while this process readies the next call's realm.
        js.prepare();
    }
    // The server closed our stdin: it is stopping, or it retired this process.
    Ok(())
}

fn handle(
    js: &QuickJs,
    games: &mut GameCache,
    searcher: &mut Option<Searcher>,
    limits: Limits,
    request: Request,
) -> Response {
    match request {
        Request::Check { source } => {
            match js
                .compile(&source)
                .and_then(|c| js.check(&c).map(|checked| (c, checked)))
            {
                Ok((compiled, (hooks, settings))) => Response::Checked {
                    format: compiled.format,
                    hooks,
                    settings,
                },
                Err(error) => Response::Invalid {
                    message: error.message,
                    line: error.line,
                },
            }
        }
        Request::Load { key, source } => match js.compile(&source) {
            Ok(compiled) => {
                games.insert(key, compiled);
                Response::Loaded
            }
            Err(error) => Response::Invalid {
                message: error.message,
                line: error.line,
            },
        },
        Request::Call { key, hook, args } => match games.get(&key) {
            Some(compiled) => {
                let (outcome, logs) = js.call(&compiled, hook, args.get());
                Response::Done { outcome, logs }
            }
            None => Response::Missing,
        },
        Request::Search {
            key,
            room,
            bot,
            options,
            time_ms,
        } => match games.get(&key) {
            Some(compiled) => {
                let job = SearchJob {
                    compiled: (*compiled).clone(),
                    room,
                    bot,
                    options,
                    time: Duration::from_millis(time_ms),
                };
                let (outcome, logs) = match searcher.get_or_insert_with(|| Searcher::start(limits))
                {
                    Searcher::Running { jobs, answers } => {
                        match jobs.send(job).ok().and_then(|()| answers.recv().ok()) {
                            Some(answer) => answer,
                            None => {
                                // The thread is gone: the next search starts another.
                                *searcher = None;
                                (searcher_lost(), Vec::new())
                            }
                        }
                    }
                    // No thread of its own: searching here beats no bot at all.
                    Searcher::Unavailable => job.run(js),
                };
                Response::Done { outcome, logs }
            }
            None => Response::Missing,
        },
    }
}

/// Bot searches run on a thread of their own at the lowest CPU priority, below hooks (this
/// whole process already runs below the server): a search keeps a core busy for up to its
/// whole budget, while a hook that waits for a core holds up a player. The thread has its own
/// engine, under the same limits; it starts with the first search.
enum Searcher {
    Running {
        jobs: mpsc::Sender<SearchJob>,
        answers: mpsc::Receiver<(Outcome, Vec<LogLine>)>,
    },
    Unavailable,
}

struct SearchJob {
    compiled: Compiled,
    room: Box<RawValue>,
    bot: String,
    options: SearchOptions,
    time: Duration,
}

impl SearchJob {
    fn run(&self, js: &QuickJs) -> (Outcome, Vec<LogLine>) {
        js.search(
            &self.compiled,
            self.room.get(),
            &self.bot,
            &self.options,
            self.time,
        )
    }
}

impl Searcher {
    fn start(limits: Limits) -> Self {
        let (jobs, inbox) = mpsc::channel::<SearchJob>();
        let (outbox, answers) = mpsc::channel();
        let (ready, started) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("bot-search".into())
            .stack_size(limits.stack_bytes + THREAD_STACK_HEADROOM)
            .spawn(move || {
                // SAFETY: plain system calls; raising one's own nice value needs no privilege.
                unsafe {
                    libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 19);
                }
                let Ok(js) = QuickJs::new(limits) else {
                    let _ = ready.send(false);
                    return;
                };
                let _ = ready.send(true);
                for job in inbox {
                    let answer = job.run(&js);
                    if outbox.send(answer).is_err() {
                        return;
                    }
                    js.prepare();
                }
            });
        match thread.map(|_| started.recv()) {
            Ok(Ok(true)) => Searcher::Running { jobs, answers },
            _ => Searcher::Unavailable,
        }
    }
}

fn searcher_lost() -> Outcome {
    Outcome::Crashed {
        message: "the sandbox's search thread stopped".into(),
    }
}

/// A small most-recently-used list of compiled games.
#[derive(Default)]
struct GameCache {
    entries: Vec<(String, Rc<Compiled>)>,
}

impl GameCache {
    fn get(&mut self, key: &str) -> Option<Rc<Compiled>> {
        let index = self.entries.iter().position(|(k, _)| k == key)?;
        let entry = self.entries.remove(index);
        let compiled = entry.1.clone();
        self.entries.insert(0, entry);
        Some(compiled)
    }

    fn insert(&mut self, key: String, compiled: Compiled) {
        self.entries.retain(|(k, _)| *k != key);
        self.entries.insert(0, (key, Rc::new(compiled)));
        self.entries.truncate(CACHED_GAMES);
    }
}
