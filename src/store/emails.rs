//! Players' e-mail: the verified address and its settings, the links mailed (verifying an
//! address, resetting a password; kept as hashes, working once), muted rooms, and what the
//! turn mail reads. Each link's mail is written in the transaction that makes its token.

use sqlx::Pool;

use super::dialect::Dialect;
use super::notices::{mail_to, mail_to_verified};
use super::queue::{Job, WriteStep};
use super::sessions::{end_all_sessions, SET_PASSWORD};
use super::sql::Statement;
use super::turns::{turn_of, Turn};
use super::types::StoreError;
use super::Store;
use crate::domain::ids::PlayerId;
use crate::domain::notices::{Letter, NoticeKind};
use crate::domain::time::Timestamp;
use crate::game::PlayerRef;

/// Player `$1`'s address and settings.
pub(super) const EMAIL_OF: &str = "SELECT address, verified_at, turn_mail, clock_mail \
     FROM player_emails WHERE player_id = $1";

/// The address player `$1` asked to verify last, while its link works at `$2`.
pub(super) const PENDING_EMAIL: &str = "SELECT address FROM email_tokens \
     WHERE player_id = $1 AND purpose = 'verify' AND expires_at > $2 \
     ORDER BY created_at DESC LIMIT 1";

/// Link `$1` for `$2`, while it works at `$3`.
pub(super) const EMAIL_TOKEN: &str = "SELECT player_id, address FROM email_tokens \
     WHERE token_hash = $1 AND purpose = $2 AND expires_at > $3";

/// The account (never a bot) named `$1`, ignoring case, or whose verified address is `$1`, and
/// that address.
pub(super) const RESET_ACCOUNT: &str = "SELECT p.id, p.username, e.address FROM players p \
     JOIN player_emails e ON e.player_id = p.id \
     WHERE (p.username_key = lower($1) OR e.address_key = lower($1)) AND p.bot IS NULL LIMIT 1";

/// Forgets player `$1`'s links for `$2`.
pub(super) const DROP_TOKENS: &str =
    "DELETE FROM email_tokens WHERE player_id = $1 AND purpose = $2";

/// A link: `$1` its hash, `$2` player, `$3` purpose, `$4` address, `$5` made, `$6` until.
pub(super) const INSERT_TOKEN: &str = "INSERT INTO email_tokens (token_hash, player_id, \
     purpose, address, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)";

/// Uses link `$1` for `$2` at `$3`: its player and address, if it worked.
pub(super) const USE_TOKEN: &str = "DELETE FROM email_tokens \
     WHERE token_hash = $1 AND purpose = $2 AND expires_at > $3 RETURNING player_id, address";

/// Links expired before `$1`.
pub(super) const PRUNE_TOKENS: &str = "DELETE FROM email_tokens WHERE expires_at <= $1";

/// Another account (than `$2`) whose verified address is `$1`, ignoring case.
pub(super) const ADDRESS_HOLDER: &str = "SELECT player_id FROM player_emails \
     WHERE address_key = lower($1) AND player_id <> $2";

/// Player `$1`'s address is `$2`, verified at `$3` (their settings kept).
pub(super) const SET_ADDRESS: &str = "INSERT INTO player_emails (player_id, address, \
     address_key, verified_at) VALUES ($1, $2, lower($2), $3) ON CONFLICT (player_id) \
     DO UPDATE SET address = excluded.address, address_key = excluded.address_key, \
     verified_at = excluded.verified_at";

/// Player `$1` has no address any more.
pub(super) const DROP_ADDRESS: &str = "DELETE FROM player_emails WHERE player_id = $1";

/// Player `$1`'s settings: turn mail `$2` and clock mail `$3`.
pub(super) const SET_MAIL_SETTINGS: &str =
    "UPDATE player_emails SET turn_mail = $2, clock_mail = $3 WHERE player_id = $1";

/// Player `$1` mutes room `$2`.
pub(super) const MUTE_ROOM: &str =
    "INSERT INTO muted_rooms (player_id, room_id) VALUES ($1, $2) ON CONFLICT DO NOTHING";

/// Player `$1` hears of room `$2` again.
pub(super) const UNMUTE_ROOM: &str =
    "DELETE FROM muted_rooms WHERE player_id = $1 AND room_id = $2";

/// The rooms player `$1` has muted.
pub(super) const MUTED_ROOMS: &str =
    "SELECT room_id FROM muted_rooms WHERE player_id = $1 ORDER BY room_id";

/// Player `$1`'s unfinished rooms waiting on them that they have not muted (what their digest
/// lists), each with whether they have been away since its turn began (`away`: not seen since).
pub(super) const DIGEST_ROOMS: &str = "SELECT r.id, r.game, r.version, \
     CAST(r.players AS TEXT) AS players, r.trigger_timeout_at, r.clock_move_seconds, \
     (r.turns ->> m.player_id) AS turn_since, \
     (p.last_seen_at IS NULL OR p.last_seen_at < (r.turns ->> m.player_id)) AS away \
     FROM room_players m JOIN rooms r ON r.id = m.room_id \
     JOIN players p ON p.id = m.player_id \
     WHERE m.finished = false AND m.player_id = $1 AND m.active = true AND r.finished = false \
     AND (r.turns ->> m.player_id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM muted_rooms x WHERE x.player_id = m.player_id \
     AND x.room_id = m.room_id) \
     ORDER BY r.trigger_timeout_at IS NULL, r.trigger_timeout_at, (r.turns ->> m.player_id), r.id \
     LIMIT 50";

/// When player `$1`'s last digest went.
pub(super) const DIGEST_MAILED_AT: &str =
    "SELECT turns_mailed_at FROM player_emails WHERE player_id = $1";

/// A key the servers share (`$1`), made by the first to need it (`$2`).
pub(super) const INSERT_SERVER_KEY: &str =
    "INSERT INTO server_keys (name, value) VALUES ($1, $2) ON CONFLICT DO NOTHING";
pub(super) const SERVER_KEY: &str = "SELECT value FROM server_keys WHERE name = $1";

/// A player's address and what they want mailed to it.
#[derive(Debug, Clone, PartialEq)]
pub struct EmailRecord {
    pub address: String,
    pub verified_at: Timestamp,
    pub turn_mail: bool,
    pub clock_mail: bool,
}

/// What a link is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkPurpose {
    Verify,
    Reset,
}

impl LinkPurpose {
    fn as_str(self) -> &'static str {
        match self {
            LinkPurpose::Verify => "verify",
            LinkPurpose::Reset => "reset",
        }
    }
}

/// A link to mail: its token's hash and until when it works.
#[derive(Debug, Clone)]
pub struct NewLink {
    pub player_id: PlayerId,
    pub purpose: LinkPurpose,
    pub address: String,
    pub token_hash: String,
    pub created_at: Timestamp,
    pub expires_at: Timestamp,
    /// The mail that carries it.
    pub letter: Letter,
}

/// What the writer does about players' e-mail.
pub(super) enum EmailWrite {
    /// Keeps the link (the player's earlier ones for the same purpose stop working) and mails it.
    Link(NewLink),
    /// Uses a verification link: the address becomes the player's, and `old_letter` goes to the
    /// address it replaces. Refused with [`StoreError::AddressTaken`] if another account has it.
    Verify {
        token_hash: String,
        at: Timestamp,
        old_letter: Letter,
    },
    /// Uses a reset link: the password becomes `hash`, every session ends, and `letter` goes to
    /// the address.
    Reset {
        token_hash: String,
        hash: String,
        at: Timestamp,
        letter: Letter,
    },
    Remove(PlayerId),
    Settings {
        player_id: PlayerId,
        turn_mail: bool,
        clock_mail: bool,
    },
    Mute {
        player_id: PlayerId,
        room_id: String,
        muted: bool,
    },
    ServerKey {
        name: &'static str,
        made: String,
    },
    PruneTokens(Timestamp),
}

pub(super) enum EmailOutcome {
    Done,
    /// The link's player (and address), if it worked; the sessions a reset ended.
    Used(Option<(PlayerId, String)>, Vec<String>),
    Key(String),
}

impl WriteStep for EmailWrite {
    type Output = EmailOutcome;

    async fn apply<D: Dialect>(
        &self,
        conn: &mut D::Connection,
    ) -> Result<EmailOutcome, StoreError> {
        match self {
            EmailWrite::Link(link) => keep_link::<D>(conn, link).await,
            EmailWrite::Verify {
                token_hash,
                at,
                old_letter,
            } => verify::<D>(conn, token_hash, *at, old_letter).await,
            EmailWrite::Reset {
                token_hash,
                hash,
                at,
                letter,
            } => reset::<D>(conn, token_hash, hash, *at, letter).await,
            EmailWrite::Remove(player) => {
                D::execute(conn, Statement::new(DROP_ADDRESS).bind(player.as_str())).await?;
                Ok(EmailOutcome::Done)
            }
            EmailWrite::Settings {
                player_id,
                turn_mail,
                clock_mail,
            } => {
                let statement = Statement::new(SET_MAIL_SETTINGS)
                    .bind(player_id.as_str())
                    .bind(*turn_mail)
                    .bind(*clock_mail);
                D::execute(conn, statement).await?;
                Ok(EmailOutcome::Done)
            }
            EmailWrite::Mute {
                player_id,
                room_id,
                muted,
            } => {
                let sql = if *muted { MUTE_ROOM } else { UNMUTE_ROOM };
                let statement = Statement::new(sql)
                    .bind(player_id.as_str())
                    .bind(room_id.as_str());
                D::execute(conn, statement).await?;
                Ok(EmailOutcome::Done)
            }
            EmailWrite::ServerKey { name, made } => {
                let insert = Statement::new(INSERT_SERVER_KEY)
                    .bind(*name)
                    .bind(made.as_str());
                D::execute(conn, insert).await?;
                let row = D::fetch_optional(conn, Statement::new(SERVER_KEY).bind(*name)).await?;
                let row = row.ok_or_else(|| StoreError::Corrupt(format!("no key {name}")))?;
                Ok(EmailOutcome::Key(D::text(&row, "value")?))
            }
            EmailWrite::PruneTokens(before) => {
                D::execute(conn, Statement::new(PRUNE_TOKENS).bind(*before)).await?;
                Ok(EmailOutcome::Done)
            }
        }
    }
}

/// Keeps a link (the player's earlier ones for its purpose stop working) and mails it.
async fn keep_link<D: Dialect>(
    conn: &mut D::Connection,
    link: &NewLink,
) -> Result<EmailOutcome, StoreError> {
    let purpose = link.purpose.as_str();
    let drop = Statement::new(DROP_TOKENS)
        .bind(link.player_id.as_str())
        .bind(purpose);
    D::execute(conn, drop).await?;
    let insert = Statement::new(INSERT_TOKEN)
        .bind(link.token_hash.as_str())
        .bind(link.player_id.as_str())
        .bind(purpose)
        .bind(link.address.as_str())
        .bind(link.created_at)
        .bind(link.expires_at);
    D::execute(conn, insert).await?;
    let kind = match link.purpose {
        LinkPurpose::Verify => NoticeKind::Verify,
        LinkPurpose::Reset => NoticeKind::Reset,
    };
    let (player, address) = (link.player_id.as_str(), link.address.as_str());
    mail_to::<D>(conn, player, address, kind, &link.letter, link.created_at).await?;
    Ok(EmailOutcome::Done)
}

/// Uses a reset link: the password, every session ended, the address told.
async fn reset<D: Dialect>(
    conn: &mut D::Connection,
    token_hash: &str,
    hash: &str,
    at: Timestamp,
    letter: &Letter,
) -> Result<EmailOutcome, StoreError> {
    let Some((player, address)) = use_token::<D>(conn, token_hash, LinkPurpose::Reset, at).await?
    else {
        return Ok(EmailOutcome::Used(None, Vec::new()));
    };
    let drop = Statement::new(DROP_TOKENS)
        .bind(player.as_str())
        .bind(LinkPurpose::Reset.as_str());
    D::execute(conn, drop).await?;
    let set = Statement::new(SET_PASSWORD)
        .bind(hash)
        .bind(player.as_str());
    D::execute(conn, set).await?;
    let ended = end_all_sessions::<D>(conn, &player, at).await?;
    mail_to_verified::<D>(conn, &player, NoticeKind::PasswordChanged, letter, at).await?;
    Ok(EmailOutcome::Used(Some((player, address)), ended))
}

/// Uses the link whose hash is `token_hash`, if it works at `at`: its player and address.
async fn use_token<D: Dialect>(
    conn: &mut D::Connection,
    token_hash: &str,
    purpose: LinkPurpose,
    at: Timestamp,
) -> Result<Option<(PlayerId, String)>, StoreError> {
    let statement = Statement::new(USE_TOKEN)
        .bind(token_hash)
        .bind(purpose.as_str())
        .bind(at);
    let Some(row) = D::fetch_optional(conn, statement).await? else {
        return Ok(None);
    };
    Ok(Some((
        D::text(&row, "player_id")?.into(),
        D::text(&row, "address")?,
    )))
}

async fn verify<D: Dialect>(
    conn: &mut D::Connection,
    token_hash: &str,
    at: Timestamp,
    old_letter: &Letter,
) -> Result<EmailOutcome, StoreError> {
    // Checked before anything is written: a refusal leaves the link working.
    let link = Statement::new(EMAIL_TOKEN)
        .bind(token_hash)
        .bind(LinkPurpose::Verify.as_str())
        .bind(at);
    let Some(row) = D::fetch_optional(conn, link).await? else {
        return Ok(EmailOutcome::Used(None, Vec::new()));
    };
    let address = D::text(&row, "address")?;
    let holder = Statement::new(ADDRESS_HOLDER)
        .bind(address.as_str())
        .bind(D::text(&row, "player_id")?);
    if D::fetch_optional(conn, holder).await?.is_some() {
        return Err(StoreError::AddressTaken);
    }
    let Some((player, address)) = use_token::<D>(conn, token_hash, LinkPurpose::Verify, at).await?
    else {
        return Ok(EmailOutcome::Used(None, Vec::new()));
    };
    let old = D::fetch_optional(conn, Statement::new(EMAIL_OF).bind(player.as_str())).await?;
    let old = old.map(|row| D::text(&row, "address")).transpose()?;
    let set = Statement::new(SET_ADDRESS)
        .bind(player.as_str())
        .bind(address.as_str())
        .bind(at);
    D::execute(conn, set).await?;
    if let Some(old) = old.filter(|old| !old.eq_ignore_ascii_case(&address)) {
        mail_to::<D>(
            conn,
            &player,
            &old,
            NoticeKind::AddressChanged,
            old_letter,
            at,
        )
        .await?;
    }
    Ok(EmailOutcome::Used(Some((player, address)), Vec::new()))
}

async fn email_of<D: Dialect>(
    pool: &Pool<D>,
    player: &str,
) -> Result<(Option<EmailRecord>, Option<String>), StoreError> {
    let mut conn = pool.acquire().await?;
    let row = D::fetch_optional(&mut conn, Statement::new(EMAIL_OF).bind(player)).await?;
    let record = match row {
        Some(row) => Some(EmailRecord {
            address: D::text(&row, "address")?,
            verified_at: D::time(&row, "verified_at")?,
            turn_mail: D::flag(&row, "turn_mail")?,
            clock_mail: D::flag(&row, "clock_mail")?,
        }),
        None => None,
    };
    let pending = Statement::new(PENDING_EMAIL)
        .bind(player)
        .bind(Timestamp::now());
    let pending = D::fetch_optional(&mut conn, pending).await?;
    let pending = pending.map(|row| D::text(&row, "address")).transpose()?;
    Ok((record, pending))
}

async fn email_token<D: Dialect>(
    pool: &Pool<D>,
    token_hash: &str,
    purpose: LinkPurpose,
) -> Result<Option<(PlayerId, String)>, StoreError> {
    let statement = Statement::new(EMAIL_TOKEN)
        .bind(token_hash)
        .bind(purpose.as_str())
        .bind(Timestamp::now());
    let row = D::fetch_optional(&mut *pool.acquire().await?, statement).await?;
    row.map(|row| {
        Ok((
            D::text(&row, "player_id")?.into(),
            D::text(&row, "address")?,
        ))
    })
    .transpose()
}

async fn reset_account<D: Dialect>(
    pool: &Pool<D>,
    name_or_address: &str,
) -> Result<Option<(PlayerRef, String)>, StoreError> {
    let statement = Statement::new(RESET_ACCOUNT).bind(name_or_address);
    let row = D::fetch_optional(&mut *pool.acquire().await?, statement).await?;
    row.map(|row| {
        let player = PlayerRef {
            id: D::text(&row, "id")?.into(),
            username: D::text(&row, "username")?,
        };
        Ok((player, D::text(&row, "address")?))
    })
    .transpose()
}

async fn digest<D: Dialect>(
    pool: &Pool<D>,
    player: &str,
) -> Result<(Vec<(Turn, bool)>, Option<Timestamp>), StoreError> {
    let mut conn = pool.acquire().await?;
    let rows = D::fetch_all(&mut conn, Statement::new(DIGEST_ROOMS).bind(player)).await?;
    let turns = (rows.iter())
        .map(|row| Ok((turn_of::<D>(row)?, D::flag(row, "away")?)))
        .collect::<Result<_, StoreError>>()?;
    let mailed =
        D::fetch_optional(&mut conn, Statement::new(DIGEST_MAILED_AT).bind(player)).await?;
    let mailed = mailed
        .map(|row| D::maybe_time(&row, "turns_mailed_at"))
        .transpose()?
        .flatten();
    Ok((turns, mailed))
}

async fn muted_rooms<D: Dialect>(pool: &Pool<D>, player: &str) -> Result<Vec<String>, StoreError> {
    let rows = D::fetch_all(
        &mut *pool.acquire().await?,
        Statement::new(MUTED_ROOMS).bind(player),
    )
    .await?;
    rows.iter().map(|row| D::text(row, "room_id")).collect()
}

/// The store's side of players' e-mail.
impl Store {
    /// The player's verified address and settings, and the address they asked to verify last
    /// (while its link works).
    pub async fn email_of(
        &self,
        player: &str,
    ) -> Result<(Option<EmailRecord>, Option<String>), StoreError> {
        read!(self, |pool| email_of(pool, player))
    }

    /// The player and address of a link that works now.
    pub async fn email_token(
        &self,
        token_hash: &str,
        purpose: LinkPurpose,
    ) -> Result<Option<(PlayerId, String)>, StoreError> {
        read!(self, |pool| email_token(pool, token_hash, purpose))
    }

    /// The account named so, or whose verified address it is, with that address.
    pub async fn reset_account(
        &self,
        name_or_address: &str,
    ) -> Result<Option<(PlayerRef, String)>, StoreError> {
        read!(self, |pool| reset_account(pool, name_or_address))
    }

    /// The rooms the player's digest lists now, each with whether they have been away since
    /// its turn began, and when their last digest went.
    pub async fn digest_of(
        &self,
        player: &str,
    ) -> Result<(Vec<(Turn, bool)>, Option<Timestamp>), StoreError> {
        read!(self, |pool| digest(pool, player))
    }

    /// The rooms the player muted.
    pub async fn muted_rooms(&self, player: &str) -> Result<Vec<String>, StoreError> {
        read!(self, |pool| muted_rooms(pool, player))
    }

    /// Keeps a link and mails it, in one transaction.
    pub async fn mail_link(&self, link: NewLink) -> Result<(), StoreError> {
        self.email_write(EmailWrite::Link(link)).await.map(|_| ())
    }

    /// Uses a verification link: its player and the address now theirs, if it worked.
    pub async fn verify_email(
        &self,
        token_hash: &str,
        old_letter: Letter,
    ) -> Result<Option<(PlayerId, String)>, StoreError> {
        let write = EmailWrite::Verify {
            token_hash: token_hash.to_owned(),
            at: Timestamp::now(),
            old_letter,
        };
        match self.email_write(write).await? {
            EmailOutcome::Used(used, _) => Ok(used),
            _ => Ok(None),
        }
    }

    /// Uses a reset link: its player and the sessions ended, if it worked.
    pub async fn reset_password(
        &self,
        token_hash: &str,
        hash: &str,
        letter: Letter,
    ) -> Result<Option<(PlayerId, Vec<String>)>, StoreError> {
        let write = EmailWrite::Reset {
            token_hash: token_hash.to_owned(),
            hash: hash.to_owned(),
            at: Timestamp::now(),
            letter,
        };
        match self.email_write(write).await? {
            EmailOutcome::Used(Some((player, _)), ended) => Ok(Some((player, ended))),
            _ => Ok(None),
        }
    }

    /// The player no longer has an address.
    pub async fn remove_email(&self, player: &PlayerId) -> Result<(), StoreError> {
        self.email_write(EmailWrite::Remove(player.clone()))
            .await
            .map(|_| ())
    }

    /// Turns the player's turn mail and clock mail on or off.
    pub async fn set_mail_settings(
        &self,
        player: &PlayerId,
        turn_mail: bool,
        clock_mail: bool,
    ) -> Result<(), StoreError> {
        let write = EmailWrite::Settings {
            player_id: player.clone(),
            turn_mail,
            clock_mail,
        };
        self.email_write(write).await.map(|_| ())
    }

    /// Mutes a room for the player, or hears of it again.
    pub async fn mute_room(
        &self,
        player: &PlayerId,
        room: &str,
        muted: bool,
    ) -> Result<(), StoreError> {
        let write = EmailWrite::Mute {
            player_id: player.clone(),
            room_id: room.to_owned(),
            muted,
        };
        self.email_write(write).await.map(|_| ())
    }

    /// The key every server shares under `name`: `made`, if none was kept before.
    pub async fn server_key(&self, name: &'static str, made: String) -> Result<String, StoreError> {
        match self
            .email_write(EmailWrite::ServerKey { name, made })
            .await?
        {
            EmailOutcome::Key(key) => Ok(key),
            _ => Err(StoreError::Corrupt(format!("no key {name}"))),
        }
    }

    /// Forgets links that expired before `before`.
    pub async fn prune_links(&self, before: Timestamp) -> Result<(), StoreError> {
        self.email_write(EmailWrite::PruneTokens(before))
            .await
            .map(|_| ())
    }

    async fn email_write(&self, write: EmailWrite) -> Result<EmailOutcome, StoreError> {
        let (job, reply) = Job::new(write);
        let (_, outcome) = self.writer.write(job.into(), reply).await?;
        Ok(outcome)
    }
}
