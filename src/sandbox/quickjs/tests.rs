//! The engine in a worker, called directly: hooks, limits, logs and the search.
use super::logs::MAX_LOG_BYTES;
use super::*;
use crate::sandbox::protocol::LogLevel;

pub(super) fn js() -> QuickJs {
    QuickJs::new(Limits {
        time: Duration::from_millis(50),
        memory_bytes: 16 << 20,
        stack_bytes: 256 << 10,
    })
    .unwrap()
}

const HOOKS_CJS: &str = "module.exports = { onRoomStart: () => ({}), onPlayerJoin() {}, \
                         onPlayerQuit() {}, onPlayerMove(p, m, room) { return MOVES[m.do](room); } };";

pub(super) fn game(moves: &str) -> String {
    format!("const MOVES = {moves};\n{HOOKS_CJS}")
}

pub(super) fn call(js: &QuickJs, compiled: &Compiled, action: &str) -> Outcome {
    let args = serde_json::json!([{"id": "p"}, {"do": action}, {"state": {"n": 1}}]);
    js.call(compiled, Hook::PlayerMove, &args.to_string()).0
}

/// A tic-tac-toe room of `examples/tictactoe.js` with `board` (rows of "X", "O" or
/// null), X (`x`) against O (`o`), `to_move` the seat to move.
fn tictactoe_room(board: serde_json::Value, to_move: usize) -> String {
    let marks = board
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap().clone());
    let count = marks.filter(|m| !m.is_null()).count();
    serde_json::json!({
        "players": [{"id": "x", "username": "x"}, {"id": "o", "username": "o"}],
        "version": 3 + count, "joinable": false, "finished": false,
        "state": {"status": "inGame", "board": board, "plrToMoveIndex": to_move,
                  "winner": null, "winningLine": null, "moveCount": count},
        "roomStartContext": {"private": false},
    })
    .to_string()
}

fn tictactoe_source() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/tictactoe.js"
    ))
    .unwrap()
}

fn search(js: &QuickJs, room: &str, bot: &str, level: &str, seed: u64) -> serde_json::Value {
    search_in(js, &tictactoe_source(), room, bot, level, seed)
}

/// The move the search of `source`'s hooks chooses for `bot` in `room`.
fn search_in(
    js: &QuickJs,
    source: &str,
    room: &str,
    bot: &str,
    level: &str,
    seed: u64,
) -> serde_json::Value {
    let compiled = js.compile(source).unwrap();
    let options = SearchOptions {
        seed,
        level: serde_json::from_value(serde_json::json!(level)).unwrap(),
        playouts: 2000,
        depth: 50,
        time_ms: 5000,
        stats: false,
    };
    match js
        .search(&compiled, room, bot, &options, Duration::from_secs(5))
        .0
    {
        Outcome::Patch { patch } => patch,
        other => panic!("{other:?}"),
    }
}

#[test]
fn buffer_turns_text_into_bytes_and_back_as_node_does() {
    let js = js();
    let compiled = js
        .compile(&game(
            r#"{ buffer: () => {
              const text = 'héllo ✓ 🎲';
              const utf8 = Buffer.from(text);
              const b64 = utf8.toString('base64');
              return { state: {
                length: utf8.length, hex: Buffer.from('hi').toString('hex'),
                b64, back: Buffer.from(b64, 'base64').toString('utf8'),
                fromHex: Buffer.from('68c3a9', 'hex').toString(),
                url: Buffer.from([251, 255]).toString('base64url'),
                json: JSON.stringify(Buffer.from('ab')), isBuffer: Buffer.isBuffer(utf8),
                concat: Buffer.concat([Buffer.from('a'), Buffer.from('bc')]).toString(),
                bytes: Array.from(Buffer.from('AQID', 'base64')),
              } };
            } }"#,
        ))
        .unwrap();
    let Outcome::Patch { patch } = call(&js, &compiled, "buffer") else {
        panic!("the hook ran");
    };
    assert_eq!(
        patch["state"],
        serde_json::json!({
            "length": 15, "hex": "6869", "b64": "aMOpbGxvIOKckyDwn46y",
            "back": "héllo ✓ 🎲", "fromHex": "hé", "url": "-_8",
            "json": "{\"type\":\"Buffer\",\"data\":[97,98]}", "isBuffer": true,
            "concat": "abc", "bytes": [1, 2, 3],
        })
    );
}

#[test]
fn structured_clone_and_buffer_appear_when_read_built_from_the_untouched_built_ins() {
    let js = js();
    let compiled = js
        .compile(&game(
            r#"{ extras: () => {
              const listed = Object.keys(globalThis);
              // Bent before either is first read: neither may lean on these.
              Array.isArray = () => false;
              Object.keys = () => [];
              globalThis.Uint8Array = function Fake() {};
              const copy = structuredClone({ list: [1, { two: 2 }] });
              const bytes = Buffer.from('hi');
              const kept = globalThis.Buffer === Buffer;
              globalThis.Buffer = 5;
              return { state: {
                listed: listed.filter((k) => k === 'structuredClone' || k === 'Buffer'),
                copy,
                bytes: bytes.toString('hex'), realBytes: bytes.length === 2 && bytes[0] === 104,
                kept, replaced: globalThis.Buffer,
              } };
            } }"#,
        ))
        .unwrap();
    let Outcome::Patch { patch } = call(&js, &compiled, "extras") else {
        panic!("the hook ran");
    };
    assert_eq!(
        patch["state"],
        serde_json::json!({
            "listed": ["structuredClone"], "copy": {"list": [1, {"two": 2}]},
            "bytes": "6869", "realBytes": true, "kept": true, "replaced": 5,
        })
    );
    // The next realm has them afresh.
    let compiled = js
        .compile(&game(
            "{ again: () => ({ state: { buffer: typeof Buffer, clone: typeof structuredClone } }) }",
        ))
        .unwrap();
    let Outcome::Patch { patch } = call(&js, &compiled, "again") else {
        panic!("the hook ran");
    };
    assert_eq!(
        patch["state"],
        serde_json::json!({"buffer": "function", "clone": "function"})
    );
}

#[test]
fn the_search_takes_a_win_blocks_a_loss_and_plays_only_legal_moves() {
    let js = js();
    // X to move can win along the top row.
    let win = tictactoe_room(
        serde_json::json!([["X", "X", null], ["O", "O", null], [null, null, null]]),
        0,
    );
    for seed in 0..5 {
        assert_eq!(
            search(&js, &win, "x", "hard", seed),
            serde_json::json!({"x": 0, "y": 2})
        );
    }
    // O to move must block the top row.
    let block = tictactoe_room(
        serde_json::json!([["X", "X", null], ["O", null, null], [null, null, null]]),
        1,
    );
    for seed in 0..5 {
        assert_eq!(
            search(&js, &block, "o", "hard", seed),
            serde_json::json!({"x": 0, "y": 2})
        );
    }
    // Easy plays some empty cell; nobody moves out of turn.
    let open = tictactoe_room(
        serde_json::json!([["X", null, null], [null, null, null], [null, null, null]]),
        1,
    );
    let mv = search(&js, &open, "o", "easy", 7);
    assert!(
        mv != serde_json::json!({"x": 0, "y": 0}) && mv["x"].is_i64(),
        "{mv}"
    );
    assert_eq!(search(&js, &open, "x", "hard", 7), serde_json::Value::Null);
}

#[test]
fn the_search_waits_for_an_on_player_move_that_returns_a_promise() {
    let js = js();
    let source = tictactoe_source()
        + "\nconst sync = module.exports.onPlayerMove;\n\
           module.exports.onPlayerMove = async (...args) => { await null; return sync(...args); };\n";
    let block = tictactoe_room(
        serde_json::json!([["X", "X", null], ["O", null, null], [null, null, null]]),
        1,
    );
    for seed in 0..3 {
        assert_eq!(
            search_in(&js, &source, &block, "o", "hard", seed),
            serde_json::json!({"x": 0, "y": 2})
        );
    }
}

#[test]
fn a_search_over_hostile_exports_ends_in_a_fault() {
    let js = js();
    let room = tictactoe_room(
        serde_json::json!([[null, null, null], [null, null, null], [null, null, null]]),
        0,
    );
    let options = SearchOptions {
        seed: 1,
        level: crate::game::BotLevel::Hard,
        playouts: 100,
        depth: 20,
        time_ms: 1000,
        stats: false,
    };
    // The game with `exports` added, searched from the empty board for at most `time`.
    let search_with = |exports: &str, time: Duration| {
        let source = game("{ end: () => ({ finished: true }) }")
            .replace("onPlayerMove(p", &format!("{exports} onPlayerMove(p"));
        let compiled = js.compile(&source).unwrap();
        js.search(&compiled, &room, "x", &options, time).0
    };
    let outcome = search_with(
        "enumerateMoves() { for (;;) {} },",
        Duration::from_millis(100),
    );
    assert_eq!(outcome, Outcome::Timeout);
    let outcome = search_with(
        "enumerateMoves() { return new Array(1e6).fill(1); },",
        Duration::from_secs(2),
    );
    // A million moves: refused by count, or stopped by the memory limit on the way.
    assert!(
        matches!(&outcome, Outcome::Crashed { message } if message.contains("1000000 moves"))
            || matches!(outcome, Outcome::OutOfMemory { .. }),
        "{outcome:?}"
    );
    let outcome = search_with(
        "enumerateMoves() { return new Array(20000).fill(1); },",
        Duration::from_secs(2),
    );
    assert_eq!(
        outcome,
        Outcome::Crashed {
            message: "enumerateMoves returned 20000 moves; at most 10000".into()
        }
    );
    // Moves its own onPlayerMove chokes on (calling what is not a function): a bug in the
    // game, as it would be in the room.
    let outcome = search_with(
        "enumerateMoves() { return [1, 2]; },",
        Duration::from_secs(2),
    );
    assert!(matches!(outcome, Outcome::Failed { .. }), "{outcome:?}");
    let outcome = search_with(
        "enumerateMoves: () => [{ do: 'end' }, { do: 'end' }], \
         winners() { throw new Error('no idea'); },",
        Duration::from_secs(2),
    );
    assert_eq!(
        outcome,
        Outcome::Crashed {
            message: "winners threw Error: no idea".into()
        }
    );
}

#[test]
fn both_module_formats_compile_and_are_told_apart() {
    let js = js();
    let cjs = js.compile(HOOKS_CJS).unwrap();
    assert_eq!(cjs.format, Format::Commonjs);
    js.check(&cjs).unwrap();
    let esm = js
        .compile("export default { onRoomStart() {}, onPlayerJoin() {}, onPlayerQuit() {}, onPlayerMove() {} };")
        .unwrap();
    assert_eq!(esm.format, Format::Module);
    js.check(&esm).unwrap();
    let named = js
        .compile("export function onRoomStart() {}\nexport function onPlayerJoin() {}\nexport const onPlayerQuit = () => {};\nexport const onPlayerMove = () => {};")
        .unwrap();
    js.check(&named).unwrap();
}

#[test]
fn exports_assigned_one_by_one_count_too() {
    let js = js();
    let compiled = js
        .compile(
            "'use strict';\nexports.onRoomStart = () => ({ state: 1 });\n\
             exports.onPlayerJoin = () => {};\nexports.onPlayerQuit = () => {};\n\
             exports.onPlayerMove = () => {};",
        )
        .unwrap();
    js.check(&compiled).unwrap();
    let args = serde_json::json!([{"state": null}]).to_string();
    assert_eq!(
        js.call(&compiled, Hook::RoomStart, &args).0,
        Outcome::Patch {
            patch: serde_json::json!({"state": 1})
        }
    );
}

/// A bundle the size of a chess game with its rules library inlined, in modern syntax.
#[test]
fn a_large_modern_bundle_loads_and_runs_within_the_limits() {
    let mut source = String::from("'use strict';\nconst rules = {};\n");
    for i in 0..400 {
        source.push_str(&format!(
            "class Piece{i} extends Object {{ #id = {i}; static of(o) {{ return {{ ...o, id: {i} }}; }} \
             moves(b) {{ return b?.squares?.filter((s) => s?.free ?? true).map((s) => s.at) ?? []; }} }}\n\
             rules.p{i} = Object.fromEntries([[\"k{i}\", Piece{i}.of({{ x: {i} }})]]);\n"
        ));
    }
    source.push_str(
        "module.exports = { onRoomStart: () => ({ state: { pieces: Object.keys(rules).length } }), \
         onPlayerJoin() {}, onPlayerQuit() {}, onPlayerMove() {} };",
    );
    assert!(source.len() > 70_000, "{}", source.len());
    let js = js();
    let compiled = js.compile(&source).unwrap();
    js.check(&compiled).unwrap();
    let args = serde_json::json!([{"state": null}]).to_string();
    assert_eq!(
        js.call(&compiled, Hook::RoomStart, &args).0,
        Outcome::Patch {
            patch: serde_json::json!({"state": {"pieces": 400}})
        }
    );
}

#[test]
fn faults_are_told_from_refusals() {
    let js = js();
    let compiled = js
        .compile(&game(
            "{ spin() { for (;;) {} }, oom() { const a = []; for (;;) a.push(new Array(1e5).fill(1)); }, \
             deep() { const f = () => f() + 1; return f(); }, refuse() { throw new RangeError('no'); }, \
             ok(room) { return { state: room.state.n + 1 }; }, cycle() { const o = {}; o.o = o; return o; } }",
        ))
        .unwrap();
    assert_eq!(call(&js, &compiled, "spin"), Outcome::Timeout);
    assert!(matches!(
        call(&js, &compiled, "oom"),
        Outcome::OutOfMemory { .. }
    ));
    assert!(matches!(
        call(&js, &compiled, "deep"),
        Outcome::Crashed { .. }
    ));
    assert_eq!(
        call(&js, &compiled, "refuse"),
        Outcome::Refused {
            reason: "RangeError".into(),
            message: "no".into()
        }
    );
    assert!(matches!(
        call(&js, &compiled, "cycle"),
        Outcome::InvalidResult { .. }
    ));
    // After all that, the same runtime still answers normally.
    assert_eq!(
        call(&js, &compiled, "ok"),
        Outcome::Patch {
            patch: serde_json::json!({"state": 2})
        }
    );
}

#[test]
fn module_state_does_not_survive_a_call() {
    let js = js();
    let compiled = js
        .compile(&game(
            "{ bump() { globalThis.calls = (globalThis.calls || 0) + 1; counter += 1; \
                        return { state: [globalThis.calls, counter] }; } }; let counter = 0",
        ))
        .unwrap();
    for _ in 0..3 {
        assert_eq!(
            call(&js, &compiled, "bump"),
            Outcome::Patch {
                patch: serde_json::json!({"state": [1, 1]})
            }
        );
    }
}

#[test]
fn a_realm_made_between_calls_is_as_fresh_as_one_made_by_the_call() {
    let js = js();
    let compiled = js
        .compile(&game(
            "{ bump() { globalThis.calls = (globalThis.calls || 0) + 1; counter += 1; \
                        Array.prototype.bent = true; console.log('bumped', counter); \
                        return { state: [globalThis.calls, counter, typeof [].bent] }; } }; \
             let counter = 0",
        ))
        .unwrap();
    let args = serde_json::json!([{"id": "p"}, {"do": "bump"}, {"state": null}]).to_string();
    for prepared in [true, true, false, true] {
        if prepared {
            js.prepare();
        }
        let (outcome, logs) = js.call(&compiled, Hook::PlayerMove, &args);
        assert_eq!(
            outcome,
            Outcome::Patch {
                patch: serde_json::json!({"state": [1, 1, "boolean"]})
            }
        );
        let logged: Vec<&str> = logs.iter().map(|line| line.text.as_str()).collect();
        assert_eq!(logged, ["bumped 1"]);
    }
}

#[test]
fn a_call_never_runs_beside_the_last_ones_garbage() {
    let js = js();
    // Each call keeps 8 MiB of the 16 MiB limit on its global object, freed only when its
    // realm is collected: two calls' worth at once would run out of memory. (The first realm
    // to make a native function used to be kept for the life of the runtime.)
    let compiled = js
        .compile(&game(
            "{ hoard() { const kept = []; \
                         for (let i = 0; i < 128; i++) kept.push('x'.repeat(64 << 10)); \
                         globalThis.kept = kept; return { state: kept.length }; } }",
        ))
        .unwrap();
    for prepared in [false, false, true, false, true, true] {
        if prepared {
            js.prepare();
        }
        assert_eq!(
            call(&js, &compiled, "hoard"),
            Outcome::Patch {
                patch: serde_json::json!({"state": 128})
            }
        );
    }
}

#[test]
fn logs_are_kept_per_call_and_capped() {
    let js = js();
    let compiled = js
        .compile(&game(
            "{ chat(room) { room.logger.warn('a', 1, {b: 2}); console.log('c'); return {}; }, \
             flood() { for (let i = 0; i < 100; i++) console.log('x'.repeat(1000)); return {}; } }",
        ))
        .unwrap();
    let args = serde_json::json!([{"id": "p"}, {"do": "chat"}, {"state": null}]).to_string();
    let (_, logs) = js.call(&compiled, Hook::PlayerMove, &args);
    assert_eq!(
        logs,
        [
            LogLine {
                level: LogLevel::Warn,
                text: "a 1 {\"b\":2}".into()
            },
            LogLine {
                level: LogLevel::Info,
                text: "c".into()
            },
        ]
    );
    let args = serde_json::json!([{"id": "p"}, {"do": "flood"}, {"state": null}]).to_string();
    let (_, logs) = js.call(&compiled, Hook::PlayerMove, &args);
    let kept: usize = logs.iter().map(|l| l.text.len()).sum();
    assert!(kept <= MAX_LOG_BYTES + 200, "{kept}");
    assert!(logs.last().unwrap().text.contains("dropped"));
}

#[test]
fn math_random_is_not_replayed_from_the_saved_realm() {
    let js = js();
    let compiled = js
        .compile(&game("{ roll() { return { state: Math.random() }; } }"))
        .unwrap();
    let rolls: std::collections::HashSet<String> = (0..5)
        .map(|_| match call(&js, &compiled, "roll") {
            Outcome::Patch { patch } => patch["state"].to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(rolls.len(), 5);
}

#[test]
fn a_call_that_lets_go_of_what_the_realm_holds_leaves_the_next_call_whole() {
    let js = js();
    let compiled = js
        .compile(&game(
            "{ wreck() { delete Math.random; globalThis.console = null; \
                         for (const k of Object.getOwnPropertyNames(globalThis)) { \
                           try { delete globalThis[k]; } catch (_) {} } \
                         return {}; }, \
               use() { console.log('still here'); return { state: typeof Math.random() }; } }",
        ))
        .unwrap();
    let args = |action: &str| {
        serde_json::json!([{"id": "p"}, {"do": action}, {"state": null}]).to_string()
    };
    for _ in 0..3 {
        let (wrecked, _) = js.call(&compiled, Hook::PlayerMove, &args("wreck"));
        assert!(matches!(wrecked, Outcome::Patch { .. }), "{wrecked:?}");
        js.prepare();
        let (outcome, logs) = js.call(&compiled, Hook::PlayerMove, &args("use"));
        assert_eq!(
            outcome,
            Outcome::Patch {
                patch: serde_json::json!({"state": "number"})
            }
        );
        assert_eq!(logs[0].text, "still here");
    }
}

#[test]
fn the_saved_realms_of_many_games_take_turns() {
    let js = js();
    // More games than a process keeps warm, each with module state of its own.
    let games: Vec<Compiled> = (0..12)
        .map(|i| {
            js.compile(&game(&format!(
                "{{ who() {{ counter += 1; return {{ state: [{i}, counter] }}; }} }}; let counter = 0"
            )))
            .unwrap()
        })
        .collect();
    for round in 0..3 {
        for (i, compiled) in games.iter().enumerate() {
            assert_eq!(
                call(&js, compiled, "who"),
                Outcome::Patch {
                    patch: serde_json::json!({"state": [i, 1]})
                },
                "round {round}"
            );
            if i % 2 == 0 {
                js.prepare();
            }
        }
    }
    // A module whose top level throws is reported, and leaves the others as they were.
    let broken = js
        .compile("throw new Error('no table'); module.exports = {};")
        .unwrap();
    let (outcome, _) = js.call(&broken, Hook::RoomStart, "[{\"state\": null}]");
    assert!(
        matches!(&outcome, Outcome::Crashed { message } if message.contains("no table")),
        "{outcome:?}"
    );
    assert_eq!(
        call(&js, &games[3], "who"),
        Outcome::Patch {
            patch: serde_json::json!({"state": [3, 1]})
        }
    );
}
