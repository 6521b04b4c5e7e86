//! `gza learnings import`: an expertise.yaml read back.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::export::ctx_relative;
use super::rewrite_file;
use crate::cli::{Context, output};
use crate::learn::expertise;
use crate::learn::rank::Ranker;
use crate::learning::label;

#[derive(Debug, Args)]
pub(super) struct ImportArgs {
    /// An expertise.yaml (as `export` writes it: version, patterns, evolution_log).
    path: PathBuf,
}

pub(super) fn import(ctx: &Context, args: ImportArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let path = if args.path.is_absolute() {
        args.path.clone()
    } else {
        ctx_relative(&args.path)
    };
    let result = expertise::import(&project, &store, &path)?;
    let mut out = output::stdout();
    for (id, text, tier) in &result.added {
        let tier = if *tier == 2 {
            "tier 2: its evidence is in this project"
        } else {
            "tier 1: no evidence in this project yet"
        };
        writeln!(
            out,
            "{} Imported {}: {text} ({tier})",
            output::paint(output::GREEN, "✓"),
            label(*id)
        )?;
        crate::cli::learnings::note_if_held(&store, *id)?;
    }
    writeln!(
        out,
        "{} imported, {} skipped (already known or not a learning)",
        result.added.len(),
        result.skipped
    )?;
    if !result.added.is_empty() {
        let ranker = Ranker::load(&project);
        let _ = ranker.embed_missing(&store);
        rewrite_file(&project, &store, Some(&ranker))?;
    }
    Ok(())
}
