//! Chat's rows: messages (a room's table and gallery, the lobby), reports of them, players'
//! blocks, admins' mutes and deletions (each with its row of the audit log, in one commit),
//! and rooms whose gallery their opener closed.

use sqlx::Pool;

use super::chat_writes::{ChatWrite, ChatWritten, LAST_LOBBY_MESSAGE, LAST_ROOM_MESSAGE};
use super::dialect::Dialect;
use super::queue::Job;
use super::sql::Statement;
use super::types::StoreError;
use super::Store;
use crate::domain::audit::AuditEntry;
use crate::domain::chat::{Channel, ChatMessage, ChatReport, RoomChat};
use crate::domain::ids::PlayerId;
use crate::domain::time::Timestamp;
use crate::game::PlayerRef;

/// Messages (`m`) with their authors' names (`p`), as [`message`] reads them; the statements
/// below add their conditions.
macro_rules! messages_from {
    () => {
        "SELECT m.id, m.room_id, m.channel, m.player_id, p.username, m.body, m.room_version, \
         m.created_at, m.deleted_at FROM chat_messages m JOIN players p ON p.id = m.player_id "
    };
}

/// Leaves out the messages of the players viewer `$n` blocked.
macro_rules! unblocked {
    ($viewer:literal) => {
        concat!(
            "AND NOT EXISTS (SELECT 1 FROM player_blocks b WHERE b.player_id = ",
            $viewer,
            " AND b.blocked_id = m.player_id) "
        )
    };
}

/// Messages of room `$1`'s channel `$2` after id `$3`, oldest first, at most `$5`, but those
/// of players viewer `$4` blocked.
pub(super) const ROOM_MESSAGES_AFTER: &str = concat!(
    messages_from!(),
    "WHERE m.room_id = $1 AND m.channel = $2 AND m.id > $3 ",
    unblocked!("$4"),
    "ORDER BY m.id LIMIT $5"
);

/// Every message of room `$1` after id `$2`, of either channel, oldest first, at most `$3`:
/// what a stream of the room catches up on (it leaves out what its viewer may not read).
pub(super) const ROOM_STREAM_AFTER: &str = concat!(
    messages_from!(),
    "WHERE m.room_id = $1 AND m.id > $2 ORDER BY m.id LIMIT $3"
);

/// The lobby's messages after id `$1`, oldest first, at most `$3`, but those of players
/// viewer `$2` blocked.
pub(super) const LOBBY_MESSAGES_AFTER: &str = concat!(
    messages_from!(),
    "WHERE m.room_id IS NULL AND m.channel = 'lobby' AND m.id > $1 ",
    unblocked!("$2"),
    "ORDER BY m.id LIMIT $3"
);

/// The lobby's messages before id `$1`, newest first, at most `$3`, but those of players
/// viewer `$2` blocked: a page further back.
pub(super) const LOBBY_MESSAGES_BEFORE: &str = concat!(
    messages_from!(),
    "WHERE m.room_id IS NULL AND m.channel = 'lobby' AND m.id < $1 ",
    unblocked!("$2"),
    "ORDER BY m.id DESC LIMIT $3"
);

/// Message `$1`.
pub(super) const MESSAGE: &str = concat!(messages_from!(), "WHERE m.id = $1");

/// What decides who may read and write room `$1`'s chat, for player `$2`.
pub(super) const ROOM_CHAT: &str = "SELECT r.finished, r.version, COALESCE(v.chat, TRUE) AS chat, \
     EXISTS (SELECT 1 FROM room_players s WHERE s.room_id = r.id AND s.player_id = $2) AS seated, \
     EXISTS (SELECT 1 FROM closed_galleries g WHERE g.room_id = r.id) AS gallery_closed, \
     (SELECT e.player_id FROM room_events e WHERE e.room_id = r.id AND e.version = 1) AS opener \
     FROM rooms r LEFT JOIN game_versions v ON v.game_id = r.game AND v.version = r.game_version \
     WHERE r.id = $1";

/// Until when player `$1` may not chat (null: they may).
pub(super) const MUTED_UNTIL: &str = "SELECT chat_muted_until FROM players WHERE id = $1";

/// The reports of messages not deleted, newest first, at most `$1`.
pub(super) const OPEN_REPORTS: &str = "SELECT m.id, m.room_id, m.channel, m.player_id, \
     p.username, m.body, m.room_version, m.created_at, m.deleted_at, \
     r.reporter_id, rp.username AS reporter_name, r.reason, r.created_at AS reported_at \
     FROM chat_reports r JOIN chat_messages m ON m.id = r.message_id \
     JOIN players p ON p.id = m.player_id JOIN players rp ON rp.id = r.reporter_id \
     WHERE m.deleted_at IS NULL ORDER BY r.created_at DESC, m.id DESC LIMIT $1";

/// Who player `$1` blocked, in the order they did.
pub(super) const BLOCKS_OF: &str = "SELECT p.id, p.username FROM player_blocks b \
     JOIN players p ON p.id = b.blocked_id WHERE b.player_id = $1 ORDER BY b.created_at, p.id";

fn message<D: Dialect>(row: &D::Row) -> Result<ChatMessage, StoreError> {
    let channel = D::text(row, "channel")?;
    Ok(ChatMessage {
        id: D::int(row, "id")?,
        room_id: D::maybe_text(row, "room_id")?,
        channel: Channel::parse(&channel)
            .ok_or_else(|| StoreError::Corrupt(format!("a message's channel is `{channel}`")))?,
        author: PlayerRef {
            id: D::text(row, "player_id")?.into(),
            username: D::text(row, "username")?,
        },
        text: D::maybe_text(row, "body")?,
        room_version: D::maybe_int(row, "room_version")?,
        created_at: D::time(row, "created_at")?,
        deleted_at: D::maybe_time(row, "deleted_at")?,
    })
}

async fn messages<D: Dialect>(
    pool: &Pool<D>,
    statement: Statement,
) -> Result<Vec<ChatMessage>, StoreError> {
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    rows.iter().map(message::<D>).collect()
}

async fn last_id<D: Dialect>(pool: &Pool<D>, statement: Statement) -> Result<i64, StoreError> {
    let row = D::fetch_optional(&mut *pool.acquire().await?, statement).await?;
    row.map_or(Ok(0), |row| D::int(&row, "id"))
}

async fn one_message<D: Dialect>(
    pool: &Pool<D>,
    id: i64,
) -> Result<Option<ChatMessage>, StoreError> {
    let statement = Statement::new(MESSAGE).bind(id);
    let row = D::fetch_optional(&mut *pool.acquire().await?, statement).await?;
    row.as_ref().map(message::<D>).transpose()
}

async fn room_chat<D: Dialect>(
    pool: &Pool<D>,
    room_id: &str,
    player: &str,
) -> Result<Option<RoomChat>, StoreError> {
    let statement = Statement::new(ROOM_CHAT).bind(room_id).bind(player);
    let Some(row) = D::fetch_optional(&mut *pool.acquire().await?, statement).await? else {
        return Ok(None);
    };
    Ok(Some(RoomChat {
        finished: D::flag(&row, "finished")?,
        version: D::int(&row, "version")?,
        chat: D::flag(&row, "chat")?,
        seated: D::flag(&row, "seated")?,
        gallery_closed: D::flag(&row, "gallery_closed")?,
        opener: D::maybe_text(&row, "opener")?.map(PlayerId::from),
    }))
}

async fn muted_until<D: Dialect>(
    pool: &Pool<D>,
    player: &str,
) -> Result<Option<Timestamp>, StoreError> {
    let statement = Statement::new(MUTED_UNTIL).bind(player);
    match D::fetch_optional(&mut *pool.acquire().await?, statement).await? {
        Some(row) => D::maybe_time(&row, "chat_muted_until"),
        None => Ok(None),
    }
}

async fn open_reports<D: Dialect>(
    pool: &Pool<D>,
    limit: i64,
) -> Result<Vec<ChatReport>, StoreError> {
    let statement = Statement::new(OPEN_REPORTS).bind(limit);
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    rows.iter()
        .map(|row| {
            Ok(ChatReport {
                message: message::<D>(row)?,
                reporter: PlayerRef {
                    id: D::text(row, "reporter_id")?.into(),
                    username: D::text(row, "reporter_name")?,
                },
                reason: D::text(row, "reason")?,
                created_at: D::time(row, "reported_at")?,
            })
        })
        .collect()
}

async fn blocks_of<D: Dialect>(pool: &Pool<D>, player: &str) -> Result<Vec<PlayerRef>, StoreError> {
    let statement = Statement::new(BLOCKS_OF).bind(player);
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    rows.iter()
        .map(|row| {
            Ok(PlayerRef {
                id: D::text(row, "id")?.into(),
                username: D::text(row, "username")?,
            })
        })
        .collect()
}

/// The store's side of chat.
impl Store {
    async fn chat_write(&self, write: ChatWrite) -> Result<ChatWritten, StoreError> {
        let (job, reply) = Job::new(write);
        let (_, output) = self.writer.write(job.into(), reply).await?;
        Ok(output)
    }

    /// Keeps a message, written now: the message as kept, and the id of the message written
    /// before it in the same place (0 if none), which a stream that has that one can follow on
    /// from.
    pub async fn send_chat(
        &self,
        room_id: Option<&str>,
        channel: Channel,
        author: &PlayerRef,
        text: &str,
    ) -> Result<(ChatMessage, i64), StoreError> {
        let at = Timestamp::now();
        let write = ChatWrite::Send {
            room_id: room_id.map(str::to_owned),
            channel,
            author: author.id.clone(),
            text: text.to_owned(),
            at,
        };
        match self.chat_write(write).await? {
            ChatWritten::Message(id, room_version, prev) => Ok((
                ChatMessage {
                    id,
                    room_id: room_id.map(str::to_owned),
                    channel,
                    author: author.clone(),
                    text: Some(text.to_owned()),
                    room_version,
                    created_at: at,
                    deleted_at: None,
                },
                prev,
            )),
            _ => Err(StoreError::Corrupt("a message's write said no id".into())),
        }
    }

    /// A room's messages of `channel` after id `after`, oldest first, at most `limit`, but
    /// those of players `viewer` blocked.
    pub async fn room_chat_after(
        &self,
        room_id: &str,
        channel: Channel,
        after: i64,
        viewer: Option<&PlayerId>,
        limit: i64,
    ) -> Result<Vec<ChatMessage>, StoreError> {
        let statement = Statement::new(ROOM_MESSAGES_AFTER)
            .bind(room_id)
            .bind(channel.as_str())
            .bind(after)
            .bind(viewer.map(|v| v.as_str()).unwrap_or_default())
            .bind(limit);
        read!(self, |pool| messages(pool, statement))
    }

    /// The lobby's messages after id `after` (oldest first) or, with `before`, the page
    /// before it (newest first); at most `limit`, but those of players `viewer` blocked.
    pub async fn lobby_chat(
        &self,
        after: Option<i64>,
        before: Option<i64>,
        viewer: Option<&PlayerId>,
        limit: i64,
    ) -> Result<Vec<ChatMessage>, StoreError> {
        let viewer = viewer.map(|v| v.as_str()).unwrap_or_default();
        let statement = match before {
            Some(before) => Statement::new(LOBBY_MESSAGES_BEFORE).bind(before),
            None => Statement::new(LOBBY_MESSAGES_AFTER).bind(after.unwrap_or(0)),
        }
        .bind(viewer)
        .bind(limit);
        read!(self, |pool| messages(pool, statement))
    }

    /// Every message of a room after id `after`, of either channel, oldest first, at most
    /// `limit`.
    pub async fn room_chat_stream(
        &self,
        room_id: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<ChatMessage>, StoreError> {
        let statement = Statement::new(ROOM_STREAM_AFTER)
            .bind(room_id)
            .bind(after)
            .bind(limit);
        read!(self, |pool| messages(pool, statement))
    }

    /// The id of the last message written in a room (the lobby with `None`); 0 before the
    /// first.
    pub async fn last_chat_message(&self, room_id: Option<&str>) -> Result<i64, StoreError> {
        let statement = match room_id {
            Some(room) => Statement::new(LAST_ROOM_MESSAGE).bind(room),
            None => Statement::new(LAST_LOBBY_MESSAGE),
        };
        read!(self, |pool| last_id(pool, statement))
    }

    pub async fn chat_message(&self, id: i64) -> Result<Option<ChatMessage>, StoreError> {
        read!(self, |pool| one_message(pool, id))
    }

    /// What decides who may read and write room `room_id`'s chat, for `player` (`None`: no
    /// such room).
    pub async fn room_chat(
        &self,
        room_id: &str,
        player: Option<&PlayerId>,
    ) -> Result<Option<RoomChat>, StoreError> {
        let player = player.map(|p| p.as_str()).unwrap_or_default();
        read!(self, |pool| room_chat(pool, room_id, player))
    }

    /// Until when the player may not chat.
    pub async fn chat_muted_until(
        &self,
        player: &PlayerId,
    ) -> Result<Option<Timestamp>, StoreError> {
        read!(self, |pool| muted_until(pool, player.as_str()))
    }

    /// Reports a message (a second report by the same player changes nothing).
    pub async fn report_chat(
        &self,
        message: i64,
        reporter: &PlayerId,
        reason: &str,
        at: Timestamp,
    ) -> Result<(), StoreError> {
        let write = ChatWrite::Report {
            message,
            reporter: reporter.clone(),
            reason: reason.to_owned(),
            at,
        };
        self.chat_write(write).await.map(|_| ())
    }

    /// Reports of messages not deleted, newest first.
    pub async fn open_chat_reports(&self, limit: i64) -> Result<Vec<ChatReport>, StoreError> {
        read!(self, |pool| open_reports(pool, limit))
    }

    /// Removes a message's text, with its row of the audit log: whether it had any.
    pub async fn delete_chat(&self, message: i64, audit: AuditEntry) -> Result<bool, StoreError> {
        match self
            .chat_write(ChatWrite::Delete { message, audit })
            .await?
        {
            ChatWritten::Changed(changed) => Ok(changed),
            _ => Ok(false),
        }
    }

    /// Mutes a player until `until` (`None` lifts it), with its row of the audit log: the
    /// player, if there is one.
    pub async fn mute_chat(
        &self,
        player: &PlayerId,
        until: Option<Timestamp>,
        audit: AuditEntry,
    ) -> Result<Option<PlayerRef>, StoreError> {
        let write = ChatWrite::Mute {
            player: player.clone(),
            until,
            audit,
        };
        match self.chat_write(write).await? {
            ChatWritten::Player(player) => Ok(player),
            _ => Ok(None),
        }
    }

    pub async fn block(
        &self,
        player: &PlayerId,
        blocked: &PlayerId,
        at: Timestamp,
    ) -> Result<(), StoreError> {
        let write = ChatWrite::Block {
            player: player.clone(),
            blocked: blocked.clone(),
            at,
        };
        self.chat_write(write).await.map(|_| ())
    }

    /// Whether the player had blocked that one.
    pub async fn unblock(&self, player: &PlayerId, blocked: &PlayerId) -> Result<bool, StoreError> {
        let write = ChatWrite::Unblock {
            player: player.clone(),
            blocked: blocked.clone(),
        };
        match self.chat_write(write).await? {
            ChatWritten::Changed(changed) => Ok(changed),
            _ => Ok(false),
        }
    }

    pub async fn blocks_of(&self, player: &PlayerId) -> Result<Vec<PlayerRef>, StoreError> {
        read!(self, |pool| blocks_of(pool, player.as_str()))
    }

    pub async fn close_gallery(&self, room_id: &str) -> Result<(), StoreError> {
        let write = ChatWrite::CloseGallery {
            room_id: room_id.to_owned(),
        };
        self.chat_write(write).await.map(|_| ())
    }
}
