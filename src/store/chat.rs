//! Chat's rows: messages (a room's table and gallery, the lobby), reports of them, players'
//! blocks, admins' mutes and deletions (each with its row of the audit log, in one commit),
//! and rooms whose gallery their opener closed.

use sqlx::Pool;

use super::dialect::Dialect;
use super::moderation::insert_audit;
use super::queue::{Job, WriteStep};
use super::sql::Statement;
use super::types::StoreError;
use super::Store;
use crate::domain::audit::AuditEntry;
use crate::domain::chat::{Channel, ChatMessage, ChatReport, RoomChat};
use crate::domain::ids::PlayerId;
use crate::domain::time::Timestamp;
use crate::game::PlayerRef;

/// A message (`$1` room or null, `$2` channel, `$3` author, `$4` text, `$6` when), with the
/// room's version as it is now; returns its id and that version.
pub(super) const INSERT_MESSAGE: &str = "INSERT INTO chat_messages \
     (room_id, channel, player_id, body, room_version, created_at) \
     SELECT $1, $2, $3, $4, (SELECT version FROM rooms WHERE id = $5), $6 \
     RETURNING id, room_version";

/// The id of the last message written in room `$1` (0 before the first).
pub(super) const LAST_ROOM_MESSAGE: &str =
    "SELECT COALESCE(MAX(id), 0) AS id FROM chat_messages WHERE room_id = $1";

/// The id of the last message written in the lobby (0 before the first).
pub(super) const LAST_LOBBY_MESSAGE: &str = "SELECT COALESCE(MAX(id), 0) AS id FROM chat_messages \
     WHERE room_id IS NULL AND channel = 'lobby'";

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

/// Player `$1` mutes until `$2` (null lifts it); returns the player.
pub(super) const MUTE: &str =
    "UPDATE players SET chat_muted_until = $2 WHERE id = $1 RETURNING id, username";

/// Message `$1`'s text removed at `$2`, unless it already was; returns it.
pub(super) const DELETE_MESSAGE: &str = "UPDATE chat_messages SET body = NULL, deleted_at = $2 \
     WHERE id = $1 AND deleted_at IS NULL RETURNING id, room_id";

/// Player `$2`'s report of message `$1` for reason `$3` at `$4`, once.
pub(super) const INSERT_REPORT: &str = "INSERT INTO chat_reports (message_id, reporter_id, \
     reason, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (message_id, reporter_id) DO NOTHING";

/// The reports of messages not deleted, newest first, at most `$1`.
pub(super) const OPEN_REPORTS: &str = "SELECT m.id, m.room_id, m.channel, m.player_id, \
     p.username, m.body, m.room_version, m.created_at, m.deleted_at, \
     r.reporter_id, rp.username AS reporter_name, r.reason, r.created_at AS reported_at \
     FROM chat_reports r JOIN chat_messages m ON m.id = r.message_id \
     JOIN players p ON p.id = m.player_id JOIN players rp ON rp.id = r.reporter_id \
     WHERE m.deleted_at IS NULL ORDER BY r.created_at DESC, m.id DESC LIMIT $1";

/// Player `$1` blocks player `$2` at `$3` (again: nothing changes).
pub(super) const BLOCK: &str = "INSERT INTO player_blocks (player_id, blocked_id, created_at) \
     VALUES ($1, $2, $3) ON CONFLICT (player_id, blocked_id) DO NOTHING";

/// Player `$1` unblocks player `$2`; returns whether they had.
pub(super) const UNBLOCK: &str =
    "DELETE FROM player_blocks WHERE player_id = $1 AND blocked_id = $2 RETURNING blocked_id";

/// Who player `$1` blocked, in the order they did.
pub(super) const BLOCKS_OF: &str = "SELECT p.id, p.username FROM player_blocks b \
     JOIN players p ON p.id = b.blocked_id WHERE b.player_id = $1 ORDER BY b.created_at, p.id";

/// Room `$1`'s gallery closed by its opener.
pub(super) const CLOSE_GALLERY: &str =
    "INSERT INTO closed_galleries (room_id) VALUES ($1) ON CONFLICT (room_id) DO NOTHING";

/// What the writer does for chat.
pub(super) enum ChatWrite {
    Send {
        room_id: Option<String>,
        channel: Channel,
        author: PlayerId,
        text: String,
        at: Timestamp,
    },
    Report {
        message: i64,
        reporter: PlayerId,
        reason: String,
        at: Timestamp,
    },
    Delete {
        message: i64,
        audit: AuditEntry,
    },
    Mute {
        player: PlayerId,
        until: Option<Timestamp>,
        audit: AuditEntry,
    },
    Block {
        player: PlayerId,
        blocked: PlayerId,
        at: Timestamp,
    },
    Unblock {
        player: PlayerId,
        blocked: PlayerId,
    },
    CloseGallery {
        room_id: String,
    },
}

/// What a chat write produced: a message kept, the player muted, or whether it changed
/// anything.
pub(super) enum ChatWritten {
    /// A message's id, the room's version it was written at, and the id of the message
    /// written before it in the same place (0 if none).
    Message(i64, Option<i64>, i64),
    Player(Option<PlayerRef>),
    Changed(bool),
}

impl WriteStep for ChatWrite {
    type Output = ChatWritten;

    async fn apply<D: Dialect>(&self, conn: &mut D::Connection) -> Result<ChatWritten, StoreError> {
        Ok(match self {
            ChatWrite::Send {
                room_id,
                channel,
                author,
                text,
                at,
            } => {
                let place = room_id.as_deref();
                let prev = last_message::<D>(conn, place).await?;
                let (id, version) =
                    insert_message::<D>(conn, room_id, *channel, author, text, *at).await?;
                announce::<D>(conn, &format!("m {}", place.unwrap_or(LOBBY))).await?;
                ChatWritten::Message(id, version, prev)
            }
            ChatWrite::Report {
                message,
                reporter,
                reason,
                at,
            } => {
                let statement = Statement::new(INSERT_REPORT)
                    .bind(*message)
                    .bind(reporter.as_str())
                    .bind(reason.as_str())
                    .bind(*at);
                D::execute(conn, statement).await?;
                ChatWritten::Changed(true)
            }
            ChatWrite::Delete { message, audit } => {
                let statement = Statement::new(DELETE_MESSAGE).bind(*message).bind(audit.at);
                let deleted = D::fetch_optional(conn, statement).await?;
                if let Some(row) = &deleted {
                    insert_audit(conn, audit).await?;
                    let place = D::maybe_text(row, "room_id")?;
                    let place = place.as_deref().unwrap_or(LOBBY);
                    announce::<D>(conn, &format!("d {message} {place}")).await?;
                }
                ChatWritten::Changed(deleted.is_some())
            }
            ChatWrite::Mute {
                player,
                until,
                audit,
            } => ChatWritten::Player(mute::<D>(conn, player, *until, audit).await?),
            ChatWrite::Block {
                player,
                blocked,
                at,
            } => {
                let statement = Statement::new(BLOCK)
                    .bind(player.as_str())
                    .bind(blocked.as_str())
                    .bind(*at);
                D::execute(conn, statement).await?;
                announce::<D>(conn, &format!("b {player}")).await?;
                ChatWritten::Changed(true)
            }
            ChatWrite::Unblock { player, blocked } => {
                let statement = Statement::new(UNBLOCK)
                    .bind(player.as_str())
                    .bind(blocked.as_str());
                let unblocked = D::fetch_optional(conn, statement).await?.is_some();
                announce::<D>(conn, &format!("b {player}")).await?;
                ChatWritten::Changed(unblocked)
            }
            ChatWrite::CloseGallery { room_id } => {
                let statement = Statement::new(CLOSE_GALLERY).bind(room_id.as_str());
                D::execute(conn, statement).await?;
                ChatWritten::Changed(true)
            }
        })
    }
}

/// The lobby's name as a place messages are written (room ids are hex, so never this).
pub const LOBBY: &str = "lobby";

/// The id of the last message written in room `place` (the lobby with `None`), after taking
/// the place's lock where other servers write too: the message written next follows it.
async fn last_message<D: Dialect>(
    conn: &mut D::Connection,
    place: Option<&str>,
) -> Result<i64, StoreError> {
    if let Some(lock) = D::CHAT_LOCK {
        D::execute(conn, Statement::new(lock).bind(place.unwrap_or(LOBBY))).await?;
    }
    let statement = match place {
        Some(room) => Statement::new(LAST_ROOM_MESSAGE).bind(room),
        None => Statement::new(LAST_LOBBY_MESSAGE),
    };
    let row = D::fetch_optional(conn, statement).await?;
    row.map_or(Ok(0), |row| D::int(&row, "id"))
}

/// Tells other servers of a chat change once it commits, where there are any.
async fn announce<D: Dialect>(conn: &mut D::Connection, change: &str) -> Result<(), StoreError> {
    match D::CHAT_NOTIFY {
        Some(notify) => D::execute(conn, Statement::new(notify).bind(change)).await,
        None => Ok(()),
    }
}

/// Inserts a message; its id, and the room's version it was written at.
async fn insert_message<D: Dialect>(
    conn: &mut D::Connection,
    room_id: &Option<String>,
    channel: Channel,
    author: &PlayerId,
    text: &str,
    at: Timestamp,
) -> Result<(i64, Option<i64>), StoreError> {
    let statement = Statement::new(INSERT_MESSAGE)
        .bind(room_id.clone())
        .bind(channel.as_str())
        .bind(author.as_str())
        .bind(text)
        .bind(room_id.clone().unwrap_or_default())
        .bind(at);
    let row = D::fetch_optional(conn, statement).await?;
    let row = row.ok_or_else(|| StoreError::Corrupt("no message id".into()))?;
    Ok((D::int(&row, "id")?, D::maybe_int(&row, "room_version")?))
}

/// Mutes a player until `until` (`None` lifts it), with the audit's row: the player, if any.
async fn mute<D: Dialect>(
    conn: &mut D::Connection,
    player: &PlayerId,
    until: Option<Timestamp>,
    audit: &AuditEntry,
) -> Result<Option<PlayerRef>, StoreError> {
    let statement = Statement::new(MUTE).bind(player.as_str()).bind(until);
    let Some(row) = D::fetch_optional(conn, statement).await? else {
        return Ok(None);
    };
    let muted = PlayerRef {
        id: D::text(&row, "id")?.into(),
        username: D::text(&row, "username")?,
    };
    insert_audit(conn, audit).await?;
    Ok(Some(muted))
}

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
