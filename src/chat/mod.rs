//! Chat: a room's table (its players) and gallery (its watchers, and its players once the
//! room is finished), and the lobby. Messages are rows of their own, never room versions,
//! each kept with the room's version when it was written. Players block others for
//! themselves; admins delete messages and mute players, each with its row of the audit log.

mod error;

pub use error::ChatError;

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::json;

use crate::domain::audit::{AuditAction, AuditEntry, Moderator};
use crate::domain::chat::{Channel, ChatMessage, ChatReport, RoomChat, MAX_MESSAGE_CHARS};
use crate::domain::ids::PlayerId;
use crate::domain::time::Timestamp;
use crate::game::PlayerRef;
use crate::live::{ChatFollow, ChatSignal, Hub, RoomSeat};
use crate::store::Store;

/// The most messages a page holds.
pub const MAX_PAGE: i64 = 100;

#[derive(Clone)]
pub struct Chat {
    store: Store,
    /// Where the streams hear of messages written, deleted, and blocks.
    hub: Arc<Hub>,
}

/// A message as written: trimmed, within the length, plain text (line breaks and tabs are
/// the only control characters kept).
fn checked_text(text: &str) -> Result<String, ChatError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(ChatError::InvalidMessage(
            "a message needs some text".into(),
        ));
    }
    let chars = text.chars().count();
    if chars > MAX_MESSAGE_CHARS {
        return Err(ChatError::InvalidMessage(format!(
            "a message is at most {MAX_MESSAGE_CHARS} characters; this one has {chars}"
        )));
    }
    if text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(ChatError::InvalidMessage(
            "a message is plain text: no control characters but line breaks and tabs".into(),
        ));
    }
    Ok(text.to_owned())
}

impl Chat {
    pub fn new(store: Store, hub: Arc<Hub>) -> Self {
        Self { store, hub }
    }

    /// Keeps a message and tells the streams of its place.
    async fn send(
        &self,
        room_id: Option<&str>,
        channel: Channel,
        author: &PlayerRef,
        text: &str,
    ) -> Result<ChatMessage, ChatError> {
        let (message, prev) = (self.store)
            .send_chat(room_id, channel, author, text)
            .await?;
        let signal = ChatSignal::written(message.clone(), prev);
        self.hub.publish_chat(room_id, signal);
        Ok(message)
    }

    /// What a stream of room `room_id` shows `viewer` of its chat, after message `after` (from
    /// when the stream starts with `None`); `None` where the room has no chat (or is not).
    pub async fn follow_room(
        &self,
        room_id: &str,
        viewer: Option<&PlayerId>,
        after: Option<i64>,
    ) -> Result<Option<ChatFollow>, ChatError> {
        let room = self.store.room_chat(room_id, viewer).await?;
        let Some(room) = room.filter(|room| room.chat) else {
            return Ok(None);
        };
        let seat = RoomSeat {
            seated: room.seated,
            finished: room.finished,
        };
        let blocked = self.blocked_by(viewer).await?;
        let place = Some((room_id.to_owned(), seat));
        let follow = ChatFollow::new(self.store.clone(), place, viewer.cloned(), blocked, after);
        Ok(Some(follow))
    }

    /// What a lobby stream shows `viewer` of the lobby's chat, after message `after` (from when
    /// the stream starts with `None`).
    pub async fn follow_lobby(
        &self,
        viewer: Option<&PlayerId>,
        after: Option<i64>,
    ) -> Result<ChatFollow, ChatError> {
        let blocked = self.blocked_by(viewer).await?;
        Ok(ChatFollow::new(
            self.store.clone(),
            None,
            viewer.cloned(),
            blocked,
            after,
        ))
    }

    async fn blocked_by(&self, viewer: Option<&PlayerId>) -> Result<HashSet<PlayerId>, ChatError> {
        Ok(match viewer {
            Some(viewer) => (self.store.blocks_of(viewer).await?)
                .into_iter()
                .map(|p| p.id)
                .collect(),
            None => HashSet::new(),
        })
    }

    /// `ChatError::Muted` while an admin's mute of the player lasts.
    async fn not_muted(&self, player: &PlayerId) -> Result<(), ChatError> {
        match self.store.chat_muted_until(player).await? {
            Some(until) if until > Timestamp::now() => Err(ChatError::Muted(until)),
            _ => Ok(()),
        }
    }

    async fn room(&self, room_id: &str, viewer: Option<&PlayerId>) -> Result<RoomChat, ChatError> {
        let room = self.store.room_chat(room_id, viewer).await?;
        let room = room.ok_or(ChatError::RoomNotFound)?;
        match room.chat {
            true => Ok(room),
            false => Err(ChatError::ChatOff),
        }
    }

    async fn stored(&self, id: i64) -> Result<ChatMessage, ChatError> {
        self.store
            .chat_message(id)
            .await?
            .ok_or(ChatError::MessageNotFound)
    }

    /// Writes at a room's table (its players) or in its gallery (anyone else).
    pub async fn send_to_room(
        &self,
        author: &PlayerRef,
        room_id: &str,
        channel: Channel,
        text: &str,
    ) -> Result<ChatMessage, ChatError> {
        let text = checked_text(text)?;
        let room = self.room(room_id, Some(&author.id)).await?;
        match channel {
            Channel::Table if !room.seated => {
                return Err(ChatError::NotAllowed(
                    "only the room's players write at its table",
                ))
            }
            Channel::Gallery if room.seated => {
                return Err(ChatError::NotAllowed(
                    "the room's players write at its table; the gallery is its watchers'",
                ))
            }
            Channel::Gallery if room.gallery_closed => return Err(ChatError::GalleryClosed),
            Channel::Lobby => {
                return Err(ChatError::NotAllowed("the lobby's chat is at /lobby/chat"))
            }
            _ => {}
        }
        self.not_muted(&author.id).await?;
        self.send(Some(room_id), channel, author, &text).await
    }

    /// A room's messages of `channel` after id `after`, oldest first, as `viewer` may read
    /// them: the table its players, the gallery anyone but its players until the room is
    /// finished, and neither with the messages of players the viewer blocked.
    pub async fn room_history(
        &self,
        viewer: Option<&PlayerRef>,
        room_id: &str,
        channel: Channel,
        after: i64,
        limit: i64,
    ) -> Result<Vec<ChatMessage>, ChatError> {
        let viewer_id = viewer.map(|v| &v.id);
        let room = self.room(room_id, viewer_id).await?;
        match channel {
            Channel::Table if !room.seated => {
                return Err(ChatError::NotAllowed(
                    "only the room's players read its table",
                ))
            }
            Channel::Gallery if room.seated && !room.finished => {
                return Err(ChatError::NotAllowed(
                    "the room's players read its gallery once the room is finished",
                ))
            }
            Channel::Lobby => {
                return Err(ChatError::NotAllowed("the lobby's chat is at /lobby/chat"))
            }
            _ => {}
        }
        let limit = limit.clamp(1, MAX_PAGE);
        Ok(self
            .store
            .room_chat_after(room_id, channel, after, viewer_id, limit)
            .await?)
    }

    pub async fn send_to_lobby(
        &self,
        author: &PlayerRef,
        text: &str,
    ) -> Result<ChatMessage, ChatError> {
        let text = checked_text(text)?;
        self.not_muted(&author.id).await?;
        self.send(None, Channel::Lobby, author, &text).await
    }

    /// The lobby's messages after id `after`, or the page before `before` (with both, of
    /// those after `after`); oldest first either way.
    pub async fn lobby_history(
        &self,
        viewer: Option<&PlayerRef>,
        after: Option<i64>,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<ChatMessage>, ChatError> {
        let limit = limit.clamp(1, MAX_PAGE);
        let viewer = viewer.map(|v| &v.id);
        let mut page = self.store.lobby_chat(after, before, viewer, limit).await?;
        if let (Some(after), Some(_)) = (after, before) {
            page.retain(|m| m.id > after);
        }
        page.sort_by_key(|m| m.id);
        Ok(page)
    }

    /// A player's report of a message, for the admins.
    pub async fn report(
        &self,
        reporter: &PlayerRef,
        message: i64,
        reason: &str,
    ) -> Result<(), ChatError> {
        self.stored(message).await?;
        Ok(self
            .store
            .report_chat(message, &reporter.id, reason.trim(), Timestamp::now())
            .await?)
    }

    /// Reports of messages not deleted yet, newest first.
    pub async fn reports(&self, limit: i64) -> Result<Vec<ChatReport>, ChatError> {
        Ok(self
            .store
            .open_chat_reports(limit.clamp(1, MAX_PAGE))
            .await?)
    }

    /// An admin deletes a message for everyone: its text is gone, the audit log keeps it.
    /// Deleting it again changes nothing.
    pub async fn delete(
        &self,
        admin: &Moderator,
        message: i64,
        reason: &str,
    ) -> Result<ChatMessage, ChatError> {
        let found = self.stored(message).await?;
        let details = json!({
            "message": found.id,
            "room": found.room_id,
            "channel": found.channel.as_str(),
            "text": found.text,
        });
        let target = ("player", found.author.id.as_str());
        let audit = AuditEntry::new(
            Some(admin),
            AuditAction::DeleteChatMessage,
            target,
            reason,
            details,
        );
        let deleted = self.store.delete_chat(message, audit).await?;
        let now = self.stored(message).await?;
        if deleted {
            let signal = ChatSignal::deleted(now.clone());
            self.hub.publish_chat(now.room_id.as_deref(), signal);
        }
        Ok(now)
    }

    /// An admin mutes a player for `minutes` (0 lifts the mute): the player, and until when.
    pub async fn mute(
        &self,
        admin: &Moderator,
        player: &PlayerId,
        minutes: f64,
        reason: &str,
    ) -> Result<(PlayerRef, Option<Timestamp>), ChatError> {
        let until = (minutes > 0.0)
            .then(|| Timestamp::now().after(std::time::Duration::from_secs_f64(minutes * 60.0)));
        let details = json!({ "minutes": minutes, "until": until.map(|u| u.to_string()) });
        let audit = AuditEntry::new(
            Some(admin),
            AuditAction::MuteChat,
            ("player", player.as_str()),
            reason,
            details,
        );
        let muted = self.store.mute_chat(player, until, audit).await?;
        Ok((muted.ok_or(ChatError::PlayerNotFound)?, until))
    }

    /// `player` no longer sees `blocked`'s messages, in any chat.
    pub async fn block(&self, player: &PlayerRef, blocked: &PlayerId) -> Result<(), ChatError> {
        if *blocked == player.id {
            return Err(ChatError::BlockingYourself);
        }
        if self.store.account(blocked.as_str()).await?.is_none() {
            return Err(ChatError::PlayerNotFound);
        }
        self.store
            .block(&player.id, blocked, Timestamp::now())
            .await?;
        self.hub.chat_blocks_changed(&player.id);
        Ok(())
    }

    /// Whether `player` had blocked `blocked`.
    pub async fn unblock(&self, player: &PlayerRef, blocked: &PlayerId) -> Result<bool, ChatError> {
        let unblocked = self.store.unblock(&player.id, blocked).await?;
        self.hub.chat_blocks_changed(&player.id);
        Ok(unblocked)
    }

    pub async fn blocks(&self, player: &PlayerRef) -> Result<Vec<PlayerRef>, ChatError> {
        Ok(self.store.blocks_of(&player.id).await?)
    }

    /// The room's opener closes its gallery: nobody writes there any more.
    pub async fn close_gallery(&self, player: &PlayerRef, room_id: &str) -> Result<(), ChatError> {
        let room = self.store.room_chat(room_id, Some(&player.id)).await?;
        let room = room.ok_or(ChatError::RoomNotFound)?;
        if room.opener.as_ref() != Some(&player.id) {
            return Err(ChatError::NotTheOpener);
        }
        Ok(self.store.close_gallery(room_id).await?)
    }
}
