//! Who is here: a room's players with a stream of it open, on any server, in its body and as
//! stream events of their own (not versions); gone within seconds of closing, and within 35 s
//! of their network going away without a word; the lobby's count of players online.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::databases::on_postgres;
use crate::helpers::{TestApp, TestPlayer};
use crate::sse_client::EventStream;

/// A room of two: `a` opened it, `b` joined.
async fn room_of_two(app: &TestApp) -> (TestPlayer, TestPlayer, String) {
    let (a, b) = (app.new_player().await, app.new_player().await);
    let room = app.create_room(&a, json!({"game": "tictactoe"})).await;
    let room = room["id"].as_str().unwrap().to_owned();
    app.join(&b, &room).await;
    (a, b, room)
}

async fn stream_of(app: &TestApp, room: &str, player: &TestPlayer) -> EventStream {
    let url = format!(
        "{}/rooms/{room}/stream?access_token={}",
        app.address, player.token
    );
    EventStream::open(&app.client, &url, None).await
}

/// The next `presence` event's players online.
async fn next_presence(stream: &mut EventStream) -> Vec<String> {
    loop {
        let event = stream.any_event().await;
        if event.event.as_deref() == Some("presence") {
            assert_eq!(event.id, None, "presence is not a version");
            let online = event.json()["online"].clone();
            return serde_json::from_value(online).unwrap();
        }
    }
}

/// Polls the room on `app` until `online` is what `wanted` says; how long it took.
async fn online_becomes(app: &TestApp, room: &str, wanted: &[&str], within: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let body: Value = app.get_json(&format!("/rooms/{room}")).await;
        let online: Vec<String> = serde_json::from_value(body["online"].clone()).unwrap();
        if online == wanted {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < within,
            "online is still {online:?}, not {wanted:?}, after {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn players_with_the_room_open_are_online_and_leave_within_seconds() {
    let app = TestApp::spawn().await;
    let (a, b, room) = room_of_two(&app).await;
    assert_eq!(app.room(&room).await["online"], json!([]));

    let mut watching = stream_of(&app, &room, &b).await;
    let _first = watching.event().await; // the current version
    assert_eq!(next_presence(&mut watching).await, [b.id.as_str()]);
    let playing = stream_of(&app, &room, &a).await;
    let mut both = vec![a.id.clone(), b.id.clone()];
    both.sort();
    assert_eq!(next_presence(&mut watching).await, both);
    assert_eq!(app.room(&room).await["online"], json!(both));
    // A spectator's stream is nobody's business.
    let _spectator = stream_of(&app, &room, &app.new_player().await).await;
    // The game goes on between presence events, which carry no version.
    app.play_ok(&a, &room, json!({"x": 0, "y": 0})).await;
    let version = watching.event().await;
    assert_eq!(version.event.as_deref(), Some("version"), "{version:?}");

    // a closes their stream: gone for b within 5 s.
    drop(playing);
    let started = Instant::now();
    assert_eq!(next_presence(&mut watching).await, [b.id.as_str()]);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    online_becomes(&app, &room, &[&b.id], Duration::from_secs(1)).await;
}

#[tokio::test]
async fn the_lobby_says_how_many_players_are_online() {
    let app = TestApp::spawn().await;
    let watcher = app.new_player().await;
    let url = format!(
        "{}/rooms/stream?access_token={}",
        app.address, watcher.token
    );
    let mut lobby = EventStream::open(&app.client, &url, None).await;
    let first = count_after(&mut lobby, None).await;
    assert_eq!(first, 1, "what it says first counts its own viewer");
    let (_, b, room) = room_of_two(&app).await;
    let stream = stream_of(&app, &room, &b).await;
    assert_eq!(count_after(&mut lobby, Some(1)).await, 2);
    drop(stream);
    assert_eq!(count_after(&mut lobby, Some(2)).await, 1);
}

/// The next count an `online` event gives other than `last` (the count may be said again).
async fn count_after(lobby: &mut EventStream, last: Option<u64>) -> u64 {
    loop {
        let event = lobby.any_event().await;
        if event.event.as_deref() == Some("online") {
            let players = event.json()["players"].as_u64().unwrap();
            if Some(players) != last {
                return players;
            }
        }
    }
}

/// Three servers on one PostgreSQL database: a player online on one shows on the others, and
/// leaves them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn presence_crosses_servers_on_postgres() {
    if !on_postgres() {
        return;
    }
    let first = TestApp::spawn().await;
    let second = first.spawn_beside(turnhouse::games::builtin()).await;
    let third = first.spawn_beside(turnhouse::games::builtin()).await;
    let (a, b, room) = room_of_two(&first).await;
    let mut watching = stream_of(&second, &room, &b).await;
    watching.event().await;
    assert_eq!(next_presence(&mut watching).await, [b.id.as_str()]);
    let playing = stream_of(&first, &room, &a).await;
    let mut both = vec![a.id.clone(), b.id.clone()];
    both.sort();
    assert_eq!(
        next_presence(&mut watching).await,
        both,
        "a, on the first, shows on the second"
    );
    let both: Vec<&str> = both.iter().map(String::as_str).collect();
    online_becomes(&third, &room, &both, Duration::from_secs(5)).await;
    drop(playing);
    assert_eq!(next_presence(&mut watching).await, [b.id.as_str()]);
    online_becomes(&third, &room, &[&b.id], Duration::from_secs(5)).await;
}

/// A private link between this test and a network namespace of its own, torn down on drop:
/// the one way to have a connection go silent (no close, no reset) on one machine.
struct PrivateLink {
    namespace: String,
    ours: String,
    theirs: String,
    /// Our end's address, where the server listens, and the other end's.
    server_ip: String,
}

impl PrivateLink {
    fn new() -> Self {
        let n = std::process::id() % 200 + 20;
        let link = Self {
            namespace: format!("thpresence{n}"),
            ours: format!("thp{n}a"),
            theirs: format!("thp{n}b"),
            server_ip: format!("10.231.{n}.1"),
        };
        link.teardown();
        let client_ip = format!("10.231.{n}.2/30");
        let server_ip = format!("{}/30", link.server_ip);
        for args in [
            vec!["netns", "add", &link.namespace],
            vec![
                "link",
                "add",
                &link.ours,
                "type",
                "veth",
                "peer",
                "name",
                &link.theirs,
            ],
            vec!["link", "set", &link.theirs, "netns", &link.namespace],
            vec!["addr", "add", &server_ip, "dev", &link.ours],
            vec!["link", "set", &link.ours, "up"],
            vec![
                "netns",
                "exec",
                &link.namespace,
                "ip",
                "addr",
                "add",
                &client_ip,
                "dev",
                &link.theirs,
            ],
            vec![
                "netns",
                "exec",
                &link.namespace,
                "ip",
                "link",
                "set",
                &link.theirs,
                "up",
            ],
        ] {
            let status = std::process::Command::new("ip")
                .args(&args)
                .status()
                .unwrap();
            assert!(
                status.success(),
                "ip {args:?} (this test makes a network namespace)"
            );
        }
        link
    }

    /// The other end goes quiet: its link is down, so nothing it was sent is answered.
    fn go_silent(&self) {
        let status = std::process::Command::new("ip")
            .args([
                "netns",
                "exec",
                &self.namespace,
                "ip",
                "link",
                "set",
                &self.theirs,
                "down",
            ])
            .status()
            .unwrap();
        assert!(status.success());
    }

    fn teardown(&self) {
        let quiet = || Stdio::null();
        let _ = std::process::Command::new("ip")
            .args(["link", "del", &self.ours])
            .stderr(quiet())
            .status();
        let _ = std::process::Command::new("ip")
            .args(["netns", "del", &self.namespace])
            .stderr(quiet())
            .status();
    }
}

impl Drop for PrivateLink {
    fn drop(&mut self) {
        self.teardown();
    }
}

/// A player whose network goes away without closing anything shows as gone within 35 s: the
/// stream's keep-alives go unanswered, and the server gives the connection up.
#[tokio::test]
async fn a_connection_that_goes_silent_shows_as_gone_within_35_seconds() {
    // Declared first, so dropped last: after the link is torn down.
    let _network = crate::webdriver::changing_the_network().await;
    let link = PrivateLink::new();
    let app = TestApp::spawn_at(&link.server_ip).await;
    let (a, _, room) = room_of_two(&app).await;
    let url = format!(
        "{}/rooms/{room}/stream?access_token={}",
        app.address, a.token
    );
    let mut client = Client(
        std::process::Command::new("ip")
            .args(["netns", "exec", &link.namespace, "curl", "-sN", &url])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    online_becomes(&app, &room, &[&a.id], Duration::from_secs(10)).await;
    link.go_silent();
    let gone = online_becomes(&app, &room, &[], Duration::from_secs(35)).await;
    println!("a silent connection showed as gone after {gone:?}");
    assert!(
        client.0.try_wait().unwrap().is_none(),
        "the client never closed anything"
    );
}

/// A client process, killed when the test ends however it ends.
struct Client(std::process::Child);

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
