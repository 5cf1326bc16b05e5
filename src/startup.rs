//! Builds the HTTP application around the services, so `main` and the tests start it the same way.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::net::TcpListener;

use std::time::Duration;

use actix_web::dev::{Server, ServerHandle};
use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpServer};
use std::sync::Arc;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::api::connections::ConnectionCounts;
use crate::api::{self, AppContext, Front, TrustedProxies};
use crate::config::Config;
use crate::draining::{Drain, LAST_WRITES};
use crate::engine::EngineError;
use crate::game::GameRegistry;
use crate::metrics::{Gauge, HttpMetrics, RecordRequests};
use crate::notifications::{MailSetup, MailSetupError, Mailer};
use crate::sandbox::SandboxPool;
use crate::services::Services;
use crate::store::{Store, StoreError};
use crate::tls::{Certificate, RedirectTo, TlsError};

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("could not open the database: {0}")]
    Store(#[from] StoreError),
    #[error("could not start the services: {0}")]
    Engine(#[from] EngineError),
    #[error("could not set up mail: {0}")]
    Mail(#[from] MailSetupError),
    #[error("could not find this program to run sandbox processes: {0}")]
    Sandbox(std::io::Error),
    #[error("could not serve HTTPS: {0}")]
    Tls(#[from] TlsError),
    #[error("could not listen on {bind}: {source}")]
    Bind {
        bind: String,
        source: std::io::Error,
    },
}

pub struct Application {
    port: u16,
    server: Server,
    stop: StopHandle,
    /// Whether it serves HTTPS of its own.
    tls: bool,
}

/// Stops the server: open streams end first (asking their browsers to reconnect at once), so
/// in-flight requests are all the HTTP server waits for.
#[derive(Clone)]
pub struct StopHandle {
    server: ServerHandle,
    /// The plain HTTP listener that only redirects to HTTPS, if there is one.
    redirect: Option<ServerHandle>,
    streams: watch::Sender<bool>,
    drain: Arc<Drain>,
    store: Store,
    /// How long a stop that drains may take, in all.
    timeout: Duration,
}

impl StopHandle {
    /// Stops at once, or (`graceful`) drains: no new connection is taken, requests in flight
    /// are answered, the background services finish or hand back what they hold, and the
    /// writer's queue is committed, all within the shutdown timeout.
    pub async fn stop(&self, graceful: bool) {
        self.streams.send_replace(true);
        if let Some(redirect) = &self.redirect {
            redirect.stop(false).await;
        }
        if !graceful {
            return self.server.stop(false).await;
        }
        let deadline = Instant::now() + self.timeout;
        let (_, drained) = tokio::join!(
            self.server.stop(true),
            self.drain.drain(deadline - LAST_WRITES),
        );
        if !drained {
            tracing::warn!("stopping: a background service was still busy at the deadline");
        }
        match tokio::time::timeout_at(deadline, self.store.flush()).await {
            Ok(Ok(())) => tracing::info!("stopping: every write is committed"),
            Ok(Err(err)) => tracing::warn!(error = %err, "stopping: the last writes failed"),
            Err(_) => {
                tracing::warn!("stopping: the last writes were not committed by the deadline")
            }
        }
    }
}

/// Opens the database (migrating it) and starts the services on it, as `config` says.
pub async fn services(config: &Config, games: GameRegistry) -> Result<Services, StartupError> {
    let busy_timeout = Duration::from_millis(config.database_busy_timeout_ms);
    let store = Store::open_with(&config.database_url, busy_timeout).await?;
    let program = match &config.sandbox_program {
        Some(program) => program.clone(),
        None => std::env::current_exe().map_err(StartupError::Sandbox)?,
    };
    let sandbox = SandboxPool::new(program, config.hook_limits.limits(), config.sandbox_workers)
        .with_bot_search(config.bot_search.budget());
    let bot_seed = config.bot_seed.unwrap_or_else(rand::random);
    let idle = config.idle_rooms.rules();
    let hooks = &config.webhooks;
    let settings = &config.mail;
    let mailer = (settings.smtp_url.as_deref())
        .map(|url| Mailer::new(url, &settings.mail_from))
        .transpose()?;
    let mail = MailSetup {
        mailer,
        public_url: settings.public_url(),
        after: settings.turn_mail_after.0,
        every: settings.turn_mail_every.0,
        push_after: settings.push_after.0,
        from: mail_address(&settings.mail_from),
        destinations: hooks.destinations(),
    };
    Ok(Services::start(store, games, sandbox, bot_seed, idle, hooks, mail).await?)
}

/// The address in `from` (`Name <address>` or an address).
fn mail_address(from: &str) -> String {
    match (from.rfind('<'), from.rfind('>')) {
        (Some(open), Some(close)) if open < close => from[open + 1..close].trim().to_owned(),
        _ => from.trim().to_owned(),
    }
}

impl Application {
    /// Opens the database (migrating it), binds the listener and prepares the server.
    pub async fn build(config: &Config, games: GameRegistry) -> Result<Self, StartupError> {
        let services = services(config, games).await?;
        Self::serving(config, services, None)
    }

    /// Binds the listener and prepares the server on running `services`; with `dev`, as
    /// `turnhouse dev` serves it (its dev page and routes).
    pub fn serving(
        config: &Config,
        services: Services,
        dev: Option<std::sync::Arc<api::dev::DevSession>>,
    ) -> Result<Self, StartupError> {
        let (stop_streams, streams_shutdown) = watch::channel(false);
        let public_url = services.public_url.clone();
        let (drain, store) = (services.drain.clone(), services.store.clone());
        let timeout = Duration::from_secs(config.serving.shutdown_timeout);
        let context = web::Data::new(context(config, services, streams_shutdown, dev));
        let dev_routes = context.dev.is_some();
        let http_metrics = web::Data::new(HttpMetrics::default());
        let tls = certificate(config)?;
        let front = web::Data::new(front(config, tls.is_some()));
        let bind_error = |source| StartupError::Bind {
            bind: config.bind.clone(),
            source,
        };
        let listener = TcpListener::bind(&config.bind).map_err(bind_error)?;
        if let Ok(address) = listener.local_addr() {
            public_url.bound(address);
        }
        let port = listener.local_addr().map_err(bind_error)?.port();
        let counts = ConnectionCounts::new(config.serving.max_connections_per_address);
        let proxies = config.serving.trusted_proxies.clone();
        let server = HttpServer::new(move || {
            // The last wrapped runs first: metrics see every request, the request id and log
            // line are inside compression so problem bodies can still be read, and CORS
            // headers go on every response, problems included.
            App::new()
                .wrap(from_fn(api::origins::handle))
                .wrap(from_fn(api::cors::handle))
                .wrap(from_fn(api::request_log::handle))
                .wrap(from_fn(api::compress::handle))
                .wrap(from_fn(RecordRequests::record))
                .app_data(context.clone())
                .app_data(http_metrics.clone())
                .app_data(front.clone())
                .configure(|cfg| api::configure(cfg, dev_routes))
        })
        .on_connect(move |connection, data| on_connect(connection, data, &counts, &proxies))
        .shutdown_timeout(config.serving.shutdown_timeout)
        // A connection that has not sent a whole request head by then is closed (slowloris).
        .client_request_timeout(Duration::from_secs(5))
        // Signals are handled in `run_until_stopped`, which ends the streams first.
        .disable_signals();
        let mut server = server;
        for (bind, listener) in listeners(config, listener)? {
            server = match &tls {
                Some(certificate) => {
                    server.listen_rustls_0_23(listener, certificate.server_config())
                }
                None => server.listen(listener),
            }
            .map_err(|source| StartupError::Bind { bind, source })?;
        }
        let server = server.run();
        let redirect = match &config.serving.http_redirect {
            Some(bind) => Some(redirect_to_https(bind, config, port)?),
            None => None,
        };
        if let Some(certificate) = &tls {
            tokio::spawn(crate::tls::reload_on_hangup(certificate.clone()));
        }
        let stop = StopHandle {
            redirect,
            server: server.handle(),
            streams: stop_streams,
            drain,
            store,
            timeout,
        };
        Ok(Self {
            port,
            server,
            stop,
            tls: tls.is_some(),
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `https` when the server serves HTTPS of its own, else `http`.
    pub fn scheme(&self) -> &'static str {
        match self.tls {
            true => "https",
            false => "http",
        }
    }

    /// Stops the server (gracefully, or at once) from elsewhere.
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// Serves until SIGINT/SIGTERM or the handle stops it. A signal drains the server (see
    /// [`StopHandle::stop`]), and this returns once the drain is over.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let stop = self.stop.clone();
        let (signalled, mut by_signal) = tokio::sync::oneshot::channel();
        let signals = tokio::spawn(async move {
            if let Some(signal) = stop_signal().await {
                tracing::info!(
                    signal,
                    "stopping: closing streams, finishing requests, handing back work"
                );
                let _ = signalled.send(());
                stop.stop(true).await;
            }
        });
        let served = self.server.await;
        match by_signal.try_recv() {
            // The HTTP server is done; the services and the writer's queue may not be yet.
            Ok(()) => {
                let _ = signals.await;
            }
            // Stopped through the handle, whose caller waits for the drain.
            Err(_) => signals.abort(),
        }
        served
    }
}

/// The certificate to serve HTTPS with, if the settings give one.
fn certificate(config: &Config) -> Result<Option<Arc<Certificate>>, StartupError> {
    match (&config.serving.tls_cert, &config.serving.tls_key) {
        (Some(cert), Some(key)) => Ok(Some(Certificate::load(cert, key)?)),
        _ => Ok(None),
    }
}

/// How requests reach the server, as the handlers and middleware need to know it.
fn front(config: &Config, tls: bool) -> Front {
    let public_url = config.mail.public_url.as_deref();
    Front {
        proxies: config.serving.trusted_proxies.clone(),
        tls,
        hsts: tls || public_url.is_some_and(|url| url.starts_with("https://")),
        public_url: public_url.map(|url| url.trim_end_matches('/').to_owned()),
        body_time: Duration::from_secs(config.serving.body_timeout_secs),
        frontend_origin: config.serving.frontend_origin.clone(),
        proxied_requests: ConnectionCounts::new(config.serving.max_connections_per_address),
    }
}

/// Where the server listens: `listener` (on `--bind`), and `--frontend-bind` if given.
fn listeners(
    config: &Config,
    listener: TcpListener,
) -> Result<Vec<(String, TcpListener)>, StartupError> {
    let mut listeners = vec![(config.bind.clone(), listener)];
    if let Some(bind) = &config.serving.frontend_bind {
        let extra = TcpListener::bind(bind).map_err(|source| StartupError::Bind {
            bind: bind.clone(),
            source,
        })?;
        listeners.push((bind.clone(), extra));
    }
    Ok(listeners)
}

/// The handlers' context on running `services`.
fn context(
    config: &Config,
    services: Services,
    streams_shutdown: api::StreamsShutdown,
    dev: Option<std::sync::Arc<api::dev::DevSession>>,
) -> AppContext {
    AppContext {
        rooms: services.rooms,
        accounts: services.accounts,
        catalog: services.catalog,
        moderation: services.moderation,
        chat: services.chat,
        standing: services.standing,
        webhooks: services.webhooks,
        notifications: services.notifications,
        stream_keepalive: Duration::from_secs(config.stream_keepalive_secs),
        streams_shutdown,
        open_streams: Gauge::default(),
        limits: config.abuse_limits.limiters(),
        cors: config.cors_origins.clone(),
        uploads: config.uploads,
        dev,
    }
}

/// The plain HTTP listener on `bind` that sends every request to the same path over HTTPS (on
/// `https_port`, or at the public URL).
fn redirect_to_https(
    bind: &str,
    config: &Config,
    https_port: u16,
) -> Result<ServerHandle, StartupError> {
    let bind_error = |source| StartupError::Bind {
        bind: bind.to_owned(),
        source,
    };
    let listener = TcpListener::bind(bind).map_err(bind_error)?;
    let address = listener.local_addr().map_err(bind_error)?;
    let to = web::Data::new(RedirectTo {
        origin: (config.mail.public_url.as_deref()).map(|url| url.trim_end_matches('/').to_owned()),
        https_port,
    });
    let server = HttpServer::new(move || {
        App::new()
            .app_data(to.clone())
            .default_service(web::to(crate::tls::redirect))
    })
    .workers(1)
    .client_request_timeout(Duration::from_secs(5))
    .disable_signals()
    .listen(listener)
    .map_err(bind_error)?
    .run();
    let handle = server.handle();
    tokio::spawn(server);
    tracing::info!("redirecting http://{address} to HTTPS");
    Ok(handle)
}

/// The first SIGTERM or SIGINT; `None` if they cannot be listened for.
async fn stop_signal() -> Option<&'static str> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut terminate = signal(SignalKind::terminate()).ok()?;
    let mut interrupt = signal(SignalKind::interrupt()).ok()?;
    tokio::select! {
        _ = terminate.recv() => Some("SIGTERM"),
        _ = interrupt.recv() => Some("SIGINT"),
    }
}

/// Raises this process's open-files limit to its hard limit: every stream subscriber holds a
/// connection, and the usual soft limit of 1024 would cap them far below what the machine
/// allows. Returns the limit now in force.
pub fn raise_open_files_limit() -> std::io::Result<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(limit.rlim_cur)
}

/// How long what was sent may go unacknowledged before the connection is given up: a client
/// whose network went away without a word (no close) shows as gone once its stream's next
/// keep-alive has gone this long unanswered, not after the system's quarter of an hour.
const UNACKNOWLEDGED_FOR: Duration = Duration::from_secs(20);

/// The TCP connection under `connection`, plain or TLS.
fn tcp_of(connection: &dyn std::any::Any) -> Option<&actix_web::rt::net::TcpStream> {
    use actix_tls::accept::rustls_0_23::TlsStream;
    if let Some(tcp) = connection.downcast_ref::<actix_web::rt::net::TcpStream>() {
        return Some(tcp);
    }
    (connection.downcast_ref::<TlsStream<actix_web::rt::net::TcpStream>>())
        .map(|tls| tls.get_ref().0)
}

/// Each new connection: given up on when its peer goes silent, and counted against its
/// address's cap unless it comes from a trusted proxy.
fn on_connect(
    connection: &dyn std::any::Any,
    data: &mut actix_web::dev::Extensions,
    counts: &Arc<ConnectionCounts>,
    proxies: &TrustedProxies,
) {
    let Some(tcp) = tcp_of(connection) else {
        return;
    };
    give_up_on_silent_peers(tcp);
    if let Ok(peer) = tcp.peer_addr() {
        if !proxies.trusts(peer.ip()) {
            data.insert(counts.open(peer.ip()));
        }
    }
}

fn give_up_on_silent_peers(tcp: &actix_web::rt::net::TcpStream) {
    use std::os::fd::AsRawFd;
    {
        let millis = UNACKNOWLEDGED_FOR.as_millis() as libc::c_uint;
        // SAFETY: a valid socket, an option of the size it expects.
        let set = unsafe {
            libc::setsockopt(
                tcp.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_USER_TIMEOUT,
                (&millis as *const libc::c_uint).cast(),
                std::mem::size_of::<libc::c_uint>() as libc::socklen_t,
            )
        };
        if set != 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "could not set TCP_USER_TIMEOUT");
        }
    }
}
