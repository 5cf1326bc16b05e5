//! Who is here, across servers: each server tells the others, through PostgreSQL's
//! notifications on their own channel (never a write), who its streams show in which rooms.
//! A message is `<server> <room>=<id>,<id> <room>=…`; a room with nobody is `<room>=`.

use sqlx::Postgres;

use super::PgStore;
use crate::store::sql::{Sql, Statement};
use crate::store::{RoomPresence, StoreError};

/// The channel of presence messages.
pub(super) const PRESENCE_CHANNEL: &str = "turnhouse_presence";

/// PostgreSQL's limit on a payload is 8000 bytes.
const MAX_PAYLOAD: usize = 7900;

/// Sends a message on the presence channel.
pub(in crate::store) const NOTIFY_PRESENCE: &str = "SELECT pg_notify('turnhouse_presence', $1)";

impl PgStore {
    /// Tells the other servers who this one's streams show in `rooms`, in as few messages as
    /// fit.
    pub(in crate::store) async fn announce_presence(
        &self,
        rooms: &[RoomPresence],
    ) -> Result<(), StoreError> {
        let mut conn = self.read.acquire().await?;
        for payload in payloads(&self.instance, rooms) {
            Postgres::execute(&mut conn, Statement::new(NOTIFY_PRESENCE).bind(payload)).await?;
        }
        Ok(())
    }
}

/// The messages saying `rooms` for `server`.
fn payloads(server: &str, rooms: &[RoomPresence]) -> Vec<String> {
    let mut payloads = Vec::new();
    let mut payload = server.to_owned();
    for (room, players) in rooms {
        let entry = format!(" {room}={}", players.join(","));
        if payload.len() + entry.len() > MAX_PAYLOAD && payload.len() > server.len() {
            payloads.push(std::mem::replace(&mut payload, server.to_owned()));
        }
        payload.push_str(&entry);
    }
    if payload.len() > server.len() {
        payloads.push(payload);
    }
    payloads
}

/// A presence message: the server and what it says, `None` for this server's own (`me`) and
/// for anything malformed.
pub(super) fn parse(payload: &str, me: &str) -> Option<(String, Vec<RoomPresence>)> {
    let mut parts = payload.split(' ');
    let server = parts.next().filter(|server| *server != me)?;
    let rooms = parts
        .map(|entry| {
            let (room, players) = entry.split_once('=')?;
            let players = players
                .split(',')
                .filter(|id| !id.is_empty())
                .map(str::to_owned)
                .collect();
            Some((room.to_owned(), players))
        })
        .collect::<Option<Vec<_>>>()?;
    Some((server.to_owned(), rooms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_names_its_server_and_each_room_s_players_and_splits_when_long() {
        let rooms = vec![
            ("r1".to_owned(), vec!["a".to_owned(), "b".to_owned()]),
            ("".to_owned(), vec!["c".to_owned()]),
            ("r2".to_owned(), vec![]),
        ];
        let sent = payloads("s1", &rooms);
        assert_eq!(sent, ["s1 r1=a,b =c r2="]);
        assert_eq!(parse(&sent[0], "s2"), Some(("s1".to_owned(), rooms)));
        assert_eq!(parse(&sent[0], "s1"), None, "our own");
        assert_eq!(parse("s1 nonsense", "s2"), None);

        let many: Vec<RoomPresence> = (0..400)
            .map(|n| (format!("{n:032x}"), vec![format!("{n:032x}")]))
            .collect();
        let sent = payloads("s1", &many);
        assert!(sent.len() > 1 && sent.iter().all(|p| p.len() <= MAX_PAYLOAD));
        let heard: Vec<RoomPresence> = sent
            .iter()
            .flat_map(|p| parse(p, "s2").unwrap().1)
            .collect();
        assert_eq!(heard, many);
    }
}
