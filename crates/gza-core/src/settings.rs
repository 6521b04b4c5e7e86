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

use crate::config::{Config, ProviderKind, SandboxKind};
use crate::error::{Error, Result};
use crate::trust::{COMMAND_KEYS, DATA_KEYS, PATH_KEYS, PUSH_KEY, REDACTION_KEY, Sensitive};

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
    /// Every setting of the project's `gza.yaml` that needs the person's trust, with its value
    /// and why, trusted or not (what `gza trust` shows and records).
    pub sensitive: BTreeMap<String, (Value, Sensitive)>,
    /// Settings of `gza.yaml` left out because they are not trusted (and no layer of the
    /// person's own sets them instead): the defaults or the person's own values apply.
    pub ignored: Vec<String>,
    /// Path settings whose value comes from an untrusted `gza.yaml`: confined to the project
    /// where they are used (`Project::setting_path`).
    pub confined: std::collections::BTreeSet<String>,
    /// One line per `GZA_*` variable set in the environment that gza does not read.
    pub unknown_env: Vec<String>,
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
    read_layer_kept_in(path, required, cache::dir().as_deref())
}

/// [`read_layer`], its value kept in `cache` (see [`cache`]) when there is one.
fn read_layer_kept_in(path: &Path, required: bool, cache: Option<&Path>) -> Result<Option<Layer>> {
    let before = match std::fs::metadata(path) {
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
        Ok(meta) => meta,
    };
    let text = Config::read_text(path)?;
    // The file as it is once read: an edit during the read has moved its change time.
    let after = std::fs::metadata(path).ok();
    let value = match cache.and_then(|dir| cache::get(dir, path, &text, after.as_ref())) {
        Some((value, stamped)) => {
            // Kept without the file's stamp (too fresh then, or by a gza before stamps): kept
            // again with it once it has settled, so later loads skip the hash (not before: a
            // hook a millisecond after an edit would rewrite the entry for nothing).
            if !stamped
                && cache::settled(&before)
                && let Some(dir) = cache
            {
                cache::keep(dir, path, &text, &value, &before);
            }
            value
        }
        None => {
            let value = parse_layer(path, &text)?;
            if let Some(dir) = cache {
                cache::keep(dir, path, &text, &value, &before);
            }
            value
        }
    };
    Ok(Some(Layer {
        path: path.to_path_buf(),
        text,
        value,
    }))
}

/// One layer's text as a value, checked on its own: its syntax, its keys and types (unknown keys
/// and wrong types are errors naming the file and the line), and a database setting. The text
/// is parsed once, to a value, and the settings deserialised from that value, as the merged
/// layers are at the end; only a layer that fails is parsed again, from its text, for the line
/// of its mistake (what the first check, run on the text, always reported).
fn parse_layer(path: &Path, text: &str) -> Result<Value> {
    use serde::Deserialize;
    let empty = text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
    let parsed = if empty {
        Ok(Value::Mapping(Mapping::new()))
    } else {
        crate::yaml::from_str::<Value>(text).map_err(|e| (e.location, e.message))
    };
    let checked = parsed.and_then(|value| match Config::deserialize(&value) {
        Ok(_) => Ok(value),
        Err(e) => Err((None, e.to_string())),
    });
    let value = match checked {
        Ok(value) => value,
        Err((location, message)) => {
            // The error as the text gives it, with its line; the value's if the text passes.
            Config::parse_unchecked(path, text)?;
            return Err(Error::Config {
                path: path.to_path_buf(),
                location,
                message: crate::config::clean_yaml_message(&message),
            });
        }
    };
    // A password for the database is never read from a settings file (they are committed, or
    // read by others), trusted or not: the environment, ~/.pgpass and service files are where
    // it goes.
    if let Some(Value::String(db)) = value.get("database")
        && !crate::config::is_sqlite(db)
        && let Err(message) = crate::database::DatabaseSpec::parse(db, Some(path))
    {
        return Err(Error::Config {
            path: path.to_path_buf(),
            location: key_lines(text).get("database").map(|l| (*l, 1)),
            message: format!("database: {message}"),
        });
    }
    Ok(value)
}

/// Each settings file's checked value, kept in the person's cache folder
/// (`~/.cache/gza/settings-v1/`, one file per settings file) against the SHA-256 of the file's
/// text and gza's version, so a hook pays a hash and a small JSON read rather than parsing YAML
/// (a comment-heavy gza.yaml took 3.6 M of a PreToolUse hook's 16 M instructions).
///
/// Why it is safe: the key is the text itself (its hash), so an edit, however small and
/// whatever the file's times, is parsed again. The hash is skipped (0.86 M instructions of a
/// hook for a 15.8 KB gza.yaml, this CPU having no SHA instructions) only when the file's
/// identity is the one kept: device, inode, size, modification and change times, the change
/// time older by a second than when the value was kept. Any write moves the change time,
/// which no one can set back (unlike the modification time), and the second's margin keeps
/// an edit in the same clock tick as the keeping from passing for the kept text. Nothing is kept in the project, so a repository
/// cannot commit a cache (`.gza/` can be committed with `git add -f`) that would give gza
/// values its `gza.yaml` does not hold; whoever can write the person's home can write
/// `~/.gza/config.yaml` itself, and an agent under bwrap does not see the home's cache. Only a
/// layer that passed its checks is kept, and only when JSON carries its value back exactly (no
/// YAML tags, keys that are text); the merged layers are still deserialised and validated on
/// every load, and trust is judged on every load from the values, as before.
mod cache {
    use std::path::{Path, PathBuf};

    use serde::{Deserialize, Serialize};
    use serde_norway::Value;
    use sha2::{Digest, Sha256};

    /// A kept file larger than this is not read.
    const MAX_BYTES: u64 = 1024 * 1024;

    #[derive(Serialize, Deserialize)]
    struct Entry {
        gza: String,
        path: String,
        sha256: String,
        /// The file's identity when its text was read ([`stamp`]), when its change time was
        /// a second old by then.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stamp: Option<String>,
        value: Value,
    }

    /// Device, inode, size, modification and change times (ns).
    fn stamp(meta: &std::fs::Metadata) -> String {
        use std::os::unix::fs::MetadataExt;
        format!(
            "{}:{}:{}:{}.{}:{}.{}",
            meta.dev(),
            meta.ino(),
            meta.len(),
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ctime(),
            meta.ctime_nsec()
        )
    }

    /// Whether the file last changed over a second ago (an edit within the same tick of its
    /// clock would keep its change time).
    pub(super) fn settled(meta: &std::fs::Metadata) -> bool {
        use std::os::unix::fs::MetadataExt;
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .is_ok_and(|now| meta.ctime() < now.as_secs() as i64 - 1)
    }

    /// The stamp to keep for a file whose text is read now: none until it has [`settled`].
    fn settled_stamp(meta: &std::fs::Metadata) -> Option<String> {
        settled(meta).then(|| stamp(meta))
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Where settings files' values are kept: in gza's cache folder, as the int8 model's
    /// stamps are (`$XDG_CACHE_HOME/gza`, else `~/.cache/gza`).
    pub(super) fn dir() -> Option<PathBuf> {
        crate::fsutil::cache_dir().map(|c| c.join("settings-v1"))
    }

    /// Where the value of the settings file at `path` is kept in `dir`.
    pub(super) fn file(dir: &Path, path: &Path) -> PathBuf {
        let name = hex(&Sha256::digest(path.as_os_str().as_encoded_bytes())[..16]);
        dir.join(format!("{name}.json"))
    }

    fn entry(path: &Path, text: &str, value: Value) -> Entry {
        Entry {
            gza: env!("CARGO_PKG_VERSION").to_string(),
            path: path.to_string_lossy().into_owned(),
            sha256: hex(&Sha256::digest(text.as_bytes())),
            stamp: None,
            value,
        }
    }

    /// The value kept for exactly this text of the file at `path`, by this version of gza:
    /// the file's identity once read (`meta`) is its kept stamp, or else the text's hash is.
    /// With it, whether it was known by its stamp.
    pub(super) fn get(
        dir: &Path,
        path: &Path,
        text: &str,
        meta: Option<&std::fs::Metadata>,
    ) -> Option<(Value, bool)> {
        let bytes = crate::fsutil::read_regular_file(&file(dir, path), MAX_BYTES).ok()?;
        let kept: Entry = serde_json::from_slice(&bytes).ok()?;
        if kept.gza != env!("CARGO_PKG_VERSION") || kept.path != path.to_string_lossy() {
            return None;
        }
        let same_file = kept
            .stamp
            .as_deref()
            .is_some_and(|s| meta.is_some_and(|m| stamp(m) == s));
        (same_file || kept.sha256 == hex(&Sha256::digest(text.as_bytes())))
            .then_some((kept.value, same_file))
    }

    /// Keep `value`, the checked value of `text`, when JSON gives it back unchanged. Written
    /// under a name of its own and renamed into place; not synced (a damaged file fails to
    /// parse and the text is parsed again).
    pub(super) fn keep(
        dir: &Path,
        path: &Path,
        text: &str,
        value: &Value,
        before: &std::fs::Metadata,
    ) {
        let file = file(dir, path);
        let mut entry = entry(path, text, value.clone());
        // The identity from before the read: a file changed since has another.
        entry.stamp = settled_stamp(before);
        let Ok(bytes) = serde_json::to_vec(&entry) else {
            return;
        };
        match serde_json::from_slice::<Entry>(&bytes) {
            Ok(back) if back.value == *value => {}
            _ => return,
        }
        if std::fs::create_dir_all(dir).is_ok() {
            let _ = crate::fsutil::write_replacing(&file, &bytes, false);
        }
    }
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

/// `GZA_*` variables gza reads besides the settings' own (`GZA_<KEY>`).
pub const OTHER_ENV: &[&str] = &[
    "GZA_HOOKS",
    "GZA_MODEL_DIR",
    "GZA_MODEL_SOURCE",
    "GZA_EMBED_EXACT",
    "GZA_DOCKER",
    // Team mode: the database, overriding the `database` setting (a password may be in it).
    "GZA_DATABASE_URL",
    // Team mode: how long a lost or restarting PostgreSQL is waited for.
    "GZA_RECONNECT_SECONDS",
    // Team mode: how long a statement on an open connection waits for its answer.
    "GZA_STATEMENT_SECONDS",
    // Set by gza for the agents it runs (and so seen by a gza an agent runs).
    "GZA_TASK_ID",
    "GZA_PROJECT_ROOT",
    "GZA_RUN",
];

/// A one-line note for each `GZA_*` variable in the environment that gza does not read (a
/// misspelling is otherwise silently ignored), naming the closest one it does read.
pub fn unknown_env_notices(
    vars: impl Iterator<Item = String>,
    setting_vars: &[String],
) -> Vec<String> {
    let known: Vec<&str> = setting_vars
        .iter()
        .map(String::as_str)
        .chain(OTHER_ENV.iter().copied())
        .collect();
    let mut unknown: Vec<String> = vars
        .filter(|v| v.starts_with(ENV_PREFIX) && v != "GZA_" && !v.starts_with("GZA_TEST_"))
        .filter(|v| !known.contains(&v.as_str()))
        .collect();
    unknown.sort();
    unknown
        .into_iter()
        .map(|var| {
            let closest = known
                .iter()
                .map(|k| (strsim::damerau_levenshtein(&var, k), *k))
                .min()
                .filter(|(d, _)| *d <= 3);
            match closest {
                Some((_, k)) => {
                    format!("{var} is not a variable gza reads; did you mean {k}?")
                }
                None => format!(
                    "{var} is not a variable gza reads (`gza config` lists the settings; each is GZA_ and its key, as GZA_LEARNINGS_MAX_TOKENS)"
                ),
            }
        })
        .collect()
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
    // What the person's own settings say before the repository's file: what a setting of the
    // repository's file is judged against.
    let mut base = defaults.clone();
    for layer in &layers {
        merge(&mut base, &layer.value);
    }
    let mut project = read_layer(&root.join(PROJECT_FILE), true)?.expect("required");
    let sensitive = sensitive_settings(root, &base, &project.value);
    let untrusted: Vec<(String, Sensitive)> = if sensitive.is_empty() {
        Vec::new()
    } else {
        let trust = crate::trust::trusted(root)?;
        sensitive
            .iter()
            .filter(|(key, (value, _))| !crate::trust::covers(trust.as_ref(), key, value))
            .map(|(key, (_, why))| (key.clone(), why.clone()))
            .collect()
    };
    // The repository's choice of the docker sandbox means its image: while the image waits
    // for trust, so does the choice (the person's sandbox stays), and `gza trust` can still
    // load the settings to show them.
    let mut untrusted = untrusted;
    if untrusted.iter().any(|(key, _)| key == "docker_image") {
        let mut keys = Vec::new();
        leaves(&project.value, "", &mut keys);
        for (key, value) in keys {
            let is_sandbox =
                key == "sandbox" || (key.starts_with("providers.") && key.ends_with(".sandbox"));
            if is_sandbox
                && value.as_str() == Some(SandboxKind::Docker.as_str())
                && !untrusted.iter().any(|(k, _)| *k == key)
            {
                untrusted.push((key, Sensitive::WeakerSandbox));
            }
        }
    }
    // An untrusted command is left out; an untrusted path stays, confined where it is used.
    for (key, why) in &untrusted {
        if *why != Sensitive::OutsidePath {
            remove(&mut project.value, key);
        }
    }
    layers.push(project);
    // The personal layer is the person's only while the repository does not track it: one
    // that came with a clone (or a merged branch) is the repository's, and is not read.
    let local = read_layer(&root.join(LOCAL_FILE), false)?;
    // An empty file sets nothing, so whose it is does not matter (and asking git costs a
    // process on every command, hooks included).
    let local_committed = local
        .as_ref()
        .is_some_and(|l| !l.text.trim().is_empty() && is_tracked(root, LOCAL_FILE));
    if !local_committed {
        layers.extend(local);
    }

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
    let setting_vars: Vec<String> = scalar_keys
        .iter()
        .filter(|(_, default)| !matches!(default, Value::Sequence(_) | Value::Mapping(_)))
        .map(|(key, _)| env_var(key))
        .collect();
    let unknown_env = unknown_env_notices(
        std::env::vars_os()
            .filter(|(_, v)| !v.is_empty())
            .filter_map(|(k, _)| k.into_string().ok()),
        &setting_vars,
    );
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
            let message = crate::config::clean_yaml_message(&e.to_string());
            // The value may be a database's, with its password: shown masked.
            return Err(Error::Usage(format!(
                "{var}={}: {message} (the environment sets {key}); fix or unset it",
                crate::database::mask(&raw)
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
    config
        .validate(&project_file)
        .map_err(|e| blame(e, &project_file, &sources))?;

    let mut all = Vec::new();
    leaves(&merged, "", &mut all);
    let values: BTreeMap<String, (Value, Source)> = all
        .into_iter()
        .map(|(key, value)| {
            let source = sources.get(&key).cloned().unwrap_or(Source::Default);
            (key, (value, source))
        })
        .collect();
    // The database the project uses: `GZA_DATABASE_URL` overrides the setting (as
    // `Project::database` reads it); shown as it is used, from where it comes, and never with
    // its password.
    let mut values = values;
    if let Some(url) = std::env::var(crate::database::URL_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
    {
        values.insert(
            "database".into(),
            (
                Value::String(url),
                Source::Env(crate::database::URL_ENV.into()),
            ),
        );
    }
    if let Some((Value::String(db), _)) = values.get_mut("database") {
        *db = crate::database::mask(db);
    }
    // What a later layer of the person's own sets anyway was not ignored for want of trust.
    let overridden = |key: &str| match values.get(key).map(|(_, source)| source) {
        Some(Source::Env(_)) => true,
        Some(Source::File { path, .. }) => path == &root.join(LOCAL_FILE),
        _ => false,
    };
    let from_project = |key: &str| matches!(values.get(key), Some((_, Source::File { path, .. })) if path == &project_file);
    let mut ignored: Vec<String> = untrusted
        .iter()
        .filter(|(key, why)| *why != Sensitive::OutsidePath && !overridden(key))
        .map(|(key, _)| key.clone())
        .collect();
    if local_committed {
        ignored.push(format!("{LOCAL_FILE} (committed to the repository)"));
    }
    let confined = untrusted
        .iter()
        .filter(|(key, why)| *why == Sensitive::OutsidePath && from_project(key))
        .map(|(key, _)| key.clone())
        .collect();
    Ok(Effective {
        config,
        values,
        sensitive,
        ignored,
        confined,
        unknown_env,
    })
}

/// An error of the checks across keys, which name the project's file, made to name where
/// the key it is about (the first word of its message) was set: another file and its line, or
/// the environment variable.
fn blame(e: Error, project_file: &Path, sources: &BTreeMap<String, Source>) -> Error {
    let Error::Config {
        path,
        location,
        message,
    } = e
    else {
        return e;
    };
    let word_end = message
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(message.len());
    let key = message[..word_end].trim_end_matches('.');
    match sources.get(key) {
        Some(Source::File { path: file, line }) if path == project_file => Error::Config {
            path: file.clone(),
            location: line.map(|l| (l, 1)),
            message,
        },
        Some(Source::Env(var)) => Error::Usage(format!(
            "{var}: {message} (the environment sets {key}); fix or unset it"
        )),
        _ => Error::Config {
            path,
            location,
            message,
        },
    }
}

/// The one line that says what was ignored for want of trust, and what to do.
pub fn ignored_notice(ignored: &[String]) -> String {
    let (local, settings): (Vec<&String>, Vec<&String>) =
        ignored.iter().partition(|k| k.starts_with(LOCAL_FILE));
    let mut parts = Vec::new();
    if !settings.is_empty() {
        let names: Vec<String> = settings.iter().map(|s| s.to_string()).collect();
        let names = match names.as_slice() {
            [one] => one.clone(),
            [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
            [] => String::new(),
        };
        parts.push(format!(
            "{PROJECT_FILE} sets {names}, which gza ignores until you trust them: `gza trust` shows them"
        ));
    }
    if !local.is_empty() {
        parts.push(format!(
            "{LOCAL_FILE} is committed to the repository, so it is not yours and gza ignores it: \
             `git rm --cached {LOCAL_FILE}` makes it yours"
        ));
    }
    parts.join("; ")
}

/// Whether git tracks `name` (a file under `root`, named relative to it, without spaces) in the
/// repository holding `root` (false outside a repository). The answer is kept in
/// `.gza/tracked.cache`, one line per name, against the file's and the index's size, times and
/// inode, so a hook pays a few `stat`s rather than a git process; where the index cannot be
/// found beside `root` (a project below its repository's top), git is asked.
pub(crate) fn is_tracked(root: &Path, name: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    let stamp = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .map(|m| format!("{}.{}:{}:{}", m.mtime(), m.mtime_nsec(), m.len(), m.ino()))
    };
    // A repository with no index yet (nothing ever added) is a state of its own ("-"): cached
    // like any other, so every hook of a fresh repository does not start git. Only where
    // `.git` is the repository's own folder: a worktree's index lies elsewhere.
    let git = root.join(".git");
    let index = stamp(&git.join("index")).or_else(|| {
        std::fs::symlink_metadata(&git)
            .is_ok_and(|m| m.is_dir())
            .then(|| "-".to_string())
    });
    let key = match (stamp(&root.join(name)), index) {
        (Some(file), Some(index)) => Some(format!("{name} {file} {index}")),
        _ => None,
    };
    let cache = root.join(crate::project::STATE_DIR).join("tracked.cache");
    let cached = crate::fsutil::read_regular_file(&cache, 4096)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    if let Some(key) = &key
        && let Some(answer) = cached.lines().find_map(|l| l.strip_prefix(key.as_str()))
    {
        match answer.trim() {
            "yes" => return true,
            "no" => return false,
            _ => {}
        }
    }
    let tracked = crate::git::succeeds(root, &["ls-files", "--error-unmatch", "--", name]);
    if let Some(key) = key {
        let answer = if tracked { "yes" } else { "no" };
        // The other names' lines kept: two files asked of alternately never evict each other.
        let mut text: String = cached
            .lines()
            .filter(|l| !l.starts_with(&format!("{name} ")))
            .map(|l| format!("{l}\n"))
            .collect();
        text.push_str(&format!("{key} {answer}\n"));
        let _ = crate::fsutil::write_atomically(&cache, text.as_bytes());
    }
    tracked
}

/// Remove the value at a dotted path (and mappings it leaves empty).
fn remove(value: &mut Value, path: &str) {
    let Some((head, rest)) = path.split_once('.') else {
        if let Value::Mapping(map) = value {
            map.remove(path);
        }
        return;
    };
    if let Some(inner) = value.get_mut(head) {
        remove(inner, rest);
        if matches!(inner, Value::Mapping(m) if m.is_empty())
            && let Value::Mapping(map) = value
        {
            map.remove(head);
        }
    }
}

/// The sandbox each provider runs in, by the settings in `value`.
fn sandboxes(value: &Value) -> Vec<(ProviderKind, Option<SandboxKind>)> {
    let kind = |v: Option<&Value>| v.and_then(|v| serde_norway::from_value(v.clone()).ok());
    let top: Option<SandboxKind> = kind(value.get("sandbox"));
    ProviderKind::ALL
        .iter()
        .map(|&p| {
            let own = kind(
                value
                    .get("providers")
                    .and_then(|ps| ps.get(p.as_str()))
                    .and_then(|ps| ps.get("sandbox")),
            );
            (p, own.or(top))
        })
        .collect()
}

/// The settings of the repository's file (`project`) that need the person's trust, judged
/// against what the person's own settings and the defaults say (`base`): a command or a
/// variable the person's settings do not already give ([`COMMAND_KEYS`]), a sandbox turned off
/// where the person's settings turn it on, a path leading outside the project.
fn sensitive_settings(
    root: &Path,
    base: &Value,
    project: &Value,
) -> BTreeMap<String, (Value, Sensitive)> {
    let mut found = BTreeMap::new();
    let mut set = Vec::new();
    leaves(project, "", &mut set);
    let base_value = |key: &str| {
        key.split('.')
            .try_fold(base, |v, k| v.get(k))
            .cloned()
            .unwrap_or(Value::Null)
    };
    for (key, value) in &set {
        if COMMAND_KEYS.contains(&key.as_str()) && *value != base_value(key) {
            found.insert(key.clone(), (value.clone(), Sensitive::Command));
        }
        if DATA_KEYS.contains(&key.as_str()) && *value != base_value(key) {
            found.insert(key.clone(), (value.clone(), Sensitive::Data));
        }
        if key == PUSH_KEY && *value == Value::Bool(true) && base_value(key) != Value::Bool(true) {
            found.insert(key.clone(), (value.clone(), Sensitive::Publish));
        }
        if key == REDACTION_KEY
            && *value == Value::Bool(false)
            && base_value(key) != Value::Bool(false)
        {
            found.insert(key.clone(), (value.clone(), Sensitive::Unredacted));
        }
        if PATH_KEYS.contains(&key.as_str())
            && let Some(path) = value.as_str().filter(|p| !p.is_empty())
            && crate::trust::outside_project(root, Path::new(path))
        {
            found.insert(key.clone(), (value.clone(), Sensitive::OutsidePath));
        }
    }
    // A sandbox changed: some provider that runs in the sandbox the person's settings ask for
    // (any but none) would run in another with the repository's: none, or a container of the
    // repository's choosing, which is given the person's key (docker_image needs trust too).
    let mut with = base.clone();
    merge(&mut with, project);
    let weaker =
        sandboxes(base)
            .into_iter()
            .zip(sandboxes(&with))
            .any(|((_, before), (_, after))| {
                before.is_some_and(|k| k != SandboxKind::None) && after != before
            });
    if weaker {
        for (key, value) in &set {
            let is_sandbox =
                key == "sandbox" || (key.starts_with("providers.") && key.ends_with(".sandbox"));
            if is_sandbox && *value != base_value(key) {
                found.insert(key.clone(), (value.clone(), Sensitive::WeakerSandbox));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whether_a_file_is_tracked_is_cached_in_a_repository_without_an_index_too() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        crate::git::run(root, &["init", "-q"]).unwrap();
        std::fs::create_dir(root.join(crate::project::STATE_DIR)).unwrap();
        std::fs::write(root.join("x.yaml"), "a: 1\n").unwrap();
        assert!(!root.join(".git/index").exists());
        assert!(!is_tracked(root, "x.yaml"));
        let cache = root.join(crate::project::STATE_DIR).join("tracked.cache");
        let cached = std::fs::read_to_string(&cache).expect("cached without an index");
        assert!(cached.ends_with(" - no\n"), "{cached}");
        // Once something is added the index exists, the key changes and git is asked again.
        crate::git::run(root, &["add", "x.yaml"]).unwrap();
        assert!(is_tracked(root, "x.yaml"));
        assert!(std::fs::read_to_string(&cache).unwrap().ends_with(" yes\n"));
        // Another file asked of keeps this one's answer: one line each.
        std::fs::create_dir_all(root.join(".gza")).unwrap();
        std::fs::write(root.join(".gza/project"), "p\n").unwrap();
        assert!(!is_tracked(root, ".gza/project"));
        let both = std::fs::read_to_string(&cache).unwrap();
        assert_eq!(both.lines().count(), 2, "{both}");
        assert!(
            both.lines()
                .any(|l| l.starts_with("x.yaml ") && l.ends_with(" yes"))
        );
        assert!(
            both.lines()
                .any(|l| l.starts_with(".gza/project ") && l.ends_with(" no"))
        );
    }

    /// A layer read through the cache is what its text says, after any edit: one that keeps the
    /// file's size and times included (the key is the text's hash, not the file's identity).
    #[test]
    fn a_kept_layer_follows_every_edit_of_its_text() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let file = dir.path().join("gza.yaml");
        let read = |text: &str| {
            let times = std::fs::metadata(&file).and_then(|m| m.modified()).ok();
            std::fs::write(&file, text).unwrap();
            if let Some(t) = times {
                let f = std::fs::File::options().write(true).open(&file).unwrap();
                f.set_modified(t).unwrap();
            }
            read_layer_kept_in(&file, true, Some(cache.as_path()))
                .unwrap()
                .unwrap()
                .value
        };
        let first = read("# settings\nmax_concurrent: 3\n");
        assert_eq!(first.get("max_concurrent"), Some(&Value::from(3)));
        let kept = cache::file(&cache, &file);
        assert!(kept.is_file(), "kept after its checks");
        // Read from the cache now: a value only the cache holds comes back.
        let mut planted: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&kept).unwrap()).unwrap();
        planted["value"]["max_concurrent"] = 9.into();
        std::fs::write(&kept, planted.to_string()).unwrap();
        assert_eq!(
            read("# settings\nmax_concurrent: 3\n").get("max_concurrent"),
            Some(&Value::from(9)),
            "the same text is not parsed again"
        );
        // The same size, the same times, another text: parsed again.
        let edited = read("# settings\nmax_concurrent: 4\n");
        assert_eq!(edited.get("max_concurrent"), Some(&Value::from(4)));
        // A text whose checks fail is refused with its line, and nothing is kept for it.
        std::fs::remove_file(&kept).unwrap();
        std::fs::write(&file, "max_concurrent: many\n").unwrap();
        let err = read_layer_kept_in(&file, true, Some(cache.as_path()))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("gza.yaml:1"), "{err}");
        std::fs::write(&file, "mood: cheerful\n").unwrap();
        let err = read_layer_kept_in(&file, true, Some(cache.as_path()))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("unknown key") && err.contains("mood"), "{err}");
        assert!(!kept.exists());
        // A value JSON cannot carry back (a tag) is read right and not kept.
        std::fs::write(&file, "project: !tagged name\n").unwrap();
        let _ = read_layer_kept_in(&file, true, Some(cache.as_path()));
        assert!(!kept.exists());
    }

    /// A file whose identity (inode, size, times, its change time a second old) is the one
    /// kept is not hashed again; any write to it, even one that puts its size and modification
    /// time back, is read again from its text.
    #[test]
    fn a_kept_layer_is_known_by_its_file_and_any_write_reads_it_again() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let file = dir.path().join("gza.yaml");
        std::fs::write(&file, "# settings\nmax_concurrent: 3\n").unwrap();
        let read = || {
            read_layer_kept_in(&file, true, Some(cache.as_path()))
                .unwrap()
                .unwrap()
                .value
        };
        // Kept right after a write: no stamp (the change time is too recent to vouch).
        assert_eq!(read().get("max_concurrent"), Some(&Value::from(3)));
        let kept = cache::file(&cache, &file);
        let entry = |k: &Path| -> serde_json::Value {
            serde_json::from_slice(&std::fs::read(k).unwrap()).unwrap()
        };
        assert!(entry(&kept).get("stamp").is_none(), "{}", entry(&kept));
        // Read again at once: the entry is not written again (nothing to add yet).
        let written = std::fs::metadata(&kept).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(read().get("max_concurrent"), Some(&Value::from(3)));
        assert_eq!(
            std::fs::metadata(&kept).unwrap().modified().unwrap(),
            written
        );
        // Read again once the file has settled: kept again, with its stamp.
        std::thread::sleep(std::time::Duration::from_millis(2100));
        assert_eq!(read().get("max_concurrent"), Some(&Value::from(3)));
        assert!(entry(&kept).get("stamp").is_some(), "{}", entry(&kept));
        // The hash no longer matches, the file is the same: the kept value is used.
        let mut planted = entry(&kept);
        planted["sha256"] = "0".repeat(64).into();
        planted["value"]["max_concurrent"] = 9.into();
        std::fs::write(&kept, planted.to_string()).unwrap();
        assert_eq!(read().get("max_concurrent"), Some(&Value::from(9)));
        // The same size and modification time, another text: read again.
        let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
        std::fs::write(&file, "# settings\nmax_concurrent: 4\n").unwrap();
        let f = std::fs::File::options().write(true).open(&file).unwrap();
        f.set_modified(mtime).unwrap();
        assert_eq!(read().get("max_concurrent"), Some(&Value::from(4)));
    }

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
        let notes = unknown_env_notices(
            [
                "GZA_MODLE_DIR",
                "GZA_MAX_CONCURRENT",
                "GZA_HOOKS",
                "GZA_TEST_CLAUDE",
                "GZA_WHATEVER_ELSE_ENTIRELY",
                "PATH",
            ]
            .into_iter()
            .map(String::from),
            &["GZA_MAX_CONCURRENT".to_string()],
        );
        assert_eq!(
            notes,
            [
                "GZA_MODLE_DIR is not a variable gza reads; did you mean GZA_MODEL_DIR?",
                "GZA_WHATEVER_ELSE_ENTIRELY is not a variable gza reads (`gza config` lists the settings; each is GZA_ and its key, as GZA_LEARNINGS_MAX_TOKENS)",
            ]
        );
    }
}
