//! What the writer does for chat: a message (after the one before it in its place, under the
//! place's lock where several servers write), a report, an admin's deletion or mute with its
//! row of the audit log, a block, a closed gallery; and what other servers are told of it.

use super::dialect::Dialect;
use super::moderation::insert_audit;
use super::queue::WriteStep;
use super::sql::Statement;
use super::types::StoreError;
use crate::domain::audit::AuditEntry;
use crate::domain::chat::Channel;
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

/// Player `$1` mutes until `$2` (null lifts it); returns the player.
pub(super) const MUTE: &str =
    "UPDATE players SET chat_muted_until = $2 WHERE id = $1 RETURNING id, username";

/// Message `$1`'s text removed at `$2`, unless it already was; returns it.
pub(super) const DELETE_MESSAGE: &str = "UPDATE chat_messages SET body = NULL, deleted_at = $2 \
     WHERE id = $1 AND deleted_at IS NULL RETURNING id, room_id";

/// Player `$2`'s report of message `$1` for reason `$3` at `$4`, once.
pub(super) const INSERT_REPORT: &str = "INSERT INTO chat_reports (message_id, reporter_id, \
     reason, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (message_id, reporter_id) DO NOTHING";

/// Player `$1` blocks player `$2` at `$3` (again: nothing changes).
pub(super) const BLOCK: &str = "INSERT INTO player_blocks (player_id, blocked_id, created_at) \
     VALUES ($1, $2, $3) ON CONFLICT (player_id, blocked_id) DO NOTHING";

/// Player `$1` unblocks player `$2`; returns whether they had.
pub(super) const UNBLOCK: &str =
    "DELETE FROM player_blocks WHERE player_id = $1 AND blocked_id = $2 RETURNING blocked_id";

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
