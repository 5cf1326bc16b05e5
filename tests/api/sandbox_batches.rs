//! Hook calls sent to the real sandbox processes in batches (`src/sandbox/batches.rs`), through
//! the server's pool itself: which calls wait together is what these tests arrange, and over
//! HTTP the order requests reach the pool is not theirs to choose.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::{join_all, BoxFuture};
use serde_json::{json, Value};
use turnhouse::game::Hook;
use turnhouse::metrics::Exposition;
use turnhouse::sandbox::protocol::{LogLine, Outcome};
use turnhouse::sandbox::{Limits, PoolError, SandboxPool};

/// A move `{"n": k}` answers `k`; `{"busy": ms}` runs that long first; `{"spin": true}` never
/// ends (the time limit stops it).
const GAME: &str = r#"'use strict';
module.exports = {
  onRoomStart: () => ({ state: {} }),
  onPlayerJoin: () => ({}),
  onPlayerQuit: () => ({}),
  onPlayerMove(player, move, room) {
    if (move.spin) while (true) {}
    if (move.busy) { const end = Date.now() + move.busy; while (Date.now() < end) {} }
    return { state: { n: move.n } };
  },
};
"#;

const TIME_LIMIT: Duration = Duration::from_secs(3);

fn pool(workers: usize) -> SandboxPool {
    let limits = Limits {
        time: TIME_LIMIT,
        memory_bytes: 32 << 20,
        stack_bytes: 1 << 20,
    };
    SandboxPool::new(env!("CARGO_BIN_EXE_turnhouse").into(), limits, workers)
}

type Answer = Result<(Outcome, Vec<LogLine>), PoolError>;

/// A move in a room of the game `key`: its answer, and when it came.
fn call(pool: &SandboxPool, key: &str, mv: Value) -> BoxFuture<'static, (Answer, Instant)> {
    let (pool, key) = (pool.clone(), key.to_owned());
    Box::pin(async move {
        let source: Arc<str> = GAME.into();
        let room = json!({"players": [], "version": 1, "joinable": true, "finished": false,
                          "state": {}, "roomId": "r"});
        let args = serde_json::value::to_raw_value(&json!([{"id": "p"}, mv, room])).unwrap();
        let answer = pool.call_async(&key, &source, Hook::PlayerMove, args).await;
        (answer, Instant::now())
    })
}

fn answered_n((answer, _): &(Answer, Instant)) -> Option<i64> {
    match answer {
        Ok((Outcome::Patch { patch }, _)) => patch["state"]["n"].as_i64(),
        _ => None,
    }
}

fn metric(pool: &SandboxPool, name: &str) -> f64 {
    let mut out = Exposition::default();
    pool.render_metrics(&mut out);
    let text = out.finish();
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
        .parse()
        .unwrap()
}

/// Calls that wait while every worker is busy go to the next free one together, and each gets
/// its own answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_that_wait_together_go_in_one_batch_and_each_gets_its_answer() {
    let pool = pool(1);
    // Measured first: a game's calls go together only once they are known to be quick.
    for n in 0..3 {
        assert_eq!(
            answered_n(&call(&pool, "quick@1", json!({"n": n})).await),
            Some(n)
        );
    }
    assert_eq!(metric(&pool, "turnhouse_sandbox_batched_calls_total"), 0.0);
    // The only worker is busy with another game's call while twelve wait.
    let mut calls = vec![call(&pool, "blocker@1", json!({"busy": 300, "n": -1}))];
    calls.extend((0..12).map(|n| call(&pool, "quick@1", json!({"n": n}))));
    let answers: Vec<_> = join_all(calls).await.iter().map(answered_n).collect();
    assert_eq!(
        answers,
        [-1].into_iter().chain(0..12).map(Some).collect::<Vec<_>>()
    );
    let batched = metric(&pool, "turnhouse_sandbox_batched_calls_total");
    assert!(batched >= 2.0, "{batched} calls were batched");
    assert_eq!(
        metric(&pool, "turnhouse_sandbox_calls_sent_again_total"),
        0.0
    );
}

/// A call that runs until its time limit in a batch holds up none of the calls behind it: once
/// it has run a few milliseconds they are sent again, each alone, to the other worker, and
/// answered while it still runs. It gets its own fault.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_runs_long_in_a_batch_holds_up_none_of_the_calls_behind_it() {
    let pool = pool(2);
    for n in 0..3 {
        assert_eq!(
            answered_n(&call(&pool, "quick@1", json!({"n": n})).await),
            Some(n)
        );
    }
    // Both workers busy with another game's calls; meanwhile the runaway and ten calls behind
    // it wait, and go to the first worker that comes free, together. (Each call joins the
    // queue when first polled, and `join_all` polls them in order.)
    let mut calls = vec![
        call(&pool, "blocker@1", json!({"busy": 300, "n": -1})),
        call(&pool, "blocker@1", json!({"busy": 300, "n": -1})),
        call(&pool, "quick@1", json!({"spin": true})),
    ];
    calls.extend((0..10).map(|n| call(&pool, "quick@1", json!({"n": n}))));
    let answers = join_all(calls).await;
    assert_eq!(answered_n(&answers[0]), Some(-1));
    assert_eq!(answered_n(&answers[1]), Some(-1));
    let (runaway, runaway_done) = &answers[2];
    let behind = &answers[3..];
    assert_eq!(
        behind.iter().map(answered_n).collect::<Vec<_>>(),
        (0..10).map(Some).collect::<Vec<_>>()
    );
    let behind_done = behind.iter().map(|(_, at)| *at).max().unwrap();
    assert!(
        behind_done < *runaway_done,
        "the calls behind the runaway were answered only after it"
    );
    assert!(
        matches!(runaway, Ok((Outcome::Timeout, _))),
        "the runaway: {runaway:?}"
    );
    let again = metric(&pool, "turnhouse_sandbox_calls_sent_again_total");
    assert!(again >= 1.0, "{again} calls were sent again");
}
