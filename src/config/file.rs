//! The settings file (`--config /etc/turnhouse/turnhouse.toml`): every setting of the command
//! line, by the flag's name with `_` for `-`. The file's values become the settings' defaults,
//! so the environment overrides the file and a flag overrides both.
//!
//! `turnhouse config print` shows each setting in effect and where it came from, with the
//! passwords in URLs masked; its output is itself a settings file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches};

/// The environment variable that names the file when `--config` does not.
pub const CONFIG_ENV: &str = "TURNHOUSE_CONFIG";

/// Why a settings file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("cannot read the settings file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the settings file {path} is not TOML: {message}")]
    Syntax { path: PathBuf, message: String },
    #[error("the settings file {path} has no setting `{key}`{hint}")]
    UnknownKey {
        path: PathBuf,
        key: String,
        hint: String,
    },
    #[error("the setting `{key}` in {path} must be {expected}")]
    Value {
        path: PathBuf,
        key: String,
        expected: &'static str,
    },
}

/// The settings a file gives, by the id of the argument each sets, as text the argument
/// parses.
#[derive(Debug, Default, Clone)]
pub struct FileSettings {
    pub path: Option<PathBuf>,
    values: BTreeMap<String, String>,
}

/// The file `--config` (or `--config=`) or `TURNHOUSE_CONFIG` names, if any: read before the
/// command line is parsed, since its values become the command's defaults.
pub fn named_file(args: &[String]) -> Option<PathBuf> {
    let mut args = args.iter().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--" {
            break;
        }
        if let Some(path) = arg.strip_prefix("--config=") {
            return Some(path.into());
        }
        if arg == "--config" {
            return args.next().map(PathBuf::from);
        }
    }
    std::env::var_os(CONFIG_ENV)
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
}

/// The key of a setting in the file: its flag's name, with `_` for `-`.
fn key_of(arg: &clap::Arg) -> Option<String> {
    Some(arg.get_long()?.replace('-', "_"))
}

/// The settings a file may hold: every flag of the command but `--config`, `--help`,
/// `--version` and those hidden from `--help` (the server's own, for its sandbox processes).
fn settable(command: &clap::Command) -> impl Iterator<Item = &clap::Arg> {
    command.get_arguments().filter(|arg| {
        !arg.is_hide_set()
            && !matches!(
                arg.get_action(),
                ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version
            )
            && arg.get_long().is_some_and(|long| long != "config")
    })
}

impl FileSettings {
    /// Reads `path` as the settings of `command`.
    pub fn read(path: &Path, command: &clap::Command) -> Result<Self, FileError> {
        let text = std::fs::read_to_string(path).map_err(|source| FileError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(path, &text, command)
    }

    fn parse(path: &Path, text: &str, command: &clap::Command) -> Result<Self, FileError> {
        let table: toml::Table = toml::from_str(text).map_err(|err| FileError::Syntax {
            path: path.to_owned(),
            message: err.message().to_owned(),
        })?;
        let known: BTreeMap<String, &clap::Arg> = settable(command)
            .filter_map(|arg| Some((key_of(arg)?, arg)))
            .collect();
        let mut values = BTreeMap::new();
        for (key, value) in table {
            let Some(arg) = known.get(&key) else {
                return Err(FileError::UnknownKey {
                    path: path.to_owned(),
                    hint: closest(&key, known.keys())
                        .map(|near| format!(" (did you mean `{near}`?)"))
                        .unwrap_or_default(),
                    key,
                });
            };
            let expected = match arg.get_action() {
                ArgAction::SetTrue | ArgAction::SetFalse => "true or false",
                _ => "a string, a number or a list of strings",
            };
            let wrong = || FileError::Value {
                path: path.to_owned(),
                key: key.clone(),
                expected,
            };
            let text = match (&value, expected) {
                (toml::Value::Boolean(flag), "true or false") => flag.to_string(),
                (_, "true or false") => return Err(wrong()),
                (toml::Value::String(text), _) => text.clone(),
                (toml::Value::Integer(number), _) => number.to_string(),
                (toml::Value::Float(number), _) => number.to_string(),
                (toml::Value::Array(items), _) => {
                    let items: Option<Vec<&str>> = items.iter().map(toml::Value::as_str).collect();
                    items.ok_or_else(wrong)?.join(",")
                }
                _ => return Err(wrong()),
            };
            values.insert(arg.get_id().to_string(), text);
        }
        Ok(Self {
            path: Some(path.to_owned()),
            values,
        })
    }

    /// `command` with the file's values as its settings' defaults.
    pub fn apply(&self, mut command: clap::Command) -> clap::Command {
        for (id, value) in &self.values {
            let value = value.clone();
            // A switch's default is what it is when absent, as for any other setting.
            command = command.mut_arg(id, move |arg| arg.default_value(value));
        }
        command
    }

    /// Where the setting `id` came from, as `config print` says it.
    fn source(&self, id: &str, matches: &ArgMatches, env: Option<&str>) -> String {
        match matches.value_source(id) {
            Some(ValueSource::CommandLine) => "flag".into(),
            Some(ValueSource::EnvVariable) => format!("environment ({})", env.unwrap_or("?")),
            _ if self.values.contains_key(id) => match &self.path {
                Some(path) => format!("file ({})", path.display()),
                None => "file".into(),
            },
            _ => "default".into(),
        }
    }

    /// Every setting of `command` in effect, as a settings file with where each came from.
    pub fn print(&self, command: &clap::Command, matches: &ArgMatches) -> String {
        let mut out = String::new();
        if let Some(path) = &self.path {
            out.push_str(&format!("# read from {}\n", path.display()));
        }
        for arg in settable(command) {
            let (Some(key), id) = (key_of(arg), arg.get_id().as_str()) else {
                continue;
            };
            let values: Vec<String> = matches
                .get_raw(id)
                .map(|raw| {
                    raw.map(|value| value.to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            let env = arg.get_env().map(|env| env.to_string_lossy().into_owned());
            let source = self.source(id, matches, env.as_deref());
            let shown = match values.as_slice() {
                [] => {
                    out.push_str(&format!("# {key} is not set  # {source}\n"));
                    continue;
                }
                [one] => toml_value(&masked(one), arg),
                many => toml_value(&masked(&many.join(",")), arg),
            };
            out.push_str(&format!("{key} = {shown}  # {source}\n"));
        }
        out
    }
}

/// `text` as TOML writes it: switches and numbers bare, anything else a string.
fn toml_value(text: &str, arg: &clap::Arg) -> String {
    let switch = matches!(arg.get_action(), ArgAction::SetTrue | ArgAction::SetFalse);
    if switch || text.parse::<i64>().is_ok() {
        return text.to_owned();
    }
    toml::Value::String(text.to_owned()).to_string()
}

/// A URL's password replaced by `***` (`postgres://user:***@host/db`); other text as it is.
pub fn masked(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_owned();
    };
    let (authority, tail) = match rest.find('/') {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((user_info, host)) if user_info.contains(':') => {
            let user = user_info
                .split_once(':')
                .map_or(user_info, |(user, _)| user);
            format!("{scheme}://{user}:***@{host}{tail}")
        }
        _ => text.to_owned(),
    }
}

/// The known key nearest `key`, if one is near enough to be what was meant.
fn closest<'k>(key: &str, known: impl Iterator<Item = &'k String>) -> Option<&'k String> {
    known
        .map(|name| (strsim::levenshtein(key, name), name))
        .filter(|(distance, name)| *distance <= (name.len() / 3).max(2))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(text: &str) -> Result<FileSettings, FileError> {
        FileSettings::parse(Path::new("t.toml"), text, &crate::config::Config::command())
    }

    #[test]
    fn an_unknown_key_is_named_with_the_closest_known_one() {
        let err = parse("trusted_proxy = \"127.0.0.1\"").unwrap_err();
        assert_eq!(
            err.to_string(),
            "the settings file t.toml has no setting `trusted_proxy` (did you mean `trusted_proxies`?)"
        );
        let err = parse("colour = \"blue\"").unwrap_err();
        assert_eq!(
            err.to_string(),
            "the settings file t.toml has no setting `colour`"
        );
        let err = parse("config = \"other.toml\"").unwrap_err();
        assert!(err.to_string().contains("no setting `config`"), "{err}");
    }

    #[test]
    fn values_of_the_wrong_kind_are_refused_and_lists_are_joined() {
        let err = parse("allow_private_destinations = \"yes\"").unwrap_err();
        assert_eq!(
            err.to_string(),
            "the setting `allow_private_destinations` in t.toml must be true or false"
        );
        assert!(parse("bind = { host = \"x\" }").is_err());
        assert!(parse("bind = ").is_err());
        let file =
            parse("trusted_proxies = [\"10.0.0.0/8\", \"::1\"]\nhook_time_limit_ms = 20").unwrap();
        assert_eq!(file.values["trusted_proxies"], "10.0.0.0/8,::1");
        assert_eq!(file.values["time_ms"], "20");
    }

    #[test]
    fn passwords_in_urls_are_masked() {
        assert_eq!(
            masked("smtps://mailer:s3cret@smtp.example:465?x=1"),
            "smtps://mailer:***@smtp.example:465?x=1"
        );
        assert_eq!(
            masked("postgres://a:b@db/turnhouse"),
            "postgres://a:***@db/turnhouse"
        );
        assert_eq!(masked("postgres://a@db/x"), "postgres://a@db/x");
        assert_eq!(masked("127.0.0.1:8080"), "127.0.0.1:8080");
    }

    #[test]
    fn the_file_is_named_by_its_flag_or_the_environment() {
        let args = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        assert_eq!(
            named_file(&args(&["turnhouse", "--config", "/etc/t.toml"])),
            Some("/etc/t.toml".into())
        );
        assert_eq!(
            named_file(&args(&["turnhouse", "--bind", "x", "--config=a.toml"])),
            Some("a.toml".into())
        );
    }
}
