//! How the engine reports what goes wrong in a game's code: a source that does not parse names
//! its line (the opening line of a bracket left open), and in a hook, an error the game throws is
//! its refusal while one the engine raises is a bug.

use super::tests::{call, game, js};
use super::*;

#[test]
fn syntax_errors_name_their_line_in_either_format() {
    let js = js();
    let script = js.compile("'use strict';\n\nconst = 4;").err().unwrap();
    assert_eq!(script.line, Some(3), "{script:?}");
    let module = js
        .compile("export default {};\n\nexport const = 1;")
        .err()
        .unwrap();
    assert_eq!(module.line, Some(3), "{module:?}");
}

/// An error the game throws is its refusal, whatever its class; one the engine raises in the
/// game's code is a bug, with the line it was raised at.
#[test]
fn bugs_in_a_hook_are_told_from_what_it_throws() {
    let js = js();
    let compiled = js
        .compile(&game(
            "{\n\
             undefinedProperty(p, m) { return m.choice.toLowerCase(); },\n\
             undefinedName() { return notDefinedAnywhere + 1; },\n\
             notAFunction(room) { return room.state.n(); },\n\
             badLength() { return new Array(-1); },\n\
             thrownType() { throw new TypeError('pick a cell'); },\n\
             calledType() { throw TypeError('pick a cell'); },\n\
             subclass() { class Nope extends RangeError {} throw new Nope('no'); },\n\
             coded() { const e = new Error('no'); e.code = 'not_your_turn'; throw e; },\n\
             }",
        ))
        .unwrap();
    let failed = |action: &str| match call(&js, &compiled, action) {
        Outcome::Failed { error, line } => (error, line),
        other => panic!("{action}: {other:?}"),
    };
    let (error, line) = failed("undefinedProperty");
    assert!(error.starts_with("TypeError: "), "{error}");
    assert!(line.is_some(), "{error}");
    assert!(failed("undefinedName").0.starts_with("ReferenceError: "));
    assert!(failed("notAFunction").0.starts_with("TypeError: "));
    assert!(failed("badLength").0.starts_with("RangeError: "));
    for (action, reason) in [
        ("thrownType", "TypeError"),
        ("calledType", "TypeError"),
        ("subclass", "RangeError"),
        ("coded", "not_your_turn"),
    ] {
        match call(&js, &compiled, action) {
            Outcome::Refused { reason: got, .. } => assert_eq!(got, reason, "{action}"),
            other => panic!("{action}: {other:?}"),
        }
    }
    // The line is the one in the game's own source.
    let source =
        "module.exports = { onRoomStart: () => ({}), onPlayerJoin() {}, onPlayerQuit() {},\n\
                  onPlayerMove(p, move) {\n\
                  return { state: move.choice.toLowerCase() };\n\
                  } };";
    let compiled = js.compile(source).unwrap();
    match call(&js, &compiled, "x") {
        Outcome::Failed { line, .. } => assert_eq!(line, Some(3)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_block_left_open_is_named_where_it_begins() {
    let js = js();
    // The `if` on line 3 is never closed: the function's `}` closes it, and the parser reads
    // on to the end of the file, where it misses the function's.
    let source = "'use strict';\n\
                  function score(x) {\n\
                  \x20 if (x) {\n\
                  \x20   return 1;\n\
                  \x20 return 2;\n\
                  }\n\
                  module.exports = { onRoomStart() { return {}; }, onPlayerJoin() {},\n\
                  \x20 onPlayerQuit() {}, onPlayerMove() { return { state: score(1) }; } };\n";
    let error = js.compile(source).err().unwrap();
    assert_eq!(error.line, Some(3), "{error:?}");
    assert!(error.message.contains("is never closed"), "{error:?}");
    assert!(
        !error.message.contains("(line"),
        "the line is given once: {error:?}"
    );
}
