//! A game's own page: the files of a build folder (or one HTML document), as a version of the
//! game ships them. An upload is unpacked here, under limits counted while unpacking, into a
//! [`Frontend`]: paths that stay inside the folder, each with its content type, its entity tag
//! and, where it pays, a gzip copy made once. Nothing here knows HTTP or SQL.

mod media;
mod unpack;

use sha2::{Digest, Sha256};

use crate::domain::ids::hex;

pub use media::content_type;
pub use unpack::unpack;

/// The largest upload of a frontend, as sent (an archive, or one HTML document).
pub const MAX_UPLOAD_BYTES: usize = 8 << 20;
/// The most a frontend may unpack to, all files together.
pub const MAX_UNPACKED_BYTES: u64 = 32 << 20;
/// The most files a frontend may hold.
pub const MAX_FILES: usize = 1_000;
/// The longest path inside a frontend, in bytes.
pub const MAX_PATH_BYTES: usize = 512;
/// The page every frontend starts from.
pub const INDEX: &str = "index.html";

/// One file of a frontend.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontendFile {
    /// Relative to the folder, `/`-separated, never leaving it (`static/js/main.js`).
    pub path: String,
    pub content_type: &'static str,
    /// A strong entity tag, from the content.
    pub etag: String,
    pub body: Vec<u8>,
    /// The body gzipped, kept when the type compresses and it is smaller.
    pub gzip: Option<Vec<u8>>,
}

impl FrontendFile {
    pub fn new(path: String, body: Vec<u8>) -> Self {
        let content_type = content_type(&path);
        let digest = Sha256::digest(&body);
        let etag = format!("\"{}\"", &hex(&digest)[..32]);
        let gzip = media::gzip_if_smaller(content_type, &body);
        Self {
            path,
            content_type,
            etag,
            body,
            gzip,
        }
    }
}

/// A frontend ready to store: at least [`INDEX`], every path unique.
#[derive(Debug, Clone, PartialEq)]
pub struct Frontend {
    files: Vec<FrontendFile>,
}

impl Frontend {
    /// One HTML document as the whole frontend.
    pub fn single_page(html: String) -> Self {
        Self {
            files: vec![FrontendFile::new(INDEX.to_owned(), html.into_bytes())],
        }
    }

    pub fn files(&self) -> &[FrontendFile] {
        &self.files
    }

    pub fn into_files(self) -> Vec<FrontendFile> {
        self.files
    }

    /// Every byte it holds unpacked.
    pub fn unpacked_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.body.len() as u64).sum()
    }
}

/// Why an upload is not a frontend. Each names the entry at fault where there is one.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", match entry { Some(entry) => format!("`{entry}`: {reason}"), None => reason.clone() })]
pub struct FrontendError {
    /// The archive entry (or the upload itself, `frontend`) that was refused.
    pub entry: Option<String>,
    pub reason: String,
}

impl FrontendError {
    pub(crate) fn entry(entry: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            entry: Some(entry.into()),
            reason: reason.into(),
        }
    }

    pub(crate) fn whole(reason: impl Into<String>) -> Self {
        Self {
            entry: None,
            reason: reason.into(),
        }
    }
}
