//! Layered settings: `~/.gza/config.yaml` (user), `gza.yaml` (project, committed),
//! `gza.local.yaml` (project, personal, gitignored), then `GZA_*` environment variables for
//! scalar keys, each layer overriding the one before; and where each effective value came from.
//!
//! Every file layer is checked on its own first (unknown keys and wrong types are errors naming
//! that file, line and key), then the layers are merged key by key (a list replaces a list),
//! and the checks across keys run on the result.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_norway::{Mapping, Value};

use crate::config::Config;
use crate::error::{Error, Result};

/// The project's committed settings file.
pub const PROJECT_FILE: &str = "gza.yaml";
/// The project's personal settings file (gitignored by `gza init`).
pub const LOCAL_FILE: &str = "gza.local.yaml";
/// Environment variables for scalar keys start with this.
pub const ENV_PREFIX: &str = "GZA_";

/// Where an effective value came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    Default,
    /// A settings file, with the line of the key when it could be found.
    File {
        path: PathBuf,
        line: Option<usize>,
    },
    /// An environment variable.
    Env(String),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File { path, line } => {
                write!(f, "{}", path.display())?;
                match line {
                    Some(line) => write!(f, ":{line}"),
                    None => Ok(()),
                }
            }
            Source::Env(var) => write!(f, "${var}"),
        }
    }
}

/// The effective settings and, for every key (dotted path to a scalar or a list), its value
/// and where it came from.
#[derive(Debug)]
pub struct Effective {
    pub config: Config,
    pub values: BTreeMap<String, (Value, Source)>,
}

/// The user's settings file, when HOME is known.
pub fn user_file() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".gza").join("config.yaml"))
}

/// One file layer: its text (for line numbers) and value.
struct Layer {
    path: PathBuf,
    text: String,
    value: Value,
}

/// Read one layer; `None` when the file does not exist (only the project file must).
fn read_layer(path: &Path, required: bool) -> Result<Option<Layer>> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => return Ok(None),
        Err(e) => return Err(Error::io(path, "read", e)),
        Ok(meta) if !meta.is_file() => {
            return Err(Error::Config {
                path: path.to_path_buf(),
                location: None,
                message: "is not a regular file (a directory?); make it a YAML file or remove it"
                    .into(),
            });
        }
        Ok(_) => {}
    }
    let text = Config::read_text(path)?;
    // Unknown keys and wrong types, with the line, in this file alone.
    Config::parse_unchecked(path, &text)?;
    let value = if text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        Value::Mapping(Mapping::new())
    } else {
        serde_norway::from_str(&text).map_err(|e| Error::Config {
            path: path.to_path_buf(),
            location: None,
            message: e.to_string(),
        })?
    };
    Ok(Some(Layer {
        path: path.to_path_buf(),
        text,
        value,
    }))
}

/// Merge `over` into `base`: mappings key by key, anything else replaced.
fn merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Mapping(base), Value::Mapping(over)) => {
            for (key, value) in over {
                match base.get_mut(key) {
                    Some(existing) => merge(existing, value),
                    None => {
                        base.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (base, over) => *base = over.clone(),
    }
}

/// Every key of `value` down to scalars and lists, as dotted paths.
fn leaves(value: &Value, prefix: &str, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Mapping(map) if !map.is_empty() || prefix.is_empty() => {
            for (key, v) in map {
                let Some(key) = key.as_str() else { continue };
                let path = if prefix.is_empty() {
                    key.to_string()
                } else {
                    format!("{prefix}.{key}")
                };
                leaves(v, &path, out);
            }
        }
        _ => out.push((prefix.to_string(), value.clone())),
    }
}

/// Set the value at a dotted path, creating mappings on the way.
fn set(value: &mut Value, path: &str, new: Value) {
    let mut at = value;
    let keys: Vec<&str> = path.split('.').collect();
    for key in &keys[..keys.len() - 1] {
        if !matches!(at.get(*key), Some(Value::Mapping(_)))
            && let Value::Mapping(map) = at
        {
            map.insert(Value::from(*key), Value::Mapping(Mapping::new()));
        }
        at = at.get_mut(*key).expect("just inserted");
    }
    if let Value::Mapping(map) = at {
        map.insert(Value::from(keys[keys.len() - 1]), new);
    }
}

/// The line of each `key:` in block-style YAML, by dotted path (first occurrence).
fn key_lines(text: &str) -> BTreeMap<String, usize> {
    let mut lines = BTreeMap::new();
    let mut stack: Vec<(usize, String)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('-') {
            continue;
        }
        let indent = line.len() - trimmed.len();
        let Some((key, _)) = trimmed.split_once(':') else {
            continue;
        };
        let key = key.trim().trim_matches(|c| c == '"' || c == '\'');
        if key.is_empty() || key.contains(' ') {
            continue;
        }
        while stack.last().is_some_and(|(i, _)| *i >= indent) {
            stack.pop();
        }
        stack.push((indent, key.to_string()));
        let path = stack
            .iter()
            .map(|(_, k)| k.as_str())
            .collect::<Vec<_>>()
            .join(".");
        lines.entry(path).or_insert(n + 1);
    }
    lines
}

/// The environment variable for a dotted key: `learnings.max_tokens` → `GZA_LEARNINGS_MAX_TOKENS`.
pub fn env_var(key: &str) -> String {
    format!("{ENV_PREFIX}{}", key.replace('.', "_").to_ascii_uppercase())
}

/// The effective settings of the project at `root`.
pub fn load(root: &Path) -> Result<Effective> {
    let defaults =
        serde_norway::to_value(Config::default()).expect("the default settings serialise");
    let mut layers = Vec::new();
    if let Some(user) = user_file() {
        layers.extend(read_layer(&user, false)?);
    }
    layers.extend(read_layer(&root.join(PROJECT_FILE), true)?);
    layers.extend(read_layer(&root.join(LOCAL_FILE), false)?);

    let mut merged = defaults.clone();
    let mut sources: BTreeMap<String, Source> = BTreeMap::new();
    for layer in &layers {
        merge(&mut merged, &layer.value);
        let lines = key_lines(&layer.text);
        let mut set_here = Vec::new();
        leaves(&layer.value, "", &mut set_here);
        for (key, _) in set_here {
            let line = lines.get(&key).copied();
            sources.insert(
                key,
                Source::File {
                    path: layer.path.clone(),
                    line,
                },
            );
        }
    }

    // Scalar keys from the environment, each checked on its own so an error names its variable.
    let mut scalar_keys = Vec::new();
    leaves(&defaults, "", &mut scalar_keys);
    for (key, default) in scalar_keys {
        if matches!(default, Value::Sequence(_) | Value::Mapping(_)) {
            continue;
        }
        let var = env_var(&key);
        let Some(raw) = std::env::var_os(&var) else {
            continue;
        };
        let raw = raw
            .into_string()
            .map_err(|_| Error::Usage(format!("{var} is not UTF-8 text; fix or unset it")))?;
        let value: Value = if raw.is_empty() {
            Value::Null
        } else {
            serde_norway::from_str(&raw).unwrap_or(Value::String(raw.clone()))
        };
        let mut alone = Value::Mapping(Mapping::new());
        set(&mut alone, &key, value.clone());
        // Through text, so the error names the key's path.
        let text = serde_norway::to_string(&alone).unwrap_or_default();
        if let Err(e) = serde_norway::from_str::<Config>(&text) {
            let message = e.to_string();
            let message = message.split(" at line ").next().unwrap_or(&message);
            return Err(Error::Usage(format!(
                "{var}={raw}: {message} (the environment sets {key}); fix or unset it"
            )));
        }
        set(&mut merged, &key, value);
        sources.insert(key, Source::Env(var));
    }

    let project_file = root.join(PROJECT_FILE);
    let config: Config = serde_norway::from_value(merged.clone()).map_err(|e| Error::Config {
        path: project_file.clone(),
        location: None,
        message: format!("the layers together do not make valid settings: {e}"),
    })?;
    config.validate(&project_file)?;

    let mut all = Vec::new();
    leaves(&merged, "", &mut all);
    let values = all
        .into_iter()
        .map(|(key, value)| {
            let source = sources.get(&key).cloned().unwrap_or(Source::Default);
            (key, (value, source))
        })
        .collect();
    Ok(Effective { config, values })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_lines_follow_indentation() {
        let lines = key_lines("a: 1\n# c\nb:\n  x: 2\n  y:\n    - 1\n  z: 3\nc: 4\n");
        assert_eq!(lines["a"], 1);
        assert_eq!(lines["b.x"], 4);
        assert_eq!(lines["b.y"], 5);
        assert_eq!(lines["b.z"], 7);
        assert_eq!(lines["c"], 8);
    }

    #[test]
    fn merging_replaces_lists_and_merges_maps() {
        let mut base: Value = serde_norway::from_str("a: {x: 1, y: [1, 2]}\nb: 1\n").unwrap();
        let over: Value = serde_norway::from_str("a: {y: [3]}\nc: 2\n").unwrap();
        merge(&mut base, &over);
        let want: Value = serde_norway::from_str("a: {x: 1, y: [3]}\nb: 1\nc: 2\n").unwrap();
        assert_eq!(base, want);
    }

    #[test]
    fn env_names() {
        assert_eq!(env_var("learnings.max_tokens"), "GZA_LEARNINGS_MAX_TOKENS");
        assert_eq!(env_var("max_concurrent"), "GZA_MAX_CONCURRENT");
    }
}
