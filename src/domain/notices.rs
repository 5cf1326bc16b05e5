//! What the outbox sends players, as the platform keeps it: mail and web pushes, each a row
//! written in the transaction that causes it and delivered at least once.

use serde::{Deserialize, Serialize};

use super::ids::{PlayerId, RoomId};
use super::time::Timestamp;

/// How a notice reaches its player.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Channel {
    Mail,
    Push,
}

impl Channel {
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Mail => "mail",
            Channel::Push => "push",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "mail" => Some(Channel::Mail),
            "push" => Some(Channel::Push),
            _ => None,
        }
    }
}

/// What a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NoticeKind {
    /// A link that verifies a new address.
    Verify,
    /// A link that resets the password.
    Reset,
    /// To the old address: the account's address was changed.
    AddressChanged,
    /// To the address: the account's password was set or changed.
    PasswordChanged,
    /// The digest of the rooms waiting on the player (one pending per player).
    Turns,
    /// A room's deadline is near and the player has not moved.
    Clock,
    /// A web push: it is the player's move in a room.
    Turn,
}

impl NoticeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeKind::Verify => "verify",
            NoticeKind::Reset => "reset",
            NoticeKind::AddressChanged => "address_changed",
            NoticeKind::PasswordChanged => "password_changed",
            NoticeKind::Turns => "turns",
            NoticeKind::Clock => "clock",
            NoticeKind::Turn => "turn",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [
            NoticeKind::Verify,
            NoticeKind::Reset,
            NoticeKind::AddressChanged,
            NoticeKind::PasswordChanged,
            NoticeKind::Turns,
            NoticeKind::Clock,
            NoticeKind::Turn,
        ]
        .into_iter()
        .find(|kind| kind.as_str() == text)
    }
}

/// A mail whose words are known when it is written (an account's mail): kept whole in its
/// row until it is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Letter {
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// A notice taken by a server to deliver.
#[derive(Debug, Clone)]
pub struct ClaimedNotice {
    pub seq: i64,
    pub channel: Channel,
    pub kind: NoticeKind,
    pub player_id: PlayerId,
    /// An address, or a push subscription's id.
    pub destination: String,
    pub room_id: Option<RoomId>,
    pub version: Option<i64>,
    /// A [`Letter`] as JSON, for mail whose words were known when it was written.
    pub body: Option<String>,
    pub created_at: Timestamp,
    pub attempts: i64,
}

/// What came of a notice.
#[derive(Debug, Clone, PartialEq)]
pub enum NoticeOutcome {
    Sent,
    /// Nothing to say by the time it was due (the player was looking, or moved): not sent.
    Held,
    /// Not yet: due again then, no attempt counted (a digest within its period).
    Postponed(Timestamp),
    /// The attempt failed: due again then.
    RetryAt(Timestamp, String),
    /// Failed for good (its retry period is over, or it can never be sent).
    Failed(String),
    /// The push service says the subscription is gone: it is removed.
    Gone,
}

impl NoticeOutcome {
    /// Its state, as the row keeps it.
    pub fn state(&self) -> &'static str {
        match self {
            NoticeOutcome::Sent => "sent",
            NoticeOutcome::Held => "held",
            NoticeOutcome::Failed(_) | NoticeOutcome::Gone => "failed",
            NoticeOutcome::Postponed(_) | NoticeOutcome::RetryAt(..) => "pending",
        }
    }
}

/// A turn that began in a commit: the notices it may cause (a digest, a clock warning, a
/// push), decided in the same transaction from what the player asked for.
#[derive(Debug, Clone)]
pub struct TurnBegun {
    pub player_id: PlayerId,
    pub room_id: RoomId,
    pub version: i64,
    pub at: Timestamp,
    /// When the room's deadline is near enough to warn of, for a room on a clock.
    pub warn_at: Option<Timestamp>,
}
