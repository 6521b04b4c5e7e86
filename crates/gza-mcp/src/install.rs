//! `gza mcp install`: register `gza mcp` with each agent CLI, in that CLI's own configuration,
//! merged with what is there (the same rules as `gza hook install`: never clobber, a file that
//! does not parse is refused, the old file is backed up, a second install changes nothing).
//!
//! | agent | project (committed) | local (yours) | user |
//! |---|---|---|---|
//! | Claude Code | `.mcp.json` `mcpServers.gza` | `~/.claude.json` `projects.<root>.mcpServers.gza` | `~/.claude.json` `mcpServers.gza` |
//! | Codex | `.codex/config.toml` `[mcp_servers.gza]` | — | `$CODEX_HOME/config.toml` (`~/.codex`) |
//! | Gemini CLI | `.gemini/settings.json` `mcpServers.gza` | — | `~/.gemini/settings.json` |
//!
//! A project file names `gza`, found on each teammate's PATH; a personal one names this binary.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use gza_core::error::{Error, Result};
use gza_hooks::install::{Agent, Changes, Scope, read_settings, runs, write_with_backup};

/// The name the server is registered under in every CLI.
pub const NAME: &str = "gza";
/// The arguments that run the server.
pub const ARGS: [&str; 1] = ["mcp"];

/// The file `agent` reads its MCP servers from at `scope`, when it has one.
pub fn config_path(
    agent: Agent,
    scope: Scope,
    root: &Path,
    home: Option<&Path>,
) -> Option<PathBuf> {
    match (agent, scope) {
        (Agent::Claude, Scope::Project) => Some(root.join(".mcp.json")),
        (Agent::Claude, Scope::Local | Scope::User) => Some(home?.join(".claude.json")),
        (Agent::Codex, Scope::Project) => Some(root.join(".codex/config.toml")),
        (Agent::Codex, Scope::User) => {
            let codex_home = std::env::var_os("CODEX_HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
                .or_else(|| home.map(|h| h.join(".codex")))?;
            Some(codex_home.join("config.toml"))
        }
        (Agent::Gemini, Scope::Project) => Some(root.join(".gemini/settings.json")),
        (Agent::Gemini, Scope::User) => Some(home?.join(".gemini/settings.json")),
        (Agent::Codex | Agent::Gemini, Scope::Local) => None,
    }
}

/// Where in the file the servers are: the path of keys to the `mcpServers` object (JSON files).
fn servers_key(agent: Agent, scope: Scope, root: &Path) -> Vec<String> {
    match (agent, scope) {
        // Claude Code keys a project's local settings by its absolute path.
        (Agent::Claude, Scope::Local) => {
            let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
            vec![
                "projects".into(),
                root.to_string_lossy().into_owned(),
                "mcpServers".into(),
            ]
        }
        _ => vec!["mcpServers".into()],
    }
}

/// gza's entry as each CLI writes a stdio server.
fn entry(agent: Agent, command: &str, env: &[(String, String)]) -> Value {
    let vars: Map<String, Value> = env
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    match agent {
        Agent::Claude => json!({"type": "stdio", "command": command, "args": ARGS, "env": vars}),
        Agent::Codex | Agent::Gemini if vars.is_empty() => {
            json!({"command": command, "args": ARGS})
        }
        Agent::Codex | Agent::Gemini => json!({"command": command, "args": ARGS, "env": vars}),
    }
}

/// The codex entry's `env` table for `env`.
fn toml_env(env: &[(String, String)]) -> toml_edit::Item {
    let mut t = toml_edit::InlineTable::new();
    for (k, v) in env {
        t.insert(k, v.as_str().into());
    }
    toml_edit::value(t)
}

/// Whether an entry runs gza's server: its command is a `gza` (from any location) and its
/// arguments are `mcp`.
fn is_ours(command: Option<&str>, args: &[String]) -> bool {
    let Some(command) = command else {
        return false;
    };
    args.first().is_some_and(|a| a == "mcp")
        && Path::new(command.trim())
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("gza"))
}

/// The registration found in a file.
#[derive(Debug, Clone)]
pub struct Installed {
    pub command: String,
    /// The program the command runs here, or None when it does not run.
    pub runs: Option<PathBuf>,
}

fn json_servers<'a>(settings: &'a Map<String, Value>, key: &[String]) -> Option<&'a Value> {
    let mut v = settings.get(&key[0])?;
    for k in &key[1..] {
        v = v.get(k)?;
    }
    Some(v)
}

/// The `mcpServers` object at `key`, created where missing; an error when something else is there.
fn json_servers_mut<'a>(
    settings: &'a mut Map<String, Value>,
    key: &[String],
    path: &Path,
) -> Result<&'a mut Map<String, Value>> {
    let mut here = settings;
    for k in key {
        let v = here
            .entry(k.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        here = v.as_object_mut().ok_or_else(|| {
            Error::Usage(format!(
                "{}: \"{k}\" is not an object; fix it by hand, gza will not overwrite it",
                path.display()
            ))
        })?;
    }
    Ok(here)
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Refuse to take over an entry named gza that runs something else.
fn not_ours(path: &Path, command: Option<&str>) -> Error {
    Error::Usage(format!(
        "{} already has an MCP server named \"{NAME}\" that runs {}, not gza's; rename or remove it first",
        path.display(),
        command.unwrap_or("something else")
    ))
}

/// Register gza's server with `agent` in the file at `path` (its `scope`). With `dry_run`
/// nothing is written. `gza` is the program the entry runs.
pub fn install(
    agent: Agent,
    scope: Scope,
    path: &Path,
    root: &Path,
    gza: &Path,
    env: &[(String, String)],
    dry_run: bool,
) -> Result<(Changes, Option<PathBuf>)> {
    let command = gza.to_string_lossy().into_owned();
    let env_shown: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
    let shown = format!("{command} {}", ARGS.join(" "));
    let mut lines = Vec::new();
    let text = match agent {
        Agent::Codex => {
            let mut doc = read_toml(path)?;
            let servers = doc
                .entry("mcp_servers")
                .or_insert_with(|| {
                    let mut t = toml_edit::Table::new();
                    t.set_implicit(true);
                    toml_edit::Item::Table(t)
                })
                .as_table_mut()
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "{}: mcp_servers is not a table; fix it by hand",
                        path.display()
                    ))
                })?;
            match servers
                .get_mut(NAME)
                .and_then(toml_edit::Item::as_table_like_mut)
            {
                Some(t) => {
                    let existing = t
                        .get("command")
                        .and_then(|c| c.as_str())
                        .map(str::to_string);
                    let args: Vec<String> = t
                        .get("args")
                        .and_then(|a| a.as_array())
                        .map(|a| {
                            a.iter()
                                .filter_map(|x| x.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default();
                    if !is_ours(existing.as_deref(), &args) {
                        return Err(not_ours(path, existing.as_deref()));
                    }
                    if existing.as_deref() != Some(command.as_str()) {
                        lines.push(format!(
                            "~ mcp_servers.{NAME}: {} → {shown}",
                            existing.unwrap_or_default()
                        ));
                        t.insert("command", toml_edit::value(command.as_str()));
                    }
                    let had: Vec<(String, String)> = t
                        .get("env")
                        .and_then(|e| e.as_table_like())
                        .map(|e| {
                            e.iter()
                                .filter_map(|(k, v)| Some((k.to_string(), v.as_str()?.to_string())))
                                .collect()
                        })
                        .unwrap_or_default();
                    if had != env {
                        lines.push(format!(
                            "~ mcp_servers.{NAME}.env: {}",
                            env_shown.join(", ")
                        ));
                        if env.is_empty() {
                            t.remove("env");
                        } else {
                            t.insert("env", toml_env(env));
                        }
                    }
                }
                None => {
                    let mut t = toml_edit::Table::new();
                    t.insert("command", toml_edit::value(command.as_str()));
                    let mut args = toml_edit::Array::new();
                    for a in ARGS {
                        args.push(a);
                    }
                    t.insert("args", toml_edit::value(args));
                    if !env.is_empty() {
                        t.insert("env", toml_env(env));
                    }
                    servers.insert(NAME, toml_edit::Item::Table(t));
                    lines.push(format!("+ mcp_servers.{NAME}: {shown}"));
                }
            }
            doc.to_string()
        }
        Agent::Claude | Agent::Gemini => {
            let mut settings = read_settings(path)?;
            let key = servers_key(agent, scope, root);
            let servers = json_servers_mut(&mut settings, &key, path)?;
            let label = format!("{}.{NAME}", key.join("."));
            match servers.get_mut(NAME) {
                Some(existing) => {
                    let cmd = existing
                        .get("command")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    if !is_ours(cmd.as_deref(), &strings(existing.get("args"))) {
                        return Err(not_ours(path, cmd.as_deref()));
                    }
                    if cmd.as_deref() != Some(command.as_str()) {
                        lines.push(format!("~ {label}: {} → {shown}", cmd.unwrap_or_default()));
                        existing["command"] = json!(command);
                    }
                    let wanted = entry(agent, &command, env);
                    let had = existing.get("env").cloned().unwrap_or(json!({}));
                    let want = wanted.get("env").cloned().unwrap_or(json!({}));
                    if had != want {
                        lines.push(format!("~ {label}.env: {}", env_shown.join(", ")));
                        match (existing.as_object_mut(), wanted.get("env")) {
                            (Some(o), Some(e)) => {
                                o.insert("env".into(), e.clone());
                            }
                            (Some(o), None) => {
                                o.remove("env");
                            }
                            (None, _) => {}
                        }
                    }
                }
                None => {
                    servers.insert(NAME.into(), entry(agent, &command, env));
                    lines.push(format!("+ {label}: {shown}"));
                }
            }
            let mut text = serde_json::to_string_pretty(&settings).expect("JSON values serialise");
            text.push('\n');
            text
        }
    };
    let backup = if lines.is_empty() || dry_run {
        None
    } else {
        write_with_backup(path, &text)?
    };
    Ok((Changes { lines }, backup))
}

/// Remove gza's registration from the file at `path`.
pub fn uninstall(
    agent: Agent,
    scope: Scope,
    path: &Path,
    root: &Path,
    dry_run: bool,
) -> Result<(Changes, Option<PathBuf>)> {
    if !path.exists() {
        return Ok((Changes::default(), None));
    }
    let mut lines = Vec::new();
    let text = match agent {
        Agent::Codex => {
            let mut doc = read_toml(path)?;
            if let Some(servers) = doc
                .get_mut("mcp_servers")
                .and_then(toml_edit::Item::as_table_like_mut)
            {
                let ours = servers.get(NAME).and_then(|t| t.as_table_like()).map(|t| {
                    let command = t
                        .get("command")
                        .and_then(|c| c.as_str())
                        .map(str::to_string);
                    let args: Vec<String> = t
                        .get("args")
                        .and_then(|a| a.as_array())
                        .map(|a| {
                            a.iter()
                                .filter_map(|x| x.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default();
                    (is_ours(command.as_deref(), &args), command)
                });
                if let Some((true, command)) = ours {
                    servers.remove(NAME);
                    lines.push(format!(
                        "- mcp_servers.{NAME}: {} {}",
                        command.unwrap_or_default(),
                        ARGS.join(" ")
                    ));
                }
                if servers.is_empty() {
                    doc.remove("mcp_servers");
                }
            }
            doc.to_string()
        }
        Agent::Claude | Agent::Gemini => {
            let mut settings = read_settings(path)?;
            let key = servers_key(agent, scope, root);
            let label = format!("{}.{NAME}", key.join("."));
            let mut emptied = false;
            if let Some(Value::Object(servers)) = json_servers(&settings, &key).cloned().as_ref()
                && let Some(existing) = servers.get(NAME)
            {
                let cmd = existing.get("command").and_then(Value::as_str);
                if is_ours(cmd, &strings(existing.get("args"))) {
                    lines.push(format!(
                        "- {label}: {} {}",
                        cmd.unwrap_or_default(),
                        ARGS.join(" ")
                    ));
                    let servers = json_servers_mut(&mut settings, &key, path)?;
                    servers.remove(NAME);
                    emptied = servers.is_empty();
                }
            }
            // An `mcpServers` gza made and left empty goes too (not another key's parents).
            if emptied && key.len() == 1 {
                settings.remove(&key[0]);
            }
            let mut text = serde_json::to_string_pretty(&settings).expect("JSON values serialise");
            text.push('\n');
            text
        }
    };
    let backup = if lines.is_empty() || dry_run {
        None
    } else {
        write_with_backup(path, &text)?
    };
    Ok((Changes { lines }, backup))
}

/// gza's registration in the file at `path`, if there is one.
pub fn installed(
    agent: Agent,
    scope: Scope,
    path: &Path,
    root: &Path,
) -> Result<Option<Installed>> {
    let (command, args) = match agent {
        Agent::Codex => {
            if !path.exists() {
                return Ok(None);
            }
            let doc = read_toml(path)?;
            let Some(t) = doc
                .get("mcp_servers")
                .and_then(|s| s.get(NAME))
                .and_then(toml_edit::Item::as_table_like)
            else {
                return Ok(None);
            };
            let command = t
                .get("command")
                .and_then(|c| c.as_str())
                .map(str::to_string);
            let args: Vec<String> = t
                .get("args")
                .and_then(|a| a.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            (command, args)
        }
        Agent::Claude | Agent::Gemini => {
            let settings = read_settings(path)?;
            let key = servers_key(agent, scope, root);
            let Some(existing) = json_servers(&settings, &key).and_then(|s| s.get(NAME)) else {
                return Ok(None);
            };
            (
                existing
                    .get("command")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                strings(existing.get("args")),
            )
        }
    };
    if !is_ours(command.as_deref(), &args) {
        return Ok(None);
    }
    let command = command.unwrap_or_default();
    Ok(Some(Installed {
        runs: runs(command.trim()),
        command,
    }))
}

/// The largest agent settings file gza edits; a larger one is refused unread.
const MAX_SETTINGS_BYTES: u64 = 16 * 1024 * 1024;

/// Read a TOML file for editing: empty when missing; an error naming the file when it does
/// not parse.
fn read_toml(path: &Path) -> Result<toml_edit::DocumentMut> {
    // Read as a regular file of bounded size: a FIFO or a device in the settings file's place
    // would block the install (or fill memory) instead of being refused in one line.
    let text = match gza_core::fsutil::read_regular_file(path, MAX_SETTINGS_BYTES) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
            Error::Usage(format!(
                "{} is not UTF-8 text; fix it by hand, gza will not overwrite it",
                path.display()
            ))
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(gza_core::fsutil::read_refused(path, e)),
    };
    text.parse::<toml_edit::DocumentMut>().map_err(|e| {
        Error::Usage(format!(
            "{} is not valid TOML ({}); fix it by hand, gza will not overwrite it",
            path.display(),
            gza_core::text::one_line(&e.to_string(), 200)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn codex_toml_keeps_comments_and_a_second_install_changes_nothing() {
        let dir = scratch();
        let path = dir.path().join("config.toml");
        let before = "# my settings\nmodel = \"o3\" # the best\n\n[mcp_servers.docs]\ncommand = \"docs-server\"\n";
        std::fs::write(&path, before).unwrap();
        let gza = Path::new("gza");
        let (c, backup) = install(
            Agent::Codex,
            Scope::Project,
            &path,
            dir.path(),
            gza,
            &[],
            false,
        )
        .unwrap();
        assert_eq!(c.lines, ["+ mcp_servers.gza: gza mcp"]);
        assert!(backup.is_some());
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(after.starts_with(before), "{after}");
        assert!(
            after.contains("[mcp_servers.gza]\ncommand = \"gza\"\nargs = [\"mcp\"]"),
            "{after}"
        );
        let (again, _) = install(
            Agent::Codex,
            Scope::Project,
            &path,
            dir.path(),
            gza,
            &[],
            false,
        )
        .unwrap();
        assert!(again.lines.is_empty());
        // A moved binary is updated in place.
        let (moved, _) = install(
            Agent::Codex,
            Scope::User,
            &path,
            dir.path(),
            Path::new("/opt/bin/gza"),
            &[],
            false,
        )
        .unwrap();
        assert_eq!(moved.lines, ["~ mcp_servers.gza: gza → /opt/bin/gza mcp"]);
        let (gone, _) = uninstall(Agent::Codex, Scope::Project, &path, dir.path(), false).unwrap();
        assert_eq!(gone.lines.len(), 1);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    }

    #[test]
    fn another_server_named_gza_is_not_taken_over() {
        let dir = scratch();
        let path = dir.path().join(".mcp.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {"gza": {"command": "npx", "args": ["gza-lookalike"]}}}"#,
        )
        .unwrap();
        let err = install(
            Agent::Claude,
            Scope::Project,
            &path,
            dir.path(),
            Path::new("gza"),
            &[],
            false,
        )
        .unwrap_err();
        assert!(err.to_string().contains("runs npx, not gza's"), "{err}");
        let (none, _) = uninstall(Agent::Claude, Scope::Project, &path, dir.path(), false).unwrap();
        assert!(none.lines.is_empty());
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .contains("gza-lookalike")
        );
    }

    #[test]
    fn claude_local_scope_is_keyed_by_the_project_path() {
        let dir = scratch();
        let path = dir.path().join(".claude.json");
        std::fs::write(
            &path,
            r#"{"numStartups": 3, "projects": {"/elsewhere": {"x": 1}}}"#,
        )
        .unwrap();
        install(
            Agent::Claude,
            Scope::Local,
            &path,
            dir.path(),
            Path::new("/usr/bin/gza"),
            &[],
            false,
        )
        .unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let key = root.to_string_lossy();
        assert_eq!(
            v["projects"][key.as_ref()]["mcpServers"]["gza"]["command"],
            "/usr/bin/gza"
        );
        assert_eq!(v["numStartups"], 3);
        assert_eq!(v["projects"]["/elsewhere"]["x"], 1);
        assert!(
            installed(Agent::Claude, Scope::Local, &path, dir.path())
                .unwrap()
                .is_some()
        );
        // The user scope of the same file is another key.
        assert!(
            installed(Agent::Claude, Scope::User, &path, dir.path())
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_file_that_does_not_parse_is_refused_and_left_alone() {
        let dir = scratch();
        let toml = dir.path().join("config.toml");
        std::fs::write(&toml, "model = [unclosed\n").unwrap();
        let err = install(
            Agent::Codex,
            Scope::Project,
            &toml,
            dir.path(),
            Path::new("gza"),
            &[],
            false,
        )
        .unwrap_err();
        assert!(err.to_string().contains("is not valid TOML"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&toml).unwrap(),
            "model = [unclosed\n"
        );
    }
}
