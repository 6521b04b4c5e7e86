//! `gza learnings export`: validated learnings to an expertise.yaml.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::cli::{Context, output};
use crate::learn::expertise;

#[derive(Debug, Args)]
pub(super) struct ExportArgs {
    /// Where to write (default: learnings.expertise_path).
    path: Option<PathBuf>,
}

pub(super) fn export(ctx: &Context, args: ExportArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open_for_reading()?;
    let _snapshot = super::SnapshotAfter::new(&project, &store);
    let path = args
        .path
        .map(|p| if p.is_absolute() { p } else { ctx_relative(&p) });
    let written = expertise::export(&project, &store, path.as_deref())?;
    let n = store.tier2_learnings()?.len();
    writeln!(
        output::stdout(),
        "{} Wrote {n} validated learning{} to {written}",
        output::paint(output::GREEN, "✓"),
        if n == 1 { "" } else { "s" }
    )?;
    Ok(())
}

pub(super) fn ctx_relative(p: &std::path::Path) -> PathBuf {
    std::env::current_dir()
        .map(|d| d.join(p))
        .unwrap_or_else(|_| p.to_path_buf())
}
