//! The layers of the crate, and the test that keeps them: `api → engine → {game, sandbox,
//! store, live}`, each importing only what is below it. `config`, `startup` and `dev` (the
//! `turnhouse dev` command) sit on top and may reach anything; `model`, `domain`, `views`, `frontend` and `metrics` are shared leaves.
//! See `docs/internals.md`.

/// For each layer (a folder of `src/`), the modules above it that it must not import.
const FORBIDDEN: &[(&str, &[&str])] = &[
    ("api", &["config", "startup", "dev"]),
    ("engine", &["api", "config", "startup", "dev"]),
    (
        "game",
        &[
            "api", "engine", "config", "startup", "sandbox", "store", "live", "dev",
        ],
    ),
    (
        "games",
        &[
            "api", "engine", "config", "startup", "sandbox", "store", "live", "dev",
        ],
    ),
    (
        "sandbox",
        &["api", "engine", "config", "startup", "store", "live", "dev"],
    ),
    (
        "store",
        &[
            "api", "engine", "config", "startup", "sandbox", "live", "dev",
        ],
    ),
    (
        "live",
        &["api", "engine", "config", "startup", "sandbox", "dev"],
    ),
];

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
        for (layer, forbidden) in FORBIDDEN {
            let mut files = Vec::new();
            rust_files(&src.join(layer), &mut files);
            assert!(!files.is_empty(), "src/{layer} has Rust files");
            for file in files {
                let source = std::fs::read_to_string(&file).expect("a readable source");
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
