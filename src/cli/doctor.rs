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
