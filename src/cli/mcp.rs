//! `gza mcp`: serve learnings and tasks over MCP on stdio; `install`, `status` and `uninstall`
//! register the server with Claude Code, Codex and Gemini CLI.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::{Context, output, usage};
use crate::hooks::install::{Agent, Scope};
use crate::mcp::install;

#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(subcommand)]
    command: Option<McpCommand>,
}

#[derive(Debug, Subcommand)]
enum McpCommand {
    /// Register `gza mcp` with an agent (default: Claude Code, the project's .mcp.json).
    Install(ScopeArgs),
    /// Remove gza's registration from an agent's configuration.
    Uninstall(ScopeArgs),
    /// Where gza's server is registered, for each agent, and what command a teammate runs.
    Status,
}

#[derive(Debug, Args)]
struct ScopeArgs {
    /// The agent: claude (.mcp.json), codex (.codex/config.toml), gemini (.gemini/settings.json),
    /// or all three.
    #[arg(long, default_value = "claude", value_parser = ["claude", "codex", "gemini", "all"])]
    agent: String,
    /// The project's configuration (shared with the team: it runs `gza` from each person's PATH).
    #[arg(long, group = "scope")]
    project: bool,
    /// This project only, in your own configuration (~/.claude.json; Claude Code only).
    #[arg(long, group = "scope")]
    local: bool,
    /// Your user configuration (every project of yours).
    #[arg(long, group = "scope")]
    user: bool,
    /// Print what would change; write nothing.
    #[arg(long)]
    dry_run: bool,
}

impl ScopeArgs {
    fn agents(&self) -> Vec<Agent> {
        if self.agent == "all" {
            Agent::ALL.to_vec()
        } else {
            self.agent.parse().into_iter().collect()
        }
    }

    fn scope(&self) -> Scope {
        if self.local {
            Scope::Local
        } else if self.user {
            Scope::User
        } else {
            Scope::Project
        }
    }
}

pub fn cmd_mcp(ctx: &Context, args: McpArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        None => {
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                writeln!(
                    output::stderr(),
                    "gza mcp speaks MCP on standard input and output, for an agent CLI to start; `gza mcp install` registers it. Waiting for a client (Ctrl-D ends)."
                )?;
            }
            Ok(crate::mcp::serve(ctx.dir()))
        }
        Some(McpCommand::Install(a)) => install_cmd(ctx, a, true).map(|_| ExitCode::SUCCESS),
        Some(McpCommand::Uninstall(a)) => install_cmd(ctx, a, false).map(|_| ExitCode::SUCCESS),
        Some(McpCommand::Status) => status(ctx).map(|_| ExitCode::SUCCESS),
    }
}

fn config_path(root: &Path, agent: Agent, scope: Scope) -> anyhow::Result<PathBuf> {
    if agent != Agent::Claude && scope == Scope::Local {
        return Err(usage(format!(
            "{} has no local MCP configuration; use --project or --user",
            agent.title()
        )));
    }
    install::config_path(agent, scope, root, super::hook::home().as_deref())
        .ok_or_else(|| usage("HOME is not set, so there is no user configuration; use --project"))
}

fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The environment the server needs that an agent may not pass on: the shared database named
/// by `GZA_DATABASE_URL` (Codex starts MCP servers with only HOME and PATH; a team shares the
/// database, so a file the team commits may name it as `database:` in gza.yaml may). A URL
/// carrying a password is refused: it would be written into the agent's settings.
fn server_env() -> anyhow::Result<Vec<(String, String)>> {
    let Ok(url) = std::env::var("GZA_DATABASE_URL") else {
        return Ok(Vec::new());
    };
    if url.trim().is_empty() {
        return Ok(Vec::new());
    }
    let has_password = gza_core::database::DatabaseSpec::parse(&url, None)
        .map(|spec| spec.password.is_some())
        .map_err(|e| usage(format!("GZA_DATABASE_URL: {e}")))?;
    if has_password {
        return Err(usage(
            "GZA_DATABASE_URL carries a password, which gza will not write into an agent's settings; \
             keep the password in ~/.pgpass (or a service file) and the URL without it",
        ));
    }
    Ok(vec![("GZA_DATABASE_URL".to_string(), url)])
}

fn install_cmd(ctx: &Context, args: ScopeArgs, add: bool) -> anyhow::Result<()> {
    let project = ctx.project()?;
    let scope = args.scope();
    // Every agent's file is checked first, so `--agent all --local` changes nothing.
    let paths = args
        .agents()
        .into_iter()
        .map(|a| config_path(&project.root, a, scope).map(|p| (a, p)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // A file the team commits names `gza`, found on each person's PATH; a personal one names
    // this binary.
    let gza = if scope.shared() {
        PathBuf::from("gza")
    } else {
        std::env::current_exe()
            .map_err(|e| usage(format!("cannot tell where this gza is installed: {e}")))?
    };
    let env = server_env()?;
    let mut out = output::stdout();
    for (agent, path) in paths {
        let config = super::trust::AgentConfigWrite::before(&project.root, &path);
        let (changes, backup) = if add {
            install::install(agent, scope, &path, &project.root, &gza, &env, args.dry_run)?
        } else {
            install::uninstall(agent, scope, &path, &project.root, args.dry_run)?
        };
        let file = shown(&project.root, &path);
        if changes.lines.is_empty() {
            let state = if add {
                "already registered in"
            } else {
                "not registered in"
            };
            writeln!(out, "gza's MCP server is {state} {file}; nothing changed")?;
        } else {
            let verb = match (add, args.dry_run) {
                (true, true) => "Would register in",
                (true, false) => "Registered in",
                (false, true) => "Would remove from",
                (false, false) => "Removed from",
            };
            writeln!(
                out,
                "{} {verb} {file} ({}, {}):",
                output::paint(output::GREEN, "✓"),
                agent.title(),
                scope.name()
            )?;
            for line in &changes.lines {
                writeln!(out, "  {line}")?;
            }
            if let Some(bak) = backup {
                writeln!(out, "  The previous file is kept as {}", bak.display())?;
            }
            if let Some(config) = config
                && !args.dry_run
            {
                config.after(&mut out)?;
            }
        }
        if add {
            for line in notes(agent, scope, &gza) {
                writeln!(out, "  {line}")?;
            }
        }
    }
    Ok(())
}

/// What the person must know for the server to start: where `gza` comes from, and each agent's
/// own approval of a project's servers.
fn notes(agent: Agent, scope: Scope, gza: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    if scope.shared() {
        match crate::hooks::install::runs(&gza.to_string_lossy()) {
            Some(found) => notes.push(format!(
                "It runs `gza mcp` from each person's PATH (here: {}).",
                found.display()
            )),
            None => notes.push(format!(
                "{} `gza` is not on your PATH, so the server does not start here until it is (or register with --user).",
                output::paint(output::YELLOW, "warning:")
            )),
        }
    }
    match (agent, scope) {
        (Agent::Claude, Scope::Project) => notes.push(
            "Claude Code asks each person to approve a project's .mcp.json servers once (`claude mcp list` shows them).".into(),
        ),
        (Agent::Codex, Scope::Project) => notes.push(
            "Codex reads a project's .codex/config.toml only in a project you trusted.".into(),
        ),
        (Agent::Gemini, Scope::Project) => notes.push(
            "Gemini CLI starts a project's servers only in a trusted folder.".into(),
        ),
        _ => {}
    }
    notes
}

fn status(ctx: &Context) -> anyhow::Result<()> {
    let project = ctx.project()?;
    let mut out = output::stdout();
    let mut any = false;
    for agent in Agent::ALL {
        writeln!(out, "{}:", agent.title())?;
        for &scope in agent.scopes() {
            let Ok(path) = config_path(&project.root, agent, scope) else {
                continue;
            };
            let file = shown(&project.root, &path);
            match install::installed(agent, scope, &path, &project.root) {
                Ok(None) => writeln!(out, "{:<8} {file}: not registered", scope.name())?,
                Ok(Some(found)) => {
                    any = true;
                    let who = if found.command.contains('/') {
                        format!("a teammate runs {}, this machine's path", found.command)
                    } else {
                        format!("a teammate runs `{} mcp` from their PATH", found.command)
                    };
                    let here = match &found.runs {
                        Some(p) => format!("here: {}", p.display()),
                        None => "not found here".to_string(),
                    };
                    writeln!(
                        out,
                        "{:<8} {file}: registered; {who} ({here})",
                        scope.name()
                    )?;
                    if found.runs.is_none() {
                        writeln!(
                            out,
                            "         {} `{}` does not run here (moved or deleted, or not on PATH?); run `gza mcp install` again",
                            output::paint(output::YELLOW, "warning:"),
                            found.command
                        )?;
                    }
                }
                Err(e) => writeln!(out, "{:<8} {e}", scope.name())?,
            }
        }
    }
    if !any {
        writeln!(
            out,
            "Register with `gza mcp install --agent claude|codex|gemini|all` (--local or --user for other scopes)."
        )?;
    }
    Ok(())
}
