//! Publishing: an upload's hooks checked in the sandbox before anything is stored, its
//! settings read, its frontend unpacked, then kept as the game's next version.

use sha2::{Digest, Sha256};

use super::{Catalog, CatalogError};
use crate::domain::game_id::GameId;
use crate::domain::game_name;
use crate::domain::ids::hex;
use crate::domain::records::{now, FrontendSource, GameListing, GameVersionRecord, NewGameVersion};
use crate::frontend::{self, FrontendFile};
use crate::game::{Capabilities, GameRegistry, PlayerRef, MAX_PLAYERS};
use crate::sandbox::{CheckError, PoolError};
use crate::store::StoreError;

/// The largest source accepted.
pub const MAX_SOURCE_BYTES: usize = 1 << 20;

/// The largest frontend sent as one HTML document inside a JSON upload.
pub const MAX_FRONTEND_BYTES: usize = 1 << 20;

/// An upload: the hooks, the game's page and what the author says about the game. Unset
/// fields keep the previous version's values (or the defaults for a new game), so a new
/// version may change the hooks, the page, or both.
#[derive(Debug, Clone, Default)]
pub struct GameUpload {
    /// The hooks; `None` keeps the previous version's (a first version must have them).
    pub source: Option<String>,
    pub name: Option<String>,
    pub description: Option<String>,
    pub min_players: Option<usize>,
    pub max_players: Option<usize>,
    /// The game's own page: one HTML document, or a build folder as an archive.
    pub frontend: FieldUpdate<FrontendUpload>,
    /// The colour behind the frame of its page (a CSS colour).
    pub frontend_background: Option<String>,
    /// The height of the frame of its page, in pixels.
    pub frontend_height: Option<u32>,
    /// A move as the game expects it, for generic clients to suggest.
    pub move_example: FieldUpdate<serde_json::Value>,
    /// Whether players may talk in its rooms.
    pub chat: Option<bool>,
}

/// The longest a game's name may be, in characters.
pub const MAX_NAME_CHARS: usize = 100;
/// The longest a game's description may be, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 2000;
/// The largest a move example may be, as JSON text.
const MAX_MOVE_EXAMPLE_BYTES: usize = 1024;

/// What a game's source says of itself, in its `settings` export (`export const settings =
/// {…}` or `module.exports.settings`): what an upload sends beats it, and it beats what the
/// previous version had, so the file alone can carry its settings (as `turnhouse dev` needs).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SourceSettings {
    name: Option<String>,
    description: Option<String>,
    min_players: Option<usize>,
    max_players: Option<usize>,
    move_example: Option<serde_json::Value>,
    chat: Option<bool>,
}

impl SourceSettings {
    /// Read from the export's JSON text, within the limits an upload's settings have.
    fn read(json: Option<&str>) -> Result<Self, CatalogError> {
        let Some(json) = json else {
            return Ok(Self::default());
        };
        let bad = |why: String| {
            CatalogError::InvalidGameSettings(format!("the source's `settings` export: {why}"))
        };
        let settings: Self = serde_json::from_str(json).map_err(|e| bad(e.to_string()))?;
        let chars = |text: &Option<String>| text.as_ref().map_or(0, |t| t.chars().count());
        if settings.name.is_some() && !(1..=MAX_NAME_CHARS).contains(&chars(&settings.name)) {
            return Err(bad(format!(
                "name must be 1 to {MAX_NAME_CHARS} characters"
            )));
        }
        if chars(&settings.description) > MAX_DESCRIPTION_CHARS {
            return Err(bad(format!(
                "description must be at most {MAX_DESCRIPTION_CHARS} characters"
            )));
        }
        Ok(settings)
    }
}

/// A frontend as sent, unpacked only once the upload has passed every cheaper check.
#[derive(Debug, Clone)]
pub struct FrontendUpload {
    pub bytes: Vec<u8>,
    /// The file name it was sent with, if any (`build.zip`, `game.html`).
    pub name: Option<String>,
}

impl FrontendUpload {
    /// One HTML document.
    pub fn page(html: String) -> Self {
        Self {
            bytes: html.into_bytes(),
            name: Some(crate::frontend::INDEX.to_owned()),
        }
    }
}

/// A field a new version sets, removes, or keeps as the previous version had it.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum FieldUpdate<T> {
    #[default]
    Keep,
    Set(T),
    Remove,
}

impl<T> FieldUpdate<T> {
    /// What the new version holds, given what the previous one held.
    fn resolve(self, previous: impl FnOnce() -> Option<T>) -> Option<T> {
        match self {
            FieldUpdate::Keep => previous(),
            FieldUpdate::Set(value) => Some(value),
            FieldUpdate::Remove => None,
        }
    }
}

/// Whether a publish created the game or added a version to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Publication {
    Created,
    Updated,
}

impl Catalog {
    /// Checks an upload's hooks in the sandbox (they must compile, evaluate within the hook
    /// limits and export the four hooks), then publishes it as the game's next version. The first upload
    /// creates the game, owned by `author`; only its owner may publish more.
    #[tracing::instrument(level = "debug", skip(self, author, upload), fields(player = %author.id))]
    pub async fn publish_game(
        &self,
        author: &PlayerRef,
        id: &GameId,
        upload: GameUpload,
    ) -> Result<(GameListing, Publication), CatalogError> {
        let id = id.as_str();
        let previous = self.previous_version(author, id).await?;
        let previous = previous.as_ref();
        let checked = match &upload.source {
            Some(source) => Some(self.check_source(source).await?),
            None => None,
        };
        let own = SourceSettings::read(checked.as_ref().and_then(|c| c.2.as_deref()))?;
        let (min_players, max_players) = player_counts(&upload, &own, previous)?;
        let (source, (format, hooks), sha256) = match (upload.source, previous, checked) {
            (Some(source), _, Some((format, hooks, _))) => {
                let sha256 = hex(&Sha256::digest(source.as_bytes()));
                (source, (format, hooks), sha256)
            }
            // The hooks stay as they were: only the page or the settings change.
            (None, Some(previous), _) => self.kept_hooks(id, previous).await?,
            _ => {
                return Err(CatalogError::InvalidGameSettings(
                    "a game's first version needs its source (the four hooks)".into(),
                ))
            }
        };
        let frontend = match (upload.frontend, previous) {
            (FieldUpdate::Set(sent), _) => FrontendSource::Files(unpack_frontend(sent).await?),
            (FieldUpdate::Keep, Some(previous)) if previous.frontend_files > 0 => {
                FrontendSource::CopyOf(previous.version)
            }
            _ => FrontendSource::None,
        };
        let move_example = match (upload.move_example, own.move_example) {
            (FieldUpdate::Keep, Some(own)) => Some(own),
            (sent, _) => sent.resolve(|| previous.and_then(|p| p.move_example.clone())),
        }
        .map(|example| example.to_string());
        // Any JSON has the right shape: only its size is a matter of the game's settings,
        // whether the upload or the source gave it.
        if move_example
            .as_ref()
            .is_some_and(|e| e.len() > MAX_MOVE_EXAMPLE_BYTES)
        {
            return Err(CatalogError::InvalidGameSettings(format!(
                "moveExample must be at most {MAX_MOVE_EXAMPLE_BYTES} bytes of JSON"
            )));
        }
        let name = (upload.name.or(own.name))
            .or(previous.map(|p| p.name.clone()))
            .unwrap_or_else(|| id.to_owned());
        check_name(&name, &self.games)?;
        let new = NewGameVersion {
            game_id: id.into(),
            owner_id: author.id.clone(),
            name,
            description: (upload.description.or(own.description))
                .or(previous.map(|p| p.description.clone()))
                .unwrap_or_default(),
            min_players,
            max_players,
            format,
            sha256,
            source,
            frontend,
            frontend_background: (upload.frontend_background)
                .or_else(|| previous.and_then(|p| p.frontend_background.clone())),
            frontend_height: (upload.frontend_height)
                .or_else(|| previous.and_then(|p| p.frontend_height)),
            move_example,
            chat: (upload.chat.or(own.chat))
                .or(previous.map(|p| p.chat))
                .unwrap_or(true),
            hooks,
            created_at: now(),
        };
        self.store_version(author, new).await
    }

    /// The latest version of the uploaded game `id`, if any, which `author` may publish after:
    /// refused for a built-in game's id, another's game, or a game an admin unpublished.
    async fn previous_version(
        &self,
        author: &PlayerRef,
        id: &str,
    ) -> Result<Option<GameVersionRecord>, CatalogError> {
        if self.games.get(id).is_some() {
            return Err(CatalogError::GameIsBuiltin(id.to_owned()));
        }
        let previous = self.store.game_version(id, None).await?;
        if let Some(previous) = &previous {
            if previous.owner.id != author.id {
                return Err(CatalogError::NotTheOwner(id.to_owned()));
            }
            if previous.unpublished_at.is_some() {
                return Err(CatalogError::GameUnpublished(id.to_owned()));
            }
        }
        Ok(previous)
    }

    /// The hooks of `previous`, kept by a version that changes only its page or settings: the
    /// source, its format and exports, and its hash.
    async fn kept_hooks(
        &self,
        id: &str,
        previous: &GameVersionRecord,
    ) -> Result<(String, (String, Capabilities), String), CatalogError> {
        let source = self
            .store
            .game_source(id, previous.version)
            .await?
            .ok_or_else(|| CatalogError::GameNotFound(id.to_owned()))?;
        let checked = (previous.format.clone(), previous.hooks);
        Ok((source, checked, previous.sha256.clone()))
    }

    /// Keeps `new` as its game's next version: the game's listing at that version, and whether
    /// it created the game.
    async fn store_version(
        &self,
        author: &PlayerRef,
        new: NewGameVersion,
    ) -> Result<(GameListing, Publication), CatalogError> {
        let id = new.game_id.clone();
        let published = self.store.publish_game_version(new).await;
        self.versions_changed(&id);
        match published {
            Ok(version) => {
                tracing::info!(game = %id, version, author = %author.username, "published a game version");
                let listing = self.game_listing(&id, Some(version)).await?;
                let publication = match version {
                    1 => Publication::Created,
                    _ => Publication::Updated,
                };
                Ok((listing, publication))
            }
            Err(StoreError::NotTheOwner) => Err(CatalogError::NotTheOwner(id.into())),
            Err(other) => Err(other.into()),
        }
    }

    /// Checks hooks in the sandbox: they must compile, evaluate within the hook limits and
    /// export the four hooks. Returns the module format, the optional hooks it exports, and
    /// its `settings` export as JSON text.
    async fn check_source(
        &self,
        source: &str,
    ) -> Result<(String, Capabilities, Option<String>), CatalogError> {
        let pool = self.sandbox.clone();
        let source = source.to_owned();
        let checked = tokio::task::spawn_blocking(move || pool.check(&source))
            .await
            .map_err(|err| CatalogError::SandboxUnavailable(err.to_string()))?;
        match checked {
            Ok(checked) => Ok((
                checked.format.as_str().to_owned(),
                checked.hooks,
                checked.settings,
            )),
            Err(CheckError::Invalid { message, line }) => {
                Err(CatalogError::InvalidGameCode { message, line })
            }
            Err(CheckError::Pool(err)) => Err(pool_unavailable(err)),
        }
    }
}

/// Unpacks a frontend off the async workers: a large archive takes a while to inflate and
/// to gzip.
async fn unpack_frontend(sent: FrontendUpload) -> Result<Vec<FrontendFile>, CatalogError> {
    let unpacked =
        tokio::task::spawn_blocking(move || frontend::unpack(&sent.bytes, sent.name.as_deref()))
            .await
            .map_err(|err| CatalogError::SandboxUnavailable(err.to_string()))?;
    Ok(unpacked?.into_files())
}

fn pool_unavailable(err: PoolError) -> CatalogError {
    CatalogError::SandboxUnavailable(err.to_string())
}

/// The player counts of a new version: the upload's, else its source's, else the previous
/// version's, else 1 to [`MAX_PLAYERS`].
fn player_counts(
    upload: &GameUpload,
    own: &SourceSettings,
    previous: Option<&GameVersionRecord>,
) -> Result<(usize, usize), CatalogError> {
    let min_players = (upload.min_players.or(own.min_players))
        .or(previous.map(|p| p.min_players))
        .unwrap_or(1);
    let max_players = (upload.max_players.or(own.max_players))
        .or(previous.map(|p| p.max_players))
        .unwrap_or(MAX_PLAYERS);
    if !(1..=MAX_PLAYERS).contains(&min_players)
        || !(min_players..=MAX_PLAYERS).contains(&max_players)
    {
        return Err(CatalogError::InvalidGameSettings(format!(
            "players must satisfy 1 <= minPlayers <= maxPlayers <= {MAX_PLAYERS}; \
             got {min_players} and {max_players}"
        )));
    }
    Ok((min_players, max_players))
}

/// Refuses a game name that could pass for another game (a built-in game's name or id) or
/// hides characters: see [`game_name::check`].
fn check_name(name: &str, games: &GameRegistry) -> Result<(), CatalogError> {
    let reserved: Vec<(String, String)> = (games.all())
        .map(|game| {
            let info = game.info();
            (info.id.into_owned(), info.name.into_owned())
        })
        .collect();
    let reserved = reserved
        .iter()
        .map(|(id, name)| (id.as_str(), name.as_str()));
    game_name::check(name, reserved).map_err(CatalogError::InvalidGameSettings)
}
