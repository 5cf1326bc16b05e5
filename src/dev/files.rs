//! The files of the game being written: its hooks and, optionally, its page (one HTML file or
//! a build folder). Read whole on every save and uploaded as `PUT /games/{id}` takes them: the
//! hooks as the source, a folder zipped as a build.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::api::dev::UploadFailure;
use crate::catalog::{FieldUpdate, FrontendUpload, GameUpload};

/// How often the files are looked at.
pub const POLL: Duration = Duration::from_millis(200);

/// How long a change must hold before it is published (an editor may write a file in steps).
const SETTLE: Duration = Duration::from_millis(60);

/// Files in a folder that are never part of a build (an editor's swap and backup files).
fn ignored(name: &str) -> bool {
    name.starts_with('.') || name.ends_with('~') || name.ends_with(".swp")
}

pub struct GameFiles {
    hooks: PathBuf,
    frontend: Option<PathBuf>,
}

/// What the files are now: each one's path, size and modification time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint(Vec<(PathBuf, Option<(u64, SystemTime)>)>);

impl GameFiles {
    pub fn new(hooks: PathBuf, frontend: Option<PathBuf>) -> Self {
        Self { hooks, frontend }
    }

    pub fn paths(&self) -> Vec<&Path> {
        std::iter::once(self.hooks.as_path())
            .chain(self.frontend.as_deref())
            .collect()
    }

    pub fn hooks_name(&self) -> String {
        self.hooks.display().to_string()
    }

    pub fn frontend_name(&self) -> Option<String> {
        self.frontend.as_ref().map(|p| p.display().to_string())
    }

    pub fn fingerprint(&self) -> Fingerprint {
        let mut files = vec![self.hooks.clone()];
        if let Some(frontend) = &self.frontend {
            match frontend.is_dir() {
                true => folder_files(frontend, &mut files),
                false => files.push(frontend.clone()),
            }
        }
        Fingerprint(
            files
                .into_iter()
                .map(|path| {
                    let seen = std::fs::metadata(&path)
                        .ok()
                        .map(|m| (m.len(), m.modified().unwrap_or(SystemTime::UNIX_EPOCH)));
                    (path, seen)
                })
                .collect(),
        )
    }

    /// The files' fingerprint if they changed since `published` and then held still.
    pub async fn settled_change(&self, published: &Fingerprint) -> Option<Fingerprint> {
        let now = self.fingerprint();
        if now == *published {
            return None;
        }
        tokio::time::sleep(SETTLE).await;
        (self.fingerprint() == now).then_some(now)
    }

    /// The upload the files make now: the hooks, and the page when there is one.
    pub async fn upload(&self) -> Result<GameUpload, UploadFailure> {
        let (hooks, frontend) = (self.hooks.clone(), self.frontend.clone());
        let read = tokio::task::spawn_blocking(move || read(&hooks, frontend.as_deref())).await;
        match read {
            Ok(result) => result,
            Err(err) => Err(UploadFailure {
                file: self.hooks_name(),
                line: None,
                message: format!("could not read the files: {err}"),
            }),
        }
    }
}

fn read(hooks: &Path, frontend: Option<&Path>) -> Result<GameUpload, UploadFailure> {
    let failure = |path: &Path, err: std::io::Error| UploadFailure {
        file: path.display().to_string(),
        line: None,
        message: format!("cannot be read: {err}"),
    };
    let source = std::fs::read_to_string(hooks).map_err(|err| failure(hooks, err))?;
    let frontend = match frontend {
        None => FieldUpdate::Keep,
        Some(folder) if folder.is_dir() => {
            FieldUpdate::Set(zip_folder(folder).map_err(|err| failure(folder, err))?)
        }
        Some(page) => FieldUpdate::Set(FrontendUpload::page(
            std::fs::read_to_string(page).map_err(|err| failure(page, err))?,
        )),
    };
    Ok(GameUpload {
        source: Some(source),
        frontend,
        ..GameUpload::default()
    })
}

/// Every file under `folder` (but editors' scratch files), sorted.
fn folder_files(folder: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| !ignored(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            folder_files(&path, files);
        } else {
            files.push(path);
        }
    }
}

/// The folder as a zip archive, the way a build folder is uploaded.
fn zip_folder(folder: &Path) -> std::io::Result<FrontendUpload> {
    let mut files = Vec::new();
    folder_files(folder, &mut files);
    let mut archive = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for file in files {
        let name = file
            .strip_prefix(folder)
            .expect("found under the folder")
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        archive
            .start_file(name, options)
            .map_err(std::io::Error::other)?;
        archive.write_all(&std::fs::read(&file)?)?;
    }
    let bytes = archive
        .finish()
        .map_err(std::io::Error::other)?
        .into_inner();
    Ok(FrontendUpload {
        bytes,
        name: Some("build.zip".into()),
    })
}
