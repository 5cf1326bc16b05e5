//! Sessions and sign-in codes: the statements, the writes the writer applies for them, and
//! the reads. A session is one device a player is signed in on; a sign-in code lets a player
//! open a session on another device, once, for ten minutes.

use sqlx::Pool;

use super::dialect::{Dialect, SetSql};
use super::queue::{Job, WriteStep};
use super::sets::set_statements;
use super::sql::Statement;
use super::types::StoreError;
use super::{Database, Store};
use crate::domain::ids::SessionId;
use crate::domain::notices::{Letter, NoticeKind};
use crate::domain::records::Session;
use crate::domain::time::Timestamp;
use crate::game::PlayerRef;

/// A new session of player `$2`, unless they are suspended (nothing is returned then): in the
/// writer's transaction, so a suspension and a sign-in at one moment cannot leave a session.
pub(super) const INSERT_SESSION: &str =
    "INSERT INTO sessions (id, player_id, token_hash, label, created_at, last_used_at) \
     SELECT $1, $2, $3, $4, $5, $6 WHERE NOT EXISTS \
     (SELECT 1 FROM players WHERE id = $2 AND suspended_at IS NOT NULL) RETURNING id";

/// Session `$1`, while it works.
pub(super) const SESSION: &str = "SELECT s.id, s.player_id, p.username, s.token_hash, \
     s.label, s.created_at, s.last_used_at \
     FROM sessions s JOIN players p ON p.id = s.player_id \
     WHERE s.id = $1 AND s.ended_at IS NULL AND p.suspended_at IS NULL";

/// The working sessions among `v`'s ids, with their players: many requests' tokens checked in
/// one read.
pub(super) const SESSIONS_IN: SetSql = SetSql {
    columns: "id",
    statement: "SELECT s.id, s.player_id, p.username, s.token_hash, \
         s.label, s.created_at, s.last_used_at \
         FROM v JOIN sessions s ON s.id = v.id JOIN players p ON p.id = s.player_id \
         WHERE s.ended_at IS NULL AND p.suspended_at IS NULL",
};

/// Player `$1`'s working sessions, oldest first.
pub(super) const SESSIONS_OF: &str = "SELECT s.id, s.player_id, p.username, s.token_hash, \
     s.label, s.created_at, s.last_used_at \
     FROM sessions s JOIN players p ON p.id = s.player_id \
     WHERE s.player_id = $1 AND s.ended_at IS NULL ORDER BY s.created_at, s.id";

/// Ends player `$2`'s session `$3` at `$1`.
pub(super) const END_SESSION: &str = "UPDATE sessions SET ended_at = $1 \
     WHERE player_id = $2 AND ended_at IS NULL AND id = $3 RETURNING id";

/// Ends every session of player `$2` but `$3` at `$1`.
pub(super) const END_OTHER_SESSIONS: &str = "UPDATE sessions SET ended_at = $1 \
     WHERE player_id = $2 AND ended_at IS NULL AND id <> $3 RETURNING id";

/// Ends every session of player `$2` at `$1`.
pub(super) const END_ALL_SESSIONS: &str = "UPDATE sessions SET ended_at = $1 \
     WHERE player_id = $2 AND ended_at IS NULL RETURNING id";

/// A new secret for player `$3`'s working session `$2`, at `$4`.
pub(super) const SET_SESSION_TOKEN: &str =
    "UPDATE sessions SET token_hash = $1, token_changed_at = $4 \
     WHERE id = $2 AND player_id = $3 AND ended_at IS NULL RETURNING id";

/// When session `$2` was last used, to the minute: `$1`, unless that is not later.
pub(super) const MARK_SESSION_USED: &str =
    "UPDATE sessions SET last_used_at = $1 WHERE id = $2 AND last_used_at < $1";

/// Sessions ended, or whose token was replaced, after `$1`, in that order: one range each of
/// `sessions_ended` and `sessions_token_changed`.
pub(super) const ENDED_SINCE: &str = "SELECT id, ended_at AS at FROM sessions \
     WHERE ended_at IS NOT NULL AND ended_at > $1 \
     UNION ALL SELECT id, token_changed_at AS at FROM sessions \
     WHERE token_changed_at IS NOT NULL AND token_changed_at > $1 ORDER BY at LIMIT 1000";

/// A sign-in code for player `$2`, by its hash.
pub(super) const INSERT_CODE: &str =
    "INSERT INTO sign_in_codes (code_hash, player_id, created_at, expires_at) \
     VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING code_hash";

/// Uses code `$1` at `$2`, if it is unexpired: its player. A code works once, so it goes.
pub(super) const REDEEM_CODE: &str = "DELETE FROM sign_in_codes \
     WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING player_id";

/// Forgets every code expired at `$1`.
pub(super) const PRUNE_CODES: &str = "DELETE FROM sign_in_codes WHERE expires_at <= $1";

/// How many codes player `$1` has that work.
pub(super) const LIVE_CODES: &str =
    "SELECT count(*) AS live FROM sign_in_codes WHERE player_id = $1";

/// The most sign-in codes a player may have working at once.
pub const MAX_LIVE_CODES: i64 = 5;

/// Player `$2`'s password hash: `$1` (NULL for none).
pub(super) const SET_PASSWORD: &str = "UPDATE players SET password_hash = $1 WHERE id = $2";

/// The player named `$1`, ignoring case (no bot; the exact name first), and their password
/// hash, if any.
pub(super) const PASSWORD_BY_NAME: &str = "SELECT id, username, password_hash FROM players \
     WHERE (username = $1 OR username_key = lower($1)) AND bot IS NULL \
     ORDER BY username = $1 DESC LIMIT 1";

/// Player `$1`'s password hash, if any.
pub(super) const PASSWORD_OF: &str =
    "SELECT id, username, password_hash FROM players WHERE id = $1 AND bot IS NULL";

/// Which of a player's sessions to end.
#[derive(Debug, Clone)]
pub enum Ending {
    /// This one.
    One(SessionId),
    /// Every one but this.
    AllBut(SessionId),
    /// Every one.
    All,
}

/// What the writer does about sessions and codes.
pub(super) enum SessionWrite {
    Open(Session),
    End {
        player_id: String,
        which: Ending,
        at: Timestamp,
    },
    Rotate {
        session_id: String,
        player_id: String,
        token_hash: String,
    },
    IssueCode {
        code_hash: String,
        player_id: String,
        created_at: Timestamp,
        expires_at: Timestamp,
    },
    /// Uses the code, then opens `session` (its player is the code's) if it worked.
    Redeem {
        code_hash: String,
        session: Session,
    },
    /// Sets the player's password and ends `ending` of their sessions, in one transaction.
    SetPassword {
        player_id: String,
        hash: String,
        ending: Ending,
        at: Timestamp,
        /// Mailed to the player's verified address, if they have one.
        letter: Letter,
    },
}

/// What it gave.
pub(super) enum SessionOutcome {
    Done,
    /// The sessions ended (none: there was no such session).
    Ended(Vec<String>),
    /// Whether there was such a session.
    Rotated(bool),
    /// The code's player, whose new session was opened; `None`: no such code, used, expired.
    Redeemed(Option<PlayerRef>),
    /// No code was issued: the player has [`MAX_LIVE_CODES`] working already.
    TooManyCodes,
}

/// Sessions opened, ended or given a new secret; sign-in codes issued and used.
impl WriteStep for SessionWrite {
    type Output = SessionOutcome;

    async fn apply<D: Dialect>(
        &self,
        conn: &mut D::Connection,
    ) -> Result<SessionOutcome, StoreError> {
        apply::<D>(conn, self).await
    }
}

async fn apply<D: Dialect>(
    conn: &mut D::Connection,
    write: &SessionWrite,
) -> Result<SessionOutcome, StoreError> {
    match write {
        SessionWrite::Open(session) => {
            insert_session::<D>(conn, session).await?;
            Ok(SessionOutcome::Done)
        }
        SessionWrite::End {
            player_id,
            which,
            at,
        } => end::<D>(conn, player_id, which, *at).await,
        SessionWrite::Rotate {
            session_id,
            player_id,
            token_hash,
        } => {
            let statement = Statement::new(SET_SESSION_TOKEN)
                .bind(token_hash.as_str())
                .bind(session_id.as_str())
                .bind(player_id.as_str())
                .bind(crate::domain::records::now());
            Ok(SessionOutcome::Rotated(
                D::fetch_optional(conn, statement).await?.is_some(),
            ))
        }
        SessionWrite::IssueCode {
            code_hash,
            player_id,
            created_at,
            expires_at,
        } => issue_code::<D>(conn, code_hash, player_id, *created_at, *expires_at).await,
        SessionWrite::SetPassword {
            player_id,
            hash,
            ending,
            at,
            letter,
        } => {
            let statement = Statement::new(SET_PASSWORD)
                .bind(hash.as_str())
                .bind(player_id.as_str());
            D::execute(conn, statement).await?;
            let kind = NoticeKind::PasswordChanged;
            super::notices::mail_to_verified::<D>(conn, player_id, kind, letter, *at).await?;
            end::<D>(conn, player_id, ending, *at).await
        }
        SessionWrite::Redeem { code_hash, session } => redeem::<D>(conn, code_hash, session).await,
    }
}

/// Ends every session of the player at `at`: the ids ended.
pub(super) async fn end_all_sessions<D: Dialect>(
    conn: &mut D::Connection,
    player_id: &str,
    at: Timestamp,
) -> Result<Vec<String>, StoreError> {
    match end::<D>(conn, player_id, &Ending::All, at).await? {
        SessionOutcome::Ended(ids) => Ok(ids),
        _ => Ok(Vec::new()),
    }
}

/// Ends `which` of the player's sessions at `at`: the ids ended.
async fn end<D: Dialect>(
    conn: &mut D::Connection,
    player_id: &str,
    which: &Ending,
    at: Timestamp,
) -> Result<SessionOutcome, StoreError> {
    let statement = match which {
        Ending::One(id) => Statement::new(END_SESSION)
            .bind(at)
            .bind(player_id)
            .bind(id.as_str()),
        Ending::AllBut(id) => Statement::new(END_OTHER_SESSIONS)
            .bind(at)
            .bind(player_id)
            .bind(id.as_str()),
        Ending::All => Statement::new(END_ALL_SESSIONS).bind(at).bind(player_id),
    };
    let rows = D::fetch_all(conn, statement).await?;
    let ended = rows
        .iter()
        .map(|row| D::text(row, "id"))
        .collect::<Result<_, _>>()?;
    Ok(SessionOutcome::Ended(ended))
}

/// Keeps a new code, first forgetting every expired one, unless the player has
/// [`MAX_LIVE_CODES`] working already.
async fn issue_code<D: Dialect>(
    conn: &mut D::Connection,
    code_hash: &str,
    player_id: &str,
    created_at: Timestamp,
    expires_at: Timestamp,
) -> Result<SessionOutcome, StoreError> {
    D::execute(conn, Statement::new(PRUNE_CODES).bind(created_at)).await?;
    let live = Statement::new(LIVE_CODES).bind(player_id);
    let live = match D::fetch_optional(conn, live).await? {
        Some(row) => D::int(&row, "live")?,
        None => 0,
    };
    if live >= MAX_LIVE_CODES {
        return Ok(SessionOutcome::TooManyCodes);
    }
    let statement = Statement::new(INSERT_CODE)
        .bind(code_hash)
        .bind(player_id)
        .bind(created_at)
        .bind(expires_at);
    match D::fetch_optional(conn, statement).await? {
        Some(_) => Ok(SessionOutcome::Done),
        // Two live codes with one hash: 40 random bits met again. The caller asks for another.
        None => Err(StoreError::Conflict),
    }
}

/// Uses the code and opens `session` for its player.
async fn redeem<D: Dialect>(
    conn: &mut D::Connection,
    code_hash: &str,
    session: &Session,
) -> Result<SessionOutcome, StoreError> {
    let statement = Statement::new(REDEEM_CODE)
        .bind(code_hash)
        .bind(session.created_at);
    let Some(row) = D::fetch_optional(conn, statement).await? else {
        return Ok(SessionOutcome::Redeemed(None));
    };
    let player_id = D::text(&row, "player_id")?;
    let read = Statement::new(super::reads::ACCOUNT).bind(player_id.as_str());
    let Some(row) = D::fetch_optional(conn, read).await? else {
        return Ok(SessionOutcome::Redeemed(None));
    };
    let player = super::rows::player::<D>(&row)?;
    let session = Session {
        player: player.clone(),
        ..session.clone()
    };
    // A suspended player's code is used up all the same.
    insert_session::<D>(conn, &session).await?;
    Ok(SessionOutcome::Redeemed(Some(player)))
}

/// Opens `session`; [`StoreError::Suspended`], with nothing written, if its player is.
pub(super) async fn insert_session<D: Dialect>(
    conn: &mut D::Connection,
    session: &Session,
) -> Result<(), StoreError> {
    let statement = Statement::new(INSERT_SESSION)
        .bind(session.id.as_str())
        .bind(session.player.id.as_str())
        .bind(session.token_hash.as_str())
        .bind(session.label.as_str())
        .bind(session.created_at)
        .bind(session.last_used_at);
    if D::fetch_optional(conn, statement).await?.is_some() {
        return Ok(());
    }
    let statement = Statement::new(super::moderation::SUSPENSION).bind(session.player.id.as_str());
    let reason = match D::fetch_optional(conn, statement).await? {
        Some(row) => D::maybe_text(&row, "reason")?.unwrap_or_default(),
        None => String::new(),
    };
    Err(StoreError::Suspended(reason))
}

pub(super) fn session_row<D: Dialect>(row: &D::Row) -> Result<Session, StoreError> {
    Ok(Session {
        id: D::text(row, "id")?.into(),
        player: PlayerRef {
            id: D::text(row, "player_id")?.into(),
            username: D::text(row, "username")?,
        },
        token_hash: D::text(row, "token_hash")?,
        label: D::text(row, "label")?,
        created_at: D::time(row, "created_at")?,
        last_used_at: D::time(row, "last_used_at")?,
    })
}

pub(super) async fn session<D: Dialect>(
    pool: &Pool<D>,
    id: &str,
) -> Result<Option<Session>, StoreError> {
    let statement = Statement::new(SESSION).bind(id);
    let row = D::fetch_optional(&mut *pool.acquire().await?, statement).await?;
    row.as_ref().map(session_row::<D>).transpose()
}

/// The working sessions among `ids` (in no order; an id not working is left out).
pub(super) async fn sessions_in<D: Dialect>(
    conn: &mut D::Connection,
    ids: &[String],
) -> Result<Vec<Session>, StoreError> {
    let statements = set_statements::<D, _>(SESSIONS_IN, ids, |row, id| row.put("id", id.as_str()));
    let mut found = Vec::with_capacity(ids.len());
    for statement in statements {
        for row in D::fetch_all(conn, statement).await? {
            found.push(session_row::<D>(&row)?);
        }
    }
    Ok(found)
}

pub(super) async fn sessions_of<D: Dialect>(
    pool: &Pool<D>,
    player_id: &str,
) -> Result<Vec<Session>, StoreError> {
    let statement = Statement::new(SESSIONS_OF).bind(player_id);
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    rows.iter().map(session_row::<D>).collect()
}

/// A player (by name, or by id) and their password hash, if they have one.
pub(super) async fn password<D: Dialect>(
    pool: &Pool<D>,
    key: &str,
    by_name: bool,
) -> Result<Option<(PlayerRef, Option<String>)>, StoreError> {
    let sql = if by_name {
        PASSWORD_BY_NAME
    } else {
        PASSWORD_OF
    };
    let statement = Statement::new(sql).bind(key);
    let Some(row) = D::fetch_optional(&mut *pool.acquire().await?, statement).await? else {
        return Ok(None);
    };
    let player = PlayerRef {
        id: D::text(&row, "id")?.into(),
        username: D::text(&row, "username")?,
    };
    Ok(Some((player, D::maybe_text(&row, "password_hash")?)))
}

pub(super) async fn ended_since<D: Dialect>(
    pool: &Pool<D>,
    after: Timestamp,
) -> Result<Vec<(String, Timestamp)>, StoreError> {
    let statement = Statement::new(ENDED_SINCE).bind(after);
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    rows.iter()
        .map(|row| Ok((D::text(row, "id")?, D::time(row, "at")?)))
        .collect()
}

/// The store's sessions, codes and passwords.
impl Store {
    async fn session_write(&self, write: SessionWrite) -> Result<SessionOutcome, StoreError> {
        let (job, reply) = Job::new(write);
        let (_, outcome) = self.writer.write(job.into(), reply).await?;
        Ok(outcome)
    }

    /// Opens another session of an existing player.
    pub async fn open_session(&self, session: &Session) -> Result<(), StoreError> {
        self.session_write(SessionWrite::Open(session.clone()))
            .await
            .map(|_| ())
    }

    /// Ends `which` of the player's working sessions; the ids ended.
    pub async fn end_sessions(
        &self,
        player_id: &str,
        which: Ending,
    ) -> Result<Vec<String>, StoreError> {
        let write = SessionWrite::End {
            player_id: player_id.to_owned(),
            which,
            at: crate::domain::records::now(),
        };
        match self.session_write(write).await? {
            SessionOutcome::Ended(ids) => Ok(ids),
            _ => Ok(Vec::new()),
        }
    }

    /// Replaces a working session's secret: its old token is refused from the commit on.
    /// Whether there was such a session.
    pub async fn set_session_token(
        &self,
        session_id: &str,
        player_id: &str,
        token_hash: &str,
    ) -> Result<bool, StoreError> {
        let write = SessionWrite::Rotate {
            session_id: session_id.to_owned(),
            player_id: player_id.to_owned(),
            token_hash: token_hash.to_owned(),
        };
        Ok(matches!(
            self.session_write(write).await?,
            SessionOutcome::Rotated(true)
        ))
    }

    /// Keeps a sign-in code for `player_id`, by its hash, until `expires_at`, forgetting every
    /// expired code; `false`, with nothing kept, when the player has [`MAX_LIVE_CODES`]
    /// working already. [`StoreError::Conflict`] if a code with that hash is already kept.
    pub async fn issue_code(
        &self,
        code_hash: &str,
        player_id: &str,
        created_at: Timestamp,
        expires_at: Timestamp,
    ) -> Result<bool, StoreError> {
        let write = SessionWrite::IssueCode {
            code_hash: code_hash.to_owned(),
            player_id: player_id.to_owned(),
            created_at,
            expires_at,
        };
        let outcome = self.session_write(write).await?;
        Ok(!matches!(outcome, SessionOutcome::TooManyCodes))
    }

    /// Uses the code with this hash and opens `session` for its player, in one commit; the
    /// player, or `None` if there is no such code, or it was used, or it expired.
    pub async fn redeem_code(
        &self,
        code_hash: &str,
        session: Session,
    ) -> Result<Option<PlayerRef>, StoreError> {
        let write = SessionWrite::Redeem {
            code_hash: code_hash.to_owned(),
            session,
        };
        match self.session_write(write).await? {
            SessionOutcome::Redeemed(player) => Ok(player),
            _ => Ok(None),
        }
    }

    /// Keeps `hash` as the player's password hash and ends `ending` of their sessions, in one
    /// transaction: the ids ended.
    pub async fn set_password(
        &self,
        player_id: &str,
        hash: &str,
        ending: Ending,
        letter: Letter,
    ) -> Result<Vec<String>, StoreError> {
        let write = SessionWrite::SetPassword {
            player_id: player_id.to_owned(),
            hash: hash.to_owned(),
            ending,
            at: crate::domain::records::now(),
            letter,
        };
        match self.session_write(write).await? {
            SessionOutcome::Ended(ids) => Ok(ids),
            _ => Ok(Vec::new()),
        }
    }

    /// The player named `username` (never a bot) and their password hash, if any.
    pub async fn password_by_name(
        &self,
        username: &str,
    ) -> Result<Option<(PlayerRef, Option<String>)>, StoreError> {
        read!(self, |pool| password(pool, username, true))
    }

    /// Player `player_id`'s password hash, if they have one.
    pub async fn password_of(&self, player_id: &str) -> Result<Option<String>, StoreError> {
        let found = read!(self, |pool| password(pool, player_id, false))?;
        Ok(found.and_then(|(_, hash)| hash))
    }

    /// A working session, with its player. On PostgreSQL the sessions asked for meanwhile
    /// are read together (see `postgres/session_reads.rs`).
    pub async fn session(&self, id: &str) -> Result<Option<Session>, StoreError> {
        match &self.database {
            Database::Sqlite(db) => session(&db.read, id).await,
            Database::Postgres(db) => db.sessions.read(id).await,
        }
    }

    /// A player's working sessions, oldest first.
    pub async fn sessions_of(&self, player_id: &str) -> Result<Vec<Session>, StoreError> {
        read!(self, |pool| sessions_of(pool, player_id))
    }

    /// Sessions ended after `after`, with when, in the order they ended.
    pub async fn ended_sessions_since(
        &self,
        after: Timestamp,
    ) -> Result<Vec<(String, Timestamp)>, StoreError> {
        read!(self, |pool| ended_since(pool, after))
    }
}
