//! Every write the store makes, as a value, and how one is applied inside a transaction: the
//! order of the steps is decided here once; each database says how to do each step in its SQL
//! ([`WriteSql`]).

use std::future::Future;

use super::{RoomCommit, StoreError};
use crate::game::{BotLevel, PlayerRef};
use crate::model::{Account, NewGameVersion, Room, RoomEvent};

/// One write, as a value: what the writer task applies.
pub(super) enum Write {
    Room(Box<RoomCommit>),
    Account(Account),
    TokenHash {
        player_id: String,
        token_hash: String,
    },
    Bot {
        level: BotLevel,
        id: String,
        username: String,
        created_at: String,
    },
    GameVersion(NewGameVersion),
    /// Copies of a room, to fill a database for measuring.
    CopyRoom {
        template: String,
        copies: i64,
    },
}

impl Write {
    /// The room this write changes, if any. Writes to different rooms never depend on each
    /// other, so a batch may apply them in any order; ordering them by room makes every
    /// transaction take its row locks in one order, so two servers' batches cannot deadlock
    /// over the same rooms.
    pub(super) fn room(&self) -> Option<&str> {
        match self {
            Write::Room(commit) => Some(&commit.room.id),
            _ => None,
        }
    }
}

/// What a write produced, handed back once it is durable.
pub(super) enum Written {
    Room(Box<RoomCommit>),
    /// A write with nothing to hand back: an account, copies of a room.
    Applied,
    Bot(PlayerRef),
    GameVersion(i64),
}

/// What a write produced, before it is handed back with the write itself.
pub(super) enum Done {
    Nothing,
    Bot(PlayerRef),
    GameVersion(i64),
}

impl Done {
    pub(super) fn with(self, write: Write) -> Written {
        match (self, write) {
            (Done::Nothing, Write::Room(commit)) => Written::Room(commit),
            (Done::Bot(bot), _) => Written::Bot(bot),
            (Done::GameVersion(version), _) => Written::GameVersion(version),
            (Done::Nothing, _) => Written::Applied,
        }
    }
}

/// The steps of every write, in one database's SQL, run on a connection inside a transaction.
///
/// A refusal ([`StoreError::is_refusal`]) must be decided without a failed statement: in
/// PostgreSQL a failed statement aborts the whole transaction, which would undo the other
/// writes of the batch.
pub(super) trait WriteSql: Send {
    /// Runs a statement that takes no arguments and returns nothing (`BEGIN`, `COMMIT`).
    fn run(
        &mut self,
        statement: &'static str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Inserts a new room; with `unless_open_for`, only if no public room of its game is open
    /// to that player at this moment (quick play). `false` if it was not inserted.
    fn insert_room(
        &mut self,
        room: &Room,
        unless_open_for: Option<&str>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// The compare-and-set: writes the room only if it is still at `expected_version`.
    /// `joinable` and `finished` are written only when `listing_changed`.
    fn update_room(
        &mut self,
        room: &Room,
        expected_version: i64,
        listing_changed: bool,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Records that `player_id` is (`active`) or was in the room.
    fn write_member(
        &mut self,
        room_id: &str,
        player_id: &str,
        active: bool,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Copies the room's `finished` onto its memberships.
    fn set_members_finished(
        &mut self,
        room_id: &str,
        finished: bool,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    fn insert_event(
        &mut self,
        room_id: &str,
        event: &RoomEvent,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Tells other servers on the database about the commit once it is durable (PostgreSQL's
    /// `NOTIFY`, delivered only if the transaction commits); nothing where there are none.
    fn announce(
        &mut self,
        commit: &RoomCommit,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// [`StoreError::UsernameTaken`] if the name is taken.
    fn insert_account(
        &mut self,
        account: &Account,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The bot account of `level`, created first if it does not exist yet.
    fn ensure_bot(
        &mut self,
        level: BotLevel,
        id: &str,
        username: &str,
        created_at: &str,
    ) -> impl Future<Output = Result<PlayerRef, StoreError>> + Send;

    fn set_token_hash(
        &mut self,
        player_id: &str,
        token_hash: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Publishes the next version of a game, creating the game (owned by `upload.owner`) if it
    /// is new; [`StoreError::NotTheOwner`] if someone else owns it. The version number.
    fn publish(
        &mut self,
        upload: &NewGameVersion,
    ) -> impl Future<Output = Result<i64, StoreError>> + Send;

    /// Writes `copies` new rooms identical to `template` but for their ids: record,
    /// memberships and whole history, one statement per table.
    fn copy_room(
        &mut self,
        template: &str,
        copies: i64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// Applies one write inside the batch's transaction.
pub(super) async fn apply<C: WriteSql>(conn: &mut C, write: &Write) -> Result<Done, StoreError> {
    match write {
        Write::Room(commit) => {
            apply_commit(conn, commit).await?;
            Ok(Done::Nothing)
        }
        Write::Account(account) => {
            conn.insert_account(account).await?;
            Ok(Done::Nothing)
        }
        Write::TokenHash {
            player_id,
            token_hash,
        } => {
            conn.set_token_hash(player_id, token_hash).await?;
            Ok(Done::Nothing)
        }
        Write::Bot {
            level,
            id,
            username,
            created_at,
        } => Ok(Done::Bot(
            conn.ensure_bot(*level, id, username, created_at).await?,
        )),
        Write::GameVersion(upload) => Ok(Done::GameVersion(conn.publish(upload).await?)),
        Write::CopyRoom { template, copies } => {
            conn.copy_room(template, *copies).await?;
            Ok(Done::Nothing)
        }
    }
}

/// A room change: the compare-and-set (or the insert), then the memberships and the events.
/// [`StoreError::Conflict`] if the room moved on, decided before anything is written.
async fn apply_commit<C: WriteSql>(conn: &mut C, commit: &RoomCommit) -> Result<(), StoreError> {
    let room = &commit.room;
    let written = match commit.expected_version {
        None => {
            conn.insert_room(room, commit.only_if_no_open_room_for.as_deref())
                .await?
        }
        Some(version) => {
            conn.update_room(room, version, commit.listing_changed)
                .await?
        }
    };
    if !written {
        return Err(StoreError::Conflict);
    }
    if commit.members_changed {
        let members = room
            .players
            .iter()
            .map(|p| (p, true))
            .chain(room.inactive_players.iter().map(|p| (p, false)));
        for (player, active) in members {
            conn.write_member(&room.id, &player.id, active).await?;
        }
    }
    if commit.finished_changed && commit.expected_version.is_some() {
        conn.set_members_finished(&room.id, room.finished).await?;
    }
    // Not a refusal if one fails: the compare-and-set, written first, already decided that
    // these versions are new, so a duplicate is a failure that undoes the whole transaction.
    for event in &commit.events {
        conn.insert_event(&room.id, event).await?;
    }
    conn.announce(commit).await
}
