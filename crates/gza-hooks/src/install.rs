//! Installing gza's hooks into a Claude Code settings file, safely: merge, never clobber.
//!
//! gza's entries are recognised by their command (`<gza> hook <event>`), so a second install
//! changes nothing and an install from a moved binary updates the path in place. Every other
//! key and hook stays as it was; a file that is not plain JSON is refused, never overwritten;
//! the old file is backed up before it is replaced.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use gza_core::error::{Error, Result};

/// One event gza handles in an agent's settings: the event, its matcher, and the handler.
pub type Event = (&'static str, Option<&'static str>, &'static str);

/// The Claude Code events gza handles, with the matcher and handler name for each.
pub const EVENTS: [Event; 5] = [
    (
        "SessionStart",
        Some("startup|resume|clear|compact"),
        "session-start",
    ),
    ("UserPromptSubmit", None, "user-prompt-submit"),
    ("PreToolUse", Some("*"), "pre-tool-use"),
    ("Stop", None, "stop"),
    ("SessionEnd", None, "session-end"),
];

/// The Codex events gza handles (Codex 0.169 speaks Claude Code's hook wire: the same input
/// fields and `hookSpecificOutput.additionalContext`). No matcher means every occurrence.
/// SessionEnd (sent by `codex exec` too, with the rollout as `transcript_path`) starts the
/// session's extraction, as Claude Code's does.
pub const CODEX_EVENTS: [Event; 5] = [
    ("SessionStart", None, "session-start"),
    ("UserPromptSubmit", None, "user-prompt-submit"),
    ("PreToolUse", None, "pre-tool-use"),
    ("Stop", None, "stop"),
    ("SessionEnd", None, "session-end"),
];

/// The Gemini CLI events gza handles. BeforeTool is left out: Gemini CLI 0.61 takes no
/// `additionalContext` from it (only from AfterTool, after the call), so process knowledge
/// cannot arrive before a tool call there. SessionEnd gives no final message (AfterAgent has
/// it) and Gemini does not wait for it; it gives the chat's `transcript_path`, so it starts the
/// session's extraction, which runs detached.
pub const GEMINI_EVENTS: [Event; 4] = [
    ("SessionStart", None, "session-start"),
    ("BeforeAgent", None, "user-prompt-submit"),
    ("AfterAgent", None, "stop"),
    ("SessionEnd", None, "session-end"),
];

/// Seconds an agent waits for a handler.
const TIMEOUT_SECONDS: u64 = 10;

/// The agent CLIs gza installs hooks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Claude,
    Codex,
    Gemini,
}

impl Agent {
    pub const ALL: [Agent; 3] = [Agent::Claude, Agent::Codex, Agent::Gemini];

    /// The name `--agent` takes.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
        }
    }

    /// The name people know it by.
    pub fn title(self) -> &'static str {
        match self {
            Agent::Claude => "Claude Code",
            Agent::Codex => "Codex",
            Agent::Gemini => "Gemini CLI",
        }
    }

    pub fn events(self) -> &'static [Event] {
        match self {
            Agent::Claude => &EVENTS,
            Agent::Codex => &CODEX_EVENTS,
            Agent::Gemini => &GEMINI_EVENTS,
        }
    }

    /// The scopes the agent has a settings file for.
    pub fn scopes(self) -> &'static [Scope] {
        match self {
            Agent::Claude => &Scope::ALL,
            Agent::Codex | Agent::Gemini => &[Scope::Project, Scope::User],
        }
    }

    /// The settings file of `scope`, when the agent has one (and, for the user's, HOME is known).
    pub fn path(self, scope: Scope, project_root: &Path, home: Option<&Path>) -> Option<PathBuf> {
        let file = match (self, scope) {
            (Agent::Claude, _) => return scope.path(project_root, home),
            (Agent::Codex, Scope::Project) => project_root.join(".codex/hooks.json"),
            (Agent::Codex, Scope::User) => home?.join(".codex/hooks.json"),
            (Agent::Gemini, Scope::Project) => project_root.join(".gemini/settings.json"),
            (Agent::Gemini, Scope::User) => home?.join(".gemini/settings.json"),
            (_, Scope::Local) => return None,
        };
        Some(file)
    }

    /// A handler entry for this agent's settings file.
    fn entry(self, command: &str, handler: &str) -> Value {
        match self {
            // Gemini CLI's timeout is in milliseconds, and a name identifies the hook in
            // `/hooks panel`.
            Agent::Gemini => json!({
                "name": format!("gza-{handler}"),
                "type": "command",
                "command": command,
                "timeout": TIMEOUT_SECONDS * 1000,
            }),
            Agent::Claude | Agent::Codex => {
                json!({"type": "command", "command": command, "timeout": TIMEOUT_SECONDS})
            }
        }
    }
}

impl std::str::FromStr for Agent {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Agent, String> {
        Agent::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| format!("unknown agent {s:?}; use claude, codex, gemini or all"))
    }
}

/// Which settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `.claude/settings.json` in the project (committed, shared).
    Project,
    /// `.claude/settings.local.json` in the project (personal).
    Local,
    /// `~/.claude/settings.json` (every project).
    User,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Project, Scope::Local, Scope::User];

    pub fn path(self, project_root: &Path, home: Option<&Path>) -> Option<PathBuf> {
        match self {
            Scope::Project => Some(project_root.join(".claude/settings.json")),
            Scope::Local => Some(project_root.join(".claude/settings.local.json")),
            Scope::User => home.map(|h| h.join(".claude/settings.json")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::User => "user",
        }
    }

    /// Whether the file is shared with a team (committed): its commands name `gza`, found on
    /// each person's PATH, never one person's binary.
    pub fn shared(self) -> bool {
        self == Scope::Project
    }
}

/// The command Claude Code runs for a handler.
pub fn command_for(gza: &Path, handler: &str) -> String {
    let program = gza.to_string_lossy();
    let quoted = if program
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        program.into_owned()
    } else {
        format!("'{}'", program.replace('\'', r"'\''"))
    };
    format!("{quoted} hook {handler}")
}

/// Whether a hook command is gza's handler for `handler` (from any install location).
fn is_ours(command: &str, handler: &str) -> bool {
    let Some(program) = command.strip_suffix(&format!(" hook {handler}")) else {
        return false;
    };
    let program = program.trim().trim_matches('\'');
    Path::new(program)
        .file_name()
        .is_some_and(|n| n == "gza" || n.to_string_lossy().starts_with("gza"))
}

/// What an install or uninstall changed, one line each.
#[derive(Debug, Default)]
pub struct Changes {
    pub lines: Vec<String>,
}

/// The largest agent settings file gza edits; a larger one is refused unread.
const MAX_SETTINGS_BYTES: u64 = 16 * 1024 * 1024;

/// Read a settings file: `{}` when missing; an error naming the file when it is not a JSON
/// object (comments included: Claude Code's files are plain JSON).
pub fn read_settings(path: &Path) -> Result<Map<String, Value>> {
    // Read as a regular file of bounded size: a FIFO or a device in the settings file's place
    // would block the install (or fill memory) instead of being refused in one line.
    let text = match gza_core::fsutil::read_regular_file(path, MAX_SETTINGS_BYTES) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
            Error::Usage(format!(
                "{} is not UTF-8 text; fix it by hand, gza will not overwrite it",
                path.display()
            ))
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => return Err(gza_core::fsutil::read_refused(path, e)),
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Error::Usage(format!(
            "{} is not a JSON object; fix it by hand, gza will not overwrite it",
            path.display()
        ))),
        Err(e) => Err(Error::Usage(format!(
            "{} is not valid JSON ({e}); fix it by hand, gza will not overwrite it",
            path.display()
        ))),
    }
}

/// Merge gza's hooks into `settings`; returns what changed.
fn merge(settings: &mut Map<String, Value>, agent: Agent, gza: &Path) -> Result<Vec<String>> {
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err(Error::Usage(
            "the settings file's \"hooks\" is not an object; fix it by hand".into(),
        ));
    };
    let mut changes = Vec::new();
    for &(event, matcher, handler) in agent.events() {
        let command = command_for(gza, handler);
        let groups = hooks.entry(event).or_insert_with(|| json!([]));
        let Value::Array(groups) = groups else {
            return Err(Error::Usage(format!(
                "the settings file's hooks.{event} is not a list; fix it by hand"
            )));
        };
        let mut found = false;
        for group in groups.iter_mut() {
            let Some(Value::Array(list)) = group.get_mut("hooks") else {
                continue;
            };
            for h in list.iter_mut() {
                let Some(existing) = h.get("command").and_then(Value::as_str) else {
                    continue;
                };
                if is_ours(existing, handler) {
                    found = true;
                    if existing != command {
                        changes.push(format!("~ {event}: {existing} → {command}"));
                        h["command"] = json!(command);
                    }
                }
            }
        }
        if !found {
            let mut group = Map::new();
            if let Some(m) = matcher {
                group.insert("matcher".into(), json!(m));
            }
            group.insert("hooks".into(), json!([agent.entry(&command, handler)]));
            groups.push(Value::Object(group));
            changes.push(format!("+ {event}: {command}"));
        }
    }
    Ok(changes)
}

/// Remove gza's hooks from `settings`; groups left empty by that go too.
fn unmerge(settings: &mut Map<String, Value>, agent: Agent) -> Vec<String> {
    let mut changes = Vec::new();
    let Some(Value::Object(hooks)) = settings.get_mut("hooks") else {
        return changes;
    };
    for &(event, _, handler) in agent.events() {
        let Some(Value::Array(groups)) = hooks.get_mut(event) else {
            continue;
        };
        for group in groups.iter_mut() {
            if let Some(Value::Array(list)) = group.get_mut("hooks") {
                list.retain(|h| {
                    let ours = h
                        .get("command")
                        .and_then(Value::as_str)
                        .is_some_and(|c| is_ours(c, handler));
                    if ours {
                        changes.push(format!(
                            "- {event}: {}",
                            h["command"].as_str().unwrap_or_default()
                        ));
                    }
                    !ours
                });
            }
        }
        groups.retain(|g| !matches!(g.get("hooks"), Some(Value::Array(list)) if list.is_empty()));
        if groups.is_empty() {
            hooks.remove(event);
        }
    }
    if hooks.is_empty() {
        settings.remove("hooks");
    }
    changes
}

/// Write `settings` to `path` (through a symlink to its target), keeping a backup of the old file.
pub fn write_settings(path: &Path, settings: &Map<String, Value>) -> Result<Option<PathBuf>> {
    let mut text = serde_json::to_string_pretty(settings).expect("JSON values serialise");
    text.push('\n');
    write_with_backup(path, &text)
}

/// Write `text` to `path` (through a symlink to its target) atomically, keeping a backup of the
/// old file as `<file>.gza-backup`; a read-only file is refused, not replaced.
pub fn write_with_backup(path: &Path, text: &str) -> Result<Option<PathBuf>> {
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create directory", e))?;
    }
    let mut backup = None;
    if target.exists() {
        let meta = std::fs::metadata(&target).map_err(|e| Error::io(&target, "read", e))?;
        if meta.permissions().readonly() {
            return Err(Error::Usage(format!(
                "{} is read-only; make it writable or install with another scope",
                path.display()
            )));
        }
        let bak = PathBuf::from(format!("{}.gza-backup", target.display()));
        std::fs::copy(&target, &bak).map_err(|e| Error::io(&bak, "back up settings to", e))?;
        backup = Some(bak);
    }
    gza_core::fsutil::write_atomically(&target, text.as_bytes())?;
    Ok(backup)
}

/// Install gza's hooks into the settings file at `path`. With `dry_run` nothing is written.
pub fn install(
    path: &Path,
    agent: Agent,
    gza: &Path,
    dry_run: bool,
) -> Result<(Changes, Option<PathBuf>)> {
    let mut settings = read_settings(path)?;
    let lines = merge(&mut settings, agent, gza)?;
    let backup = if lines.is_empty() || dry_run {
        None
    } else {
        write_settings(path, &settings)?
    };
    Ok((Changes { lines }, backup))
}

/// Remove gza's hooks from the settings file at `path`.
pub fn uninstall(path: &Path, agent: Agent, dry_run: bool) -> Result<(Changes, Option<PathBuf>)> {
    if !path.exists() {
        return Ok((Changes::default(), None));
    }
    let mut settings = read_settings(path)?;
    let lines = unmerge(&mut settings, agent);
    let backup = if lines.is_empty() || dry_run {
        None
    } else {
        write_settings(path, &settings)?
    };
    Ok((Changes { lines }, backup))
}

/// One installed handler: its event and the command, and whether that command resolves.
#[derive(Debug, Clone)]
pub struct Installed {
    pub event: &'static str,
    pub command: String,
    /// The program the command runs here (a bare `gza` found on PATH), or None when it does
    /// not run.
    pub runs: Option<PathBuf>,
}

/// gza's handlers installed in the settings file at `path`.
pub fn installed(path: &Path, agent: Agent) -> Result<Vec<Installed>> {
    let settings = read_settings(path)?;
    let mut out = Vec::new();
    let Some(Value::Object(hooks)) = settings.get("hooks") else {
        return Ok(out);
    };
    for &(event, _, handler) in agent.events() {
        let Some(Value::Array(groups)) = hooks.get(event) else {
            continue;
        };
        for h in groups
            .iter()
            .filter_map(|g| g.get("hooks").and_then(Value::as_array))
            .flatten()
        {
            let Some(command) = h.get("command").and_then(Value::as_str) else {
                continue;
            };
            if is_ours(command, handler) {
                let program = command
                    .strip_suffix(&format!(" hook {handler}"))
                    .unwrap_or(command)
                    .trim()
                    .trim_matches('\'');
                out.push(Installed {
                    event,
                    command: command.to_string(),
                    runs: runs(program),
                });
            }
        }
    }
    Ok(out)
}

/// The file a program name or path runs: an executable file, or the first found on PATH.
pub fn runs(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        return executable(Path::new(program)).then(|| PathBuf::from(program));
    }
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_twice_changes_nothing_and_keeps_the_rest() {
        let mut s: Map<String, Value> = serde_json::from_str(
            r#"{"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "my-lint"}]}]}}"#,
        )
        .unwrap();
        let gza = Path::new("/usr/local/bin/gza");
        assert_eq!(merge(&mut s, Agent::Claude, gza).unwrap().len(), 5);
        let once = s.clone();
        assert!(merge(&mut s, Agent::Claude, gza).unwrap().is_empty());
        assert_eq!(s, once);
        assert_eq!(s["model"], "opus");
        assert_eq!(
            s["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "my-lint"
        );
        // A moved binary updates the path in place.
        let moved = merge(&mut s, Agent::Claude, Path::new("/opt/gza/bin/gza")).unwrap();
        assert_eq!(moved.len(), 5);
        assert!(moved[0].starts_with("~ SessionStart"));
        assert_eq!(unmerge(&mut s, Agent::Claude).len(), 5);
        assert_eq!(s["hooks"]["PreToolUse"].as_array().unwrap().len(), 1);
        assert!(s["hooks"].get("Stop").is_none());
    }

    #[test]
    fn gemini_entries_are_named_and_time_out_in_milliseconds() {
        let mut s = Map::new();
        merge(&mut s, Agent::Gemini, Path::new("gza")).unwrap();
        let h = &s["hooks"]["BeforeAgent"][0]["hooks"][0];
        assert_eq!(h["command"], "gza hook user-prompt-submit");
        assert_eq!(h["name"], "gza-user-prompt-submit");
        assert_eq!(h["timeout"], 10_000);
        assert_eq!(
            s["hooks"]["AfterAgent"][0]["hooks"][0]["command"],
            "gza hook stop"
        );
        // Another agent's events are not touched by this one's uninstall.
        merge(&mut s, Agent::Codex, Path::new("gza")).unwrap();
        assert_eq!(unmerge(&mut s, Agent::Gemini).len(), 4);
        assert!(s["hooks"].get("UserPromptSubmit").is_some());
        assert!(s["hooks"].get("BeforeAgent").is_none());
    }

    #[test]
    fn commands_are_quoted_and_recognised() {
        let c = command_for(Path::new("/home/me/my tools/gza"), "stop");
        assert_eq!(c, "'/home/me/my tools/gza' hook stop");
        assert!(is_ours(&c, "stop"));
        assert!(!is_ours("/usr/bin/other hook stop", "stop"));
        assert!(!is_ours("/usr/bin/gza hook stop", "pre-tool-use"));
    }
}
