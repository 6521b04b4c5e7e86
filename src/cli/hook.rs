//! `gza hook`: install gza's Claude Code hooks, see where they are, and (run by Claude Code)
//! the handlers themselves.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::{Context, output, usage};
use crate::hooks::install::{self, Scope};

#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    command: HookCommand,
}

#[derive(Debug, Subcommand)]
enum HookCommand {
    /// Add gza's hooks to a Claude Code settings file (default: the project's .claude/settings.json).
    Install(ScopeArgs),
    /// Remove gza's hooks from a Claude Code settings file.
    Uninstall(ScopeArgs),
    /// Which events are installed where, and whether their command resolves.
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
    /// The project's .claude/settings.json (shared with the team).
    #[arg(long, group = "scope")]
    project: bool,
    /// The project's .claude/settings.local.json (yours only).
    #[arg(long, group = "scope")]
    local: bool,
    /// ~/.claude/settings.json (every project of yours).
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

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

fn settings_path(root: &Path, scope: Scope) -> anyhow::Result<PathBuf> {
    scope.path(root, home().as_deref()).ok_or_else(|| {
        usage("HOME is not set, so there is no user settings file; use --project or --local")
    })
}

pub fn cmd_hook(ctx: &Context, args: HookArgs) -> anyhow::Result<()> {
    match args.command {
        HookCommand::Install(a) => install_cmd(ctx, a, true),
        HookCommand::Uninstall(a) => install_cmd(ctx, a, false),
        HookCommand::Status => status(ctx),
        HookCommand::ExtractSession(a) => extract(ctx, a),
        HookCommand::Embed => {
            let project = ctx.project()?;
            crate::learn::rank::run_embed_job(&project)?;
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
    let path = settings_path(&project.root, scope)?;
    let (changes, backup) = if add {
        let gza = std::env::current_exe()
            .map_err(|e| usage(format!("cannot tell where this gza is installed: {e}")))?;
        install::install(&path, &gza, args.dry_run)?
    } else {
        install::uninstall(&path, args.dry_run)?
    };
    let mut out = output::stdout();
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
        return Ok(());
    }
    let verb = match (add, args.dry_run) {
        (true, true) => "Would install into",
        (true, false) => "Installed into",
        (false, true) => "Would remove from",
        (false, false) => "Removed from",
    };
    writeln!(
        out,
        "{} {verb} {shown} ({}):",
        output::paint(output::GREEN, "✓"),
        scope.name()
    )?;
    for line in &changes.lines {
        writeln!(out, "  {line}")?;
    }
    if let Some(bak) = backup {
        writeln!(out, "  The previous file is kept as {}", bak.display())?;
    }
    Ok(())
}

fn status(ctx: &Context) -> anyhow::Result<()> {
    let project = ctx.project()?;
    let mut out = output::stdout();
    let mut any = false;
    for scope in Scope::ALL {
        let Ok(path) = settings_path(&project.root, scope) else {
            continue;
        };
        let shown = path
            .strip_prefix(&project.root)
            .unwrap_or(&path)
            .display()
            .to_string();
        match install::installed(&path) {
            Ok(list) if list.is_empty() => {
                writeln!(out, "{:<8} {shown}: not installed", scope.name())?
            }
            Ok(list) => {
                any = true;
                let events: Vec<&str> = list.iter().map(|i| i.event).collect();
                writeln!(out, "{:<8} {shown}: {}", scope.name(), events.join(", "))?;
                for i in list.iter().filter(|i| !i.resolves) {
                    writeln!(
                        out,
                        "         {} {}: `{}` does not run (moved or deleted?); run `gza hook install` again",
                        output::paint(output::YELLOW, "warning:"),
                        i.event,
                        i.command
                    )?;
                }
            }
            Err(e) => writeln!(out, "{:<8} {e}", scope.name())?,
        }
    }
    if !any {
        writeln!(
            out,
            "Install with `gza hook install` (--local or --user for other scopes)."
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
