//! The audit log's records: an admin action, who took it and from where, what it did to what,
//! and why.

use serde::Serialize;
use serde_json::Value;

use super::time::Timestamp;
use crate::game::PlayerRef;

/// One admin action, as the audit log keeps it: who took it, what it did to what, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// Its place in the log, growing (0 until it is stored).
    pub id: i64,
    pub at: Timestamp,
    /// The admin who took it; `None` for the command line (`turnhouse admin`).
    pub actor: Option<PlayerRef>,
    /// The admin's name then, or `turnhouse admin` for the command line.
    pub actor_name: String,
    /// Where the admin's request came from: the client's address as the server saw it
    /// (behind a trusted proxy, the one it names); `None` for the command line.
    pub client: Option<String>,
    /// `suspend`, `unsuspend`, `rename`, `unpublish`, `close_room`, `grant`, `revoke`,
    /// `mute_chat`, `delete_chat_message`.
    pub action: String,
    pub target: AuditTarget,
    pub reason: String,
    /// What else the action says: the role granted, a rename's old and new names, what
    /// became of a game's rooms.
    pub details: Value,
}

/// An admin taking an action, and where their request came from, for the audit log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moderator {
    pub player: PlayerRef,
    /// The client's address as the server saw it (behind a trusted proxy, the one it names).
    pub client: String,
}

/// The kinds of admin action the audit log keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditAction {
    Grant,
    Revoke,
    Suspend,
    Unsuspend,
    Rename,
    Unpublish,
    CloseRoom,
    MuteChat,
    DeleteChatMessage,
}

impl AuditAction {
    /// The action's name, as the log keeps and shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditAction::Grant => "grant",
            AuditAction::Revoke => "revoke",
            AuditAction::Suspend => "suspend",
            AuditAction::Unsuspend => "unsuspend",
            AuditAction::Rename => "rename",
            AuditAction::Unpublish => "unpublish",
            AuditAction::CloseRoom => "close_room",
            AuditAction::MuteChat => "mute_chat",
            AuditAction::DeleteChatMessage => "delete_chat_message",
        }
    }
}

/// What an admin action was done to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditTarget {
    /// `player`, `game` or `room`.
    pub kind: String,
    pub id: String,
}

impl AuditEntry {
    /// An action `actor` takes now (the command line's when `None`).
    pub fn new(
        actor: Option<&Moderator>,
        action: AuditAction,
        (kind, id): (&str, &str),
        reason: &str,
        details: Value,
    ) -> Self {
        Self {
            id: 0,
            at: Timestamp::now(),
            actor: actor.map(|a| a.player.clone()),
            actor_name: actor.map_or_else(
                || "turnhouse admin".to_owned(),
                |a| a.player.username.clone(),
            ),
            client: actor.map(|a| a.client.clone()),
            action: action.as_str().to_owned(),
            target: AuditTarget {
                kind: kind.to_owned(),
                id: id.to_owned(),
            },
            reason: reason.to_owned(),
            details,
        }
    }
}
