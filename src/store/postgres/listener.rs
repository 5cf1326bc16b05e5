//! One listening connection per server: what other servers commit, as they commit it.
//!
//! A notification only says "room R is at version V now"; whoever acts on it reads what it
//! missed from the history, so order and completeness come from the database. When the
//! connection drops, notifications sent meanwhile are lost for good, so once it is back the
//! listener says [`Change::Resync`]: everything known about rooms may be behind. The first
//! connection is made before the server starts serving, so nothing is missed before it.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::time::Duration;

use sqlx::postgres::{PgListener, PgPoolOptions};
use tokio::sync::mpsc;

use super::presence::{self, PRESENCE_CHANNEL};
use super::{PgStore, CHANNEL};
use crate::domain::ids::{PlayerId, RoomId};
use crate::domain::records::LobbyChange;
use crate::store::chat_writes::LOBBY;
use crate::store::types::{Change, ChatChange};

/// The channel chat's changes are announced on (`Dialect::CHAT_NOTIFY` names it too).
const CHAT_CHANNEL: &str = "turnhouse_chat";

/// Changes waiting for the engine; beyond this the listener waits (and PostgreSQL buffers).
const BACKLOG: usize = 4096;
const FIRST_RETRY: Duration = Duration::from_millis(100);
const LAST_RETRY: Duration = Duration::from_secs(5);

impl PgStore {
    /// Starts listening, and returns once it does (so nothing this server serves can miss a
    /// change); the changes arrive on the receiver until it is dropped.
    pub(in crate::store) async fn listen(&self) -> Result<mpsc::Receiver<Change>, sqlx::Error> {
        let (changes, receiver) = mpsc::channel(BACKLOG);
        let options = (*self.read.connect_options())
            .clone()
            .application_name("turnhouse listener");
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .connect_lazy_with(options);
        let listener = connect(&pool).await?;
        tokio::spawn(listen(pool, listener, self.instance.clone(), changes));
        Ok(receiver)
    }
}

async fn listen(
    pool: sqlx::PgPool,
    mut listener: PgListener,
    instance: String,
    changes: mpsc::Sender<Change>,
) {
    loop {
        hear(&mut listener, &instance, &changes).await;
        drop(listener);
        let mut retry = FIRST_RETRY;
        listener = loop {
            if changes.is_closed() {
                return;
            }
            match connect(&pool).await {
                Ok(listener) => break listener,
                Err(err) => {
                    tracing::warn!(error = %err, retry_ms = retry.as_millis() as u64, "cannot listen for other servers' commits");
                    tokio::time::sleep(retry).await;
                    retry = (retry * 2).min(LAST_RETRY);
                }
            }
        };
        tracing::info!(
            "listening for other servers' commits again; open streams catch up from the history"
        );
        if changes.send(Change::Resync).await.is_err() {
            return;
        }
    }
}

/// Passes on notifications until the connection drops (or nobody wants them any more).
async fn hear(listener: &mut PgListener, instance: &str, changes: &mpsc::Sender<Change>) {
    loop {
        match listener.try_recv().await {
            Ok(Some(notification)) => {
                let change = match notification.channel() {
                    PRESENCE_CHANNEL => presence::parse(notification.payload(), instance)
                        .map(|(server, rooms)| Change::Presence { server, rooms }),
                    CHAT_CHANNEL => parse_chat(notification.payload(), instance).map(Change::Chat),
                    _ => parse(notification.payload(), instance),
                };
                let Some(change) = change else {
                    continue;
                };
                if changes.send(change).await.is_err() {
                    return;
                }
            }
            Ok(None) => {
                tracing::warn!("lost the connection listening for other servers' commits");
                return;
            }
            Err(err) => {
                tracing::warn!(error = %err, "lost the connection listening for other servers' commits");
                return;
            }
        }
    }
}

async fn connect(pool: &sqlx::PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    // Reconnecting is done here, so that every reconnection is followed by a resync.
    listener.eager_reconnect(false);
    listener
        .listen_all([CHANNEL, PRESENCE_CHANNEL, CHAT_CHANNEL])
        .await?;
    Ok(listener)
}

/// `<room> <version> <server> <lobby change or ->`; `None` for this server's own commits (it
/// published them itself) and for anything malformed.
fn parse(payload: &str, instance: &str) -> Option<Change> {
    let mut parts = payload.split(' ');
    let room = parts.next()?;
    let version = parts.next()?.parse().ok()?;
    if parts.next()? == instance {
        return None;
    }
    let lobby = match parts.next()? {
        "-" => None,
        change => Some(LobbyChange::parse(change)?),
    };
    Some(Change::Room {
        room: room.into(),
        version,
        lobby,
    })
}

/// `m <room or lobby> <server>` (messages written), `d <message> <room or lobby> <server>` (a
/// deletion), `b <player> <server>` (their blocks changed); as `parse`.
fn parse_chat(payload: &str, instance: &str) -> Option<ChatChange> {
    let mut parts: Vec<&str> = payload.split(' ').collect();
    if parts.pop()? == instance {
        return None;
    }
    let place = |name: &str| (name != LOBBY).then(|| RoomId::from(name));
    match parts[..] {
        ["m", room] => Some(ChatChange::Written { room: place(room) }),
        ["d", message, _] => Some(ChatChange::Deleted {
            message: message.parse().ok()?,
        }),
        ["b", player] => Some(ChatChange::Blocks(PlayerId::from(player))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_notification_names_what_changed_and_the_server() {
        assert_eq!(
            parse_chat("m r1 other", "me"),
            Some(ChatChange::Written {
                room: Some("r1".into())
            })
        );
        assert_eq!(
            parse_chat("m lobby other", "me"),
            Some(ChatChange::Written { room: None })
        );
        assert_eq!(
            parse_chat("d 12 r1 other", "me"),
            Some(ChatChange::Deleted { message: 12 })
        );
        assert_eq!(
            parse_chat("b p1 other", "me"),
            Some(ChatChange::Blocks("p1".into()))
        );
        assert_eq!(parse_chat("m r1 me", "me"), None, "our own");
        assert_eq!(parse_chat("d x r1 other", "me"), None);
        assert_eq!(parse_chat("x other", "me"), None);
    }

    #[test]
    fn a_notification_names_room_version_server_and_lobby_change() {
        assert_eq!(
            parse("r1 7 other created", "me"),
            Some(Change::Room {
                room: "r1".into(),
                version: 7,
                lobby: Some(LobbyChange::Created)
            })
        );
        assert_eq!(
            parse("r1 8 other -", "me"),
            Some(Change::Room {
                room: "r1".into(),
                version: 8,
                lobby: None
            })
        );
        assert_eq!(parse("r1 8 me -", "me"), None, "our own");
        assert_eq!(parse("r1 x other -", "me"), None);
        assert_eq!(parse("r1", "me"), None);
        assert_eq!(parse("r1 8 other moved", "me"), None, "an unknown change");
    }
}
