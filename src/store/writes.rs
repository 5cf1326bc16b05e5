//! The write steps of sign-ups, bots, uploads, games' logs, "seen" marks and copies of rooms,
//! each one generic function over the database's [`Dialect`], handed to the writer as a
//! [`WriteStep`] (room changes are set-based, in [`super::batch`]; sessions, moderation and
//! ratings keep their steps in their own files).
//!
//! A refusal ([`StoreError::is_refusal`]) is decided without a failed statement (by `ON
//! CONFLICT DO NOTHING` and what comes back): in PostgreSQL a failed statement aborts the whole
//! transaction, which would undo the other writes of the batch.

use super::dialect::Dialect;
use super::queue::WriteStep;
use super::rows;
use super::sessions;
use super::sql::Statement;
use super::types::StoreError;
use crate::domain::outgoing::Outgoing;
use crate::domain::records::{Account, FrontendSource, GameLogLine, NewGameVersion, Session};
use crate::domain::time::Timestamp;
use crate::domain::webhooks::EventType;
use crate::game::{BotLevel, PlayerRef};

pub(super) struct Seen {
    pub(super) player_id: String,
    pub(super) session_id: Option<String>,
    pub(super) at: Timestamp,
}

pub(super) struct NewBot {
    pub(super) level: BotLevel,
    pub(super) id: String,
    pub(super) username: String,
    pub(super) created_at: Timestamp,
}

pub(super) struct RoomCopies {
    pub(super) template: String,
    pub(super) copies: i64,
}

/// A new player and their first session.
impl WriteStep for (Account, Session) {
    type Output = ();

    async fn apply<D: Dialect>(&self, conn: &mut D::Connection) -> Result<(), StoreError> {
        insert_account::<D>(conn, self).await
    }
}

impl WriteStep for NewBot {
    type Output = PlayerRef;

    async fn apply<D: Dialect>(&self, conn: &mut D::Connection) -> Result<PlayerRef, StoreError> {
        ensure_bot::<D>(conn, self).await
    }
}

impl WriteStep for NewGameVersion {
    type Output = i64;

    async fn apply<D: Dialect>(&self, conn: &mut D::Connection) -> Result<i64, StoreError> {
        publish::<D>(conn, self).await
    }
}

/// Copies of a room, to fill a database for measuring.
impl WriteStep for RoomCopies {
    type Output = ();

    async fn apply<D: Dialect>(&self, conn: &mut D::Connection) -> Result<(), StoreError> {
        copy_room::<D>(conn, self).await
    }
}

/// Lines for games' logs (each game's oldest beyond the bound go).
impl WriteStep for Vec<GameLogLine> {
    type Output = ();

    async fn apply<D: Dialect>(&self, conn: &mut D::Connection) -> Result<(), StoreError> {
        append_game_logs::<D>(conn, self).await
    }
}

/// When a player was last seen.
impl WriteStep for Seen {
    type Output = ();

    async fn apply<D: Dialect>(&self, conn: &mut D::Connection) -> Result<(), StoreError> {
        mark_seen::<D>(conn, self).await
    }
}

/// A new player; returns nothing if its name is taken, ignoring case. A new player (whose tokens are their sessions', so `token_hash` is empty).
pub(super) const INSERT_ACCOUNT: &str =
    "INSERT INTO players (id, username, username_key, token_hash, created_at) \
     VALUES ($1, $2, lower($2), '', $3) ON CONFLICT DO NOTHING RETURNING id";

/// A bot's account, unless it exists.
pub(super) const INSERT_BOT: &str =
    "INSERT INTO players (id, username, username_key, token_hash, created_at, bot) \
     VALUES ($1, $2, lower($2), '', $3, $4) ON CONFLICT DO NOTHING";

/// The bot account of level `$1`.
pub(super) const BOT_ACCOUNT: &str = "SELECT id, username FROM players WHERE bot = $1";

/// When player `$2` was last seen: `$1`, unless a later time is already there (two servers
/// write for the same player).
pub(super) const MARK_SEEN: &str = "UPDATE players SET last_seen_at = $1 \
     WHERE id = $2 AND (last_seen_at IS NULL OR last_seen_at < $1)";

/// A game, owned by the first to publish it.
pub(super) const INSERT_GAME: &str =
    "INSERT INTO games (id, owner_id, created_at) VALUES ($1, $2, $3) \
     ON CONFLICT (id) DO NOTHING";

/// The next version of game `$1`; returns its number.
pub(super) const INSERT_GAME_VERSION: &str =
    "INSERT INTO game_versions (game_id, version, name, description, min_players, \
     max_players, format, source, sha256, created_at, move_example, on_timeout, \
     on_player_view, enumerate_moves, frontend_background, frontend_height, winners, to_move, \
     chat) \
     SELECT $1, coalesce(max(version), 0) + 1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, \
     $12, $13, $14, $15, $16, $17, $18 \
     FROM game_versions WHERE game_id = $1 RETURNING version";

/// Version `$3`'s frontend files, as version `$2`'s.
pub(super) const COPY_FRONTEND_FILES: &str = "INSERT INTO game_frontend_files \
     (game_id, version, path, content_type, etag, body, gzip) \
     SELECT game_id, $2, path, content_type, etag, body, gzip \
     FROM game_frontend_files WHERE game_id = $1 AND version = $3";

/// One file of a version's frontend.
pub(super) const INSERT_FRONTEND_FILE: &str = "INSERT INTO game_frontend_files \
     (game_id, version, path, content_type, etag, body, gzip) \
     VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// A line of a game's log.
pub(super) const INSERT_GAME_LOG: &str = "INSERT INTO game_logs \
     (game, game_version, at, room, version, hook, level, text) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

/// Game `$1`'s log lines older than its newest `$2`.
pub(super) const TRIM_GAME_LOG: &str = "DELETE FROM game_logs WHERE game = $1 AND id <= \
     (SELECT id FROM game_logs WHERE game = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)";

/// The lines each game's log keeps.
pub const GAME_LOG_LINES: i64 = 1000;

/// The newest room's sequence number.
pub(super) const LAST_ROOM_SEQ: &str = "SELECT coalesce(max(seq), 0) AS seq FROM rooms";

/// Room `$1`'s memberships, for every room after sequence number `$2`.
pub(super) const COPY_MEMBERS: &str =
    "INSERT INTO room_players (room_id, player_id, active, room_seq, game, finished) \
     SELECT r.id, m.player_id, m.active, r.seq, r.game, r.finished \
     FROM rooms r, room_players m WHERE r.seq > $2 AND m.room_id = $1";

/// Room `$1`'s history, for every room after sequence number `$2`.
pub(super) const COPY_EVENTS: &str =
    "INSERT INTO room_events (room_id, version, kind, player_id, move, state, joinable, \
     finished, players, created_at, to_move) \
     SELECT r.id, e.version, e.kind, e.player_id, e.move, e.state, e.joinable, \
     e.finished, e.players, e.created_at, e.to_move \
     FROM rooms r, room_events e WHERE r.seq > $2 AND e.room_id = $1";

/// A taken name is refused by what the insert returns, not by a failed statement.
pub(super) async fn insert_account<D: Dialect>(
    conn: &mut D::Connection,
    (account, session): &(Account, Session),
) -> Result<(), StoreError> {
    let statement = Statement::new(INSERT_ACCOUNT)
        .bind(account.id.as_str())
        .bind(account.username.as_str())
        .bind(account.created_at);
    // Ids are random 128-bit numbers: a conflict is the name.
    match D::fetch_optional(conn, statement).await? {
        Some(_) => sessions::insert_session::<D>(conn, session).await,
        None => Err(StoreError::UsernameTaken),
    }
}

/// When a player was seen, and when their session was last used (to the minute).
async fn mark_seen<D: Dialect>(conn: &mut D::Connection, seen: &Seen) -> Result<(), StoreError> {
    let player = Statement::new(MARK_SEEN)
        .bind(seen.at)
        .bind(seen.player_id.as_str());
    D::execute(conn, player).await?;
    if let Some(session) = &seen.session_id {
        let used = Statement::new(sessions::MARK_SESSION_USED)
            .bind(seen.at.to_the_minute())
            .bind(session.as_str());
        D::execute(conn, used).await?;
    }
    Ok(())
}

/// The bot account of `level`, created first if it does not exist yet.
pub(super) async fn ensure_bot<D: Dialect>(
    conn: &mut D::Connection,
    bot: &NewBot,
) -> Result<PlayerRef, StoreError> {
    let level = bot.level.as_str();
    let create = Statement::new(INSERT_BOT)
        .bind(bot.id.as_str())
        .bind(bot.username.as_str())
        .bind(bot.created_at)
        .bind(level);
    D::execute(conn, create).await?;
    let read = Statement::new(BOT_ACCOUNT).bind(level);
    match D::fetch_optional(conn, read).await? {
        Some(row) => rows::player::<D>(&row),
        None => Err(StoreError::Corrupt(format!(
            "the {level} bot has no account"
        ))),
    }
}

/// Publishes the next version of a game, creating the game (owned by `upload.owner`) if it is
/// new; [`StoreError::NotTheOwner`] if someone else owns it. The version number.
pub(super) async fn publish<D: Dialect>(
    conn: &mut D::Connection,
    upload: &NewGameVersion,
) -> Result<i64, StoreError> {
    let create = Statement::new(INSERT_GAME)
        .bind(upload.game_id.as_str())
        .bind(upload.owner_id.as_str())
        .bind(upload.created_at);
    D::execute(conn, create).await?;
    let owner = Statement::new(D::GAME_OWNER).bind(upload.game_id.as_str());
    let owner = match D::fetch_optional(conn, owner).await? {
        Some(row) => D::text(&row, "owner_id")?,
        None => {
            return Err(StoreError::Corrupt(format!(
                "game {} vanished",
                upload.game_id
            )))
        }
    };
    if owner != upload.owner_id {
        return Err(StoreError::NotTheOwner);
    }
    let insert = Statement::new(INSERT_GAME_VERSION)
        .bind(upload.game_id.as_str())
        .bind(upload.name.as_str())
        .bind(upload.description.as_str())
        .bind(upload.min_players as i64)
        .bind(upload.max_players as i64)
        .bind(upload.format.as_str())
        .bind(upload.source.as_str())
        .bind(upload.sha256.as_str())
        .bind(upload.created_at)
        .bind(upload.move_example.clone())
        .bind(upload.hooks.timeouts)
        .bind(upload.hooks.player_view)
        .bind(upload.hooks.bots)
        .bind(upload.frontend_background.clone())
        .bind(upload.frontend_height.map(i64::from))
        .bind(upload.hooks.winners)
        .bind(upload.hooks.to_move)
        .bind(upload.chat);
    let version = match D::fetch_optional(conn, insert).await? {
        Some(row) => D::int(&row, "version")?,
        None => {
            return Err(StoreError::Corrupt(
                "a version insert returned nothing".into(),
            ))
        }
    };
    insert_frontend::<D>(conn, &upload.game_id, version, &upload.frontend).await?;
    let published = serde_json::json!({"game": {
        "id": upload.game_id,
        "version": version,
        "name": upload.name,
        "description": upload.description,
        "minPlayers": upload.min_players,
        "maxPlayers": upload.max_players,
        "owner": {"id": upload.owner_id},
    }});
    let event = Outgoing::new(EventType::GamePublished, upload.created_at, published);
    super::outbox::insert_event::<D>(conn, &event, &upload.game_id).await?;
    Ok(version)
}

/// Stores a new version's frontend files in the transaction that publishes it.
async fn insert_frontend<D: Dialect>(
    conn: &mut D::Connection,
    game_id: &str,
    version: i64,
    frontend: &FrontendSource,
) -> Result<(), StoreError> {
    match frontend {
        FrontendSource::None => Ok(()),
        FrontendSource::CopyOf(previous) => {
            let copy = Statement::new(COPY_FRONTEND_FILES)
                .bind(game_id)
                .bind(version)
                .bind(*previous);
            D::execute(conn, copy).await
        }
        FrontendSource::Files(files) => {
            for file in files {
                let insert = Statement::new(INSERT_FRONTEND_FILE)
                    .bind(game_id)
                    .bind(version)
                    .bind(file.path.as_str())
                    .bind(file.content_type)
                    .bind(file.etag.as_str())
                    .bind(file.body.clone())
                    .bind(file.gzip.clone());
                D::execute(conn, insert).await?;
            }
            Ok(())
        }
    }
}

/// Writes `copies` new rooms identical to `template` but for their ids: record, memberships
/// and whole history, one statement per table.
pub(super) async fn copy_room<D: Dialect>(
    conn: &mut D::Connection,
    copy: &RoomCopies,
) -> Result<(), StoreError> {
    let before = Statement::new(LAST_ROOM_SEQ);
    let before = match D::fetch_optional(conn, before).await? {
        Some(row) => D::int(&row, "seq")?,
        None => 0,
    };
    let rooms = Statement::new(D::COPY_ROOMS)
        .bind(copy.template.as_str())
        .bind(copy.copies);
    D::execute(conn, rooms).await?;
    let members = Statement::new(COPY_MEMBERS)
        .bind(copy.template.as_str())
        .bind(before);
    D::execute(conn, members).await?;
    let events = Statement::new(COPY_EVENTS)
        .bind(copy.template.as_str())
        .bind(before);
    D::execute(conn, events).await
}

/// Adds lines to their games' logs, then trims each game's log to its newest
/// [`GAME_LOG_LINES`].
pub(super) async fn append_game_logs<D: Dialect>(
    conn: &mut D::Connection,
    lines: &[GameLogLine],
) -> Result<(), StoreError> {
    let mut games: Vec<&str> = Vec::new();
    for line in lines {
        let insert = Statement::new(INSERT_GAME_LOG)
            .bind(line.game.as_str())
            .bind(line.game_version)
            .bind(line.at)
            .bind(line.room.as_str())
            .bind(line.version)
            .bind(line.hook.name())
            .bind(line.level.as_str())
            .bind(line.text.as_str());
        D::execute(conn, insert).await?;
        if !games.contains(&line.game.as_str()) {
            games.push(&line.game);
        }
    }
    for game in games {
        let trim = Statement::new(TRIM_GAME_LOG)
            .bind(game)
            .bind(GAME_LOG_LINES);
        D::execute(conn, trim).await?;
    }
    Ok(())
}
