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
