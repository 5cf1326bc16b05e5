//! Certificates for the HTTPS tests, made with `openssl`: a CA of each test's own, and site
//! certificates it signs for 127.0.0.1. Every site certificate of a test process is made for
//! one key ([`site_key`]), so that the browser all page tests share trusts exactly that key
//! (`--ignore-certificate-errors-spki-list`, see `webdriver.rs`) and a page served over any
//! test's HTTPS loads in Chromium with no warning, as it would with a real certificate.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The key of every site certificate of this process, and its public key's SHA-256 (of its
/// SubjectPublicKeyInfo, base64), as Chromium is told to trust it.
pub(crate) struct SiteKey {
    pub path: PathBuf,
    pub spki_sha256: String,
}

static KEY: OnceLock<SiteKey> = OnceLock::new();

/// The site key, if this process made one (for removing it at exit).
pub(crate) fn site_key_made() -> Option<&'static SiteKey> {
    KEY.get()
}

/// Made once per process, in the temporary folder (removed with the browsers' profiles).
pub(crate) fn site_key() -> &'static SiteKey {
    KEY.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("turnhouse-site-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        openssl(
            &dir,
            &[
                "genpkey",
                "-algorithm",
                "EC",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-out",
                "site.key",
            ],
        );
        let spki = Command::new("sh")
            .arg("-c")
            .arg("openssl pkey -in site.key -pubout -outform DER | openssl dgst -sha256 -binary | openssl base64 -A")
            .current_dir(&dir)
            .output()
            .expect("openssl runs");
        assert!(spki.status.success(), "the site key's hash");
        SiteKey {
            path: dir.join("site.key"),
            spki_sha256: String::from_utf8(spki.stdout).unwrap().trim().to_owned(),
        }
    })
}

/// Runs `openssl` in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let status = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("openssl runs (scripts/test installs it)");
    assert!(status.success(), "openssl {args:?}");
}

/// A CA of its own (`{name}-ca.pem`) and a certificate it signs for 127.0.0.1 (`{name}.pem`,
/// key `{name}.key`, the process's [`site_key`]), in `dir`.
pub(crate) fn certificate(dir: &Path, name: &str) {
    let ca = format!("/CN=Turnhouse test CA {name}");
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &format!("{name}-ca.key"),
            "-out",
            &format!("{name}-ca.pem"),
            "-days",
            "2",
            "-subj",
            &ca,
        ],
    );
    std::fs::copy(&site_key().path, dir.join(format!("{name}.key"))).unwrap();
    openssl(
        dir,
        &[
            "req",
            "-new",
            "-key",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.csr"),
            "-subj",
            "/CN=127.0.0.1",
        ],
    );
    std::fs::write(
        dir.join(format!("{name}.ext")),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &format!("{name}.csr"),
            "-CA",
            &format!("{name}-ca.pem"),
            "-CAkey",
            &format!("{name}-ca.key"),
            "-CAcreateserial",
            "-out",
            &format!("{name}.pem"),
            "-days",
            "2",
            "-extfile",
            &format!("{name}.ext"),
        ],
    );
}

/// A client that trusts only the CA `{name}-ca.pem` in `dir`.
pub(crate) fn trusting(dir: &Path, name: &str) -> reqwest::Client {
    let pem = std::fs::read(dir.join(format!("{name}-ca.pem"))).unwrap();
    reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()])
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}
