//! `gza learnings promote`: accept drafts or quarantined learnings.

use std::io::Write;

use clap::Args;

use super::say_waiting;
use crate::cli::{Context, output};

#[derive(Debug, Args)]
pub(super) struct PromoteArgs {
    /// Ids of the learnings (e.g. L12 L13).
    #[arg(required = true)]
    ids: Vec<String>,
}

pub(super) fn promote(ctx: &Context, args: PromoteArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let changes = crate::actions::promote_learnings(&project, &store, &args.ids, say_waiting)?;
    let mut out = output::stdout();
    for c in &changes {
        let l = &c.learning;
        if c.changed {
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
    Ok(())
}
