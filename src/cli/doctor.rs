//! `gza doctor`: which sandboxes work on this machine, and whether the configured ones do.

use std::io::Write;

use clap::Args;

use super::{Context, output};
use crate::config::{ProviderKind, SandboxKind};
use crate::error::Error;
use crate::runner::sandbox;

#[derive(Debug, Args)]
pub struct DoctorArgs {}

/// Prints each sandbox's state; exits 1 when a sandbox the project's gza.yaml uses does not work.
pub fn cmd_doctor(ctx: &Context, _args: DoctorArgs) -> anyhow::Result<std::process::ExitCode> {
    let mut out = output::stdout();
    writeln!(out, "Sandboxes on this machine:")?;
    let mut broken = Vec::new();
    for kind in SandboxKind::ALL {
        match sandbox::probe(kind) {
            Ok(found) => writeln!(out, "  {:<7} works: {found}", kind.as_str())?,
            Err(why) => {
                writeln!(out, "  {:<7} does not work: {why}", kind.as_str())?;
                broken.push(kind);
            }
        }
    }
    match super::model::model_dir(ctx) {
        Some(dir) => match super::model::check(&dir) {
            None => writeln!(
                out,
                "Embedding model: {} (matches its pinned hashes)",
                dir.display()
            )?,
            Some(problem) => writeln!(
                out,
                "Embedding model: none usable ({problem}); learnings are ranked by words only until you run `gza model install`"
            )?,
        },
        None => writeln!(
            out,
            "Embedding model: no place for it (no HOME); set GZA_MODEL_DIR and run `gza model install`"
        )?,
    }
    let project = match ctx.project() {
        Ok(p) => p,
        Err(Error::NotInitialized(_)) => return Ok(std::process::ExitCode::SUCCESS),
        Err(e) => return Err(e.into()),
    };
    let config = &project.config;
    let uses: Vec<String> = ProviderKind::ALL
        .iter()
        .map(|&k| format!("{} {}", k.as_str(), config.sandbox_for(k).as_str()))
        .collect();
    writeln!(out, "This project (gza.yaml): {}", uses.join(", "))?;
    writeln!(out, "Agent CLIs:")?;
    for kind in ProviderKind::ALL {
        let program = crate::runner::providers::binary(kind, config);
        let state = if program.is_empty() {
            "not configured".to_string()
        } else if crate::process::check_binary(&program, "").is_err() {
            "not found".to_string()
        } else {
            agent_version(&program)
        };
        writeln!(out, "  {:<7} {program}: {state}", kind.as_str())?;
    }
    let default = config.sandbox_for(config.provider);
    agent_view(&mut out, &project, config.provider, default)?;
    trust_state(&mut out, &project)?;
    if broken.contains(&default) {
        writeln!(
            out,
            "Tasks of the default provider ({}) would fail with SANDBOX_ERROR: fix the sandbox above or change `sandbox` in gza.yaml.",
            config.provider.as_str()
        )?;
        return Ok(std::process::ExitCode::from(1));
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// The first line `program --version` prints, or why there is none.
fn agent_version(program: &str) -> String {
    match std::process::Command::new(program)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
    {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string(),
        Ok(out) => format!("`--version` failed ({})", out.status),
        Err(e) => format!("cannot run: {e}"),
    }
}

/// What an agent of the default provider sees where it runs: files, environment, network.
fn agent_view(
    out: &mut impl Write,
    project: &crate::project::Project,
    provider: ProviderKind,
    kind: SandboxKind,
) -> std::io::Result<()> {
    writeln!(
        out,
        "An agent of this project ({}, sandbox {}) sees:",
        provider.as_str(),
        kind.as_str()
    )?;
    if kind == SandboxKind::None {
        writeln!(
            out,
            "  everything you can: it runs as you, with your files, your whole environment and the network"
        )?;
        return Ok(());
    }
    let home_entries = sandbox::provider_home_entries(provider);
    let home = if home_entries.is_empty() {
        "HOME empty".to_string()
    } else {
        format!("HOME empty but for {}", home_entries.join(", "))
    };
    writeln!(
        out,
        "  files: the system read-only; its task's worktree read-write (an explore, plan or review \
         task without a branch: the project, but for .git, gza.yaml and gza.local.yaml read-only); \
         the repository's .git read-only; {home}; not .gza/ (the database, logs, other tasks' \
         worktrees) nor the rest of the project"
    )?;
    let home_dir = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let given =
        sandbox::agent_environment(provider, &project.config.sandbox_env, home_dir.as_deref());
    let names: Vec<&str> = given.iter().map(|(k, _)| k.as_str()).collect();
    let hidden = std::env::vars_os().count().saturating_sub(given.len());
    writeln!(
        out,
        "  environment: {} (and GZA_TASK_ID, GZA_PROJECT_ROOT, GZA_RUN); {hidden} other variables of yours are not passed",
        if names.is_empty() {
            "nothing".to_string()
        } else {
            names.join(", ")
        }
    )?;
    writeln!(
        out,
        "  network: shared: its API, and anything this machine reaches, loopback services included"
    )?;
    Ok(())
}

/// Whether the project's gza.yaml sets anything that needs trust, and whether it has it; and
/// which agent CLIs' settings files in the project its agents run without.
fn trust_state(out: &mut impl Write, project: &crate::project::Project) -> std::io::Result<()> {
    if project.ignored_settings.is_empty() {
        writeln!(
            out,
            "Trust: nothing in gza.yaml is ignored for want of trust"
        )?;
    } else {
        writeln!(
            out,
            "Trust: {}",
            crate::settings::ignored_notice(&project.ignored_settings)
        )?;
    }
    match crate::trust::untrusted_agent_configs(&project.root, &project.root) {
        Ok(files) if files.is_empty() => Ok(()),
        Ok(files) => writeln!(
            out,
            "  agent settings not trusted as they are now (Claude Code runs without them; Gemini CLI and Codex do not start): {}; read them, then run `gza trust`",
            files.join(", ")
        ),
        Err(e) => writeln!(out, "  agent settings: {e}"),
    }
}
