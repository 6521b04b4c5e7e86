//! `gza hook`: install gza's hooks into Claude Code, Codex and Gemini CLI, see where they are,
//! and (run by the agents) the handlers themselves.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::{Context, output, usage};
use crate::hooks::install::{self, Agent, Scope};

#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    command: HookCommand,
}

#[derive(Debug, Subcommand)]
enum HookCommand {
    /// Add gza's hooks to an agent's settings (default: Claude Code, the project's
    /// .claude/settings.json).
    Install(ScopeArgs),
    /// Remove gza's hooks from an agent's settings.
    Uninstall(ScopeArgs),
    /// Which events are installed where, for each agent, and what command a teammate runs.
    Status,
    /// SessionStart handler (run by Claude Code): the CRITICAL learnings and drafts waiting.
    SessionStart,
    /// UserPromptSubmit handler: up to 3 learnings relevant to the prompt.
    UserPromptSubmit,
    /// PreToolUse handler: process knowledge whose triggers match the tool call.
    PreToolUse,
    /// Stop handler: [PROCESS_KNOWLEDGE] blocks become draft learnings.
    Stop,
    /// SessionEnd handler: like Stop, and the session is extracted when a model is configured.
    SessionEnd,
    /// Extract learnings from a session's transcript (started by the SessionEnd handler).
    #[command(hide = true)]
    ExtractSession(ExtractArgs),
    /// Embed the learnings that lack a vector, and derive the model's int8 copy when needed
    /// (started in the background by hooks and commands that left such work).
    #[command(hide = true)]
    Embed,
}

#[derive(Debug, Args)]
struct ScopeArgs {
    /// The agent: claude (.claude/settings.json), codex (.codex/hooks.json), gemini
    /// (.gemini/settings.json), or all three.
    #[arg(long, default_value = "claude", value_parser = ["claude", "codex", "gemini", "all"])]
    agent: String,
    /// The project's settings (shared with the team: the hooks run `gza` from each person's PATH).
    #[arg(long, group = "scope")]
    project: bool,
    /// The project's .claude/settings.local.json (yours only; Claude Code only).
    #[arg(long, group = "scope")]
    local: bool,
    /// Your user settings, e.g. ~/.claude/settings.json (every project of yours).
    #[arg(long, group = "scope")]
    user: bool,
    /// Print what would change; write nothing.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Debug, Args)]
struct ExtractArgs {
    #[arg(long)]
    session: String,
    #[arg(long)]
    transcript: PathBuf,
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

pub(super) fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

fn settings_path(root: &Path, agent: Agent, scope: Scope) -> anyhow::Result<PathBuf> {
    if !agent.scopes().contains(&scope) {
        return Err(usage(format!(
            "{} has no {} settings file; use --project or --user",
            agent.title(),
            scope.name()
        )));
    }
    agent.path(scope, root, home().as_deref()).ok_or_else(|| {
        usage("HOME is not set, so there is no user settings file; use --project or --local")
    })
}

/// How long the background job may take to reach a far database before it gives up.
const CONTACT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

pub fn cmd_hook(ctx: &Context, args: HookArgs) -> anyhow::Result<()> {
    match args.command {
        HookCommand::Install(a) => install_cmd(ctx, a, true),
        HookCommand::Uninstall(a) => install_cmd(ctx, a, false),
        HookCommand::Status => status(ctx),
        HookCommand::ExtractSession(a) => extract(ctx, a),
        HookCommand::Embed => {
            let project = ctx.project()?;
            // Team mode: each round refreshes the hooks' snapshot of the far database first.
            if crate::hooks::far::applies(&project) {
                // A database behind a dead link can take the connection and never answer: the
                // job (which holds the lock every later refresh waits on) gives up after
                // CONTACT_DEADLINE without reaching it, so the next stale hook starts another.
                let reached = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
                let watched = reached.clone();
                let log = project.logs_dir().join("learnings.log");
                std::thread::spawn(move || {
                    std::thread::sleep(CONTACT_DEADLINE);
                    if !watched.load(std::sync::atomic::Ordering::Relaxed) {
                        crate::fsutil::append_log(
                            &log,
                            "the background job did not reach the database in 2 minutes; it stops, and the next hook starts another",
                        );
                        std::process::exit(1);
                    }
                });
                crate::learn::rank::run_embed_job_with(&project, &|store| {
                    reached.store(true, std::sync::atomic::Ordering::Relaxed);
                    crate::hooks::far::refresh(&project, store)
                })?;
            } else {
                crate::learn::rank::run_embed_job(&project)?;
            }
            Ok(())
        }
        // Claude Code runs the handlers through `hooks::run_handler` before the arguments are
        // parsed; these arms are reached only when they are named in an unusual way.
        HookCommand::SessionStart => handler("session-start"),
        HookCommand::UserPromptSubmit => handler("user-prompt-submit"),
        HookCommand::PreToolUse => handler("pre-tool-use"),
        HookCommand::Stop => handler("stop"),
        HookCommand::SessionEnd => handler("session-end"),
    }
}

fn handler(name: &str) -> anyhow::Result<()> {
    crate::hooks::run_handler(name);
    Ok(())
}

fn install_cmd(ctx: &Context, args: ScopeArgs, add: bool) -> anyhow::Result<()> {
    let project = ctx.project()?;
    let scope = args.scope();
    let agents = args.agents();
    // Check every agent's file first, so `--agent all --local` changes nothing.
    let paths = agents
        .iter()
        .map(|&a| settings_path(&project.root, a, scope).map(|p| (a, p)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // A file the team commits names `gza`, found on each person's PATH; a personal one names
    // this binary.
    let gza = if scope.shared() {
        PathBuf::from("gza")
    } else {
        std::env::current_exe()
            .map_err(|e| usage(format!("cannot tell where this gza is installed: {e}")))?
    };
    let mut out = output::stdout();
    for (agent, path) in paths {
        let config = super::trust::AgentConfigWrite::before(&project.root, &path);
        let (changes, backup) = if add {
            install::install(&path, agent, &gza, args.dry_run)?
        } else {
            install::uninstall(&path, agent, args.dry_run)?
        };
        let shown = path
            .strip_prefix(&project.root)
            .unwrap_or(&path)
            .display()
            .to_string();
        if changes.lines.is_empty() {
            let state = if add {
                "already installed in"
            } else {
                "not installed in"
            };
            writeln!(out, "gza's hooks are {state} {shown}; nothing changed")?;
        } else {
            let verb = match (add, args.dry_run) {
                (true, true) => "Would install into",
                (true, false) => "Installed into",
                (false, true) => "Would remove from",
                (false, false) => "Removed from",
            };
            writeln!(
                out,
                "{} {verb} {shown} ({}, {}):",
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

/// What the person must know for the hooks to run: where `gza` comes from, and each agent's
/// own review of new hooks.
fn notes(agent: Agent, scope: Scope, gza: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    if scope.shared() {
        match install::runs(&gza.to_string_lossy()) {
            Some(found) => notes.push(format!(
                "The hooks run `gza` from each person's PATH (here: {}).",
                found.display()
            )),
            None => notes.push(format!(
                "{} `gza` is not on your PATH, so these hooks do nothing here until it is (or install with --user).",
                output::paint(output::YELLOW, "warning:")
            )),
        }
    }
    match agent {
        Agent::Claude => {}
        Agent::Codex => notes.push(
            "Codex runs a project's hooks only in a trusted project, and each new or changed hook only after you review and trust it with /hooks in codex (`codex exec --dangerously-bypass-hook-trust` skips that review for automation)."
                .into(),
        ),
        Agent::Gemini => notes.push(
            "Gemini CLI runs a project's hooks only in a trusted folder, and warns before running new or changed ones."
                .into(),
        ),
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
            let Ok(path) = settings_path(&project.root, agent, scope) else {
                continue;
            };
            let shown = path
                .strip_prefix(&project.root)
                .unwrap_or(&path)
                .display()
                .to_string();
            match install::installed(&path, agent) {
                Ok(list) if list.is_empty() => {
                    writeln!(out, "{:<8} {shown}: not installed", scope.name())?
                }
                Ok(list) => {
                    any = true;
                    let events: Vec<&str> = list.iter().map(|i| i.event).collect();
                    writeln!(out, "{:<8} {shown}: {}", scope.name(), events.join(", "))?;
                    if let Some(first) = list.first() {
                        let program = first.command.split(" hook ").next().unwrap_or_default();
                        let teammate = if program.contains('/') {
                            format!("a teammate runs {program}, this machine's path")
                        } else {
                            format!("a teammate runs `{program}` from their PATH")
                        };
                        let here = match &first.runs {
                            Some(p) => format!("here: {}", p.display()),
                            None => "not found here".to_string(),
                        };
                        writeln!(out, "         {teammate} ({here})")?;
                    }
                    if let Some(i) = list.iter().find(|i| i.runs.is_none()) {
                        writeln!(
                            out,
                            "         {} `{}` does not run here (moved or deleted, or not on PATH?); run `gza hook install` again",
                            output::paint(output::YELLOW, "warning:"),
                            i.command
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
            "Install with `gza hook install --agent claude|codex|gemini|all` (--local or --user for other scopes)."
        )?;
    }
    Ok(())
}

fn extract(ctx: &Context, args: ExtractArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let outcome =
        crate::learn::session::extract_session(&project, &store, &args.session, &args.transcript);
    let line = match &outcome {
        Ok(what) => what.clone(),
        Err(e) => format!("session {}: {e}", args.session),
    };
    crate::learn::log(&project, &line);
    outcome.map(|_| ()).map_err(Into::into)
}
