//! The product's slices, each a small service holding only the handles it needs, composed once
//! at start: rooms (the engine), accounts, the catalog of games, moderation, chat, standing,
//! webhooks and notifications.
//! Handlers call the one they need.
//!
//! One stop in the life of a move: `docs/internals.md`.

use crate::accounts::{AccountMail, Accounts};
use crate::catalog::Catalog;
use crate::chat::Chat;
use crate::config::WebhookSettings;
use crate::domain::public_url::PublicUrl;
use crate::draining::Drain;
use crate::engine::{Engine, EngineError, IdleRules};
use crate::game::GameRegistry;
use crate::metrics::Exposition;
use crate::moderation::Moderation;
use crate::notifications::{MailSetup, Notifications, Presence};
use crate::outbox::Outbox;
use crate::sandbox::SandboxPool;
use crate::standing::Standings;
use crate::store::Store;
use crate::webhooks::{WebhookSender, Webhooks};

#[derive(Clone)]
pub struct Services {
    pub rooms: Engine,
    pub accounts: Accounts,
    pub catalog: Catalog,
    pub moderation: Moderation,
    pub chat: Chat,
    pub standing: Standings,
    pub webhooks: Webhooks,
    pub notifications: Notifications,
    /// Where links in mail point: set once the server has bound, unless the operator gave it.
    pub public_url: PublicUrl,
    /// The services that hold work from the database, stopped by draining them.
    pub drain: std::sync::Arc<Drain>,
    /// The database, whose writer's queue a stopping server commits last.
    pub store: Store,
}

/// The rooms' presence, as notifications ask it.
struct Watching(Engine);

impl Presence for Watching {
    fn watching(&self, player: &str, rooms: &[&str]) -> bool {
        let of = |room: &str| self.0.online(room).iter().any(|p| p == player);
        of(crate::live::LOBBY) || rooms.iter().any(|room| of(room))
    }
}

impl Services {
    /// Starts every slice on `store`: `games` are the built-in games, uploaded ones run in
    /// `sandbox`; `bot_seed` salts every bot decision (see
    /// [`crate::config::Config::bot_seed`]); `idle` says how long idle rooms are kept;
    /// `hooks` where webhooks may go and how they are delivered (and notices retried); `mail`
    /// how mail goes, if it does.
    pub async fn start(
        store: Store,
        games: GameRegistry,
        sandbox: SandboxPool,
        bot_seed: u64,
        idle: IdleRules,
        hooks: &WebhookSettings,
        mail: MailSetup,
    ) -> Result<Self, EngineError> {
        let drain = std::sync::Arc::new(Drain::default());
        let catalog = Catalog::start(store.clone(), games, sandbox);
        let sender = WebhookSender::new(hooks.destinations(), hooks.timeout());
        let outbox = Outbox::start(
            store.clone(),
            hooks.rules(),
            std::sync::Arc::new(sender),
            &drain,
        )
        .await?;
        let webhooks = Webhooks::new(store.clone(), catalog.clone(), outbox, hooks.destinations());
        let public_url = mail.public_url.clone();
        let accounts = Accounts::start(store.clone(), idle.seen_every()).with_mail(AccountMail {
            enabled: mail.mailer.is_some(),
            public_url: mail.public_url.clone(),
        });
        let rooms = Engine::start(store.clone(), catalog.clone(), bot_seed, idle).await?;
        let presence = std::sync::Arc::new(Watching(rooms.clone()));
        let notifications = Notifications::start(
            store.clone(),
            catalog.clone(),
            hooks.rules(),
            mail,
            presence,
            &drain,
        )
        .await?;
        Ok(Self {
            moderation: Moderation::new(
                store.clone(),
                rooms.clone(),
                accounts.clone(),
                catalog.clone(),
            ),
            chat: Chat::new(store.clone(), rooms.hub()),
            notifications,
            public_url,
            drain,
            standing: Standings::new(store.clone(), catalog.clone()),
            store,
            webhooks,
            rooms,
            accounts,
            catalog,
        })
    }

    /// Figures for `GET /metrics`: the store's, and what each slice holds in memory.
    pub fn render_metrics(&self, out: &mut Exposition) {
        self.rooms.render_metrics(out);
        self.accounts.render_metrics(out);
        self.catalog.render_metrics(out);
        self.notifications.render_metrics(out);
    }
}
