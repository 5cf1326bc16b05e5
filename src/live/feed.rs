//! What one stream reads: a room's versions after a given one, each exactly once and in order,
//! or the lobby's changes.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use tokio::sync::broadcast::{self, error::RecvError};

use super::chat_feed::{with_id, without_id, ChatFollow, ChatOut};
use super::hub::{LobbyUpdate, RoomSubscription, RoomUpdate};
use crate::domain::records::RoomEvent;
use crate::store::{Store, StoreError};
use crate::views::{presence_frame, resync_frame, version_frame, EventView, RoomHeader};

/// Versions read from the history at a time while catching up.
const REPLAY_PAGE: i64 = 256;

/// Frames a room's versions for one viewer, where what a version shows depends on who looks.
pub trait Framer: Send + Sync {
    /// `event` as this stream's viewer may see it; `None` when it cannot be shown (the
    /// game's view hook failed), which ends the stream rather than show more than it should.
    fn frame<'a>(&'a self, event: &'a RoomEvent) -> BoxFuture<'a, Option<Bytes>>;
}

/// A source of stream frames.
pub trait Feed {
    /// The next frame, waiting for one; `None` when there will be no more. Not cancel-safe
    /// (a version taken from the channel is held while its view is computed): a stream
    /// polls each call to its end, whatever else it sends meanwhile.
    fn next(
        &mut self,
    ) -> impl std::future::Future<Output = Result<Option<Bytes>, StoreError>> + Send;
}

pub struct RoomFeed {
    store: Store,
    header: RoomHeader,
    /// For games with a view hook: each version is framed for this stream's viewer, and the
    /// frame shared by every watcher is never sent.
    framer: Option<Arc<dyn Framer>>,
    subscription: RoomSubscription,
    /// The last version handed out; nothing at or below it is handed out again.
    sent: i64,
    pending: VecDeque<Bytes>,
    /// The history may hold versions after `sent` that the channel will not deliver.
    catching_up: bool,
    /// Who has a stream of the room open, on any server; of them, the stream shows those who
    /// play in the room at the last version sent.
    online: Arc<Vec<String>>,
    players: Vec<String>,
    /// The players online the stream last said, if it said.
    shown_online: Option<Vec<String>>,
    /// The room's chat as its viewer reads it, unless the game has none. Then each event's
    /// id is `<version>:<message>`, so that a client resumes both where it was.
    chat: Option<ChatFollow>,
    /// The history may hold messages after the chat's cursor that the channel will not say.
    chat_behind: bool,
}

impl RoomFeed {
    /// `subscription` must be taken before the room was read, so that a version committed in
    /// between is in the channel or in the history, and usually both.
    /// `players` are the room's players as it was read, `online` who had a stream of it open.
    pub(crate) fn new(
        store: Store,
        header: RoomHeader,
        subscription: RoomSubscription,
        after: i64,
        framer: Option<Arc<dyn Framer>>,
        (players, online): (Vec<String>, Arc<Vec<String>>),
        chat: Option<ChatFollow>,
    ) -> Self {
        Self {
            store,
            header,
            framer,
            subscription,
            sent: after,
            pending: VecDeque::new(),
            catching_up: true,
            online,
            players,
            shown_online: None,
            chat_behind: chat.as_ref().is_some_and(ChatFollow::resumes),
            chat,
        }
    }

    /// Queues a version's frame, its id naming the chat's cursor too where there is chat.
    fn queue_version(&mut self, frame: Bytes) {
        match &self.chat {
            None => self.pending.push_back(frame),
            Some(chat) => {
                let id = format!("{}:{}", self.sent, chat.cursor());
                self.pending.push_back(with_id(id, without_id(frame)));
            }
        }
    }

    /// Queues what the chat says, each message's id naming the version the stream is at.
    fn queue_chat(&mut self, out: Vec<ChatOut>) {
        for (message, frame) in out {
            match message {
                Some(message) => {
                    let id = format!("{}:{message}", self.sent);
                    self.pending.push_back(with_id(id, frame));
                }
                None => self.pending.push_back(frame),
            }
        }
    }

    /// The stream moved on to `event`: its players are those online it shows, and they and
    /// the others read the chat's channels as the room now is.
    fn moved_to(&mut self, event: &RoomEvent) {
        self.sent = event.version;
        self.players.clear();
        self.players
            .extend(event.players.iter().map(|p| p.id.to_string()));
        if let Some(chat) = &mut self.chat {
            chat.seen_version(event);
        }
    }

    /// A `presence` frame when the players online differ from what the stream last said.
    fn presence_changed(&mut self) -> Option<Bytes> {
        let online: Vec<&str> = (self.online.iter())
            .filter(|id| self.players.contains(id))
            .map(String::as_str)
            .collect();
        if self
            .shown_online
            .as_ref()
            .is_some_and(|shown| *shown == online)
        {
            return None;
        }
        let frame = presence_frame(&online);
        self.shown_online = Some(online.into_iter().map(str::to_owned).collect());
        Some(frame)
    }

    fn queue_presence(&mut self) {
        if let Some(frame) = self.presence_changed() {
            self.pending.push_back(frame);
        }
    }
}

impl Feed for RoomFeed {
    /// The next version's frame, waiting for it to be committed if need be.
    async fn next(&mut self) -> Result<Option<Bytes>, StoreError> {
        loop {
            if let Some(frame) = self.pending.pop_front() {
                return Ok(Some(frame));
            }
            if self.catching_up {
                let events = self
                    .store
                    .events(&self.header.id, self.sent, REPLAY_PAGE)
                    .await?;
                self.catching_up = events.len() as i64 == REPLAY_PAGE;
                for event in &events {
                    let Some(frame) = self.frame(event).await else {
                        return Ok(None);
                    };
                    self.moved_to(event);
                    self.queue_version(frame);
                }
                if !self.catching_up {
                    self.queue_presence();
                }
                continue;
            }
            if self.chat_behind && self.catch_up_chat().await? {
                continue;
            }
            let update = self.subscription.recv().await;
            match update.as_deref() {
                Ok(RoomUpdate::Online(online)) => {
                    self.online = online.clone();
                    if let Some(frame) = self.presence_changed() {
                        return Ok(Some(frame));
                    }
                }
                Ok(RoomUpdate::Version { event, .. }) if event.version <= self.sent => {}
                Ok(RoomUpdate::Reached(version)) if *version <= self.sent => {}
                Ok(RoomUpdate::Version { frame, event }) if event.version == self.sent + 1 => {
                    let frame = match (frame, &self.framer) {
                        (_, Some(_)) => self.frame(event).await,
                        (Some(frame), None) => Some(frame.clone()),
                        // Unframed for a stream that has no framer: read it as it was written.
                        (None, None) => {
                            self.catching_up = true;
                            continue;
                        }
                    };
                    let Some(frame) = frame else {
                        return Ok(None);
                    };
                    self.moved_to(event);
                    self.queue_version(frame);
                    self.queue_presence();
                }
                Ok(RoomUpdate::Chat(signal)) => {
                    if let Some(chat) = &mut self.chat {
                        let out = chat.take(signal).await?;
                        self.queue_chat(out);
                    }
                }
                Ok(RoomUpdate::Resync) => {
                    self.catching_up = true;
                    self.chat_behind = true;
                }
                // Versions were skipped (this reader lagged and the channel dropped some, or
                // they were written by another process), or another server says there are
                // more. The history has them all.
                Ok(_) => self.catching_up = true,
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(room = %self.header.id, missed, "a stream fell behind; catching up from the history");
                    self.catching_up = true;
                    self.chat_behind = true;
                }
                Err(RecvError::Closed) => return Ok(None),
            }
        }
    }
}

impl RoomFeed {
    /// Reads the chat's messages after its cursor from the history, if the stream may have
    /// missed some; whether it did (the stream has chat).
    async fn catch_up_chat(&mut self) -> Result<bool, StoreError> {
        self.chat_behind = false;
        let Some(chat) = &mut self.chat else {
            return Ok(false);
        };
        let out = chat.catch_up().await?;
        self.queue_chat(out);
        Ok(true)
    }

    /// `event` as this stream shows it.
    async fn frame(&self, event: &RoomEvent) -> Option<Bytes> {
        match &self.framer {
            None => Some(version_frame(&self.header, &EventView::whole(event))),
            Some(framer) => framer.frame(event).await,
        }
    }
}

pub struct LobbyFeed {
    receiver: broadcast::Receiver<Arc<LobbyUpdate>>,
    game: Option<String>,
    pending: VecDeque<Bytes>,
    /// The lobby's chat as the viewer reads it: each message's id is its own.
    chat: ChatFollow,
    /// The history may hold messages after the chat's cursor that the channel will not say.
    chat_behind: bool,
}

impl LobbyFeed {
    /// `receiver` must be taken before the chat's cursor is read, as a room's subscription.
    /// `first` is what the stream says first (how many players are online).
    pub(crate) fn new(
        receiver: broadcast::Receiver<Arc<LobbyUpdate>>,
        game: Option<String>,
        first: Bytes,
        chat: ChatFollow,
    ) -> Self {
        Self {
            receiver,
            game,
            pending: VecDeque::from([first]),
            chat_behind: chat.resumes(),
            chat,
        }
    }

    fn queue_chat(&mut self, out: Vec<ChatOut>) {
        for (message, frame) in out {
            match message {
                Some(message) => self.pending.push_back(with_id(message.to_string(), frame)),
                None => self.pending.push_back(frame),
            }
        }
    }
}

impl Feed for LobbyFeed {
    /// The next change to a public room of the feed's game; after a lag, a `resync` event
    /// instead of the changes missed.
    async fn next(&mut self) -> Result<Option<Bytes>, StoreError> {
        loop {
            if let Some(frame) = self.pending.pop_front() {
                return Ok(Some(frame));
            }
            if self.chat_behind {
                self.chat_behind = false;
                let out = self.chat.catch_up().await?;
                self.queue_chat(out);
                continue;
            }
            match self.receiver.recv().await.as_deref() {
                // A count of players online (no game) concerns every lobby stream.
                Ok(LobbyUpdate::Rooms { game, frame })
                    if game.is_empty() || self.game.as_ref().is_none_or(|g| g == game) =>
                {
                    return Ok(Some(frame.clone()));
                }
                Ok(LobbyUpdate::Rooms { .. }) => {}
                Ok(LobbyUpdate::Resync) => {
                    self.chat_behind = true;
                    return Ok(Some(resync_frame()));
                }
                Ok(LobbyUpdate::Chat(signal)) => {
                    let out = self.chat.take(signal).await?;
                    self.queue_chat(out);
                }
                Err(RecvError::Lagged(_)) => {
                    self.chat_behind = true;
                    return Ok(Some(resync_frame()));
                }
                Err(RecvError::Closed) => return Ok(None),
            }
        }
    }
}
