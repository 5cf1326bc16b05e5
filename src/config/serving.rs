//! How the server meets the network: which proxies in front of it are believed about who the
//! client is.

use clap::Args;

use crate::api::TrustedProxies;

/// The server's place on the network.
#[derive(Debug, Clone, Args)]
pub struct Serving {
    /// Proxies in front of the server (comma-separated networks or addresses, such as
    /// `127.0.0.1,10.0.0.0/8`): a request from one of them is counted by the client address it
    /// names in `Forwarded` or `X-Forwarded-For` (the right-most one not itself trusted), with
    /// the scheme of `X-Forwarded-Proto` or `proto=`. From any other address those headers are
    /// ignored. None by default.
    #[arg(
        global = true,
        long,
        env = "TRUSTED_PROXIES",
        default_value = "",
        hide_default_value = true
    )]
    pub trusted_proxies: TrustedProxies,

    /// Seconds a stop may take (SIGTERM or SIGINT): requests in flight are answered, open
    /// streams are told to reconnect at once, deliveries in flight are finished or handed back
    /// to other servers, and every write is committed, within this.
    #[arg(global = true, long, env = "SHUTDOWN_TIMEOUT", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub shutdown_timeout: u64,

    /// Seconds a request's body may take to arrive once its head has (uploads get a second
    /// more for each 64 KiB they may hold): a client sending a byte now and then is answered
    /// `408 body_timeout` and its connection closed.
    #[arg(global = true, long, env = "BODY_TIMEOUT_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub body_timeout_secs: u64,

    /// Connections one address may hold open at once (0: no cap); past it a connection is
    /// answered `429 too_many_connections` and closed. A trusted proxy's are not counted:
    /// each client it names may hold as many requests open through it, streams included.
    #[arg(
        global = true,
        long,
        env = "MAX_CONNECTIONS_PER_ADDRESS",
        default_value_t = 256
    )]
    pub max_connections_per_address: usize,

    /// The certificate chain to serve HTTPS with (PEM, the server's certificate first), with
    /// --tls-key. Read again on SIGHUP: new connections get the new one, open ones keep theirs.
    #[arg(
        global = true,
        long,
        env = "TLS_CERT",
        value_name = "FILE",
        requires = "tls_key"
    )]
    pub tls_cert: Option<std::path::PathBuf>,

    /// The certificate's private key (PEM), with --tls-cert.
    #[arg(
        global = true,
        long,
        env = "TLS_KEY",
        value_name = "FILE",
        requires = "tls_cert"
    )]
    pub tls_key: Option<std::path::PathBuf>,

    /// An address for a plain HTTP listener that only redirects to HTTPS (such as
    /// `0.0.0.0:80`), with --tls-cert.
    #[arg(
        global = true,
        long,
        env = "HTTP_REDIRECT",
        value_name = "ADDRESS",
        requires = "tls_cert"
    )]
    pub http_redirect: Option<String>,

    /// The origin games' own pages are served at, and only there (such as
    /// `https://play-usercontent.example.org`, a name of its own pointing at this server, or
    /// `http://127.0.0.1:8081` with --frontend-bind): nothing an author uploads then shares an
    /// origin with the page people sign in on.
    #[arg(global = true, long, env = "FRONTEND_ORIGIN", value_name = "URL", value_parser = frontend_origin)]
    pub frontend_origin: Option<String>,

    /// Another address to listen on, for --frontend-origin on a port of its own on this machine
    /// (such as `127.0.0.1:8081`).
    #[arg(
        global = true,
        long,
        env = "FRONTEND_BIND",
        value_name = "ADDRESS",
        requires = "frontend_origin"
    )]
    pub frontend_bind: Option<String>,
}

/// `--frontend-origin`: an origin, `http(s)://host[:port]`, with no path.
fn frontend_origin(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text).map_err(|err| format!("not a URL: {err}"))?;
    let plain = matches!(url.scheme(), "http" | "https")
        && url.host_str().is_some()
        && url.username().is_empty()
        && url.password().is_none()
        && url.path() == "/"
        && url.query().is_none()
        && url.fragment().is_none();
    match plain {
        true => Ok(url.origin().ascii_serialization()),
        false => {
            Err("an origin is http:// or https://, a host and maybe a port, and no path".into())
        }
    }
}

impl Default for Serving {
    fn default() -> Self {
        Self {
            trusted_proxies: TrustedProxies::default(),
            shutdown_timeout: 10,
            body_timeout_secs: 10,
            max_connections_per_address: 256,
            tls_cert: None,
            tls_key: None,
            http_redirect: None,
            frontend_origin: None,
            frontend_bind: None,
        }
    }
}

impl super::Config {
    /// What an operator should know about these settings before people use the server, each
    /// a plain sentence (logged as warnings at start-up).
    pub fn warnings(&self) -> Vec<String> {
        let mut said = Vec::new();
        let trusted = !self.serving.trusted_proxies.is_empty();
        let host = self
            .bind
            .rsplit_once(':')
            .map_or(self.bind.as_str(), |(host, _)| host);
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let loopback = host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        let tls = self.serving.tls_cert.is_some();
        if !loopback && !trusted && !tls {
            said.push(format!(
                "The server listens on {} without TLS and without a trusted proxy in front: \
                 passwords and tokens cross the network in the clear. Put a proxy that serves \
                 HTTPS in front (and name it in --trusted-proxies).",
                self.bind
            ));
        }
        if let Some(url) = &self.mail.public_url {
            if url.starts_with("https://") && !trusted && !tls {
                said.push(format!(
                    "The public URL {url} is https://, but this server serves plain HTTP and \
                     trusts no proxy to serve HTTPS for it: name that proxy in --trusted-proxies."
                ));
            }
        }
        if let Some(url) = &self.mail.public_url {
            if url.starts_with("http://") && tls {
                said.push(format!(
                    "The public URL {url} is http://, but this server serves HTTPS: links in \
                     mail will not use it."
                ));
            }
        }
        if self.serving.frontend_origin.is_none() {
            said.push(
                "Games' own pages are served on this server's origin: an author's page opened \
                 on its own shares it with the sign-in page. Give them an origin of their own \
                 with --frontend-origin."
                    .to_owned(),
            );
        }
        if self.abuse_limits.rate_limits == "off" {
            said.push(
                "Rate limits are off (--rate-limits off): nothing slows down password guessing, \
                 sign-up floods or scripted moves. Turn them on outside load tests."
                    .to_owned(),
            );
        }
        said
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    #[test]
    fn plain_http_on_the_network_a_public_url_served_by_nobody_and_no_limits_are_warned_of() {
        let mut config = Config::for_database("sqlite://t.db");
        let said = config.warnings();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].starts_with("Games' own pages are served on this server's origin"));
        config.serving.frontend_origin = Some("https://play.example.org".into());
        assert!(config.warnings().is_empty(), "{:?}", config.warnings());
        config.bind = "0.0.0.0:8080".into();
        config.mail.public_url = Some("https://games.example.org".into());
        config.abuse_limits.rate_limits = "off".into();
        let said = config.warnings();
        assert_eq!(said.len(), 3, "{said:?}");
        assert!(said[0].starts_with("The server listens on 0.0.0.0:8080 without TLS"));
        assert!(said[1].contains("https://games.example.org"));
        assert!(said[2].starts_with("Rate limits are off"));
        // Behind a trusted proxy, neither of the first two.
        config.serving.trusted_proxies = "127.0.0.1".parse().unwrap();
        assert_eq!(config.warnings().len(), 1);
        config.bind = "[::1]:8080".into();
        config.serving.trusted_proxies = Default::default();
        config.mail.public_url = None;
        config.abuse_limits.rate_limits = "on".into();
        assert!(config.warnings().is_empty());
        // Its own HTTPS on the network is no warning; a public URL that is http:// then is.
        config.bind = "0.0.0.0:443".into();
        config.serving.tls_cert = Some("cert.pem".into());
        config.serving.tls_key = Some("key.pem".into());
        assert!(config.warnings().is_empty(), "{:?}", config.warnings());
        config.mail.public_url = Some("http://games.example.org".into());
        let said = config.warnings();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("is http://, but this server serves HTTPS"));
    }
}
