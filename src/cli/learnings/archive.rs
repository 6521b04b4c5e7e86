//! `gza learnings archive`: retire learnings (and the status change `restore` shares).

use std::io::Write;

use clap::Args;

use super::{learning_by_id, rewrite_file, wait_for_regeneration};
use crate::cli::{Context, output};
use crate::learn::rank::Ranker;
use crate::learning::Status;

#[derive(Debug, Args)]
pub(super) struct ArchiveArgs {
    /// Ids of the learnings (e.g. L12 L13).
    #[arg(required = true)]
    ids: Vec<String>,
    /// Why, kept with the learning.
    #[arg(long)]
    reason: Option<String>,
}

pub(super) fn archive(ctx: &Context, args: ArchiveArgs) -> anyhow::Result<()> {
    set_status(ctx, &args.ids, Status::Archived, args.reason.as_deref())
}

pub(super) fn set_status(
    ctx: &Context,
    ids: &[String],
    status: Status,
    reason: Option<&str>,
) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    // Every id is checked before anything changes.
    let learnings = ids
        .iter()
        .map(|id| learning_by_id(&store, id))
        .collect::<anyhow::Result<Vec<_>>>()?;
    drop(wait_for_regeneration(&project)?);
    rewrite_file(&project, &store, None)?;
    let reason = reason.map(crate::redact::one_clean_line);
    let mut out = output::stdout();
    for l in &learnings {
        let (default_reason, verb) = if status == Status::Archived {
            ("archived with `gza learnings archive`", "Archived")
        } else {
            ("restored with `gza learnings restore`", "Restored")
        };
        let changed = store.set_learning_status(
            l.id,
            status,
            Some(reason.as_deref().unwrap_or(default_reason)),
        )?;
        if changed {
            writeln!(
                out,
                "{} {verb} {}: {}",
                output::paint(output::GREEN, "✓"),
                l.label(),
                l.text
            )?;
        } else {
            writeln!(out, "  {} was already {}", l.label(), status.as_str())?;
        }
    }
    let ranker = Ranker::load(&project);
    let _ = ranker.embed_missing(&store);
    rewrite_file(&project, &store, Some(&ranker))?;
    Ok(())
}
