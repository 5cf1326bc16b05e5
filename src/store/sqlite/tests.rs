//! SQLite's plans for every listing and lookup, and databases left by older releases.

use sqlx::Row;

use sqlx::Sqlite;

use super::super::dialect::Dialect;
use super::super::reads::{
    every_listing_query, listing, test_ranges, EVENTS_PAGE, ONE_ROOM, PLAYER_GAMES,
};
use super::super::{RoomQuery, Store};
use super::{database_before, SqliteStore};
use crate::domain::records::Room;

const OLDEST_OPEN_ROOM: &str = <Sqlite as Dialect>::OLDEST_OPEN_ROOM;

/// The plan SQLite chooses for `sql`, one line per step (placeholders left unbound: the
/// plan does not depend on the values).
async fn plan(store: &SqliteStore, sql: &str) -> Vec<String> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!("EXPLAIN QUERY PLAN {sql}")))
        .fetch_all(&store.read)
        .await
        .unwrap_or_else(|e| panic!("cannot plan {sql}: {e}"));
    rows.iter().map(|row| row.get("detail")).collect()
}

/// Whether any step reads a whole table or index, or sorts, which is what a listing would do
/// if its SQL stopped matching an index.
fn scans(plan: &[String]) -> bool {
    plan.iter()
        .any(|step| step.starts_with("SCAN") || step.contains("TEMP B-TREE"))
}

fn assert_no_scan(sql: &str, plan: &[String]) {
    assert!(!scans(plan), "{sql}\nplans {plan:#?}");
}

fn store_dir() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plans.db").display().to_string();
    (dir, path)
}

/// A store on a fresh database, in a directory that lasts as long as the first value.
async fn fresh_store() -> (tempfile::TempDir, SqliteStore) {
    let (dir, path) = store_dir();
    let store = SqliteStore::open(&path, crate::store::DEFAULT_BUSY_TIMEOUT)
        .await
        .unwrap()
        .0;
    (dir, store)
}

/// Every filter set `GET /rooms` allows (48), with and without a cursor, each with its plan
/// when it does not read its index ranges: one range, or one for each value of a flag left out
/// (the lobby's, up to four; a player's rooms whatever their end, two), merged, each search
/// with a `col=?` for every filter it can, nothing scanned or sorted.
async fn listings_off_their_range(store: &SqliteStore) -> (usize, Vec<String>) {
    let queries = every_listing_query();
    let mut off = Vec::new();
    for query in &queries {
        if let Some(why) = listing_off_its_range(store, query).await {
            off.push(why);
        }
    }
    (queries.len(), off)
}

/// The listing's SQL and plan, when the plan does not read just its ranges.
async fn listing_off_its_range(store: &SqliteStore, query: &RoomQuery) -> Option<String> {
    let player = query.player.is_some();
    // A player's rooms: a range for each end and game, merged. The lobby: a range for each
    // value of each flag left out, merged.
    let (member_ranges, ranges) = test_ranges(query);
    let sql = listing::<Sqlite>(query, &member_ranges).sql().to_owned();
    let steps = plan(store, &sql).await;
    let (table, seq) = if player {
        ("m", "room_seq")
    } else {
        ("r", "seq")
    };
    let searches: Vec<&String> = steps
        .iter()
        .filter(|s| s.starts_with(&format!("SEARCH {table} ")))
        .collect();
    let mut expected = Vec::new();
    if player {
        expected.push("finished=?".to_owned());
        expected.push("player_id=?".to_owned());
    }
    if query.game.is_some() || player {
        expected.push("game=?".to_owned());
    }
    if !player {
        expected.push("joinable=?".to_owned());
        expected.push("finished=?".to_owned());
    }
    if query.before_seq.is_some() {
        expected.push(format!("{seq}<?"));
    }
    let wrong = scans(&steps)
        || searches.len() != ranges
        || (searches.iter()).any(|search| expected.iter().any(|term| !search.contains(term)));
    wrong.then(|| format!("{sql}\nplans {steps:#?}"))
}

/// A player's games are found by seeking through the memberships' index, a seek per game.
#[tokio::test]
async fn a_players_games_are_seeks_of_the_membership_index() {
    let (_dir, store) = fresh_store().await;
    let steps = plan(&store, PLAYER_GAMES).await;
    let searches = steps
        .iter()
        .filter(|step| step.contains("SEARCH room_players USING COVERING INDEX"))
        .count();
    // The only scans are of the recursion's own rows (`g`) and its first, constant row.
    let scanned = |step: &&String| step.starts_with("SCAN") && !step.ends_with(" g");
    let other_scans: Vec<&String> = steps
        .iter()
        .filter(scanned)
        .filter(|step| !step.contains("CONSTANT ROW"))
        .collect();
    assert_eq!(searches, 2, "{steps:#?}");
    assert!(other_scans.is_empty(), "{steps:#?}");
    assert!(
        !steps.iter().any(|step| step.contains("TEMP B-TREE")),
        "{steps:#?}"
    );
}

/// Every listing is index ranges: one, or a few merged.
#[tokio::test]
async fn every_listing_is_an_index_range() {
    let (_dir, store) = fresh_store().await;
    let (checked, off) = listings_off_their_range(&store).await;
    assert_eq!(checked, 48);
    assert!(off.is_empty(), "{}", off.join("\n\n"));
}

/// No listing index is redundant: with any one of them dropped, some listing no longer reads
/// its ranges (the write cost each adds is in `docs/benchmarks.md`).
#[tokio::test]
async fn every_listing_index_is_the_only_range_for_some_listing() {
    let names = [
        "rooms_public_by_joinable_finished",
        "rooms_public_by_game_joinable_finished",
        "room_players_by_player_game_finished",
    ];
    // The control: an index no listing reads.
    let control = "players_one_account_per_bot_level";
    for name in names.into_iter().chain([control]) {
        // A fresh database each time: SQLite breaks ties between equally good indexes by
        // their order in the schema, which re-creating one would change.
        let (_dir, store) = fresh_store().await;
        sqlx::query(sqlx::AssertSqlSafe(format!("DROP INDEX {name}")))
            .execute(&store.read)
            .await
            .unwrap();
        let (_, off) = listings_off_their_range(&store).await;
        if name == control {
            assert!(off.is_empty(), "{}", off.join("\n\n"));
        } else {
            assert!(!off.is_empty(), "every listing is one range without {name}");
        }
    }
}

/// Memberships written before they carried the room's `seq` and game get them from the
/// room, so a player's older rooms are still listed, newest first.
#[tokio::test]
async fn memberships_from_before_listing_indexes_are_listed() {
    let (dir, path) = store_dir();
    let old = database_before(std::path::Path::new(&path), 4).await;
    sqlx::query(
        "INSERT INTO players (id, username, token_hash, created_at) VALUES ('p', 'pat', '', '2026-01-01T00:00:00.000Z')",
    )
    .execute(&old)
    .await
    .unwrap();
    for (room, game) in [
        ("r1", "tictactoe"),
        ("r2", "tictactoe3d"),
        ("r3", "tictactoe"),
    ] {
        sqlx::query(
            "INSERT INTO rooms (id, game, private, version, joinable, finished, state, players, \
                 inactive_players, created_at, updated_at) \
                 VALUES (?, ?, 0, 1, 1, 0, 'null', '[]', '[]', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
        )
        .bind(room)
        .bind(game)
        .execute(&old)
        .await
        .unwrap();
        sqlx::query("INSERT INTO room_players (room_id, player_id, active) VALUES (?, 'p', 1)")
            .bind(room)
            .execute(&old)
            .await
            .unwrap();
    }
    old.close().await;
    let store = Store::open(&path).await.unwrap();
    let listed = |game: Option<&str>| RoomQuery {
        game: game.map(Into::into),
        player: Some("p".into()),
        limit: 10,
        ..RoomQuery::default()
    };
    let ids = |rooms: Vec<(i64, Room)>| rooms.into_iter().map(|(_, r)| r.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.rooms(&listed(None)).await.unwrap()),
        ["r3", "r2", "r1"]
    );
    assert_eq!(
        ids(store.rooms(&listed(Some("tictactoe"))).await.unwrap()),
        ["r3", "r1"]
    );
    drop(dir);
}

/// A player of more games than are read as a range each is listed from one walk of their
/// memberships, newest first, page after page, as a player of a few games is.
#[tokio::test]
async fn a_player_of_many_games_is_listed_newest_first() {
    let (dir, path) = store_dir();
    let store = Store::open(&path).await.unwrap();
    let db = sqlx::SqlitePool::connect(&format!("sqlite://{path}"))
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO players (id, username, token_hash, created_at) VALUES ('p', 'pat', '', '2026-01-01T00:00:00.000Z')",
    )
    .execute(&db)
    .await
    .unwrap();
    // Two rooms of each game, the second finished; the games' rooms interleaved in time.
    let games = super::super::reads::GAMES_AS_RANGES + 2;
    for round in 0..2 {
        for game in 0..games {
            let (id, game) = (format!("r{round}-{game:02}"), format!("g{game:02}"));
            sqlx::query(
                "INSERT INTO rooms (id, game, private, version, joinable, finished, state, \
                     players, inactive_players, created_at, updated_at) \
                     VALUES (?, ?, 0, 1, 0, ?, 'null', '[]', '[]', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
            )
            .bind(&id)
            .bind(&game)
            .bind(round)
            .execute(&db)
            .await
            .unwrap();
            sqlx::query(
                "INSERT INTO room_players (room_id, player_id, active, room_seq, game, finished) \
                     SELECT id, 'p', 1, seq, game, finished FROM rooms WHERE id = ?",
            )
            .bind(&id)
            .execute(&db)
            .await
            .unwrap();
        }
    }
    let page = |finished: Option<bool>, before_seq: Option<i64>| RoomQuery {
        player: Some("p".into()),
        finished,
        before_seq,
        limit: 40,
        ..RoomQuery::default()
    };
    for finished in [None, Some(true), Some(false)] {
        let mut listed = Vec::new();
        let mut before_seq = None;
        loop {
            let rooms = store.rooms(&page(finished, before_seq)).await.unwrap();
            let Some((seq, _)) = rooms.last() else { break };
            before_seq = Some(*seq);
            listed.extend(rooms.into_iter().map(|(seq, room)| (seq, room.finished)));
        }
        let expected = match finished {
            None => 2 * games,
            Some(_) => games,
        };
        assert_eq!(listed.len(), expected, "{finished:?}");
        assert!(listed.windows(2).all(|w| w[0].0 > w[1].0), "newest first");
        assert!(finished.is_none_or(|f| listed.iter().all(|(_, done)| *done == f)));
    }
    db.close().await;
    drop(dir);
}

/// Quick play's search, its guard when creating a room, one room, history pages, and the
/// sweeper's look for idle waiting rooms.
#[tokio::test]
async fn lookups_are_index_searches() {
    let (_dir, store) = fresh_store().await;
    let idle_waiting_rooms = <Sqlite as Dialect>::IDLE_WAITING_ROOMS;
    for sql in [OLDEST_OPEN_ROOM, ONE_ROOM, EVENTS_PAGE, idle_waiting_rooms] {
        let steps = plan(&store, sql).await;
        assert_no_scan(sql, &steps);
        assert!(steps[0].starts_with("SEARCH"), "{sql}\nplans {steps:#?}");
    }
    let steps = plan(&store, OLDEST_OPEN_ROOM).await;
    assert!(
        steps[0].contains(
            "rooms_public_by_game_joinable_finished (game=? AND joinable=? AND finished=?)"
        ),
        "{steps:#?}"
    );
    let steps = plan(&store, idle_waiting_rooms).await;
    assert!(
        steps[0].contains("rooms_waiting (updated_at<?)"),
        "{steps:#?}"
    );
}

/// A database written before versions recorded their players gets them by replaying each
/// room's history: joins seat, quits unseat, a start or play again empties the table.
#[tokio::test]
async fn history_from_before_seats_were_recorded_gets_them_by_replay() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let old = database_before(&path, 3).await;
    for (id, name) in [("a", "alice"), ("b", "bob")] {
        sqlx::query(
            "INSERT INTO players (id, username, token_hash, created_at) VALUES (?, ?, '', '2026-01-01T00:00:00.000Z')",
        )
        .bind(id)
        .bind(name)
        .execute(&old)
        .await
        .unwrap();
    }
    sqlx::query(
        "INSERT INTO rooms (id, game, private, version, joinable, finished, state, players, \
             inactive_players, created_at, updated_at) \
             VALUES ('r', 'tictactoe', 0, 9, 1, 0, 'null', '[]', '[]', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
    )
    .execute(&old)
    .await
    .unwrap();
    let history = [
        ("room_start", "a"),
        ("join", "a"),
        ("quit", "a"),
        ("join", "b"),
        ("join", "a"),
        ("move", "b"),
        ("quit", "b"),
        ("reset", "a"),
        ("join", "a"),
    ];
    for (version, (kind, player)) in history.iter().enumerate() {
        sqlx::query(
                "INSERT INTO room_events (room_id, version, kind, player_id, state, joinable, finished, created_at) \
                 VALUES ('r', ?, ?, ?, 'null', 1, 0, '2026-01-01T00:00:00.000Z')",
            )
            .bind(version as i64 + 1)
            .bind(kind)
            .bind(player)
            .execute(&old)
            .await
            .unwrap();
    }
    old.close().await;

    let store = Store::open(path.to_str().unwrap()).await.unwrap();
    let seated: Vec<Vec<String>> = store
        .events("r", 0, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.players.iter().map(|p| p.username.clone()).collect())
        .collect();
    let expected: [&[&str]; 9] = [
        &[],
        &["alice"],
        &[],
        &["bob"],
        &["bob", "alice"],
        &["bob", "alice"],
        &["alice"],
        &[],
        &["alice"],
    ];
    assert_eq!(seated, expected.map(|s| s.to_vec()));
}

/// Each page of a leaderboard reads one range of its index, whatever the number of players:
/// no scan, no sort.
#[tokio::test]
async fn a_leaderboard_page_is_one_index_range() {
    use super::super::ratings::{LEADERBOARD_AFTER, LEADERBOARD_FIRST};
    let (_dir, store) = fresh_store().await;
    for sql in [LEADERBOARD_FIRST, LEADERBOARD_AFTER] {
        let steps = plan(&store, sql).await;
        assert_no_scan(sql, &steps);
        assert!(
            steps[0].starts_with("SEARCH r USING INDEX ratings_leaderboard (game=?"),
            "{sql}\nplans {steps:#?}"
        );
    }
    let steps = plan(&store, LEADERBOARD_AFTER).await;
    assert!(
        steps[0].contains("(conservative,player_id)<(?,?)"),
        "{steps:#?}"
    );
}

/// The writer's statement journals are kept in memory, never in a temporary file (see
/// `SqliteStore::open`); the readers keep SQLite's default.
#[tokio::test]
async fn the_writer_keeps_its_statement_journals_in_memory() {
    let (_dir, path) = store_dir();
    let (store, write) = SqliteStore::open(&path, crate::store::DEFAULT_BUSY_TIMEOUT)
        .await
        .unwrap();
    let temp_store = |pool: sqlx::SqlitePool| async move {
        sqlx::query("PRAGMA temp_store")
            .fetch_one(&pool)
            .await
            .unwrap()
            .get::<i64, _>(0)
    };
    // 2 is MEMORY; 0 the default, a file.
    assert_eq!(temp_store(write).await, 2);
    assert_eq!(temp_store(store.read.clone()).await, 0);
}

/// Names that differed only by case before names were unique ignoring it keep working, each
/// found by its exact name; no new name can take any of them in another case.
#[tokio::test]
async fn names_that_differed_only_by_case_are_kept() {
    let (dir, path) = store_dir();
    let old = database_before(std::path::Path::new(&path), 25).await;
    for (id, name, created) in [
        ("p1", "alice", "2026-01-01T00:00:00.000Z"),
        ("p2", "Alice", "2026-01-02T00:00:00.000Z"),
        ("p3", "bob", "2026-01-03T00:00:00.000Z"),
    ] {
        sqlx::query(
            "INSERT INTO players (id, username, token_hash, created_at) VALUES (?, ?, '', ?)",
        )
        .bind(id)
        .bind(name)
        .bind(created)
        .execute(&old)
        .await
        .unwrap();
    }
    old.close().await;
    let store = Store::open(&path).await.unwrap();
    let found = |name: &'static str| {
        let store = store.clone();
        async move { store.account_by_name(name).await.unwrap().map(|a| a.id) }
    };
    assert_eq!(found("alice").await.as_deref(), Some("p1"));
    assert_eq!(found("Alice").await.as_deref(), Some("p2"));
    assert_eq!(found("ALICE").await.as_deref(), Some("p1"), "the oldest");
    assert_eq!(found("BOB").await.as_deref(), Some("p3"));
    let account = |id: &str, name: &str| crate::domain::records::Account {
        id: id.into(),
        username: name.into(),
        created_at: crate::domain::time::Timestamp::parse("2026-02-01T00:00:00.000Z").unwrap(),
    };
    for taken in ["ALICE", "aLiCe", "Bob"] {
        let session = crate::domain::records::Session {
            id: format!("s-{taken}").into(),
            player: crate::game::PlayerRef {
                id: taken.into(),
                username: taken.into(),
            },
            label: "A device".into(),
            token_hash: String::new(),
            created_at: crate::domain::time::Timestamp::parse("2026-02-01T00:00:00.000Z").unwrap(),
            last_used_at: crate::domain::time::Timestamp::parse("2026-02-01T00:00:00.000Z")
                .unwrap(),
        };
        let made = store.create_account(&account(taken, taken), &session).await;
        assert!(
            matches!(made, Err(crate::store::StoreError::UsernameTaken)),
            "{taken} is taken: {made:?}"
        );
    }
    drop(dir);
}
