//! `gza learnings archive`: retire learnings (and the status change `restore` shares).

use std::io::Write;

use clap::Args;

use super::say_waiting;
use crate::cli::{Context, output};
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
    let changes =
        crate::actions::set_learning_status(&project, &store, ids, status, reason, say_waiting)?;
    let verb = if status == Status::Archived {
        "Archived"
    } else {
        "Restored"
    };
    let mut out = output::stdout();
    for c in &changes {
        let l = &c.learning;
        if c.changed {
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
    Ok(())
}
