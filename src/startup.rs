//! Builds the HTTP application around an engine, so `main` and the tests start it the same way.

use std::net::TcpListener;

use actix_web::dev::{Server, ServerHandle};
use actix_web::{web, App, HttpServer};
use tracing_actix_web::TracingLogger;

use crate::api::{self, AppContext};
use crate::config::Config;
use crate::engine::{Engine, EngineError};
use crate::game::GameRegistry;
use crate::sandbox::SandboxPool;
use crate::store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("could not open the database: {0}")]
    Store(#[from] StoreError),
    #[error("could not prepare the engine: {0}")]
    Engine(#[from] EngineError),
    #[error("could not find this program to run sandbox processes: {0}")]
    Sandbox(std::io::Error),
    #[error("could not listen on {bind}: {source}")]
    Bind {
        bind: String,
        source: std::io::Error,
    },
}

pub struct Application {
    port: u16,
    server: Server,
}

impl Application {
    /// Opens the database (migrating it), binds the listener and prepares the server.
    pub async fn build(config: &Config, games: GameRegistry) -> Result<Self, StartupError> {
        let store = Store::open(&config.database_url).await?;
        let program = match &config.sandbox_program {
            Some(program) => program.clone(),
            None => std::env::current_exe().map_err(StartupError::Sandbox)?,
        };
        let sandbox =
            SandboxPool::new(program, config.hook_limits.limits(), config.sandbox_workers);
        let bot_seed = config.bot_seed.unwrap_or_else(rand::random);
        let context = web::Data::new(AppContext {
            engine: Engine::start(store, games, sandbox, bot_seed).await?,
        });
        let bind_error = |source| StartupError::Bind {
            bind: config.bind.clone(),
            source,
        };
        let listener = TcpListener::bind(&config.bind).map_err(bind_error)?;
        let port = listener.local_addr().map_err(bind_error)?.port();
        let server = HttpServer::new(move || {
            App::new()
                .wrap(TracingLogger::default())
                .app_data(context.clone())
                .configure(api::configure)
        })
        .shutdown_timeout(10)
        .listen(listener)
        .map_err(bind_error)?
        .run();
        Ok(Self { port, server })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the server (gracefully, or at once) from elsewhere.
    pub fn handle(&self) -> ServerHandle {
        self.server.handle()
    }

    /// Serves until SIGINT/SIGTERM or the handle stops it; in-flight requests are finished.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.server.await
    }
}
