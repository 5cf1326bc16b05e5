//! Several servers on one PostgreSQL database, as a scaled-out deployment runs them: quick play
//! across servers, live updates across servers (and across a lost listening connection), and
//! three server binaries under load, racing on single rooms, with one killed mid-load. These
//! run in the PostgreSQL pass of `scripts/test` only.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{json, Value};
use sqlx::{Connection, Executor};

use crate::client::Api;
use crate::databases::{fresh_postgres, on_postgres, postgres_url};
use crate::faults::upload_ledger;
use crate::helpers::{unique, TestApp};
use crate::ratings::{winning_move, x_one_move_from_winning};
use crate::real_server::Server;
use crate::restart::assert_versions_match_events;
use crate::sse_client::{versions, EventStream};

/// Two servers on one fresh PostgreSQL database (in this process, each with its own store,
/// writer, caches and listening connection, as separate processes would have).
async fn two_servers() -> (TestApp, TestApp) {
    let first = TestApp::spawn().await;
    let second = first.spawn_beside(turnhouse::games::builtin()).await;
    (first, second)
}

async fn quickplay(app: &TestApp, token: &str) -> (StatusCode, Value) {
    let response = app
        .client
        .post(format!("{}/rooms/quickplay", app.address))
        .bearer_auth(token)
        .body(json!({"game": "tictactoe"}).to_string())
        .send()
        .await
        .unwrap();
    (response.status(), response.json().await.unwrap())
}

/// Two players quick-playing at the same moment on different servers end in one room, every
/// time: a room is only opened under the game's advisory lock, after checking again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_play_on_two_servers_at_once_ends_in_one_room() {
    if !on_postgres() {
        return;
    }
    let (a, b) = two_servers().await;
    for round in 0..25 {
        let first = a.register(&unique("qa")).await;
        let second = b.register(&unique("qb")).await;
        let ((s1, r1), (s2, r2)) =
            tokio::join!(quickplay(&a, &first.token), quickplay(&b, &second.token));
        assert!(s1.is_success() && s2.is_success(), "{r1} {r2}");
        assert_eq!(r1["id"], r2["id"], "round {round}: one room, not two");
        let mut placed = [s1, s2];
        placed.sort();
        assert_eq!(
            placed,
            [StatusCode::OK, StatusCode::CREATED],
            "round {round}"
        );
        assert_eq!(
            r1["players"]
                .as_array()
                .unwrap()
                .len()
                .max(r2["players"].as_array().unwrap().len()),
            2
        );
    }
    let open: Vec<(i64,)> = crate::databases::database_rows(
        &a.database,
        "SELECT count(*) FROM rooms WHERE joinable AND NOT finished",
    )
    .await;
    assert_eq!(open, [(0,)], "no room was left half-filled");
}

/// Moves committed on one server reach a stream on the other, in order and each once; and
/// when the listening connections drop and the moves are made while they cannot come back
/// (so their notifications are lost for good), the streams still get every version once
/// they do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_on_one_server_see_moves_made_on_another_even_across_a_lost_listener() {
    if !on_postgres() {
        return;
    }
    let (a, b) = two_servers().await;
    let (room, x, o) = b.started_tictactoe().await;
    let url = format!("{}/rooms/{room}/stream", a.address);
    let mut watcher = EventStream::open(&a.client, &url, Some(0)).await;
    let opened = watcher.versions_through(3).await;
    assert_eq!(versions(&opened), [1, 2, 3]);

    b.play_ok(&x, &room, json!({"x": 0, "y": 0})).await;
    b.play_ok(&o, &room, json!({"x": 1, "y": 0})).await;
    assert_eq!(versions(&watcher.versions_through(5).await), [4, 5]);

    // Cut every listening connection and keep new connections to the database out while two
    // more moves are made on the other server.
    let database = a.database.rsplit('/').next().unwrap().to_owned();
    let mut admin = sqlx::PgConnection::connect(&postgres_url("postgres"))
        .await
        .unwrap();
    admin
        .execute(sqlx::AssertSqlSafe(format!(
            "ALTER DATABASE {database} ALLOW_CONNECTIONS false"
        )))
        .await
        .unwrap();
    let cut: Vec<(bool,)> = sqlx::query_as(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = $1 AND application_name = 'turnhouse listener'",
    )
    .bind(&database)
    .fetch_all(&mut admin)
    .await
    .unwrap();
    assert_eq!(cut.len(), 2, "one listening connection per server");
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A read that needs a connection the pool does not hold yet cannot get one now: that
    // move answers 503 storage_unavailable, changing nothing, and is sent again, as a client
    // would, until a held connection serves it.
    for (player, mv) in [(&x, json!({"x": 0, "y": 1})), (&o, json!({"x": 1, "y": 1}))] {
        for attempt in 1.. {
            let response = b.play(player, &room, mv.clone()).await;
            let status = response.status();
            let body: serde_json::Value = response.json().await.unwrap();
            if status == reqwest::StatusCode::OK {
                break;
            }
            assert_eq!(status, reqwest::StatusCode::SERVICE_UNAVAILABLE, "{body}");
            assert_eq!(body["code"], "storage_unavailable", "{body}");
            assert!(attempt < 50, "the move was never served: {body}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    admin
        .execute(sqlx::AssertSqlSafe(format!(
            "ALTER DATABASE {database} ALLOW_CONNECTIONS true"
        )))
        .await
        .unwrap();

    // The listener comes back, the stream re-reads the history: both versions, once each.
    let caught_up = watcher.versions_through(7).await;
    assert_eq!(versions(&caught_up), [6, 7]);
    assert_eq!(caught_up[0]["move"], json!({"x": 0, "y": 1}));
    // And it goes on hearing the other server.
    b.play_ok(&x, &room, json!({"x": 0, "y": 2})).await;
    let last = watcher.versions_through(8).await;
    assert_eq!(versions(&last), [8]);
    assert_eq!(last[0]["finished"], true);
}

/// One player finishing two rated games at the same moment, one on each server: each rating
/// change starts from the one before it, so neither game's is lost to the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_players_two_games_finished_at_once_on_two_servers_both_count() {
    if !on_postgres() {
        return;
    }
    let (a, b) = two_servers().await;
    for round in 0..12 {
        let x = a.register(&unique("x")).await;
        let mut rooms = Vec::new();
        for app in [&a, &b] {
            let o = app.register(&unique("o")).await;
            let room = app.create_room(&x, json!({"game": "tictactoe"})).await;
            let room = room["id"].as_str().unwrap().to_owned();
            assert_eq!(app.join(&o, &room).await.status(), StatusCode::OK);
            x_one_move_from_winning(app, &room, &x, &o).await;
            rooms.push(room);
        }
        tokio::join!(
            a.play_ok(&x, &rooms[0], winning_move()),
            b.play_ok(&x, &rooms[1], winning_move())
        );
        let changes: Vec<(f64, f64)> = crate::databases::database_rows(
            &a.database,
            Box::leak(
                format!(
                    "SELECT rating_before, rating_after FROM rating_changes \
                     WHERE player_id = '{}' ORDER BY seq",
                    x.id
                )
                .into_boxed_str(),
            ),
        )
        .await;
        assert_eq!(changes.len(), 2, "round {round}: {changes:?}");
        assert_eq!(changes[0].0, 1500.0, "round {round}: {changes:?}");
        assert_eq!(
            changes[1].0, changes[0].1,
            "round {round}: the second game starts from the first's rating"
        );
        let kept: Vec<(f64, i64)> = crate::databases::database_rows(
            &a.database,
            Box::leak(
                format!(
                    "SELECT rating, games FROM ratings WHERE player_id = '{}'",
                    x.id
                )
                .into_boxed_str(),
            ),
        )
        .await;
        assert_eq!(kept, [(changes[1].1, 2)], "round {round}");
    }
}

/// A room a server has in memory, changed on another server: reads on the first are current,
/// `If-None-Match` included, and a move that the old copy would refuse is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_never_serves_a_room_another_changed_as_current() {
    if !on_postgres() {
        return;
    }
    let (a, b) = two_servers().await;
    let (room, x, o) = a.started_tictactoe().await;
    a.play_ok(&x, &room, json!({"x": 0, "y": 0})).await; // a's copy: version 4, o to move
    for turn in 0..3 {
        // o moves on b; at once x, whose turn it now is, moves on a.
        let moved = b.play_ok(&o, &room, json!({"x": 1, "y": turn})).await;
        let current = moved["version"].as_i64().unwrap();
        let read = a.get_json(&format!("/rooms/{room}")).await;
        assert_eq!(read["version"], current, "a reads what b committed");
        let unchanged = a
            .client
            .get(format!("{}/rooms/{room}", a.address))
            .header("If-None-Match", format!("\"{}\"", current - 1))
            .send()
            .await
            .unwrap();
        assert_eq!(
            unchanged.status(),
            StatusCode::OK,
            "an old tag is not current"
        );
        if turn < 2 {
            let played = a.play_ok(&x, &room, json!({"x": 2, "y": turn})).await;
            assert_eq!(played["version"], current + 1);
        }
    }
}

/// Which of the three servers takes a request, skipping the one that was killed, as a load
/// balancer's health check would.
struct Pool {
    servers: Vec<Api>,
    killed: AtomicBool,
    next: AtomicUsize,
}

impl Pool {
    fn pick(&self) -> Api {
        let alive = if self.killed.load(Ordering::Acquire) {
            2
        } else {
            3
        };
        self.servers[self.next.fetch_add(1, Ordering::Relaxed) % alive].clone()
    }
}

const GAMES: usize = 300;
const RACE_ROOMS: usize = 4;
const RACERS: usize = 32;
const RACE_ROUNDS: usize = 4;

/// Three server binaries on one database: three hundred tic-tac-toe games at once with every
/// request sent to the next server in turn, 32-way move races on single rooms across the
/// servers, a subscriber on the first and one on the second watching a raced room, and the
/// third server killed with `kill -9` mid-load. The other two carry on; afterwards every
/// room's version is its number of events, every acknowledged version is in the history as
/// acknowledged, every acknowledged raced move is in its room exactly once, and both
/// subscribers saw the same gap-free sequence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_servers_share_the_load_and_lose_nothing_when_one_is_killed() {
    if !on_postgres() {
        return;
    }
    crate::helpers::raise_open_files_limit();
    let database = fresh_postgres().await;
    // Hooks get a second: three servers, PostgreSQL and this load share two cores, and a
    // hook that waits that long for one is the machine's doing (the limits are tested
    // elsewhere).
    let flags = ["--rate-limits", "off", "--hook-time-limit-ms", "1000"];
    let first = Server::start_with(&database, &flags);
    let second = Server::start_with(&database, &flags);
    let third = Server::start_with(&database, &flags);
    // One client for all three, patient with a server under this much load.
    let api = first.api.with_timeout(Duration::from_secs(30));
    let on = |server: &Server| Api {
        address: server.address.clone(),
        ..api.clone()
    };
    let pool = Arc::new(Pool {
        servers: vec![on(&first), on(&second), on(&third)],
        killed: AtomicBool::new(false),
        next: AtomicUsize::new(0),
    });

    // The raced rooms: one player each, playing a game that accepts every move.
    let author = api.new_player().await;
    upload_ledger(&api, &author).await;
    let mut races = Vec::new();
    for _ in 0..RACE_ROOMS {
        let racer = pool.pick().new_player().await.token;
        let (status, room) = pool
            .pick()
            .post_value("/rooms", Some(&racer), json!({"game": "ledger"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{room}");
        races.push((racer, room["id"].as_str().unwrap().to_owned()));
    }
    let watched = races[0].1.clone();
    let watch = |server: &Server| format!("{}/rooms/{watched}/stream?after=0", server.address);
    let mut on_first = EventStream::open(&api.client, &watch(&first), None).await;
    let mut on_second = EventStream::open(&api.client, &watch(&second), None).await;

    // The load: games, races, and the kill.
    let acked_versions = Arc::new(Mutex::new(Vec::new()));
    let start_games = |games: std::ops::Range<usize>| {
        let started: Vec<_> = games
            .map(|game| {
                let (pool, acked) = (pool.clone(), acked_versions.clone());
                tokio::spawn(async move { play_one_game(&pool, &acked, game).await })
            })
            .collect();
        started
    };
    // The first half is in flight when the third server dies; the second starts after.
    let before_kill = start_games(0..GAMES / 2);
    let raced_moves = Arc::new(Mutex::new(Vec::new()));
    let racing = races.iter().cloned().map(|(racer, room)| {
        let (pool, acked) = (pool.clone(), raced_moves.clone());
        tokio::spawn(async move {
            for round in 0..RACE_ROUNDS {
                let moves = (0..RACERS).map(|n| {
                    let id = format!("{room}-{round}-{n}");
                    let server = pool.pick();
                    let (racer, room) = (racer.clone(), room.clone());
                    async move {
                        let sent = server
                            .client
                            .post(format!("{}/rooms/{room}/moves", server.address))
                            .bearer_auth(&racer)
                            .body(json!({"id": id}).to_string())
                            .send()
                            .await;
                        match sent {
                            Ok(response) if response.status() == StatusCode::OK => Some(id),
                            Ok(response) => {
                                let status = response.status();
                                let body = response.text().await.unwrap_or_default();
                                assert_eq!(status, StatusCode::CONFLICT, "{body}");
                                None
                            }
                            // Sent to the server being killed.
                            Err(_) => None,
                        }
                    }
                });
                let won: Vec<String> = join_all(moves).await.into_iter().flatten().collect();
                acked
                    .lock()
                    .unwrap()
                    .extend(won.into_iter().map(|id| (room.clone(), id)));
            }
        })
    });
    // Killed mid-load: once a third of the first half's versions are acknowledged.
    while acked_versions.lock().unwrap().len() < GAMES / 2 * 7 / 3 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    pool.killed.store(true, Ordering::Release);
    third.kill();
    let after_kill = start_games(GAMES / 2..GAMES);
    let finished = |games: Vec<bool>| games.into_iter().filter(|&done| done).count();
    let before_kill = finished(
        join_all(before_kill)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect(),
    );
    let after_kill = finished(
        join_all(after_kill)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect(),
    );
    for race in join_all(racing).await {
        race.unwrap();
    }

    // The other two carried on: every game started after the kill was played to its end (of
    // those in flight, the ones with a request on the killed server stopped there).
    assert_eq!(after_kill, GAMES / 2, "games after the kill");
    assert!(before_kill > 0, "games in flight at the kill");
    assert_versions_match_events(&database).await;

    // Every acknowledged version is in the history as it was acknowledged.
    let api = first.api.clone();
    let acked = acked_versions.lock().unwrap().clone();
    let mut by_room: HashMap<String, Vec<(i64, Value)>> = HashMap::new();
    for (room, version, state) in acked {
        by_room.entry(room).or_default().push((version, state));
    }
    for (room, versions) in &by_room {
        let history = api
            .get_value(&format!("/rooms/{room}/events?limit=100"))
            .await;
        let history = history["events"].as_array().unwrap();
        for (version, state) in versions {
            assert_eq!(
                &history[*version as usize - 1]["state"],
                state,
                "{room} v{version} as acknowledged"
            );
        }
    }

    // Every acknowledged raced move is in its room exactly once.
    let raced = raced_moves.lock().unwrap().clone();
    assert!(
        raced.len() >= RACE_ROOMS * RACERS,
        "{} raced moves won",
        raced.len()
    );
    let mut finals = HashMap::new();
    for (_, room) in &races {
        let state = api.get_value(&format!("/rooms/{room}")).await;
        finals.insert(room.clone(), state);
    }
    for (room, id) in &raced {
        let moves = finals[room]["state"]["moves"].as_array().unwrap();
        let times = moves.iter().filter(|m| m.as_str() == Some(id)).count();
        assert_eq!(times, 1, "{id} in {room}");
    }
    for (room, state) in &finals {
        let moves = state["state"]["moves"].as_array().unwrap().len();
        let won = raced.iter().filter(|(r, _)| r == room).count();
        assert!(won <= moves, "{room}: {won} acknowledged, {moves} applied");
    }

    // Both subscribers saw the same gap-free sequence, ending at the room's version.
    let last = finals[&watched]["version"].as_i64().unwrap();
    let seen_first = on_first.versions_through(last).await;
    let seen_second = on_second.versions_through(last).await;
    assert_eq!(versions(&seen_first), (1..=last).collect::<Vec<_>>());
    assert_eq!(seen_first, seen_second);

    first.kill();
    second.kill();
}

/// Plays one tic-tac-toe game, each request to the next server; records every acknowledged
/// version. Stops at the first request that fails (one sent to the server being killed).
/// Whether the game was played to its end.
async fn play_one_game(pool: &Pool, acked: &Mutex<Vec<(String, i64, Value)>>, game: usize) -> bool {
    let keep = |room: &Value| {
        acked.lock().unwrap().push((
            room["id"].as_str().unwrap().to_owned(),
            room["version"].as_i64().unwrap(),
            room["state"].clone(),
        ));
    };
    let send = |token: Option<String>, path: String, body: Value| {
        let server = pool.pick();
        let request = server
            .client
            .post(format!("{}{path}", server.address))
            .body(body.to_string());
        let request = match token {
            Some(token) => request.bearer_auth(token),
            None => request,
        };
        async move {
            let response = request.send().await.ok()?;
            let status = response.status();
            let body: Value = response.json().await.ok()?;
            assert!(status.is_success(), "{status}: {body}");
            Some(body)
        }
    };
    let name = |role: &str| json!({"username": format!("g{game}-{role}-{}", unique(""))});
    let Some(x) = send(None, "/players".into(), name("x")).await else {
        return false;
    };
    let Some(o) = send(None, "/players".into(), name("o")).await else {
        return false;
    };
    let token = |player: &Value| Some(player["token"].as_str().unwrap().to_owned());
    let Some(room) = send(
        token(&x),
        "/rooms".into(),
        json!({"game": "tictactoe", "private": true}),
    )
    .await
    else {
        return false;
    };
    keep(&room);
    let id = room["id"].as_str().unwrap().to_owned();
    let Some(room) = send(token(&o), format!("/rooms/{id}/join"), json!({})).await else {
        return false;
    };
    keep(&room);
    // X takes the left column.
    let moves = [(&x, 0, 0), (&o, 1, 0), (&x, 0, 1), (&o, 1, 1), (&x, 0, 2)];
    for (player, row, col) in moves {
        let Some(room) = send(
            token(player),
            format!("/rooms/{id}/moves"),
            json!({"x": row, "y": col}),
        )
        .await
        else {
            return false;
        };
        keep(&room);
        if room["finished"] == true {
            return true;
        }
    }
    false
}
