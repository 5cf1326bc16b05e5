//! The layers of the crate, and the test that keeps them. The product's slices (`chat`, which
//! stands on the store alone, `moderation` over `standing`, `engine` (the rooms), `accounts` and `catalog`) each import only slices
//! below them, and never the HTTP layer (`api`) nor what composes them (`services`); below the
//! slices, `game`, `sandbox`, `store` and `live` import none of them. `config`, `startup`,
//! `seed` and `dev` (the `turnhouse dev` command) sit on top and may reach anything;
//! `domain`, `views`, `frontend`, `metrics`, `cache`, `draining` and `problem` are shared, and `outbound`
//! (requests to addresses users give) imports none of the rest.
//! See `docs/internals.md`.

/// What composes the slices and serves them: no slice or anything below imports these.
const ABOVE: [&str; 6] = ["api", "services", "config", "startup", "seed", "dev"];
/// The slices, highest first: each may import only those after it.
const SLICES: [&str; 9] = [
    "chat",
    "moderation",
    "standing",
    "webhooks",
    "notifications",
    "engine",
    "accounts",
    "catalog",
    "outbox",
];
/// Which slices a slice may not import: those above it, and its peers that it has no call to.
const SLICES_APART: &[(&str, &[&str])] = &[
    (
        "chat",
        &[
            "moderation",
            "standing",
            "webhooks",
            "notifications",
            "engine",
            "accounts",
            "catalog",
            "outbox",
        ],
    ),
    ("moderation", &["webhooks", "notifications", "outbox"]),
    (
        "standing",
        &[
            "moderation",
            "webhooks",
            "notifications",
            "engine",
            "accounts",
            "outbox",
        ],
    ),
    (
        "webhooks",
        &[
            "moderation",
            "standing",
            "notifications",
            "engine",
            "accounts",
        ],
    ),
    (
        "notifications",
        &["moderation", "standing", "webhooks", "engine"],
    ),
    (
        "engine",
        &[
            "moderation",
            "standing",
            "webhooks",
            "notifications",
            "accounts",
            "outbox",
        ],
    ),
    (
        "accounts",
        &[
            "moderation",
            "standing",
            "webhooks",
            "notifications",
            "engine",
            "catalog",
            "outbox",
        ],
    ),
    (
        "catalog",
        &[
            "moderation",
            "standing",
            "webhooks",
            "notifications",
            "engine",
            "accounts",
            "outbox",
        ],
    ),
    (
        "outbox",
        &[
            "moderation",
            "standing",
            "webhooks",
            "notifications",
            "engine",
            "accounts",
            "catalog",
        ],
    ),
];
/// Below the slices: each imports no slice, nor what is listed beside it.
const BELOW: &[(&str, &[&str])] = &[
    ("game", &["sandbox", "store", "live", "cache", "problem"]),
    ("games", &["sandbox", "store", "live", "cache", "problem"]),
    ("sandbox", &["store", "live", "cache", "problem"]),
    ("store", &["sandbox", "live", "cache", "problem"]),
    ("live", &["sandbox", "cache", "problem"]),
    ("cache", &["sandbox", "live", "problem"]),
    (
        "outbound",
        &["sandbox", "store", "live", "cache", "problem"],
    ),
];

/// For each layer (a folder or file of `src/`), the modules that it must not import.
fn forbidden() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut rules = vec![("api", vec!["config", "startup", "seed", "dev"])];
    for (slice, apart) in SLICES_APART {
        rules.push((*slice, [&ABOVE[..], apart].concat()));
    }
    for (layer, apart) in BELOW {
        rules.push((*layer, [&ABOVE[..], &SLICES[..], apart].concat()));
    }
    rules
}

/// Every `crate::<module>` a file names in its code (comments aside), with its line number.
fn references(source: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (number, line) in source.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let module: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !module.is_empty() {
                found.push((number + 1, module));
            }
        }
        // `use crate::{a, b}` names several at once.
        if let Some(at) = code.find("crate::{") {
            let list = &code[at + "crate::{".len()..];
            for item in list.split([',', '}']) {
                let module = item.trim().split("::").next().unwrap_or_default();
                if !module.is_empty()
                    && module
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    found.push((number + 1, module.to_owned()));
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("a source folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    #[test]
    fn layers_only_import_what_is_below_them() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut wrong = Vec::new();
        for (layer, forbidden) in forbidden() {
            let mut files = Vec::new();
            let file = src.join(format!("{layer}.rs"));
            match file.exists() {
                true => files.push(file),
                false => rust_files(&src.join(layer), &mut files),
            }
            assert!(!files.is_empty(), "src/{layer} has Rust files");
            // A slice's tests may compose it with others, as the services do.
            let is_tests = |file: &Path| {
                file.file_stem()
                    .is_some_and(|stem| stem.to_string_lossy().ends_with("tests"))
            };
            for file in files.iter().filter(|file| !is_tests(file)) {
                let source = std::fs::read_to_string(file).expect("a readable source");
                for (line, module) in references(&source) {
                    if forbidden.contains(&module.as_str()) {
                        wrong.push(format!("{}:{line} imports crate::{module}", file.display()));
                    }
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "imports that point up:\n{}",
            wrong.join("\n")
        );
    }

    /// Every source file `docs/internals.md`'s life of a move names (as `path.rs` or
    /// `path.rs::item`, under `src/`) exists and links back to the page, and every item it
    /// names in one (`path.rs::Type::function`) is defined there.
    #[test]
    fn every_stop_in_the_life_of_a_move_links_back() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let page = std::fs::read_to_string(root.join("docs/internals.md")).expect("the page");
        let start = page.find("## The life of a move").expect("the section");
        let section = &page[start..];
        let section = &section[..section[3..]
            .find("\n## ")
            .map_or(section.len(), |end| end + 3)];
        let mut named = 0;
        for quoted in section.split('`').skip(1).step_by(2) {
            let mut parts = quoted.split("::");
            let path = parts.next().unwrap_or_default();
            if !path.ends_with(".rs") || path.contains(' ') {
                continue;
            }
            let items: Vec<&str> = parts.collect();
            let path = path.strip_prefix("src/").unwrap_or(path);
            let source =
                std::fs::read_to_string(root.join("src").join(path)).unwrap_or_else(|_| {
                    panic!("docs/internals.md names src/{path}, which is not there")
                });
            assert!(
                source.contains("docs/internals.md"),
                "src/{path} does not link back to docs/internals.md"
            );
            for item in items {
                assert!(
                    defines(&source, item),
                    "docs/internals.md names {quoted}, and src/{path} defines no `{item}`"
                );
            }
            named += 1;
        }
        assert!(
            named > 20,
            "the section names the files on the way ({named})"
        );
    }

    /// Whether `source` defines `item`: a function, a type, a trait, a constant or a module of
    /// that name, or an `impl` of it.
    fn defines(source: &str, item: &str) -> bool {
        let kinds = [
            "fn ", "struct ", "enum ", "trait ", "type ", "const ", "static ", "mod ", "impl ",
        ];
        source.lines().any(|line| {
            let code = line.trim_start();
            let code = code.strip_prefix("pub(super) ").unwrap_or(code);
            let code = code.strip_prefix("pub(crate) ").unwrap_or(code);
            let code = code.strip_prefix("pub ").unwrap_or(code);
            let code = code.strip_prefix("async ").unwrap_or(code);
            kinds.iter().any(|kind| {
                code.strip_prefix(kind).is_some_and(|rest| {
                    let rest = rest.trim_start_matches(['<', '\'']);
                    let name: String = (rest.chars())
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    name == item
                })
            })
        })
    }

    #[test]
    fn items_are_found_where_they_are_defined() {
        let source = "pub struct Transition {}\nimpl Engine {\n    pub(super) async fn write_commit() {}\n}\n";
        for item in ["Transition", "Engine", "write_commit"] {
            assert!(defines(source, item), "{item}");
        }
        assert!(!defines(source, "commit"));
    }

    /// The store's modules that `source` (a file of `src/store/`, or of one of its folders)
    /// imports with `use super::…`, outside its tests: their file names less `.rs`, as
    /// `sqlite/raw` for a folder's.
    fn store_imports(source: &str, folder: Option<&str>) -> Vec<String> {
        let code = source.split("#[cfg(test)]").next().unwrap_or_default();
        let mut found = Vec::new();
        for line in code.lines().map(str::trim_start) {
            let Some(rest) = line.strip_prefix("use super::") else {
                continue;
            };
            let (rest, up) = match rest.strip_prefix("super::") {
                Some(rest) => (rest, true),
                None => (rest, false),
            };
            let names: Vec<&str> = match rest.strip_prefix('{') {
                Some(list) => list.split([',', '}']).collect(),
                None => vec![rest],
            };
            for name in names {
                let module: String = (name.trim().chars())
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if module.is_empty() {
                    continue;
                }
                found.push(match (folder, up) {
                    (Some(folder), false) => format!("{folder}/{module}"),
                    _ => module,
                });
            }
        }
        found
    }

    /// No two files of the store import each other, through any number of others: what one
    /// holds can be read without the rest.
    #[test]
    fn the_store_has_no_import_circle() {
        let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store");
        let mut files = Vec::new();
        rust_files(&store, &mut files);
        let mut graph: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for file in files {
            let relative = file.strip_prefix(&store).unwrap().with_extension("");
            let name = relative.to_string_lossy().replace("/mod", "");
            if name == "mod" || name.ends_with("tests") {
                continue;
            }
            let folder = name.split_once('/').map(|(folder, _)| folder.to_owned());
            let source = std::fs::read_to_string(&file).unwrap();
            let imports = store_imports(&source, folder.as_deref());
            graph.insert(name, imports);
        }
        let known: Vec<String> = graph.keys().cloned().collect();
        for (name, imports) in graph.iter_mut() {
            imports.retain(|i| known.contains(i) && i != name);
        }
        // A depth-first walk that meets a module on its own path has found a circle.
        fn walk(
            graph: &std::collections::BTreeMap<String, Vec<String>>,
            at: &str,
            path: &mut Vec<String>,
            done: &mut std::collections::BTreeSet<String>,
        ) -> Option<Vec<String>> {
            if let Some(start) = path.iter().position(|p| p == at) {
                let mut circle = path[start..].to_vec();
                circle.push(at.to_owned());
                return Some(circle);
            }
            if !done.insert(at.to_owned()) {
                return None;
            }
            path.push(at.to_owned());
            for next in graph.get(at).into_iter().flatten() {
                if let Some(circle) = walk(graph, next, path, done) {
                    return Some(circle);
                }
            }
            path.pop();
            None
        }
        let mut done = Default::default();
        for name in graph.keys() {
            if let Some(circle) = walk(&graph, name, &mut Vec::new(), &mut done) {
                panic!(
                    "the store's files import each other: {}",
                    circle.join(" -> ")
                );
            }
        }
        assert!(
            graph.len() > 15,
            "the store's files were read ({})",
            graph.len()
        );
    }

    #[test]
    fn references_are_found_in_every_form_and_not_in_comments() {
        let source = "use crate::api::ApiError;\n\
                      use crate::{engine::Engine, store};\n\
                      /// see [`crate::config::Config`]\n\
                      let x = crate::live::Hub::new(); // crate::startup\n";
        let modules: Vec<_> = references(source).into_iter().map(|(_, m)| m).collect();
        assert_eq!(modules, ["api", "engine", "store", "live"]);
    }
}
