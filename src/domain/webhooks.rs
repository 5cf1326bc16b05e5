//! Webhooks as the platform keeps them: the event types there are, who subscribes to which
//! (an endpoint), and what the outbox holds for each delivery. The bodies themselves are made
//! in [`super::outgoing`].

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use super::game_id::GameId;
use super::time::Timestamp;

/// A kind of event that leaves the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    RoomCreated,
    /// The room stopped being joinable, unfinished: its game began.
    RoomStarted,
    /// A game ended, with its winners and rating changes.
    RoomFinished,
    /// The room was finished without a game: closed unplayed, or by an admin.
    RoomClosed,
    PlayerJoined,
    PlayerLeft,
    /// Every version of a room: opt-in, being the busiest.
    VersionCreated,
    GamePublished,
    /// A test an endpoint's owner asks for; never subscribed to.
    Ping,
}

impl EventType {
    /// Every type an endpoint may subscribe to.
    pub const SUBSCRIBABLE: [EventType; 8] = [
        EventType::RoomCreated,
        EventType::RoomStarted,
        EventType::RoomFinished,
        EventType::RoomClosed,
        EventType::PlayerJoined,
        EventType::PlayerLeft,
        EventType::VersionCreated,
        EventType::GamePublished,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::RoomCreated => "room.created",
            EventType::RoomStarted => "room.started",
            EventType::RoomFinished => "room.finished",
            EventType::RoomClosed => "room.closed",
            EventType::PlayerJoined => "player.joined",
            EventType::PlayerLeft => "player.left",
            EventType::VersionCreated => "version.created",
            EventType::GamePublished => "game.published",
            EventType::Ping => "ping",
        }
    }

    /// A subscribable type by its name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::SUBSCRIBABLE.into_iter().find(|t| t.as_str() == name)
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of event types.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventTypes(u16);

impl EventTypes {
    pub fn of(types: impl IntoIterator<Item = EventType>) -> Self {
        Self(types.into_iter().fold(0, |set, t| set | t.bit()))
    }

    /// The types named in `list` (comma-separated, as kept), or the first name that is none.
    pub fn parse_list(list: &str) -> Result<Self, String> {
        let names = list.split(',').map(str::trim).filter(|n| !n.is_empty());
        Self::parse_names(names)
    }

    /// The types `names` name, or the first that is none.
    pub fn parse_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut set = Self::default();
        for name in names {
            set.0 |= EventType::parse(name).ok_or_else(|| name.to_owned())?.bit();
        }
        Ok(set)
    }

    pub fn contains(self, t: EventType) -> bool {
        self.0 & t.bit() != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    pub fn iter(self) -> impl Iterator<Item = EventType> {
        EventType::SUBSCRIBABLE
            .into_iter()
            .filter(move |t| self.contains(*t))
    }

    /// The names, comma-separated, as kept.
    pub fn text(self) -> String {
        self.iter()
            .map(EventType::as_str)
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl Serialize for EventTypes {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter().map(EventType::as_str))
    }
}

/// Who receives an event: an endpoint, and what it takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Subscription {
    pub endpoint_id: String,
    /// `None`: the operator's, every game's events.
    pub game: Option<GameId>,
    pub types: EventTypes,
}

/// The endpoints taking events (all but the disabled: a paused one's wait for it), as the
/// writer consults them for every commit.
#[derive(Debug, Clone, Default)]
pub struct Subscriptions {
    pub endpoints: Arc<Vec<Subscription>>,
}

impl Subscriptions {
    /// The endpoints taking events of `game`, and the union of the types they take.
    pub fn for_game<'a>(&'a self, game: &GameId) -> (Vec<&'a Subscription>, EventTypes) {
        let subscribers: Vec<&Subscription> = self
            .endpoints
            .iter()
            .filter(|s| s.game.as_ref().is_none_or(|g| g == game))
            .collect();
        let wanted = subscribers
            .iter()
            .fold(EventTypes::default(), |set, s| set.union(s.types));
        (subscribers, wanted)
    }
}

/// An endpoint, as kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    pub id: String,
    pub game: Option<GameId>,
    /// Who made it (`None`: an operator, on the command line).
    pub created_by: Option<String>,
    pub url: String,
    pub types: EventTypes,
    pub secret: String,
    pub previous_secret: Option<String>,
    pub previous_secret_until: Option<Timestamp>,
    pub paused_at: Option<Timestamp>,
    pub disabled_at: Option<Timestamp>,
    pub disabled_reason: Option<String>,
    pub failing_since: Option<Timestamp>,
    pub created_at: Timestamp,
}

impl Endpoint {
    /// Whether deliveries go to it now.
    pub fn is_live(&self) -> bool {
        self.paused_at.is_none() && self.disabled_at.is_none()
    }

    /// The secrets that sign a delivery at `now`: the current one, and the previous one while
    /// a rotation lasts.
    pub fn signing_secrets(&self, now: Timestamp) -> Vec<&str> {
        let mut secrets = vec![self.secret.as_str()];
        if let (Some(previous), Some(until)) = (&self.previous_secret, self.previous_secret_until) {
            if until > now {
                secrets.push(previous);
            }
        }
        secrets
    }
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryState {
    Pending,
    Delivered,
    Failed,
}

impl DeliveryState {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "pending" => Some(Self::Pending),
            "delivered" => Some(Self::Delivered),
            "failed" => Some(Self::Failed),
            _ => None,
        }
    }
}

/// One event on its way to one endpoint, as the delivery log shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// The `webhook-id`: the same on every attempt.
    pub id: String,
    #[serde(skip)]
    pub seq: i64,
    #[serde(skip)]
    pub endpoint_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub room_id: Option<String>,
    pub state: DeliveryState,
    pub created_at: Timestamp,
    /// When the next attempt is due, while pending.
    pub next_attempt_at: Option<Timestamp>,
    /// Tried until then, after which it is marked failed (`None` as kept: the server's retry
    /// period after `created_at`).
    pub retry_until: Option<Timestamp>,
    /// How many attempts were made.
    #[serde(rename = "attemptCount")]
    pub attempts: i64,
    pub last_status: Option<i64>,
    /// Every attempt, oldest first (left out before the first).
    #[serde(rename = "attempts", skip_serializing_if = "Vec::is_empty")]
    pub attempt_log: Vec<DeliveryAttempt>,
}

/// One attempt at a delivery.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryAttempt {
    pub attempt: i64,
    pub at: Timestamp,
    /// The answer's status; `None` when there was none (see `error`).
    pub status: Option<i64>,
    pub latency_ms: i64,
    /// The answer's first bytes.
    pub response: String,
    pub error: Option<String>,
}

/// A row for the outbox: one event for one endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxRow {
    pub id: String,
    pub endpoint_id: String,
    pub kind: EventType,
    pub payload: Payload,
    pub created_at: Timestamp,
    /// `None`: the server's retry period after `created_at`.
    pub retry_until: Option<Timestamp>,
}

/// What an event's body is made from.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// A room's event: its body is made, when delivered, from `version` of the room's history,
    /// with `extra` (JSON) added.
    Room {
        room_id: String,
        game: String,
        version: i64,
        extra: Option<String>,
    },
    /// Any other event: its body, whole.
    Body(String),
}

/// A new delivery's id, the `webhook-id` a receiver deduplicates by: `msg_`, then the time in
/// milliseconds and 14 random characters, in base 62 (as the KSUIDs of Standard Webhooks'
/// examples are). Ids that follow the time go in at the end of the outbox's index of ids, where
/// random ones each dirtied a page of their own in every commit's log.
pub fn new_message_id() -> String {
    let millis = chrono::Utc::now().timestamp_millis().max(0) as u64;
    let mut id = String::with_capacity(26);
    id.push_str("msg_");
    // Eight base-62 digits hold every millisecond until the year 8900.
    let mut digits = [0u8; 8];
    let mut rest = millis;
    for digit in digits.iter_mut().rev() {
        *digit = ALPHABET[(rest % 62) as usize];
        rest /= 62;
    }
    id.extend(digits.iter().map(|&d| d as char));
    push_random(&mut id, 14);
    id
}

/// A new endpoint's id.
pub fn new_endpoint_id() -> String {
    let mut id = String::from("hook_");
    push_random(&mut id, 22);
    id
}

const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

fn push_random(id: &mut String, count: usize) {
    use rand::Rng;
    let mut rng = rand::rng();
    for _ in 0..count {
        id.push(ALPHABET[rng.random_range(0..ALPHABET.len())] as char);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_of_types_is_read_and_written_back_the_same() {
        let types = EventTypes::parse_list("room.finished, room.created").unwrap();
        assert!(types.contains(EventType::RoomFinished));
        assert!(!types.contains(EventType::VersionCreated));
        assert_eq!(types.text(), "room.created,room.finished");
        assert_eq!(
            EventTypes::parse_list("room.finished,room.exploded"),
            Err("room.exploded".to_owned())
        );
        assert_eq!(EventTypes::parse_list("ping"), Err("ping".to_owned()));
    }

    #[test]
    fn ids_carry_their_prefix_differ_and_follow_the_time() {
        let a = new_message_id();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = new_message_id();
        assert!(a.starts_with("msg_") && a.len() == 26, "{a}");
        assert!(a < b, "{a} then {b}");
        assert!(new_endpoint_id().starts_with("hook_"));
    }
}
