//! `turnhouse dev GAME.js [--frontend PATH] [--seats N]`: the author's loop. One command
//! starts the server on this machine only (a loopback address), on a throwaway SQLite file
//! unless `--database` names one, with rate limits off; signs in local players; publishes the
//! game from its files, and again on every save; and serves the dev page (`/dev/{game}`):
//! every seat side by side, the stored truth, its history and the hooks' logs.
//!
//! It is the same server as `turnhouse` (the same [`Application`], the same upload path as
//! `PUT /games/{id}`), hosting only the game being written, with the dev session's routes
//! added.

mod files;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::accounts::{AccountError, Accounts};
use crate::api::dev::{DevSession, DevState, Layout, LocalPlayer, UploadFailure, MAX_SEATS};
use crate::catalog::CatalogError;
use crate::config::Config;
use crate::domain::game_id::GameId;
use crate::domain::ids::new_id;
use crate::domain::username::Username;
use crate::engine::Engine;
use crate::services::Services;
use crate::startup::{self, Application, StartupError};

/// What `turnhouse dev` was asked to run.
#[derive(Debug, Clone)]
pub struct DevOptions {
    pub game: PathBuf,
    pub frontend: Option<PathBuf>,
    pub seats: Option<usize>,
    /// Whether `--database` (or `DATABASE_URL`) named a database; else a throwaway one.
    pub database_given: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum DevError {
    #[error(
        "turnhouse dev serves this machine only, and {0} is not a loopback address: its seats \
         sign in without a password and its dev page shows every secret of the game. Bind \
         127.0.0.1, ::1 or localhost (the default is 127.0.0.1:8080), or run `turnhouse` \
         without `dev` to serve others"
    )]
    NotLoopback(String),
    #[error("{0}")]
    GameFile(String),
    #[error(transparent)]
    Startup(#[from] StartupError),
    #[error(transparent)]
    Account(#[from] AccountError),
    #[error("could not make a throwaway database: {0}")]
    Scratch(std::io::Error),
    #[error("the server stopped with an error: {0}")]
    Serve(std::io::Error),
}

/// Runs the dev server until it is stopped (Ctrl-C).
pub async fn run(mut config: Config, options: DevOptions) -> Result<(), DevError> {
    require_loopback(&config.bind)?;
    let game = game_id(&options.game)?;
    let scratch = match options.database_given {
        true => None,
        false => {
            let dir = std::env::temp_dir().join(format!("turnhouse-dev-{}", &new_id()[..12]));
            std::fs::create_dir_all(&dir).map_err(DevError::Scratch)?;
            config.database_url = format!("sqlite://{}", dir.join("dev.db").display());
            Some(dir)
        }
    };
    config.abuse_limits.rate_limits = "off".into();
    // The author's own receiver, on this machine, takes webhooks.
    config.webhooks.allow_private_destinations = true;
    let served = serve(&config, &options, game).await;
    if let Some(dir) = scratch {
        let _ = std::fs::remove_dir_all(dir);
    }
    served
}

async fn serve(config: &Config, options: &DevOptions, game: GameId) -> Result<(), DevError> {
    // Only the game being written: its id may be a built-in game's (`tictactoe.js`).
    let services = startup::services(config, crate::game::GameRegistry::new()).await?;
    let author = local_player(&services.accounts, "dev-author").await?;
    let mut players = Vec::with_capacity(MAX_SEATS);
    for seat in 1..=MAX_SEATS {
        players.push(local_player(&services.accounts, &format!("dev-{seat}")).await?);
    }
    let files = files::GameFiles::new(options.game.clone(), options.frontend.clone());
    let session = DevSession::new(DevState {
        generation: 0,
        game: game.as_str().to_owned(),
        game_version: None,
        author,
        players,
        room: None,
        layout: Layout {
            seats: options.seats.unwrap_or(2),
            bot: None,
        },
        error: None,
        watching: files
            .paths()
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
    });
    let app = Application::serving(config, services.clone(), Some(session.clone()))?;
    let address = format!("http://{}:{}", host(&config.bind), app.port());
    println!(
        "turnhouse dev: {} from {}",
        game.as_str(),
        files
            .paths()
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" and ")
    );
    let first = publish(&services, &session, &files, &game).await;
    if let Some(min_players) = first {
        if options.seats.is_none() {
            let seats = min_players.clamp(2, MAX_SEATS);
            session.update(|state| state.layout.seats = seats);
        }
        open_first_room(&services.rooms, &session).await;
    }
    println!("  the dev page: {address}/dev/{}", game.as_str());
    println!("  watching for saves; Ctrl-C stops (a throwaway database goes with it)");
    tokio::spawn(watch(services, session, files, game));
    app.run_until_stopped().await.map_err(DevError::Serve)
}

/// Opens the room the seats show, and says so if it cannot.
async fn open_first_room(engine: &Engine, session: &Arc<DevSession>) {
    let layout = session.state().layout;
    if let Err(err) = session.open_room(engine, layout).await {
        println!("  could not open a room: {err}");
    }
}

/// Publishes the files again after every save, within a second of it.
async fn watch(
    services: Services,
    session: Arc<DevSession>,
    files: files::GameFiles,
    game: GameId,
) {
    let mut published = files.fingerprint();
    loop {
        tokio::time::sleep(files::POLL).await;
        let Some(now) = files.settled_change(&published).await else {
            continue;
        };
        published = now;
        let had_room = session.state().room.is_some();
        if publish(&services, &session, &files, &game).await.is_some() && !had_room {
            open_first_room(&services.rooms, &session).await;
        }
    }
}

/// Publishes the files as the game's next version, as `dev-author`; says how it went, in the
/// terminal and on the dev page. The game's `minPlayers` when it was published.
async fn publish(
    services: &Services,
    session: &Arc<DevSession>,
    files: &files::GameFiles,
    game: &GameId,
) -> Option<usize> {
    let author = session.state().author.player_ref();
    let outcome = match files.upload().await {
        Ok(upload) => services
            .catalog
            .publish_game(&author, game, upload)
            .await
            .map_err(|err| files.failure(err)),
        Err(failure) => Err(failure),
    };
    match outcome {
        Ok((listing, _)) => {
            let version = listing.version;
            println!("  published version {}", version.unwrap_or_default());
            session.update(|state| {
                state.game_version = version;
                state.error = None;
            });
            Some(listing.info.min_players)
        }
        Err(failure) => {
            let place = match failure.line {
                Some(line) => format!("{}:{line}", failure.file),
                None => failure.file.clone(),
            };
            println!(
                "  {place}: {} (still serving the last version that worked)",
                failure.message
            );
            session.update(|state| state.error = Some(failure));
            None
        }
    }
}

/// A local player, signed in anew (their name taken over in a database given with
/// `--database`, where they may exist already).
async fn local_player(accounts: &Accounts, name: &str) -> Result<LocalPlayer, DevError> {
    let username = Username::parse(name).expect("the local players' names are valid");
    let (player, token) = accounts.local_player(&username).await?;
    Ok(LocalPlayer {
        id: player.id.into(),
        username: player.username,
        token,
    })
}

/// The game's id, from its file's name (`connect-four.js` is `connect-four`).
fn game_id(path: &Path) -> Result<GameId, DevError> {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase()
        .replace(['_', ' ', '.'], "-");
    GameId::parse(&stem).map_err(|err| {
        DevError::GameFile(format!(
            "the game's id comes from its file's name, and `{stem}` cannot be one ({err}); \
             rename {}",
            path.display()
        ))
    })
}

/// Refuses anything but a loopback address.
fn require_loopback(bind: &str) -> Result<(), DevError> {
    use std::net::ToSocketAddrs;
    let addresses: Vec<_> = bind
        .to_socket_addrs()
        .map_err(|_| DevError::NotLoopback(bind.to_owned()))?
        .collect();
    if addresses.is_empty() || addresses.iter().any(|a| !a.ip().is_loopback()) {
        return Err(DevError::NotLoopback(bind.to_owned()));
    }
    Ok(())
}

/// The host part of `bind`, as a browser would write it.
fn host(bind: &str) -> &str {
    bind.rsplit_once(':').map_or(bind, |(host, _)| host)
}

/// What failed, where, for the terminal and the dev page.
impl files::GameFiles {
    fn failure(&self, err: CatalogError) -> UploadFailure {
        match err {
            CatalogError::InvalidGameCode { message, line } => UploadFailure {
                file: self.hooks_name(),
                line,
                message,
            },
            CatalogError::InvalidFrontend(error) => UploadFailure {
                file: self.frontend_name().unwrap_or_else(|| self.hooks_name()),
                line: None,
                message: error.to_string(),
            },
            other => UploadFailure {
                file: self.hooks_name(),
                line: None,
                message: other.to_string(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_served() {
        for good in ["127.0.0.1:0", "127.0.0.1:8080", "[::1]:0", "localhost:0"] {
            assert!(require_loopback(good).is_ok(), "{good}");
        }
        for bad in ["0.0.0.0:8080", "[::]:0", "192.0.2.1:80"] {
            let err = require_loopback(bad).unwrap_err().to_string();
            assert!(err.contains("loopback"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_game_s_id_is_its_file_s_name() {
        assert_eq!(
            game_id(Path::new("examples/connect-four.js"))
                .unwrap()
                .as_str(),
            "connect-four"
        );
        assert_eq!(
            game_id(Path::new("My_Game.js")).unwrap().as_str(),
            "my-game"
        );
        assert!(game_id(Path::new("x.js")).is_err());
    }
}
