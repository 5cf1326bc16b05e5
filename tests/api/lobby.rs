//! The lobby: quick play, private rooms, listing, and playing again.

use std::collections::HashSet;

use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_problem, unique, TestApp, TestPlayer};

async fn quickplay(app: &TestApp, player: &TestPlayer, game: &str) -> (StatusCode, Value) {
    let response = app
        .post(
            "/rooms/quickplay",
            Some(&player.token),
            Some(&json!({"game": game})),
        )
        .await;
    (response.status(), response.json().await.unwrap())
}

#[tokio::test]
async fn quick_play_opens_a_room_then_fills_it() {
    let app = TestApp::spawn().await;
    let (a, b, c) = (
        app.register(&unique("a")).await,
        app.register(&unique("b")).await,
        app.register(&unique("c")).await,
    );
    let (status, first) = quickplay(&app, &a, "tictactoe").await;
    assert_eq!(status, StatusCode::CREATED);
    // Quick play never puts you in a room you are already in.
    let (status, again) = quickplay(&app, &a, "tictactoe").await;
    assert_eq!(status, StatusCode::CREATED);
    assert_ne!(again["id"], first["id"]);

    let (status, joined) = quickplay(&app, &b, "tictactoe").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(joined["id"], first["id"], "the oldest open room first");
    assert_eq!(joined["state"]["status"], "inGame");
    let (status, joined) = quickplay(&app, &c, "tictactoe").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(joined["id"], again["id"]);

    let unknown = app
        .post(
            "/rooms/quickplay",
            Some(&a.token),
            Some(&json!({"game": "go"})),
        )
        .await;
    assert_problem(unknown, StatusCode::NOT_FOUND, "game_not_found").await;
    let anonymous = app
        .post(
            "/rooms/quickplay",
            None,
            Some(&json!({"game": "tictactoe"})),
        )
        .await;
    assert_problem(anonymous, StatusCode::UNAUTHORIZED, "missing_token").await;
}

/// Pairs of players quick-playing at the same moment always meet in one room.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn simultaneous_quick_players_share_one_room() {
    let app = TestApp::spawn().await;
    for _ in 0..15 {
        let pair = [
            app.register(&unique("q")).await,
            app.register(&unique("q")).await,
        ];
        let results = join_all(pair.iter().map(|p| quickplay(&app, p, "tictactoe3d"))).await;
        let statuses: HashSet<StatusCode> = results.iter().map(|(s, _)| *s).collect();
        assert_eq!(
            statuses,
            HashSet::from([StatusCode::CREATED, StatusCode::OK]),
            "one opens, one joins"
        );
        assert_eq!(results[0].1["id"], results[1].1["id"]);
        let room = app.room(results[0].1["id"].as_str().unwrap()).await;
        assert_eq!(room["players"].as_array().unwrap().len(), 2);
        assert_eq!(room["state"]["status"], "inGame");
    }
    let open = app.get_json("/rooms?joinable=true").await;
    assert_eq!(
        open["rooms"],
        json!([]),
        "no half-empty room was left behind"
    );
}

#[tokio::test]
async fn private_rooms_are_unlisted_but_open_to_anyone_with_the_id() {
    let app = TestApp::spawn().await;
    let owner = app.register(&unique("owner")).await;
    let private = app
        .create_room(&owner, json!({"game": "tictactoe", "private": true}))
        .await;
    let id = private["id"].as_str().unwrap();
    assert_eq!(private["private"], true);
    for query in [
        "",
        "?game=tictactoe",
        "?joinable=true",
        &format!("?player={}", owner.id),
    ] {
        assert_eq!(
            app.get_json(&format!("/rooms{query}")).await["rooms"],
            json!([]),
            "listed by {query}"
        );
    }
    // Quick play does not match it.
    let stranger = app.register(&unique("stranger")).await;
    let (status, room) = quickplay(&app, &stranger, "tictactoe").await;
    assert_eq!(status, StatusCode::CREATED);
    assert_ne!(room["id"], id);
    // Anyone with the id watches, and joins while it is open.
    assert_eq!(app.room(id).await["id"], id);
    let friend = app.register(&unique("friend")).await;
    assert_eq!(app.join(&friend, id).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_players_own_listing_includes_their_private_rooms() {
    let app = TestApp::spawn().await;
    let me = app.register(&unique("me")).await;
    let other = app.register(&unique("other")).await;
    let public = app.create_room(&me, json!({"game": "tictactoe"})).await;
    let private = app
        .create_room(&me, json!({"game": "tictactoe3d", "private": true}))
        .await;
    app.create_room(&other, json!({"game": "tictactoe"})).await;

    let path = format!("/rooms?player={}", me.id);
    let mine: Value = app
        .request(reqwest::Method::GET, &path, Some(&me.token), None)
        .await
        .json()
        .await
        .unwrap();
    let ids: Vec<&Value> = mine["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["id"])
        .collect();
    assert_eq!(
        ids,
        [&private["id"], &public["id"]],
        "newest first, private included"
    );
    let seen_by_other: Value = app
        .request(reqwest::Method::GET, &path, Some(&other.token), None)
        .await
        .json()
        .await
        .unwrap();
    let ids: Vec<&Value> = seen_by_other["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["id"])
        .collect();
    assert_eq!(ids, [&public["id"]], "others see only the public ones");
    let anonymous = app.get_json(&path).await;
    assert_eq!(anonymous["rooms"].as_array().unwrap().len(), 1);
}

/// A player's rooms filtered by game, joinable and finished follow each room as it opens,
/// fills, finishes and starts again.
#[tokio::test]
async fn a_players_rooms_filter_by_what_the_rooms_are_now() {
    let app = TestApp::spawn().await;
    let (finished, x, o) = app.started_tictactoe().await;
    for (player, row, col) in [(&x, 0, 0), (&o, 1, 0), (&x, 0, 1), (&o, 1, 1), (&x, 0, 2)] {
        app.play_ok(player, &finished, json!({"x": row, "y": col}))
            .await;
    }
    let in_play = app.create_room(&x, json!({"game": "tictactoe"})).await;
    let in_play = in_play["id"].as_str().unwrap().to_owned();
    app.join(&o, &in_play).await;
    let open = app.create_room(&x, json!({"game": "tictactoe3d"})).await;
    let open = open["id"].as_str().unwrap().to_owned();

    let listed = |filter: &'static str| {
        let path = format!("/rooms?player={}{filter}", x.id);
        let app = &app;
        async move {
            let page = app.get_json(&path).await;
            page["rooms"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        listed("").await,
        [open.as_str(), in_play.as_str(), finished.as_str()]
    );
    assert_eq!(listed("&joinable=true").await, [open.as_str()]);
    assert_eq!(listed("&finished=true").await, [finished.as_str()]);
    assert_eq!(
        listed("&finished=false").await,
        [open.as_str(), in_play.as_str()]
    );
    assert_eq!(
        listed("&game=tictactoe&finished=false").await,
        [in_play.as_str()]
    );
    assert_eq!(
        listed("&game=tictactoe&joinable=false&finished=true").await,
        [finished.as_str()]
    );

    // Play again: the finished room is open again (until O sits back down).
    let reset = app
        .post(&format!("/rooms/{finished}/reset"), Some(&x.token), None)
        .await;
    assert_eq!(reset.status(), StatusCode::OK);
    assert_eq!(listed("&finished=true").await, Vec::<&str>::new());
    assert_eq!(
        listed("&joinable=true").await,
        [open.as_str(), finished.as_str()]
    );
}

#[tokio::test]
async fn pages_of_rooms_follow_the_cursor_without_repeats() {
    let app = TestApp::spawn().await;
    let p = app.register(&unique("pager")).await;
    let mut created = Vec::new();
    for _ in 0..5 {
        created.push(app.create_room(&p, json!({"game": "tictactoe"})).await["id"].clone());
    }
    created.reverse();
    let seen: Vec<Value> = every_page(&app, "/rooms?limit=2")
        .await
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    assert_eq!(seen, created);
}

/// A tic-tac-toe room of `x`'s: left open, or with `o` seated, or played on until X wins.
async fn room_in_stage(app: &TestApp, x: &TestPlayer, o: &TestPlayer, stage: Stage) -> String {
    let room = app.create_room(x, json!({"game": "tictactoe"})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    if stage != Stage::Open {
        app.join(o, &room).await;
    }
    if stage == Stage::Finished {
        for (player, row, col) in [(x, 0, 0), (o, 1, 0), (x, 0, 1), (o, 1, 1), (x, 0, 2)] {
            app.play_ok(player, &room, json!({"x": row, "y": col}))
                .await;
        }
    }
    room
}

#[derive(Clone, Copy, PartialEq)]
enum Stage {
    Open,
    InPlay,
    Finished,
}

/// Every room of the listing at `first` (a path with `limit`), page after page by its cursor.
async fn every_page(app: &TestApp, first: &str) -> Vec<Value> {
    let (mut rooms, mut path) = (Vec::new(), first.to_owned());
    loop {
        let page = app.get_json(&path).await;
        rooms.extend(page["rooms"].as_array().unwrap().iter().cloned());
        match page["nextCursor"].as_str() {
            Some(cursor) => path = format!("{first}&cursor={cursor}"),
            None => return rooms,
        }
    }
}

/// The lobby is read as one range for each value of each flag a listing leaves out (open or
/// not, finished or not), merged: pages of rooms in every stage, under every filter set, follow
/// the cursor newest first, without repeats or gaps.
#[tokio::test]
async fn pages_of_the_lobby_merge_open_in_play_and_finished_rooms() {
    let app = TestApp::spawn().await;
    let x = app.register(&unique("lobbyx")).await;
    let o = app.register(&unique("lobbyo")).await;
    // (id, joinable, finished), newest first once reversed.
    let mut rooms = Vec::new();
    for n in 0..8 {
        // Finished, in play, open; again and again.
        let stage = [Stage::Finished, Stage::InPlay, Stage::Open][n % 3];
        let room = room_in_stage(&app, &x, &o, stage).await;
        rooms.push((room, stage == Stage::Open, stage == Stage::Finished));
    }
    rooms.reverse();
    for filters in [
        "game=tictactoe",
        "joinable=false",
        "joinable=true",
        "finished=false",
        "finished=true",
        "joinable=false&finished=false",
        "game=tictactoe&joinable=false",
        "game=tictactoe&finished=false",
    ] {
        let admits = |joinable: bool, finished: bool| {
            filters.split('&').all(|filter| match filter {
                "joinable=false" => !joinable,
                "joinable=true" => joinable,
                "finished=false" => !finished,
                "finished=true" => finished,
                _ => true,
            })
        };
        let expected: Vec<&str> = rooms
            .iter()
            .filter(|(_, joinable, finished)| admits(*joinable, *finished))
            .map(|(id, _, _)| id.as_str())
            .collect();
        let listed = every_page(&app, &format!("/rooms?{filters}&limit=2")).await;
        for room in &listed {
            let (joinable, finished) = (room["joinable"].as_bool(), room["finished"].as_bool());
            assert!(
                admits(joinable.unwrap(), finished.unwrap()),
                "{filters}: {room}"
            );
        }
        let seen: Vec<&str> = listed.iter().map(|r| r["id"].as_str().unwrap()).collect();
        assert_eq!(seen, expected, "{filters}");
    }
}

/// A player's rooms whatever their end and game are read as a range for each end and game,
/// merged: pages of them follow the cursor newest first, without repeats or gaps, and so do
/// those of one game.
#[tokio::test]
async fn pages_of_a_players_rooms_merge_their_ends_and_games() {
    let app = TestApp::spawn().await;
    let x = app.register(&unique("merged")).await;
    let o = app.register(&unique("opponent")).await;
    // (id, game, finished), newest first once reversed.
    let mut created = Vec::new();
    for n in 0..9 {
        // Finished, finished, open, open of another game; again and again.
        let room = match n % 4 {
            3 => {
                let room = app.create_room(&x, json!({"game": "tictactoe3d"})).await;
                (
                    room["id"].as_str().unwrap().to_owned(),
                    "tictactoe3d",
                    false,
                )
            }
            stage => {
                let stage = [Stage::Finished, Stage::Finished, Stage::Open][stage];
                let room = room_in_stage(&app, &x, &o, stage).await;
                (room, "tictactoe", stage == Stage::Finished)
            }
        };
        created.push(room);
    }
    created.reverse();
    for game in [None, Some("tictactoe"), Some("tictactoe3d")] {
        let filter = game.map_or(String::new(), |game| format!("&game={game}"));
        let path = format!("/rooms?player={}&limit=2{filter}", x.id);
        let listed = every_page(&app, &path).await;
        let seen: Vec<(&str, &str, bool)> = listed
            .iter()
            .map(|r| {
                let id = r["id"].as_str().unwrap();
                (
                    id,
                    r["game"].as_str().unwrap(),
                    r["finished"].as_bool().unwrap(),
                )
            })
            .collect();
        let expected: Vec<(&str, &str, bool)> = created
            .iter()
            .filter(|(_, g, _)| game.is_none_or(|game| game == *g))
            .map(|(id, g, finished)| (id.as_str(), *g, *finished))
            .collect();
        assert_eq!(seen, expected, "{game:?}");
    }
    let ends: Vec<bool> = created.iter().map(|room| room.2).collect();
    assert_eq!(
        ends,
        [true, false, false, true, true, false, false, true, true],
        "both ends and both games, in one order"
    );
}

#[tokio::test]
async fn play_again_starts_a_fresh_game_in_the_same_room() {
    let app = TestApp::spawn().await;
    let (room, x, o) = app.started_tictactoe().await;
    let early = app
        .post(&format!("/rooms/{room}/reset"), Some(&x.token), None)
        .await;
    assert_problem(early, StatusCode::CONFLICT, "room_not_finished").await;
    for (turn, (r, c)) in [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]
        .into_iter()
        .enumerate()
    {
        let player = if turn % 2 == 0 { &x } else { &o };
        app.play_ok(player, &room, json!({"x": r, "y": c})).await;
    }
    let watcher = app.register(&unique("watcher")).await;
    let stranger = app
        .post(&format!("/rooms/{room}/reset"), Some(&watcher.token), None)
        .await;
    assert_problem(stranger, StatusCode::FORBIDDEN, "not_a_player").await;

    let response = app
        .post(&format!("/rooms/{room}/reset"), Some(&o.token), None)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let fresh: Value = response.json().await.unwrap();
    assert_eq!(
        fresh["version"], 10,
        "8 before, then onRoomStart and the caller's join"
    );
    assert_eq!(fresh["finished"], false);
    assert_eq!(fresh["joinable"], true);
    assert_eq!(fresh["state"]["status"], "preGame");
    assert_eq!(fresh["state"]["moveCount"], 0);
    assert_eq!(
        fresh["players"],
        json!([{"id": o.id, "username": o.username}])
    );
    assert_eq!(
        fresh["inactivePlayers"],
        json!([{"id": x.id, "username": x.username}])
    );

    let events = app.events(&room).await;
    assert_eq!(events.len(), 10, "the first game's history is kept");
    assert_eq!(events[8]["kind"], "reset");
    assert_eq!(events[9]["kind"], "join");
    // The old opponent can take the seat again, and the new game starts.
    let rejoined: Value = app.join(&x, &room).await.json().await.unwrap();
    assert_eq!(rejoined["state"]["status"], "inGame");
    assert_eq!(rejoined["inactivePlayers"], json!([]));
}

#[tokio::test]
async fn play_again_against_a_bot_reseats_it() {
    let app = TestApp::spawn().await;
    let human = app.register(&unique("human")).await;
    let room = app
        .create_room(&human, json!({"game": "tictactoe", "bot": "medium"}))
        .await;
    let id = room["id"].as_str().unwrap().to_owned();
    // Forfeit is a quit; a quit from the finished room only makes the player inactive.
    let forfeited: Value = app.quit(&human, &id).await.json().await.unwrap();
    assert_eq!(forfeited["state"]["winner"]["username"], "medium bot");
    let reset = app
        .post(&format!("/rooms/{id}/reset"), Some(&human.token), None)
        .await;
    assert_problem(reset, StatusCode::FORBIDDEN, "not_a_player").await;

    let room = app
        .create_room(&human, json!({"game": "tictactoe", "bot": "medium"}))
        .await;
    let id = room["id"].as_str().unwrap().to_owned();
    let mut last = room;
    while last["finished"] == false {
        let board = &last["state"]["board"];
        let cell = (0..9).find(|c| board[c / 3][c % 3].is_null()).unwrap();
        last = app
            .play_ok(&human, &id, json!({"x": cell / 3, "y": cell % 3}))
            .await;
    }
    let fresh: Value = app
        .post(&format!("/rooms/{id}/reset"), Some(&human.token), None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        fresh["state"]["status"], "inGame",
        "the bot took its seat again"
    );
    assert_eq!(fresh["players"][0]["id"], human.id.as_str());
    assert_eq!(fresh["players"][1]["username"], "medium bot");
    let after_quit: Value = app.quit(&human, &id).await.json().await.unwrap();
    assert_eq!(after_quit["finished"], true);
    let version = after_quit["version"].as_i64().unwrap();
    let again: Value = app.quit(&human, &id).await.json().await.unwrap();
    assert_eq!(again["code"], "not_a_player");
    assert_eq!(app.room(&id).await["version"], version);
}
