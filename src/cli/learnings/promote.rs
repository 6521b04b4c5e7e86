//! `gza learnings promote`: accept drafts or quarantined learnings.

use std::io::Write;

use clap::Args;

use super::{learning_by_id, rewrite_file, wait_for_regeneration};
use crate::cli::{Context, output};
use crate::learn::rank::Ranker;

#[derive(Debug, Args)]
pub(super) struct PromoteArgs {
    /// Ids of the learnings (e.g. L12 L13).
    #[arg(required = true)]
    ids: Vec<String>,
}

pub(super) fn promote(ctx: &Context, args: PromoteArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    // Every id is checked before anything changes.
    let learnings = args
        .ids
        .iter()
        .map(|id| learning_by_id(&store, id))
        .collect::<anyhow::Result<Vec<_>>>()?;
    drop(wait_for_regeneration(&project)?);
    rewrite_file(&project, &store, None)?;
    let ids: Vec<i64> = learnings.iter().map(|l| l.id).collect();
    let changed = store.promote_learnings(&ids, "promoted with `gza learnings promote`")?;
    let mut out = output::stdout();
    for (l, changed) in learnings.iter().zip(changed) {
        if changed {
            writeln!(
                out,
                "{} Promoted {}: {}",
                output::paint(output::GREEN, "✓"),
                l.label(),
                l.text
            )?;
        } else {
            writeln!(out, "  {} was already active", l.label())?;
        }
    }
    let ranker = Ranker::load(&project);
    let _ = ranker.embed_missing(&store);
    rewrite_file(&project, &store, Some(&ranker))?;
    Ok(())
}
