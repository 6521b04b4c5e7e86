//! Which of a repository's settings the person has trusted (`gza trust`), as direnv's `allow`
//! and Claude Code's folder trust do: a committed `gza.yaml` comes from whoever wrote the
//! repository, so the settings in it that run commands, widen what an agent may touch or send
//! the person's keys somewhere take effect only once the person has seen and accepted them.
//!
//! The record lives in the person's own config directory (`~/.gza/trusted.json`), keyed by the
//! project's canonical path, and holds the value of each sensitive setting as it was trusted.
//! A later change to one of those values (a pull, a merge, an edit) makes that setting
//! untrusted again until `gza trust` is run; a change to any other setting needs nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_norway::Value;

use crate::error::{Error, Result};

/// The settings that run a program on the host (an agent CLI's path or arguments, the command
/// agent, the verify command), let more of the host's environment into a sandbox, or say where
/// the extraction client sends requests with the person's key and which variable it reads that
/// key from.
pub const COMMAND_KEYS: [&str; 12] = [
    "providers.claude.path",
    "providers.claude.args",
    "providers.codex.path",
    "providers.codex.args",
    "providers.gemini.path",
    "providers.gemini.args",
    "providers.command.command",
    "sandbox_env",
    "learnings.base_url",
    "learnings.api_key_env",
    // The project's check command (`gza verify`, the gate before a merge), run with `sh -c`.
    "verify",
    // The container agents run in with `sandbox: docker`, given the person's API key: an image
    // of the repository's choosing is a program of the repository's.
    "docker_image",
];

/// Settings that say where the project's tasks and learnings go and which project's a clone
/// reads: a repository's file could otherwise send them to a database of its author's, or read
/// another project's in a shared one.
pub const DATA_KEYS: [&str; 2] = ["database", "project"];

/// The setting that publishes the person's work: `push: true` sends every task's branch to the
/// clone's `origin`. From the repository's file it turns pushing on only once trusted (turning
/// it off needs nothing); no setting names where to push: `origin` is the person's own
/// `.git/config`, which no committed file writes.
pub const PUSH_KEY: &str = "push";

/// The setting that keeps the agents' raw logs as they were written, secrets included: from the
/// repository's file, turning redaction off needs trust (turning it on needs nothing).
pub const REDACTION_KEY: &str = "redact_raw_logs";

/// Settings that name a path gza reads or writes on the project's behalf: from the repository's
/// file they must stay inside the project unless trusted.
pub const PATH_KEYS: [&str; 2] = ["learnings.expertise_path", "learnings.model_dir"];

/// Why a setting of the project's file needs trust.
#[derive(Debug, Clone, PartialEq)]
pub enum Sensitive {
    /// It runs a program, widens the sandbox's environment, or directs the person's key.
    Command,
    /// It turns the sandbox off where the person's own settings turn it on.
    WeakerSandbox,
    /// It names a path outside the project.
    OutsidePath,
    /// It says which database the project's tasks and learnings go to, or which project's.
    Data,
    /// It turns on pushing task branches to `origin`.
    Publish,
    /// It keeps secrets in the agents' raw logs (`redact_raw_logs: false`): the person's
    /// choice to make, never a repository's.
    Unredacted,
}

impl Sensitive {
    /// What the setting would do, for `gza trust`.
    pub fn describe(&self) -> &'static str {
        match self {
            Sensitive::Command => "runs a command, passes variables or directs your API key",
            Sensitive::WeakerSandbox => "runs agents outside the sandbox your own settings ask for",
            Sensitive::OutsidePath => "names a path outside the project",
            Sensitive::Data => {
                "sends the project's tasks and learnings to a database, or names which project's they are"
            }
            Sensitive::Publish => "pushes every task's branch to this clone's origin",
            Sensitive::Unredacted => "keeps secrets in the agents' raw logs (no redaction)",
        }
    }
}

/// The trust file: `~/.gza/trusted.json`, beside the person's own `config.yaml`.
pub fn file() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".gza").join("trusted.json"))
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    #[serde(default)]
    projects: BTreeMap<String, ProjectTrust>,
}

/// What was trusted for one project.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProjectTrust {
    /// Each sensitive setting's value as it was trusted (JSON of the YAML value).
    #[serde(default)]
    pub settings: BTreeMap<String, serde_json::Value>,
    /// When, RFC 3339.
    #[serde(default)]
    pub trusted_at: String,
}

/// The key the record uses for a project: its canonical path.
fn project_key(root: &Path) -> String {
    root.canonicalize()
        .unwrap_or_else(|_| root.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

fn read_record(path: &Path) -> Result<Record> {
    match crate::fsutil::read_regular_file(path, 16 << 20) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            Error::Usage(format!(
                "{} is not a trust record gza can read ({e}); fix or remove it, then run `gza trust` again",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Record::default()),
        Err(e) => Err(crate::fsutil::read_refused(path, e)),
    }
}

/// What the person trusted for the project at `root`, if anything.
pub fn trusted(root: &Path) -> Result<Option<ProjectTrust>> {
    let Some(path) = file() else {
        return Ok(None);
    };
    Ok(read_record(&path)?.projects.remove(&project_key(root)))
}

/// Record `settings` as trusted for the project at `root` (replacing what was trusted before).
pub fn record(root: &Path, settings: &BTreeMap<String, Value>) -> Result<PathBuf> {
    record_json(
        root,
        settings
            .iter()
            .map(|(k, v)| (k.clone(), to_json(v)))
            .collect(),
    )
}

fn record_json(root: &Path, settings: BTreeMap<String, serde_json::Value>) -> Result<PathBuf> {
    let path = file().ok_or_else(|| {
        Error::Usage("HOME is not set, so there is no ~/.gza/ to record trust in; set HOME".into())
    })?;
    let mut record = read_record(&path)?;
    let entry = ProjectTrust {
        settings,
        trusted_at: crate::task::now_timestamp(),
    };
    record.projects.insert(project_key(root), entry);
    write(&path, &record)?;
    Ok(path)
}

/// Forget what was trusted for the project at `root`; false when nothing was.
pub fn revoke(root: &Path) -> Result<bool> {
    let Some(path) = file() else {
        return Ok(false);
    };
    let mut record = read_record(&path)?;
    let removed = record.projects.remove(&project_key(root)).is_some();
    if removed {
        write(&path, &record)?;
    }
    Ok(removed)
}

fn write(path: &Path, record: &Record) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create directory", e))?;
    }
    let text = serde_json::to_string_pretty(record).expect("the trust record serialises");
    crate::fsutil::write_atomically(path, format!("{text}\n").as_bytes())
}

/// A YAML value as the JSON the record keeps.
pub fn to_json(value: &Value) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

/// Whether `value` of `key` is what the person trusted.
pub fn covers(trust: Option<&ProjectTrust>, key: &str, value: &Value) -> bool {
    trust
        .and_then(|t| t.settings.get(key))
        .is_some_and(|v| *v == to_json(value))
}

/// Whether `path` (relative to `root`, or absolute) leaves the project once `..` and symbolic
/// links are resolved.
pub fn outside_project(root: &Path, path: &Path) -> bool {
    crate::confine::inside(root, path).is_err()
}

/// The agent CLIs' configuration files a repository can commit. Each can run commands on the
/// host when an agent starts in the project (Claude Code's and Gemini CLI's hooks, MCP servers,
/// helpers such as `apiKeyHelper`; Codex's hooks and servers), and in headless mode none of
/// the CLIs asks first: Claude Code's `-p` skips its folder trust, and gza must tell Gemini CLI
/// to trust the folder for `--yolo` to hold. So a committed one runs nothing until the person
/// trusts it, as a command in `gza.yaml` does (recorded by its hash). Gemini CLI also takes
/// variables from `.gemini/.env` and `.env` in a folder it trusts (which gza must tell it to do):
/// a committed one could set `GOOGLE_GEMINI_BASE_URL` and send the person's key to the
/// repository's author, so both are gated the same way.
///
/// Each file is named with the agent CLI that reads it: an untrusted file gates only the CLI
/// that would act on it (a committed `.env` does not stop Claude Code).
pub const AGENT_CONFIG_FILES: [(&str, &str); 8] = [
    (".claude/settings.json", "claude"),
    (".claude/settings.local.json", "claude"),
    (".mcp.json", "claude"),
    (".gemini/settings.json", "gemini"),
    (".gemini/.env", "gemini"),
    (".env", "gemini"),
    (".codex/config.toml", "codex"),
    (".codex/hooks.json", "codex"),
];

/// The agent CLI that reads `file` (one of [`AGENT_CONFIG_FILES`]), or `None` for any other.
pub fn read_by(file: &str) -> Option<&'static str> {
    AGENT_CONFIG_FILES
        .iter()
        .find(|(f, _)| *f == file)
        .map(|(_, cli)| *cli)
}

/// The trust record's key for the agent configuration file `rel`.
pub fn agent_config_key(rel: &str) -> String {
    format!("agent config {rel}")
}

/// The agent configuration files ([`AGENT_CONFIG_FILES`]) present in `dir`, each with the hash
/// of its content (`sha256:…`). Whoever wrote one (the repository's author, an agent that ran in
/// place, the person), it runs nothing in gza's agents until the person has trusted it as it is
/// now: a file an agent wrote is no more the person's than one a repository committed, and
/// nothing on disk tells them apart. gza's own `hook install` and `mcp install` keep the trust
/// of a file they change ([`keep_after_writing`]).
pub fn agent_configs(dir: &Path) -> Vec<(String, Value)> {
    AGENT_CONFIG_FILES
        .iter()
        .filter_map(|(f, _)| agent_config_hash(dir, f).map(|hash| (f.to_string(), hash)))
        .collect()
}

/// The hash (`sha256:…`) of the agent configuration file `rel` in `dir`, or `None` when there is
/// none. A link, a FIFO, a file too large: hashed as what it is, so it is never trusted by
/// accident and a change is seen.
pub fn agent_config_hash(dir: &Path, rel: &str) -> Option<Value> {
    use sha2::{Digest, Sha256};
    let path = dir.join(rel);
    std::fs::symlink_metadata(&path).ok()?;
    let bytes = crate::fsutil::read_project_file(dir, &path, 4 << 20)
        .unwrap_or_else(|e| format!("unreadable: {e}").into_bytes());
    let hash = crate::text::hex(&Sha256::digest(&bytes));
    Some(Value::String(format!("sha256:{hash}")))
}

/// The agent configuration file `path` is, relative to the project at `root`, if it is one.
pub fn agent_config_name(root: &Path, path: &Path) -> Option<&'static str> {
    let rel = path.strip_prefix(root).ok()?;
    AGENT_CONFIG_FILES
        .iter()
        .map(|(f, _)| *f)
        .find(|f| Path::new(f) == rel)
}

/// After gza itself rewrote the agent configuration file `rel` of the project at `root` (the
/// person ran `gza hook install` or `gza mcp install`): its new content is trusted when what it
/// replaced was (`before`, from [`agent_config_hash`] taken before the write), or when there
/// was none, so installing gza's own hooks never needs `gza trust`. A file the person had not
/// trusted stays untrusted: gza's lines added to it vouch for nothing else in it. Returns
/// whether the file is trusted now.
pub fn keep_after_writing(root: &Path, rel: &str, before: Option<&Value>) -> Result<bool> {
    let key = agent_config_key(rel);
    let trust = trusted(root)?;
    let was = match before {
        None => true,
        Some(hash) => covers(trust.as_ref(), &key, hash),
    };
    let Some(now) = agent_config_hash(root, rel) else {
        return Ok(true);
    };
    if !was {
        return Ok(covers(trust.as_ref(), &key, &now));
    }
    let mut settings = trust.map(|t| t.settings).unwrap_or_default();
    settings.insert(key, to_json(&now));
    record_json(root, settings)?;
    Ok(true)
}

/// Of the agent configuration files in `dir` (the project at `root`, or a worktree of it), those
/// the person has not trusted as they are now.
pub fn untrusted_agent_configs(dir: &Path, root: &Path) -> Result<Vec<String>> {
    let configs = agent_configs(dir);
    if configs.is_empty() {
        return Ok(Vec::new());
    }
    let trust = trusted(root)?;
    Ok(configs
        .into_iter()
        .filter(|(f, hash)| !covers(trust.as_ref(), &agent_config_key(f), hash))
        .map(|(f, _)| f)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trusted_value_covers_only_itself() {
        let mut settings = BTreeMap::new();
        settings.insert(
            "providers.codex.path".to_string(),
            serde_json::json!("/opt/codex"),
        );
        let trust = ProjectTrust {
            settings,
            trusted_at: String::new(),
        };
        let same = Value::String("/opt/codex".into());
        let other = Value::String("/tmp/evil".into());
        assert!(covers(Some(&trust), "providers.codex.path", &same));
        assert!(!covers(Some(&trust), "providers.codex.path", &other));
        assert!(!covers(Some(&trust), "providers.gemini.path", &same));
        assert!(!covers(None, "providers.codex.path", &same));
    }
}
