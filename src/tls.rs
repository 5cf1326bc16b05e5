//! HTTPS of the server's own (`--tls-cert`, `--tls-key`): rustls on aws-lc (the provider the
//! rest of the server's TLS uses), HTTP/2 and HTTP/1.1 by ALPN, and the certificate read again
//! on SIGHUP: new connections get the new one, connections open keep theirs. And the plain
//! HTTP listener (`--http-redirect`) that only sends browsers to the HTTPS address.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// Why the certificate cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read the certificate chain {path}: {message}")]
    Chain { path: PathBuf, message: String },
    #[error("cannot read the private key {path}: {message}")]
    Key { path: PathBuf, message: String },
    #[error("the private key {key} does not go with the certificate {cert}: {message}")]
    Mismatch {
        cert: PathBuf,
        key: PathBuf,
        message: String,
    },
}

/// The certificate served, as its files say: read at start and again on SIGHUP.
#[derive(Debug)]
pub struct Certificate {
    cert: PathBuf,
    key: PathBuf,
    current: RwLock<Arc<CertifiedKey>>,
}

fn provider() -> rustls::crypto::CryptoProvider {
    rustls::crypto::aws_lc_rs::default_provider()
}

impl Certificate {
    /// The chain in `cert` (PEM, the server's certificate first) with the key in `key` (PEM).
    pub fn load(cert: &Path, key: &Path) -> Result<Arc<Self>, TlsError> {
        Ok(Arc::new(Self {
            current: RwLock::new(read(cert, key)?),
            cert: cert.to_owned(),
            key: key.to_owned(),
        }))
    }

    /// Reads the files again: new connections get what they hold now. On an error the
    /// certificate served stays as it was.
    pub fn reload(&self) -> Result<(), TlsError> {
        let fresh = read(&self.cert, &self.key)?;
        *self.current.write().expect("never poisoned") = fresh;
        Ok(())
    }

    /// The TLS settings of the HTTPS listener: TLS 1.2 and 1.3, HTTP/2 offered first.
    pub fn server_config(self: &Arc<Self>) -> rustls::ServerConfig {
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(provider()))
            .with_safe_default_protocol_versions()
            .expect("aws-lc supports the default versions")
            .with_no_client_auth()
            .with_cert_resolver(self.clone());
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        config
    }
}

impl ResolvesServerCert for Certificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.read().expect("never poisoned").clone())
    }
}

fn read(cert: &Path, key: &Path) -> Result<Arc<CertifiedKey>, TlsError> {
    let chain_error = |message: String| TlsError::Chain {
        path: cert.to_owned(),
        message,
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|err| chain_error(err.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|err| chain_error(err.to_string()))?;
    if chain.is_empty() {
        return Err(chain_error("it holds no certificate".into()));
    }
    let private = PrivateKeyDer::from_pem_file(key).map_err(|err| TlsError::Key {
        path: key.to_owned(),
        message: err.to_string(),
    })?;
    let certified =
        CertifiedKey::from_der(chain, private, &provider()).map_err(|err| TlsError::Mismatch {
            cert: cert.to_owned(),
            key: key.to_owned(),
            message: err.to_string(),
        })?;
    Ok(Arc::new(certified))
}

/// Reads the certificate again on every SIGHUP, for as long as the server runs.
pub async fn reload_on_hangup(certificate: Arc<Certificate>) {
    use tokio::signal::unix::{signal, SignalKind};
    let Ok(mut hangups) = signal(SignalKind::hangup()) else {
        tracing::warn!("cannot listen for SIGHUP: the certificate is read at start only");
        return;
    };
    while hangups.recv().await.is_some() {
        match certificate.reload() {
            Ok(()) => tracing::info!("SIGHUP: the certificate was read again"),
            Err(err) => {
                tracing::warn!(error = %err, "SIGHUP: the certificate could not be read; the one served is kept")
            }
        }
    }
}

/// Where the plain HTTP listener sends browsers: the public URL's origin, or the host asked
/// for on the HTTPS port.
#[derive(Debug, Clone)]
pub struct RedirectTo {
    /// `https://games.example.org` (no trailing `/`), when the operator gave it.
    pub origin: Option<String>,
    /// The HTTPS listener's port, for a host asked for without a public URL.
    pub https_port: u16,
}

/// Every request to the plain HTTP listener: `308` to the same path on HTTPS.
pub async fn redirect(req: HttpRequest, to: web::Data<RedirectTo>) -> HttpResponse {
    let path = req.uri().path_and_query().map_or("/", |p| p.as_str());
    let origin = match &to.origin {
        Some(origin) => origin.clone(),
        None => {
            // The request's own Host (never a forwarded one), if it is a plain host name.
            let host = (req.headers().get(header::HOST))
                .and_then(|value| value.to_str().ok())
                .and_then(crate::api::plain_host);
            let Some(host) = host.map(str::to_owned) else {
                return HttpResponse::BadRequest().finish();
            };
            let name = match host.rsplit_once(':') {
                Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name.to_owned(),
                _ => host,
            };
            match to.https_port {
                443 => format!("https://{name}"),
                port => format!("https://{name}:{port}"),
            }
        }
    };
    HttpResponse::PermanentRedirect()
        .insert_header((header::LOCATION, format!("{origin}{path}")))
        .finish()
}
