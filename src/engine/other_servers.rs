//! Following other servers on a shared PostgreSQL database: each commit they announce evicts
//! this server's copy of the room, wakes the streams watching it here (which read the new
//! versions from the history) and, for a public room whose lobby entry changed, tells this
//! server's lobby streams.
//!
//! One stop in the life of a move: `docs/internals.md`.

use tokio::sync::mpsc;

use super::Engine;
use crate::live::ChatSignal;
use crate::store::{Change, ChatChange};

pub(super) async fn follow(mut changes: mpsc::Receiver<Change>, engine: Engine) {
    let (rooms, hub) = (&engine.rooms, &engine.hub);
    while let Some(change) = changes.recv().await {
        match change {
            Change::Room {
                room,
                version,
                lobby,
            } => {
                rooms.saw_version(&room, version);
                hub.poke(&room, version);
                if let Some(change) = lobby.filter(|_| hub.lobby_watched()) {
                    // The lobby shows the room as it is; reading it must not hold up the
                    // changes behind this one.
                    let engine = engine.clone();
                    tokio::spawn(async move {
                        match engine.store.room(&room).await {
                            Ok(Some(room)) => engine.tell_lobby(&room, change).await,
                            Ok(None) => {}
                            Err(err) => {
                                tracing::warn!(error = %err, %room, "could not read a room another server changed")
                            }
                        }
                    });
                }
            }
            Change::Presence { server, rooms } => engine.presence.heard(&server, rooms),
            Change::Chat(change) => heard_chat(&engine, change),
            Change::Resync => {
                rooms.clear();
                hub.resync();
            }
        }
    }
}

/// Tells this server's streams what another server did to a chat: they read new messages
/// from the history; a deletion is read here once, for all of them.
fn heard_chat(engine: &Engine, change: ChatChange) {
    let hub = &engine.hub;
    match change {
        ChatChange::Written { room } => hub.publish_chat(room.as_deref(), ChatSignal::Reached),
        ChatChange::Blocks(player) => hub.chat_blocks_changed(&player),
        ChatChange::Deleted { message } => {
            let engine = engine.clone();
            tokio::spawn(async move {
                match engine.store.chat_message(message).await {
                    Ok(Some(message)) => {
                        let room = message.room_id.clone();
                        (engine.hub).publish_chat(room.as_deref(), ChatSignal::deleted(message));
                    }
                    Ok(None) => {}
                    Err(err) => {
                        tracing::warn!(error = %err, message, "could not read a message another server deleted")
                    }
                }
            });
        }
    }
}
