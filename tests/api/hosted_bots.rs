//! Computer opponents for an uploaded game that exports `enumerateMoves`: each level seated
//! and playing through the same path as anyone, from the game's own hooks.

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::SeedableRng;
use serde_json::{json, Value};

use crate::databases::on_postgres;
use crate::helpers::{example, unique, TestApp, TestPlayer, BOT_SEED};

/// The first empty cell of a tic-tac-toe board, as a move.
fn first_empty(room: &Value) -> Value {
    let cells: Vec<&Value> = room["state"]["board"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row.as_array().unwrap())
        .collect();
    let cell = cells.iter().position(|c| c.is_null()).unwrap();
    json!({"x": cell / 3, "y": cell % 3})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uploaded_game_with_enumerate_moves_gets_bots_at_every_level() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        // A small budget: these games show that bots play, not how well.
        config.bot_search.bot_hard_playouts = 300;
        config.bot_search.bot_medium_playouts = 50;
    })
    .await;
    let game = "js-tictactoe-bots";
    app.publish(game, &example("tictactoe.js")).await;
    let listing = app.get_json(&format!("/games/{game}")).await;
    assert_eq!(listing["bots"], true, "{listing}");
    let player = app.register(&unique("human")).await;
    for level in ["easy", "medium", "hard"] {
        let body = json!({"game": game, "bot": level, "botPlaysFirst": true});
        let mut room = app.create_room(&player, body).await;
        assert_eq!(
            room["state"]["moveCount"], 1,
            "the {level} bot opened: {room}"
        );
        let id = room["id"].as_str().unwrap().to_owned();
        while room["finished"] == false {
            room = app.play_ok(&player, &id, first_empty(&room)).await;
        }
        let winner = room["state"]["winner"]["username"]
            .as_str()
            .unwrap_or("nobody");
        if level == "hard" {
            assert_ne!(
                winner, player.username,
                "the hard bot never loses to this player"
            );
        }
        let events = app.events(&id).await;
        let bot_moves = events
            .iter()
            .filter(|e| e["kind"] == "move" && e["player"]["username"] != player.username.as_str())
            .count();
        assert!(
            bot_moves >= 2,
            "{level}: the bot moved, each move a version of its own"
        );
    }
}

/// The test budgets, in playouts: the smallest that pass with room to spare under the fixed
/// seed (the defaults are 200 and 2,000).
const HARD_TICTACTOE: u32 = 1000;
const HARD_CONNECT_FOUR: u32 = 100;
const MEDIUM_CONNECT_FOUR: u32 = 30;

/// A server whose bots search with these playout budgets and no time cap that matters, so
/// that the playout counts alone (and the bot seed) decide every move.
async fn server(medium: u32, hard: u32) -> TestApp {
    TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.bot_search.bot_medium_playouts = medium;
        config.bot_search.bot_hard_playouts = hard;
        config.bot_search.bot_search_ms = 120_000;
    })
    .await
}

/// The example `file` published under `count` ids. Two bots play the same game every time
/// from the same opening (each decision is seeded by the bot seed and the position, game id
/// included), so games between bots differ by the game's id.
async fn variants(app: &TestApp, file: &str, count: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for n in 0..count {
        let id = format!("{}-{n}", file.trim_end_matches(".js"));
        app.publish(&id, &example(file)).await;
        ids.push(id);
    }
    ids
}

/// `games` games of the example `file` between its hard bot and a random player (seeded),
/// the bot opening every other one: the bot's results.
async fn hard_bot_against_random(app: &TestApp, file: &str, games: usize) -> Vec<Result> {
    let game = format!("js-{}", file.trim_end_matches(".js"));
    app.publish(&game, &example(file)).await;
    let human = app.register(&unique("random")).await;
    let mut rng = StdRng::seed_from_u64(BOT_SEED);
    let mut results = Vec::new();
    for n in 0..games {
        results.push(bot_against_random(app, &human, &game, "hard", n % 2 == 0, &mut rng).await);
    }
    results
}

// The strength tests play many games; how strong a bot is does not depend on the database,
// so they run once, on SQLite. Budgets are small (the figures at full strength are in
// docs/benchmarks.md); the seeds are fixed.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hard_tictactoe_bot_never_loses_to_a_random_player_and_draws_the_builtin_one() {
    if on_postgres() {
        return;
    }
    let app = server(50, HARD_TICTACTOE).await;
    let results = hard_bot_against_random(&app, "tictactoe.js", 50).await;
    assert!(!results.contains(&Result::Lost), "{results:?}");
    assert!(
        results.iter().filter(|r| **r == Result::Won).count() >= 35,
        "{results:?}"
    );

    let relay = app.register(&unique("relay")).await;
    let mut draws = 0;
    for (game, id) in variants(&app, "tictactoe.js", 10).await.iter().enumerate() {
        let result = bot_against_bot(
            &app,
            &relay,
            (id, "hard"),
            ("tictactoe", "hard"),
            game % 2 == 0,
        )
        .await;
        assert_ne!(
            result,
            Result::Lost,
            "game {game}: the built-in hard bot won"
        );
        draws += usize::from(result == Result::Drawn);
    }
    assert!(
        draws >= 9,
        "{draws} draws in 10 against the built-in hard bot"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hard_connect_four_bot_beats_a_random_player() {
    if on_postgres() {
        return;
    }
    let app = server(20, HARD_CONNECT_FOUR).await;
    let results = hard_bot_against_random(&app, "connect-four.js", 100).await;
    let won = results.iter().filter(|r| **r == Result::Won).count();
    assert!(won >= 95, "the hard bot won {won} of 100: {results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn medium_beats_easy_more_often_than_not() {
    if on_postgres() {
        return;
    }
    let app = server(MEDIUM_CONNECT_FOUR, 100).await;
    let relay = app.register(&unique("relay")).await;
    let mut results = Vec::new();
    for (game, id) in variants(&app, "connect-four.js", 20)
        .await
        .iter()
        .enumerate()
    {
        let result =
            bot_against_bot(&app, &relay, (id, "medium"), (id, "easy"), game % 2 == 0).await;
        results.push(result);
    }
    let won = results.iter().filter(|r| **r == Result::Won).count();
    let lost = results.iter().filter(|r| **r == Result::Lost).count();
    assert!(
        won > results.len() / 2 && won > lost,
        "medium won {won}, lost {lost}: {results:?}"
    );
}

/// How a game between two players ended, from the first one's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Result {
    Won,
    Lost,
    Drawn,
}

/// The username of a finished room's winner (`state.winner`, a player, in these games).
fn winner(room: &Value) -> Option<&str> {
    room["state"]["winner"]["username"].as_str()
}

/// A uniformly random legal move in a room of the example tic-tac-toe or Connect Four.
fn random_move(room: &Value, rng: &mut StdRng) -> Value {
    let board = room["state"]["board"].as_array().unwrap();
    let moves: Vec<Value> = if board.len() == 3 {
        let cells = board.iter().flat_map(|row| row.as_array().unwrap());
        cells
            .enumerate()
            .filter(|(_, mark)| mark.is_null())
            .map(|(cell, _)| json!({"x": cell / 3, "y": cell % 3}))
            .collect()
    } else {
        let top = board.last().unwrap().as_array().unwrap();
        (0..top.len())
            .filter(|&column| top[column].is_null())
            .map(|column| json!({"column": column}))
            .collect()
    };
    moves.choose(rng).unwrap().clone()
}

/// A game of `game` between its bot at `level` and a random player, the bot first when
/// `bot_first`: the bot's result.
async fn bot_against_random(
    app: &TestApp,
    human: &TestPlayer,
    game: &str,
    level: &str,
    bot_first: bool,
    rng: &mut StdRng,
) -> Result {
    let body = json!({"game": game, "bot": level, "botPlaysFirst": bot_first});
    let mut room = app.create_room(human, body).await;
    let id = room["id"].as_str().unwrap().to_owned();
    while room["finished"] == false {
        let mv = random_move(&room, rng);
        room = app.play_ok(human, &id, mv).await;
    }
    match winner(&room) {
        None => Result::Drawn,
        Some(name) if name == human.username => Result::Lost,
        Some(_) => Result::Won,
    }
}

/// The last move the bot made in a room (its own version in the history).
async fn last_bot_move(app: &TestApp, room: &str, relay: &TestPlayer) -> Value {
    let events = app.events(room).await;
    let bot_move = events
        .iter()
        .rev()
        .find(|e| e["kind"] == "move" && e["player"]["username"] != relay.username.as_str());
    bot_move.expect("the bot moved")["move"].clone()
}

/// A game between two bots, each seated in a room of its own (`(game, level)`), with `relay`
/// playing each one's moves in the other's room; the first bot opens when `first_opens`.
/// The first bot's result.
async fn bot_against_bot(
    app: &TestApp,
    relay: &TestPlayer,
    first: (&str, &str),
    second: (&str, &str),
    first_opens: bool,
) -> Result {
    let open = |(game, level): (&str, &str), plays_first: bool| json!({"game": game, "bot": level, "botPlaysFirst": plays_first});
    let a = app.create_room(relay, open(first, first_opens)).await;
    let b = app.create_room(relay, open(second, !first_opens)).await;
    let rooms = [a["id"].as_str().unwrap(), b["id"].as_str().unwrap()];
    // The room whose bot moved last (the opener's): its move is carried to the other room,
    // where the other bot answers it.
    let mut mover = if first_opens { 0 } else { 1 };
    loop {
        let mv = last_bot_move(app, rooms[mover], relay).await;
        let other = 1 - mover;
        let room = app.play_ok(relay, rooms[other], mv).await;
        if room["finished"] == true {
            let result = match winner(&room) {
                None => Result::Drawn,
                // The relay stood for the bot of `mover`'s room.
                Some(name) if name == relay.username => [Result::Won, Result::Lost][mover],
                Some(_) => [Result::Won, Result::Lost][other],
            };
            return result;
        }
        mover = other;
    }
}

/// Two players take turns playing `{"n": 1}` or `{"n": 2}`; the sixth move wins. `HOSTILE`
/// is replaced by exports that override the well-behaved ones.
const TAKE_TURNS: &str = r#"
const toMove = (room, player) => !room.finished && room.players.length === 2
  && room.players[room.state.turn].id === player.id;
module.exports = {
  onRoomStart: () => ({ state: { turn: 0, moves: 0, winner: null }, joinable: true }),
  onPlayerJoin: (player, room) => (room.players.length === 2 ? { joinable: false } : {}),
  onPlayerQuit: () => ({ finished: true }),
  onPlayerMove(player, move, room) {
    const { players, state } = room;
    if (players[state.turn].id !== player.id) throw new Error('not your turn');
    if (move.n !== 1 && move.n !== 2) throw new Error('a move is {"n": 1 or 2}');
    const moves = state.moves + 1;
    if (moves === 6) return { state: { ...state, moves, winner: player.id }, finished: true };
    return { state: { ...state, moves, turn: 1 - state.turn } };
  },
  enumerateMoves: (room, player) => (toMove(room, player) ? [{ n: 1 }, { n: 2 }] : []),
  HOSTILE
};
"#;

/// Each hostile export (misbehaving when asked for the player to move, so only on the bot's
/// turn), the level whose bot meets it, and the codes its fault may have.
const HOSTILE: [(&str, &str, &str, &[&str]); 5] = [
    (
        "loops",
        "hard",
        "enumerateMoves(room, player) { while (toMove(room, player)); return []; },",
        &["hook_timeout"],
    ),
    (
        "floods",
        "medium",
        "enumerateMoves: (room, player) => (toMove(room, player) \
         ? Array.from({ length: 1e6 }, (_, n) => ({ n })) : []),",
        &["hook_crashed", "hook_out_of_memory"],
    ),
    (
        "refuses-easy",
        "easy",
        "enumerateMoves: (room, player) => (toMove(room, player) ? [{ n: 3 }, { n: 4 }] : []),",
        &["game_refused"],
    ),
    (
        "refuses-hard",
        "hard",
        "enumerateMoves: (room, player) => (toMove(room, player) ? [{ n: 3 }, { n: 4 }] : []),",
        &["game_refused"],
    ),
    (
        "throws",
        "hard",
        "winners() { throw new Error('who knows'); },",
        &["hook_crashed"],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_bot_fails_once_with_a_hook_fault_and_leaves_the_room_playable() {
    let app = TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
        config.bot_search.bot_search_ms = 300;
    })
    .await;
    let human = app.register(&unique("human")).await;
    for (name, level, exports, codes) in HOSTILE {
        let game = format!("bot-{name}");
        app.publish(&game, &TAKE_TURNS.replace("HOSTILE", exports))
            .await;
        let room = app
            .create_room(&human, json!({"game": game, "bot": level}))
            .await;
        let id = room["id"].as_str().unwrap();
        // The human moves; the bot's turn comes, and its move fails.
        let after = app.play_ok(&human, id, json!({"n": 1})).await;
        assert_eq!(after["state"]["moves"], 1, "{name}: the bot did not move");
        assert_eq!(after["version"], room["version"].as_i64().unwrap() + 1);
        let faults =
            |code: &str| format!("turnhouse_bot_faults_total{{game=\"{game}\",code=\"{code}\"}}");
        let mut counted = Vec::new();
        for code in codes {
            counted.extend(app.metric(&faults(code)).await);
        }
        assert_eq!(counted, [1.0], "{name}: one fault, with a hook fault code");
        // Nothing retries: a while later, the room and the count are as they were.
        tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
        assert_eq!(app.room(id).await["version"], after["version"], "{name}");
        let mut again = Vec::new();
        for code in codes {
            again.extend(app.metric(&faults(code)).await);
        }
        assert_eq!(again, counted, "{name}: logged once");
        // The human can still leave (the game's own onPlayerQuit ends the room).
        let quit = app.quit(&human, id).await;
        assert_eq!(quit.status(), reqwest::StatusCode::OK, "{name}");
        assert_eq!(app.room(id).await["finished"], true, "{name}");
    }
}

/// While a bot searches for as long as it may, other rooms (hosted and built-in) play at
/// their usual pace: every one of their moves is answered before the bot's search ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_rooms_keep_their_pace_while_a_bot_thinks() {
    let app = std::sync::Arc::new(
        TestApp::spawn_configured(turnhouse::games::builtin(), |config| {
            config.bot_search.bot_search_ms = 3000;
        })
        .await,
    );
    let game = "bot-thinks-long";
    app.publish(game, &TAKE_TURNS.replace("HOSTILE", HOSTILE[0].2))
        .await;
    app.publish("turns", &TAKE_TURNS.replace("HOSTILE", ""))
        .await;
    let human = app.register(&unique("human")).await;
    let room = app
        .create_room(&human, json!({"game": game, "bot": "hard"}))
        .await;
    let thinking = {
        let (app, human) = (app.clone(), human.clone());
        let id = room["id"].as_str().unwrap().to_owned();
        tokio::spawn(async move { app.play_ok(&human, &id, json!({"n": 1})).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let mut took = Vec::new();
    for _ in 0..3 {
        let (id, a, b) = app.started_game("turns").await;
        for turn in 0..6 {
            let started = std::time::Instant::now();
            app.play_ok([&a, &b][turn % 2], &id, json!({"n": 2})).await;
            took.push(started.elapsed());
        }
        let (id, x, o) = app.started_tictactoe().await;
        for (turn, cell) in [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]
            .into_iter()
            .enumerate()
        {
            let started = std::time::Instant::now();
            let mv = json!({"x": cell.0, "y": cell.1});
            app.play_ok([&x, &o][turn % 2], &id, mv).await;
            took.push(started.elapsed());
        }
    }
    assert!(
        !thinking.is_finished(),
        "every other move ({} of them, the slowest {:?}) was answered while the bot searched",
        took.len(),
        took.iter().max()
    );
    let after = thinking.await.unwrap();
    assert_eq!(
        after["state"]["moves"], 1,
        "the bot's search failed in the end"
    );
}
