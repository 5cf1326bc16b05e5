//! What a file is, by its extension, and whether it is worth a gzip copy.

use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;

/// Content types of what build folders hold, by lowercase extension.
const TYPES: &[(&str, &str)] = &[
    ("html", "text/html; charset=utf-8"),
    ("htm", "text/html; charset=utf-8"),
    ("js", "text/javascript; charset=utf-8"),
    ("mjs", "text/javascript; charset=utf-8"),
    ("cjs", "text/javascript; charset=utf-8"),
    ("css", "text/css; charset=utf-8"),
    ("json", "application/json"),
    ("map", "application/json"),
    ("webmanifest", "application/manifest+json"),
    ("txt", "text/plain; charset=utf-8"),
    ("csv", "text/csv; charset=utf-8"),
    ("xml", "application/xml"),
    ("svg", "image/svg+xml"),
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("avif", "image/avif"),
    ("ico", "image/x-icon"),
    ("bmp", "image/bmp"),
    ("woff", "font/woff"),
    ("woff2", "font/woff2"),
    ("ttf", "font/ttf"),
    ("otf", "font/otf"),
    ("eot", "application/vnd.ms-fontobject"),
    ("mp3", "audio/mpeg"),
    ("ogg", "audio/ogg"),
    ("oga", "audio/ogg"),
    ("wav", "audio/wav"),
    ("m4a", "audio/mp4"),
    ("mp4", "video/mp4"),
    ("webm", "video/webm"),
    ("ogv", "video/ogg"),
    ("wasm", "application/wasm"),
    ("glb", "model/gltf-binary"),
    ("gltf", "model/gltf+json"),
];

/// Anything else is served as bytes (and, with `nosniff`, never run or rendered as a page).
const UNKNOWN: &str = "application/octet-stream";

/// The content type of `path`, by its extension.
pub fn content_type(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some((_, extension)) = name.rsplit_once('.') else {
        return UNKNOWN;
    };
    let extension = extension.to_ascii_lowercase();
    TYPES
        .iter()
        .find(|(known, _)| *known == extension)
        .map_or(UNKNOWN, |(_, content_type)| content_type)
}

/// Whether a type is text-like, so gzip pays (images, fonts and media are compressed already).
fn compresses(content_type: &str) -> bool {
    content_type.starts_with("text/")
        || content_type.starts_with("application/json")
        || content_type.starts_with("application/manifest+json")
        || content_type.starts_with("application/xml")
        || content_type.starts_with("application/wasm")
        || content_type.starts_with("image/svg+xml")
        || content_type.starts_with("image/x-icon")
        || content_type.starts_with("image/bmp")
        || content_type.starts_with("model/gltf+json")
        || content_type == "application/vnd.ms-fontobject"
        || content_type == "font/ttf"
        || content_type == "font/otf"
}

/// Files this small are sent as they are: the headers would cost more than gzip saves.
const SMALLEST_WORTH_COMPRESSING: usize = 256;

/// The body gzipped once, at upload, when its type compresses and the copy saves a tenth.
pub fn gzip_if_smaller(content_type: &str, body: &[u8]) -> Option<Vec<u8>> {
    if body.len() < SMALLEST_WORTH_COMPRESSING || !compresses(content_type) {
        return None;
    }
    let mut encoder = GzEncoder::new(Vec::with_capacity(body.len() / 3), Compression::default());
    encoder.write_all(body).ok()?;
    let gzipped = encoder.finish().ok()?;
    (gzipped.len() < body.len() - body.len() / 10).then_some(gzipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_come_from_the_extension_in_any_case() {
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(
            content_type("static/js/main.3f2a.js"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(content_type("static/media/Logo.SVG"), "image/svg+xml");
        assert_eq!(content_type("fonts/a.woff2"), "font/woff2");
        assert_eq!(content_type("LICENSE"), UNKNOWN);
        assert_eq!(content_type("weird.dir/noext"), UNKNOWN);
        assert_eq!(content_type("a.exe"), UNKNOWN);
    }

    #[test]
    fn text_is_gzipped_and_media_is_not() {
        let script = "function f() { return 1; }\n".repeat(100);
        let gzipped = gzip_if_smaller("text/javascript; charset=utf-8", script.as_bytes()).unwrap();
        assert!(gzipped.len() < script.len() / 5);
        let mut back = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gzipped[..]), &mut back)
            .unwrap();
        assert_eq!(back, script.as_bytes());
        assert_eq!(gzip_if_smaller("image/png", script.as_bytes()), None);
        assert_eq!(gzip_if_smaller("text/css; charset=utf-8", b"a{}"), None);
        // Random bytes do not shrink: no copy is kept.
        use sha2::Digest;
        let noise: Vec<u8> = (0..128u32)
            .flat_map(|i| sha2::Sha256::digest(i.to_le_bytes()).to_vec())
            .collect();
        assert_eq!(gzip_if_smaller("text/plain; charset=utf-8", &noise), None);
    }
}
