//! Notifications: what reaches a player about their turns wherever they are.
//!
//! - **The turns inbox** (every room waiting on their move) is read from their memberships and
//!   each room's `turns`, which every version writes, so every server answers the same.
//! - **Mail that respects people** (the rule Lichess keeps): a turn begun writes, in its own
//!   commit, a digest due once the player has been away for a while (`--turn-mail-after`), one
//!   pending per player. When due, if they have no stream open and have not been seen since
//!   some turn of theirs began, it lists every room waiting on them, at most once per period
//!   (`--turn-mail-every`); otherwise (they were looking) it is held back. A turn on a clock also writes a warning, due shortly before the deadline
//!   and held back if the player has moved by then. Each such mail has a one-click unsubscribe.
//! - Every notice is an outbox row delivered at least once by [`dispatch`], on any server.
//!
//! One stop in the life of a move: `docs/internals.md`.

mod compose;
mod dispatch;
mod error;
mod mailer;
mod push_crypto;
mod pusher;
mod unsubscribe;

use crate::draining::Drain;
use std::sync::Arc;
use std::time::Duration;

pub use dispatch::NoticeCounts;
pub use error::NotificationError;
pub use mailer::{MailSetupError, Mailer};
pub use unsubscribe::MailKind;

use crate::catalog::Catalog;
use crate::domain::ids::{random_hex, PlayerId};
use crate::domain::public_url::PublicUrl;
use crate::domain::time::Timestamp;
use crate::metrics::Exposition;
use crate::outbound::Destinations;
use crate::outbox::OutboxRules;
use crate::store::{EmailRecord, NoticeRules, PushSubscription, Store, Turn};
use push_crypto::{BrowserKeys, Vapid};
use pusher::Pusher;
use unsubscribe::Unsubscribe;

/// The most rooms the inbox lists: more waiting on one player is no inbox anyone reads.
pub const MAX_TURNS: i64 = 500;

/// Who has a stream open now, on any server (the rooms' presence, which this slice is handed
/// rather than imports).
pub trait Presence: Send + Sync + 'static {
    /// Whether `player` has a stream of one of `rooms`, or of the lobby, open now.
    fn watching(&self, player: &str, rooms: &[&str]) -> bool;
}

/// The most browsers one player may turn notifications on in.
pub const MAX_BROWSERS: i64 = 10;

/// How mail goes, as the operator set it.
pub struct MailSetup {
    /// None: no SMTP server, so no mail.
    pub mailer: Option<Mailer>,
    pub public_url: PublicUrl,
    /// How long a player is away after a turn began before it is mailed.
    pub after: Duration,
    /// At most one digest per player per this.
    pub every: Duration,
    /// How long a turn lasts before it is pushed.
    pub push_after: Duration,
    /// Who mail comes from, and who push services write to about this server's pushes.
    pub from: String,
    /// Where pushes may go (the same guard as webhooks').
    pub destinations: Destinations,
}

/// A player's turns and what reaches them about them.
#[derive(Clone)]
pub struct Notifications {
    store: Store,
    unsubscribe: Unsubscribe,
    counts: Arc<NoticeCounts>,
    /// The server's VAPID public key, base64url.
    push_key: Arc<String>,
    destinations: Destinations,
}

impl Notifications {
    /// Starts the notices' dispatcher, which sends through `mail` (and retries as `rules`
    /// say), and tells the writer which notices turns cause.
    pub async fn start(
        store: Store,
        catalog: Catalog,
        rules: OutboxRules,
        mail: MailSetup,
        presence: Arc<dyn Presence>,
        drain: &Drain,
    ) -> Result<Self, crate::store::StoreError> {
        let key = store.server_key("unsubscribe", random_hex(32)).await?;
        let unsubscribe = Unsubscribe::new(&key);
        let vapid = store.server_key("vapid", Vapid::generate()).await?;
        let vapid = Vapid::from_kept(&vapid)
            .ok_or_else(|| crate::store::StoreError::Corrupt("the VAPID key".into()))?;
        let pusher = Pusher::new(mail.destinations, vapid, format!("mailto:{}", mail.from));
        let push_key = pusher.public_key().to_owned();
        store.set_notice_rules(NoticeRules {
            mail_after: mail.mailer.is_some().then_some(mail.after),
            push_after: mail.push_after,
        });
        if store.solitude().is_some() {
            // No other server has the file open: notices a server took are nobody's now.
            store.release_notices().await?;
        }
        let counts = Arc::new(NoticeCounts::default());
        let senders = dispatch::Senders {
            mailer: mail.mailer,
            public_url: mail.public_url,
            every: mail.every,
            unsubscribe: unsubscribe.clone(),
            presence,
            pusher,
        };
        drain.spawn(dispatch::run(
            store.clone(),
            catalog,
            rules,
            Arc::new(senders),
            counts.clone(),
            drain.watch(),
        ));
        Ok(Self {
            store,
            unsubscribe,
            counts,
            push_key: Arc::new(push_key),
            destinations: mail.destinations,
        })
    }

    /// The unfinished rooms waiting on `player`'s move, the soonest deadline first, then the
    /// longest waiting.
    pub async fn turns(&self, player: &PlayerId) -> Result<Vec<Turn>, NotificationError> {
        Ok(self.store.turns_of(player, MAX_TURNS).await?)
    }

    /// The player's address and mail settings (none without a verified address), and the
    /// rooms they muted.
    pub async fn settings(
        &self,
        player: &PlayerId,
    ) -> Result<(Option<EmailRecord>, Vec<String>), NotificationError> {
        let (email, _) = self.store.email_of(player).await?;
        Ok((email, self.store.muted_rooms(player).await?))
    }

    /// Turns the player's turn mail and clock mail on or off (each left as it is when `None`).
    pub async fn set_mail(
        &self,
        player: &PlayerId,
        turn_mail: Option<bool>,
        clock_mail: Option<bool>,
    ) -> Result<(), NotificationError> {
        let (email, _) = self.store.email_of(player).await?;
        let email = email.ok_or(NotificationError::NoAddress)?;
        let turn_mail = turn_mail.unwrap_or(email.turn_mail);
        let clock_mail = clock_mail.unwrap_or(email.clock_mail);
        Ok(self
            .store
            .set_mail_settings(player, turn_mail, clock_mail)
            .await?)
    }

    /// Mutes a room for the player (no mail or push about it), or hears of it again.
    pub async fn mute(
        &self,
        player: &PlayerId,
        room: &str,
        muted: bool,
    ) -> Result<(), NotificationError> {
        Ok(self.store.mute_room(player, room, muted).await?)
    }

    /// Follows an unsubscribe link: that kind of mail stops for its player.
    pub async fn unsubscribe(&self, token: &str) -> Result<MailKind, NotificationError> {
        let (player, kind) = self
            .unsubscribe
            .check(token)
            .ok_or(NotificationError::InvalidLink)?;
        let stop = |k: MailKind| (k == kind).then_some(false);
        self.set_mail(&player, stop(MailKind::Turns), stop(MailKind::Clock))
            .await
            .or_else(|err| match err {
                // No address any more: nothing goes to it anyway.
                NotificationError::NoAddress => Ok(()),
                other => Err(other),
            })?;
        Ok(kind)
    }

    /// The key browsers subscribe with (`applicationServerKey`): the server's VAPID public
    /// key, uncompressed, base64url.
    pub fn push_key(&self) -> &str {
        &self.push_key
    }

    /// Keeps a browser's subscription for the player (replacing the one of the same
    /// endpoint): its id. The endpoint must be a URL this server may reach, the keys a
    /// browser's.
    pub async fn subscribe(
        &self,
        player: &PlayerId,
        endpoint: &str,
        p256dh: &str,
        auth: &str,
    ) -> Result<String, NotificationError> {
        self.destinations.check_url(endpoint)?;
        BrowserKeys::parse(p256dh, auth)
            .map_err(|err| NotificationError::InvalidSubscription(err.to_string()))?;
        let subscription = PushSubscription {
            id: random_hex(16),
            player_id: player.clone(),
            endpoint: endpoint.to_owned(),
            p256dh: p256dh.to_owned(),
            auth: auth.to_owned(),
            created_at: Timestamp::now(),
        };
        (self
            .store
            .add_push_subscription(subscription, MAX_BROWSERS)
            .await?)
            .ok_or(NotificationError::TooManyBrowsers(MAX_BROWSERS))
    }

    /// The player's browsers with notifications on.
    pub async fn subscriptions(
        &self,
        player: &PlayerId,
    ) -> Result<Vec<PushSubscription>, NotificationError> {
        Ok(self.store.push_subscriptions_of(player).await?)
    }

    /// Turns notifications off in one of the player's browsers.
    pub async fn unsubscribe_browser(
        &self,
        player: &PlayerId,
        id: &str,
    ) -> Result<(), NotificationError> {
        match self.store.remove_push_subscription(player, id).await? {
            true => Ok(()),
            false => Err(NotificationError::SubscriptionNotFound),
        }
    }

    /// Figures for `GET /metrics`.
    pub fn render_metrics(&self, out: &mut Exposition) {
        self.counts.render(out);
    }
}
