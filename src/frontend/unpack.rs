//! Unpacking an upload into a [`Frontend`]: a `.zip`, a `.tar.gz` (or plain `.tar`), or one
//! HTML document. Every limit is counted while reading, never taken from what an archive
//! says of itself: a zip bomb or a lying header is stopped at the first byte past the cap.

use std::collections::HashSet;
use std::io::{Cursor, Read};

use flate2::read::GzDecoder;

use super::{
    Frontend, FrontendError, FrontendFile, INDEX, MAX_FILES, MAX_PATH_BYTES, MAX_UNPACKED_BYTES,
    MAX_UPLOAD_BYTES,
};

/// What a tar stream may hold besides file contents (headers, long names, padding) before it
/// is refused: a bound on entries that carry no data, such as directories.
const TAR_OVERHEAD_BYTES: u64 = (MAX_FILES as u64 + 64) * 4 * 1024;

/// An upload as one of the kinds a frontend may be sent as, by its first bytes (and name).
enum Kind {
    Zip,
    TarGz,
    Tar,
    Page,
}

/// Unpacks `bytes` (sent with the file name `name`, if any) into a frontend.
pub fn unpack(bytes: &[u8], name: Option<&str>) -> Result<Frontend, FrontendError> {
    if bytes.len() > MAX_UPLOAD_BYTES {
        return Err(FrontendError::entry(
            name.unwrap_or("frontend"),
            format!("the upload is over {} MiB", MAX_UPLOAD_BYTES >> 20),
        ));
    }
    let files = match kind(bytes, name)? {
        Kind::Zip => from_zip(bytes)?,
        Kind::TarGz => from_tar(GzDecoder::new(bytes))?,
        Kind::Tar => from_tar(bytes)?,
        Kind::Page => {
            let html = String::from_utf8(bytes.to_vec()).map_err(|_| {
                FrontendError::entry(name.unwrap_or(INDEX), "an HTML page must be UTF-8 text")
            })?;
            if html.trim().is_empty() {
                return Err(FrontendError::entry(
                    name.unwrap_or(INDEX),
                    "the page is empty",
                ));
            }
            return Ok(Frontend::single_page(html));
        }
    };
    folder(files)
}

fn kind(bytes: &[u8], name: Option<&str>) -> Result<Kind, FrontendError> {
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        return Ok(Kind::Zip);
    }
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(Kind::TarGz);
    }
    if bytes.len() >= 262 && &bytes[257..262] == b"ustar" {
        return Ok(Kind::Tar);
    }
    let lower = name.map(str::to_ascii_lowercase);
    match lower.as_deref() {
        None => Ok(Kind::Page),
        Some(n) if n.ends_with(".html") || n.ends_with(".htm") => Ok(Kind::Page),
        Some(_) => Err(FrontendError::entry(
            name.unwrap_or_default(),
            "not a frontend: send one .html page, or a build folder as a .zip or .tar.gz",
        )),
    }
}

/// The files of an archive, each path checked and the totals counted.
struct Gathered {
    files: Vec<(String, Vec<u8>)>,
    seen: HashSet<String>,
    unpacked: u64,
}

impl Gathered {
    fn new() -> Self {
        Self {
            files: Vec::new(),
            seen: HashSet::new(),
            unpacked: 0,
        }
    }

    /// Reads one file's content through a cap of what is left of the unpacked budget.
    fn add(
        &mut self,
        raw_name: &str,
        path: String,
        content: impl Read,
    ) -> Result<(), FrontendError> {
        if self.files.len() == MAX_FILES {
            return Err(FrontendError::entry(
                raw_name,
                format!("a frontend holds at most {MAX_FILES} files"),
            ));
        }
        let left = MAX_UNPACKED_BYTES - self.unpacked;
        let mut body = Vec::new();
        content
            .take(left + 1)
            .read_to_end(&mut body)
            .map_err(|err| FrontendError::entry(raw_name, format!("cannot be read: {err}")))?;
        if body.len() as u64 > left {
            return Err(FrontendError::entry(
                raw_name,
                format!(
                    "the frontend unpacks to more than {} MiB",
                    MAX_UNPACKED_BYTES >> 20
                ),
            ));
        }
        self.unpacked += body.len() as u64;
        if !self.seen.insert(path.clone()) {
            return Err(FrontendError::entry(
                raw_name,
                "appears twice in the archive",
            ));
        }
        self.files.push((path, body));
        Ok(())
    }
}

/// Unix file types, as zip entries made on Unix record them in their mode.
const S_IFMT: u32 = 0o170_000;
const S_IFREG: u32 = 0o100_000;
const S_IFDIR: u32 = 0o040_000;
const S_IFLNK: u32 = 0o120_000;

fn from_zip(bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>, FrontendError> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|err| FrontendError::whole(format!("not a readable .zip archive: {err}")))?;
    let mut gathered = Gathered::new();
    for index in 0..archive.len() {
        let entry = archive
            .by_index(index)
            .map_err(|err| FrontendError::whole(format!("entry {index} cannot be read: {err}")))?;
        let raw_name = String::from_utf8_lossy(entry.name_raw()).into_owned();
        let path = clean_path(&raw_name)?;
        match entry.unix_mode().map(|mode| mode & S_IFMT) {
            Some(S_IFLNK) => {
                return Err(FrontendError::entry(raw_name, "symbolic links are refused"))
            }
            Some(S_IFREG | S_IFDIR) | Some(0) | None => {}
            Some(_) => {
                return Err(FrontendError::entry(
                    raw_name,
                    "only files and folders may be in a frontend (no devices, pipes or sockets)",
                ))
            }
        }
        if entry.is_dir() || path.is_none() {
            continue;
        }
        let path = path.expect("checked above");
        if is_junk(&path) {
            continue;
        }
        gathered.add(&raw_name, path, entry)?;
    }
    Ok(gathered.files)
}

fn from_tar(stream: impl Read) -> Result<Vec<(String, Vec<u8>)>, FrontendError> {
    let capped = CappedReader {
        inner: stream,
        left: MAX_UNPACKED_BYTES + TAR_OVERHEAD_BYTES,
    };
    let mut archive = tar::Archive::new(capped);
    let entries = archive
        .entries()
        .map_err(|err| FrontendError::whole(format!("not a readable tar archive: {err}")))?;
    let mut gathered = Gathered::new();
    for entry in entries {
        let entry = entry.map_err(|err| {
            FrontendError::whole(format!("not a readable .tar.gz archive: {err}"))
        })?;
        let raw_name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        use tar::EntryType as T;
        match entry.header().entry_type() {
            T::Regular | T::Continuous => {}
            T::Directory | T::XGlobalHeader => {
                clean_path(&raw_name)?;
                continue;
            }
            T::Symlink => return Err(FrontendError::entry(raw_name, "symbolic links are refused")),
            T::Link => return Err(FrontendError::entry(raw_name, "hard links are refused")),
            T::Char | T::Block | T::Fifo => {
                return Err(FrontendError::entry(
                    raw_name,
                    "devices and pipes are refused: only files and folders",
                ))
            }
            other => {
                return Err(FrontendError::entry(
                    raw_name,
                    format!("entries of type {other:?} are refused: only files and folders"),
                ))
            }
        }
        let Some(path) = clean_path(&raw_name)? else {
            continue;
        };
        if is_junk(&path) {
            continue;
        }
        gathered.add(&raw_name, path, entry)?;
    }
    Ok(gathered.files)
}

/// A reader that fails once more than `left` bytes have come through: the whole decompressed
/// stream of a tar, headers included, is bounded, however its entries describe themselves.
struct CappedReader<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for CappedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(std::io::Error::other(format!(
                "the frontend unpacks to more than {} MiB",
                MAX_UNPACKED_BYTES >> 20
            )));
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let read = self.inner.read(&mut buf[..want])?;
        self.left -= read as u64;
        Ok(read)
    }
}

/// An entry's path made relative and `/`-separated, or `None` for the folder itself (`./`).
/// Refused: absolute paths, `..`, drive letters, control characters, over-long paths.
fn clean_path(raw: &str) -> Result<Option<String>, FrontendError> {
    let refuse = |why: &str| Err(FrontendError::entry(raw, why));
    if raw.len() > MAX_PATH_BYTES {
        return refuse("the path is too long");
    }
    if raw.chars().any(char::is_control) {
        return refuse("the path holds control characters");
    }
    let path = raw.replace('\\', "/");
    if path.starts_with('/') {
        return refuse("absolute paths are refused: every path stays inside the folder");
    }
    let bytes = path.as_bytes();
    if bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic() {
        return refuse("drive letters are refused: every path stays inside the folder");
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return refuse("`..` is refused: every path stays inside the folder"),
            part => parts.push(part),
        }
    }
    Ok((!parts.is_empty()).then(|| parts.join("/")))
}

/// What archivers add that no page needs: macOS's resource forks and folder settings.
fn is_junk(path: &str) -> bool {
    path.starts_with("__MACOSX/") || path == ".DS_Store" || path.ends_with("/.DS_Store")
}

/// The files as a frontend: `index.html` at the root, or inside a single top folder (which is
/// then taken off every path).
fn folder(files: Vec<(String, Vec<u8>)>) -> Result<Frontend, FrontendError> {
    let no_index = || {
        FrontendError::entry(
            INDEX,
            "a build folder has index.html at its root, or inside a single top folder",
        )
    };
    let has = |path: &str| files.iter().any(|(p, _)| p == path);
    let strip = if has(INDEX) {
        String::new()
    } else {
        let (first, _) = files.first().ok_or_else(no_index)?;
        let top = first.split('/').next().unwrap_or_default();
        let prefix = format!("{top}/");
        let all_inside = files.iter().all(|(p, _)| p.starts_with(&prefix));
        if !all_inside || !has(&format!("{prefix}{INDEX}")) {
            return Err(no_index());
        }
        prefix
    };
    let files = files
        .into_iter()
        .map(|(path, body)| FrontendFile::new(path[strip.len()..].to_owned(), body))
        .collect();
    Ok(Frontend { files })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::write::GzEncoder;
    use flate2::Compression;
    use zip::write::SimpleFileOptions;

    use super::*;

    fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, body) in entries {
            writer
                .start_file(*name, SimpleFileOptions::default())
                .unwrap();
            writer.write_all(body).unwrap();
        }
        writer.finish().unwrap().into_inner()
    }

    fn tar_gz_of(build: impl FnOnce(&mut tar::Builder<GzEncoder<Vec<u8>>>)) -> Vec<u8> {
        let mut builder = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
        build(&mut builder);
        builder.into_inner().unwrap().finish().unwrap()
    }

    fn file(builder: &mut tar::Builder<GzEncoder<Vec<u8>>>, path: &str, body: &[u8]) {
        let mut header = tar::Header::new_gnu();
        header.set_size(body.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        builder.append_data(&mut header, path, body).unwrap();
    }

    fn paths(frontend: &Frontend) -> Vec<&str> {
        frontend.files().iter().map(|f| f.path.as_str()).collect()
    }

    #[test]
    fn a_zip_at_the_root_or_in_one_top_folder() {
        let root = unpack(
            &zip_of(&[("index.html", b"<p>hi"), ("static/js/main.js", b"1")]),
            Some("build.zip"),
        )
        .unwrap();
        assert_eq!(paths(&root), ["index.html", "static/js/main.js"]);
        let nested = unpack(
            &zip_of(&[
                ("build/index.html", b"<p>hi"),
                ("build/static/css/main.css", b"a{}"),
                ("__MACOSX/build/._index.html", b"junk"),
            ]),
            None,
        )
        .unwrap();
        assert_eq!(paths(&nested), ["index.html", "static/css/main.css"]);
        assert_eq!(nested.files()[1].content_type, "text/css; charset=utf-8");
    }

    #[test]
    fn a_tar_gz_and_a_single_page() {
        let tar = tar_gz_of(|b| {
            file(b, "./index.html", b"<p>hi");
            file(b, "./app.js", b"go()");
        });
        let frontend = unpack(&tar, Some("page.tar.gz")).unwrap();
        assert_eq!(paths(&frontend), ["index.html", "app.js"]);
        let page = unpack(b"<!doctype html><p>hello", Some("game.html")).unwrap();
        assert_eq!(paths(&page), ["index.html"]);
        assert_eq!(page.files()[0].body, b"<!doctype html><p>hello");
    }

    #[test]
    fn paths_that_leave_the_folder_are_refused_by_name() {
        for bad in [
            "../evil.html",
            "a/../../evil.html",
            "/etc/passwd",
            "C:/x.html",
            "a\\..\\..\\b",
        ] {
            let err = unpack(&zip_of(&[("index.html", b"x"), (bad, b"x")]), None).unwrap_err();
            assert_eq!(err.entry.as_deref(), Some(bad), "{err}");
        }
    }

    #[test]
    fn links_and_devices_are_refused() {
        let symlink = tar_gz_of(|b| {
            file(b, "index.html", b"x");
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(tar::EntryType::Symlink);
            header.set_size(0);
            b.append_link(&mut header, "secrets", "/etc/passwd")
                .unwrap();
        });
        let err = unpack(&symlink, None).unwrap_err();
        assert_eq!(err.entry.as_deref(), Some("secrets"));
        assert!(err.reason.contains("symbolic"), "{err}");

        let hard = tar_gz_of(|b| {
            file(b, "index.html", b"x");
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(tar::EntryType::Link);
            header.set_size(0);
            b.append_link(&mut header, "again", "index.html").unwrap();
        });
        assert!(unpack(&hard, None)
            .unwrap_err()
            .reason
            .contains("hard link"));

        let device = tar_gz_of(|b| {
            file(b, "index.html", b"x");
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(tar::EntryType::Char);
            header.set_size(0);
            header.set_mode(0o644);
            b.append_data(&mut header, "tty", &b""[..]).unwrap();
        });
        assert_eq!(
            unpack(&device, None).unwrap_err().entry.as_deref(),
            Some("tty")
        );

        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        writer
            .start_file("index.html", SimpleFileOptions::default())
            .unwrap();
        writer.write_all(b"x").unwrap();
        writer
            .add_symlink("link", "/etc/passwd", SimpleFileOptions::default())
            .unwrap();
        let zipped = writer.finish().unwrap().into_inner();
        assert_eq!(
            unpack(&zipped, None).unwrap_err().entry.as_deref(),
            Some("link")
        );
    }

    #[test]
    fn a_bomb_stops_at_the_cap_while_it_unpacks() {
        let zeros = vec![0u8; (MAX_UNPACKED_BYTES + 1024) as usize];
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let deflated =
            SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        writer.start_file("index.html", deflated).unwrap();
        writer.write_all(b"x").unwrap();
        writer.start_file("zeros.bin", deflated).unwrap();
        writer.write_all(&zeros).unwrap();
        let bomb = writer.finish().unwrap().into_inner();
        assert!(bomb.len() < 1 << 20, "a small archive: {}", bomb.len());
        let err = unpack(&bomb, None).unwrap_err();
        assert_eq!(err.entry.as_deref(), Some("zeros.bin"));
        assert!(err.reason.contains("32 MiB"), "{err}");

        let tar_bomb = tar_gz_of(|b| {
            file(b, "index.html", b"x");
            file(b, "zeros.bin", &zeros);
        });
        assert!(unpack(&tar_bomb, None)
            .unwrap_err()
            .reason
            .contains("32 MiB"));
    }

    #[test]
    fn too_many_files_no_index_and_not_an_archive() {
        let names: Vec<String> = (0..=MAX_FILES).map(|i| format!("f{i}.txt")).collect();
        let mut entries: Vec<(&str, &[u8])> = vec![("index.html", b"x")];
        entries.extend(names.iter().map(|n| (n.as_str(), &b"x"[..])));
        let err = unpack(&zip_of(&entries), None).unwrap_err();
        assert!(err.reason.contains("1000 files"), "{err}");

        let err = unpack(&zip_of(&[("a/index.html", b"x"), ("b/x.js", b"x")]), None).unwrap_err();
        assert_eq!(err.entry.as_deref(), Some("index.html"));
        assert!(unpack(&zip_of(&[]), None).is_err());

        let png = b"\x89PNG\r\n\x1a\n rest of an image";
        let err = unpack(png, Some("logo.png")).unwrap_err();
        assert!(err.reason.contains("not a frontend"), "{err}");
        assert!(unpack(b"PK\x03\x04 broken", Some("a.zip")).is_err());
        assert!(unpack(&[0x1f, 0x8b, 1, 2, 3], Some("a.tar.gz")).is_err());
        assert!(unpack(&vec![b'a'; MAX_UPLOAD_BYTES + 1], Some("a.html")).is_err());
    }
}
