//! Moderation: roles, suspensions, renames and unpublished games, each written in one commit
//! with its row of the audit log; and the reads admins and the sign-in need.

use serde_json::{json, Value};
use sqlx::Pool;

use super::dialect::Dialect;
use super::queue::{Job, WriteStep};
use super::sql::{Exec, Statement};
use super::types::StoreError;
use super::Store;
use crate::domain::records::{AuditEntry, AuditTarget, PlayerRecord, Suspended};
use crate::domain::roles::Role;
use crate::domain::time::Timestamp;
use crate::game::PlayerRef;

/// The player named `$1`, ignoring case (never a bot; the exact name first).
pub(super) const PLAYER_BY_NAME: &str = "SELECT id, username FROM players \
     WHERE (username = $1 OR username_key = lower($1)) AND bot IS NULL \
     ORDER BY username = $1 DESC LIMIT 1";

/// Player `$1` (never a bot).
pub(super) const PLAYER_BY_ID: &str =
    "SELECT id, username FROM players WHERE id = $1 AND bot IS NULL";

pub(super) const GRANT_ROLE: &str =
    "INSERT INTO player_roles (player_id, role, granted_at) VALUES ($1, $2, $3) \
     ON CONFLICT DO NOTHING";

pub(super) const REVOKE_ROLE: &str = "DELETE FROM player_roles WHERE player_id = $1 AND role = $2";

/// Player `$1`'s roles.
pub(super) const ROLES_OF: &str =
    "SELECT role FROM player_roles WHERE player_id = $1 ORDER BY role";

/// Suspends player `$3` (the first time kept, the latest reason): their id and name.
pub(super) const SUSPEND: &str = "UPDATE players \
     SET suspended_at = coalesce(suspended_at, $1), suspension_reason = $2 \
     WHERE id = $3 AND bot IS NULL RETURNING id, username";

/// Ends every working session of player `$2` at `$1`.
pub(super) const END_ALL_SESSIONS: &str = "UPDATE sessions SET ended_at = $1 \
     WHERE player_id = $2 AND ended_at IS NULL RETURNING id";

/// Lifts player `$1`'s suspension, if they are suspended: their id and name.
pub(super) const UNSUSPEND: &str = "UPDATE players \
     SET suspended_at = NULL, suspension_reason = NULL \
     WHERE id = $1 AND bot IS NULL AND suspended_at IS NOT NULL RETURNING id, username";

/// A player (no bot) by name, ignoring case (the exact name first), as an admin looks them up.
pub(super) const PLAYER_RECORD: &str = "SELECT id, username, created_at, last_seen_at, \
     suspended_at, suspension_reason FROM players \
     WHERE (username = $1 OR username_key = lower($1)) AND bot IS NULL \
     ORDER BY username = $1 DESC LIMIT 1";

/// Why player `$1` is suspended, if they are.
pub(super) const SUSPENSION: &str =
    "SELECT suspension_reason AS reason FROM players WHERE id = $1 AND suspended_at IS NOT NULL";

/// Names player `$2` `$1`, unless another player has that name, ignoring case (nothing is
/// returned then).
pub(super) const RENAME: &str = "UPDATE players SET username = $1, username_key = lower($1) \
     WHERE id = $2 AND bot IS NULL AND NOT EXISTS (SELECT 1 FROM players o \
     WHERE (o.username = $1 OR o.username_key = lower($1)) AND o.id <> $2) \
     RETURNING id";

/// Unpublishes game `$3` (the first time kept, the latest reason).
pub(super) const UNPUBLISH: &str = "UPDATE games \
     SET unpublished_at = coalesce(unpublished_at, $1), unpublish_reason = $2 \
     WHERE id = $3 RETURNING id";

pub(super) const INSERT_AUDIT: &str = "INSERT INTO audit_log \
     (at, actor_id, actor_name, action, target_kind, target_id, reason, details, client) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";

/// The newest entries of the audit log before id `$1` (all when null), newest first.
pub(super) const AUDIT_PAGE: &str = "SELECT id, at, actor_id, actor_name, client, action, \
     target_kind, target_id, reason, details FROM audit_log \
     WHERE ($1 IS NULL OR id < $1) ORDER BY id DESC LIMIT $2";

/// The rooms in play or waiting that player `$1` holds a seat in, oldest first.
pub(super) const SEATS_OF: &str = "SELECT room_id FROM room_players \
     WHERE player_id = $1 AND finished = FALSE AND active = TRUE ORDER BY room_seq";

/// The unfinished rooms of game `$1`, oldest first, and whether each waits for players.
pub(super) const UNFINISHED_ROOMS_OF_GAME: &str =
    "SELECT id, joinable FROM rooms WHERE game = $1 AND finished = FALSE ORDER BY seq";

/// An admin action the writer applies, with its audit row, in one commit.
pub(super) enum ModerationWrite {
    /// Grants (or, with `grant` false, revokes) `role` to the player named `username`.
    Role {
        username: String,
        role: Role,
        grant: bool,
        audit: AuditEntry,
    },
    /// Suspends the player and ends every session of theirs.
    Suspend {
        player_id: String,
        audit: AuditEntry,
    },
    Unsuspend {
        player_id: String,
        audit: AuditEntry,
    },
    Rename {
        player_id: String,
        username: String,
        audit: AuditEntry,
    },
    Unpublish {
        game_id: String,
        audit: AuditEntry,
    },
}

/// What it gave.
pub enum ModerationOutcome {
    /// There is no such player (no bot) or game; nothing was written.
    NotFound,
    /// The player acted on, as named before the action, and the sessions it ended.
    Player {
        player: PlayerRef,
        ended_sessions: Vec<String>,
    },
    /// The new name is another player's; nothing was written.
    UsernameTaken,
    /// The game was unpublished.
    Game,
}

/// An admin action and its audit row.
impl WriteStep for ModerationWrite {
    type Output = ModerationOutcome;

    async fn apply<D: Dialect>(
        &self,
        conn: &mut D::Connection,
    ) -> Result<ModerationOutcome, StoreError> {
        apply::<D>(conn, self).await
    }
}

async fn apply<D: Dialect>(
    conn: &mut D::Connection,
    write: &ModerationWrite,
) -> Result<ModerationOutcome, StoreError> {
    let done = match write {
        ModerationWrite::Role {
            username,
            role,
            grant,
            audit,
        } => set_role::<D>(conn, username, *role, *grant, audit).await?,
        ModerationWrite::Suspend { player_id, audit } => {
            suspend::<D>(conn, player_id, audit).await?
        }
        ModerationWrite::Unsuspend { player_id, audit } => {
            unsuspend::<D>(conn, player_id, audit).await?
        }
        ModerationWrite::Rename {
            player_id,
            username,
            audit,
        } => rename::<D>(conn, player_id, username, audit).await?,
        ModerationWrite::Unpublish { game_id, audit } => {
            let statement = Statement::new(UNPUBLISH)
                .bind(audit.at)
                .bind(audit.reason.as_str())
                .bind(game_id.as_str());
            match D::fetch_optional(conn, statement).await? {
                None => Err(ModerationOutcome::NotFound),
                Some(_) => Ok((
                    ModerationOutcome::Game,
                    audit.clone(),
                    audit.details.clone(),
                )),
            }
        }
    };
    match done {
        Ok((outcome, audit, details)) => {
            insert_audit(conn, &AuditEntry { details, ..audit }).await?;
            Ok(outcome)
        }
        Err(outcome) => Ok(outcome),
    }
}

/// What one admin action did: its outcome with the audit entry and details to keep, or an
/// outcome that changed nothing (and so goes in no audit log).
type Done = Result<(ModerationOutcome, AuditEntry, Value), ModerationOutcome>;

async fn set_role<D: Dialect>(
    conn: &mut D::Connection,
    username: &str,
    role: Role,
    grant: bool,
    audit: &AuditEntry,
) -> Result<Done, StoreError> {
    let Some(player) = player::<D>(conn, PLAYER_BY_NAME, username).await? else {
        return Ok(Err(ModerationOutcome::NotFound));
    };
    let sql = if grant { GRANT_ROLE } else { REVOKE_ROLE };
    let mut statement = Statement::new(sql)
        .bind(player.id.as_str())
        .bind(role.as_str());
    if grant {
        statement = statement.bind(audit.at);
    }
    D::execute(conn, statement).await?;
    let audit = AuditEntry {
        target: AuditTarget {
            kind: "player".into(),
            id: player.id.to_string(),
        },
        ..audit.clone()
    };
    let details = json!({"role": role.as_str(), "username": player.username});
    Ok(Ok((player_outcome(player, Vec::new()), audit, details)))
}

async fn suspend<D: Dialect>(
    conn: &mut D::Connection,
    player_id: &str,
    audit: &AuditEntry,
) -> Result<Done, StoreError> {
    let statement = Statement::new(SUSPEND)
        .bind(audit.at)
        .bind(audit.reason.as_str())
        .bind(player_id);
    let Some(player) = returned_player::<D>(conn, statement).await? else {
        return Ok(Err(ModerationOutcome::NotFound));
    };
    let ended = end_all_sessions::<D>(conn, player_id, audit.at).await?;
    let details = json!({"username": player.username, "sessionsEnded": ended.len()});
    Ok(Ok((player_outcome(player, ended), audit.clone(), details)))
}

async fn unsuspend<D: Dialect>(
    conn: &mut D::Connection,
    player_id: &str,
    audit: &AuditEntry,
) -> Result<Done, StoreError> {
    let statement = Statement::new(UNSUSPEND).bind(player_id);
    let Some(player) = returned_player::<D>(conn, statement).await? else {
        // Not suspended: nothing to lift, and nothing for the audit log.
        return Ok(Err(
            match player::<D>(conn, PLAYER_BY_ID, player_id).await? {
                Some(player) => player_outcome(player, Vec::new()),
                None => ModerationOutcome::NotFound,
            },
        ));
    };
    // A sign-in that raced the suspension on another server may have left a session
    // (refused while suspended): it must not come back to life now.
    let ended = end_all_sessions::<D>(conn, player_id, audit.at).await?;
    let details = json!({"username": player.username});
    Ok(Ok((player_outcome(player, ended), audit.clone(), details)))
}

async fn rename<D: Dialect>(
    conn: &mut D::Connection,
    player_id: &str,
    username: &str,
    audit: &AuditEntry,
) -> Result<Done, StoreError> {
    let Some(player) = player::<D>(conn, PLAYER_BY_ID, player_id).await? else {
        return Ok(Err(ModerationOutcome::NotFound));
    };
    let statement = Statement::new(RENAME).bind(username).bind(player_id);
    if D::fetch_optional(conn, statement).await?.is_none() {
        return Ok(Err(ModerationOutcome::UsernameTaken));
    }
    let details = json!({"from": player.username, "to": username});
    Ok(Ok((
        player_outcome(player, Vec::new()),
        audit.clone(),
        details,
    )))
}

/// Ends every working session of the player at `at`: their ids.
async fn end_all_sessions<D: Dialect>(
    conn: &mut D::Connection,
    player_id: &str,
    at: Timestamp,
) -> Result<Vec<String>, StoreError> {
    let statement = Statement::new(END_ALL_SESSIONS).bind(at).bind(player_id);
    D::fetch_all(conn, statement)
        .await?
        .iter()
        .map(|row| D::text(row, "id"))
        .collect()
}

fn player_outcome(player: PlayerRef, ended_sessions: Vec<String>) -> ModerationOutcome {
    ModerationOutcome::Player {
        player,
        ended_sessions,
    }
}

async fn player<D: Dialect>(
    conn: &mut D::Connection,
    sql: &'static str,
    key: &str,
) -> Result<Option<PlayerRef>, StoreError> {
    returned_player::<D>(conn, Statement::new(sql).bind(key)).await
}

async fn returned_player<D: Dialect>(
    conn: &mut D::Connection,
    statement: Statement,
) -> Result<Option<PlayerRef>, StoreError> {
    let row = D::fetch_optional(conn, statement).await?;
    row.as_ref().map(super::rows::player::<D>).transpose()
}

/// Writes `entry` to the audit log (in the transaction of the change it records).
pub(super) async fn insert_audit(
    conn: &mut impl Exec,
    entry: &AuditEntry,
) -> Result<(), StoreError> {
    let statement = Statement::new(INSERT_AUDIT)
        .bind(entry.at)
        .bind(entry.actor.as_ref().map(|a| a.id.clone()))
        .bind(entry.actor_name.as_str())
        .bind(entry.action.as_str())
        .bind(entry.target.kind.as_str())
        .bind(entry.target.id.as_str())
        .bind(entry.reason.as_str())
        .bind(entry.details.to_string())
        .bind(entry.client.clone());
    conn.execute(statement).await
}

pub(super) async fn roles_of<D: Dialect>(
    pool: &Pool<D>,
    player_id: &str,
) -> Result<Vec<Role>, StoreError> {
    let statement = Statement::new(ROLES_OF).bind(player_id);
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    // A role this build does not know grants nothing.
    Ok(rows
        .iter()
        .filter_map(|row| D::text(row, "role").ok().as_deref().and_then(Role::parse))
        .collect())
}

pub(super) async fn player_record<D: Dialect>(
    pool: &Pool<D>,
    username: &str,
) -> Result<Option<PlayerRecord>, StoreError> {
    let statement = Statement::new(PLAYER_RECORD).bind(username);
    let Some(row) = D::fetch_optional(&mut *pool.acquire().await?, statement).await? else {
        return Ok(None);
    };
    let id = D::text(&row, "id")?;
    let suspended = match D::maybe_time(&row, "suspended_at")? {
        Some(at) => Some(Suspended {
            at,
            reason: D::maybe_text(&row, "suspension_reason")?.unwrap_or_default(),
        }),
        None => None,
    };
    let roles = roles_of::<D>(pool, &id).await?;
    Ok(Some(PlayerRecord {
        username: D::text(&row, "username")?,
        created_at: D::time(&row, "created_at")?,
        last_seen_at: D::maybe_time(&row, "last_seen_at")?,
        roles: roles.iter().map(|r| r.as_str().to_owned()).collect(),
        suspended,
        id: id.into(),
    }))
}

pub(super) async fn audit_page<D: Dialect>(
    pool: &Pool<D>,
    before: Option<i64>,
    limit: i64,
) -> Result<Vec<AuditEntry>, StoreError> {
    let statement = Statement::new(AUDIT_PAGE).bind(before).bind(limit);
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    rows.iter()
        .map(|row| {
            let actor = match D::maybe_text(row, "actor_id")? {
                Some(id) => Some(PlayerRef {
                    id: id.into(),
                    username: D::text(row, "actor_name")?,
                }),
                None => None,
            };
            let details = D::text(row, "details")?;
            Ok(AuditEntry {
                id: D::int(row, "id")?,
                at: D::time(row, "at")?,
                actor,
                actor_name: D::text(row, "actor_name")?,
                client: D::maybe_text(row, "client")?,
                action: D::text(row, "action")?,
                target: AuditTarget {
                    kind: D::text(row, "target_kind")?,
                    id: D::text(row, "target_id")?,
                },
                reason: D::text(row, "reason")?,
                details: serde_json::from_str(&details).unwrap_or(Value::Null),
            })
        })
        .collect()
}

pub(super) async fn seats_of<D: Dialect>(
    pool: &Pool<D>,
    player_id: &str,
) -> Result<Vec<String>, StoreError> {
    let statement = Statement::new(SEATS_OF).bind(player_id);
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    rows.iter().map(|row| D::text(row, "room_id")).collect()
}

pub(super) async fn unfinished_rooms_of_game<D: Dialect>(
    pool: &Pool<D>,
    game_id: &str,
) -> Result<Vec<(String, bool)>, StoreError> {
    let statement = Statement::new(UNFINISHED_ROOMS_OF_GAME).bind(game_id);
    let rows = D::fetch_all(&mut *pool.acquire().await?, statement).await?;
    rows.iter()
        .map(|row| Ok((D::text(row, "id")?, D::flag(row, "joinable")?)))
        .collect()
}

/// The store's admin actions and the reads behind them.
impl Store {
    async fn moderation_write(
        &self,
        write: ModerationWrite,
    ) -> Result<ModerationOutcome, StoreError> {
        let (job, reply) = Job::new(write);
        let (_, outcome) = self.writer.write(job.into(), reply).await?;
        Ok(outcome)
    }

    /// Grants `role` to the player named `username` (revokes it when `grant` is false), with
    /// `audit`'s row; the player, or `None` if nobody has that name.
    pub async fn set_role(
        &self,
        username: &str,
        role: Role,
        grant: bool,
        audit: AuditEntry,
    ) -> Result<Option<PlayerRef>, StoreError> {
        let write = ModerationWrite::Role {
            username: username.to_owned(),
            role,
            grant,
            audit,
        };
        Ok(moderated_player(self.moderation_write(write).await?).map(|(player, _)| player))
    }

    /// Suspends the player (`audit.reason` says why) and ends all their sessions, in one
    /// commit with the audit row: the player and the sessions ended, or `None` for no such
    /// player.
    pub async fn suspend(
        &self,
        player_id: &str,
        audit: AuditEntry,
    ) -> Result<Option<(PlayerRef, Vec<String>)>, StoreError> {
        let write = ModerationWrite::Suspend {
            player_id: player_id.to_owned(),
            audit,
        };
        Ok(moderated_player(self.moderation_write(write).await?))
    }

    /// Lifts the player's suspension, ending any session a sign-in racing the suspension
    /// left: the player and those sessions, or `None` for no such player.
    pub async fn unsuspend(
        &self,
        player_id: &str,
        audit: AuditEntry,
    ) -> Result<Option<(PlayerRef, Vec<String>)>, StoreError> {
        let write = ModerationWrite::Unsuspend {
            player_id: player_id.to_owned(),
            audit,
        };
        Ok(moderated_player(self.moderation_write(write).await?))
    }

    /// Renames the player: the player as named before, `None` for no such player, or
    /// [`StoreError::UsernameTaken`].
    pub async fn rename(
        &self,
        player_id: &str,
        username: &str,
        audit: AuditEntry,
    ) -> Result<Option<PlayerRef>, StoreError> {
        let write = ModerationWrite::Rename {
            player_id: player_id.to_owned(),
            username: username.to_owned(),
            audit,
        };
        match self.moderation_write(write).await? {
            ModerationOutcome::UsernameTaken => Err(StoreError::UsernameTaken),
            outcome => Ok(moderated_player(outcome).map(|(player, _)| player)),
        }
    }

    /// Unpublishes the uploaded game; whether there is one of that id.
    pub async fn unpublish(&self, game_id: &str, audit: AuditEntry) -> Result<bool, StoreError> {
        let write = ModerationWrite::Unpublish {
            game_id: game_id.to_owned(),
            audit,
        };
        Ok(matches!(
            self.moderation_write(write).await?,
            ModerationOutcome::Game
        ))
    }

    /// The player's roles.
    pub async fn roles_of(&self, player_id: &str) -> Result<Vec<Role>, StoreError> {
        read!(self, |pool| roles_of(pool, player_id))
    }

    /// The player named `username` (never a bot), as an admin sees them.
    pub async fn player_record(&self, username: &str) -> Result<Option<PlayerRecord>, StoreError> {
        read!(self, |pool| player_record(pool, username))
    }

    /// Up to `limit` entries of the audit log before id `before`, newest first.
    pub async fn audit_log(
        &self,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        read!(self, |pool| audit_page(pool, before, limit))
    }

    /// The unfinished rooms the player holds a seat in, oldest first.
    pub async fn seats_of(&self, player_id: &str) -> Result<Vec<String>, StoreError> {
        read!(self, |pool| seats_of(pool, player_id))
    }

    /// The unfinished rooms of the game, oldest first, each with whether it waits for players.
    pub async fn unfinished_rooms_of_game(
        &self,
        game_id: &str,
    ) -> Result<Vec<(String, bool)>, StoreError> {
        read!(self, |pool| unfinished_rooms_of_game(pool, game_id))
    }
}

/// The player a moderation write acted on, and the sessions it ended.
fn moderated_player(outcome: ModerationOutcome) -> Option<(PlayerRef, Vec<String>)> {
    match outcome {
        ModerationOutcome::Player {
            player,
            ended_sessions,
        } => Some((player, ended_sessions)),
        _ => None,
    }
}
