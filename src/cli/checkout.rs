//! `gza checkout`: a task's branch checked out in the project's main checkout.

use std::io::Write;

use clap::Args;

use super::{Context, output};
use crate::task::TaskId;

#[derive(Debug, Args)]
pub struct CheckoutArgs {
    /// The task whose branch to check out (an improve or review task: the branch it worked on).
    id: TaskId,
}

pub fn cmd_checkout(ctx: &Context, args: CheckoutArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let task = store.get_task(args.id)?;
    let done = crate::branch::checkout(&project, &store, &task)?;
    let mut out = output::stdout();
    if done.already {
        writeln!(
            out,
            "Branch {} (task {}) is checked out here already",
            done.branch, done.owner.id
        )?;
        return Ok(());
    }
    if let Some(path) = &done.removed_worktree {
        let shown = path.strip_prefix(&project.root).unwrap_or(path);
        writeln!(
            out,
            "Removed the worktree {} (it had nothing uncommitted), as a branch is checked out in one place at a time",
            shown.display()
        )?;
    }
    writeln!(
        out,
        "{} Checked out {} (task {}); `git switch -` goes back",
        output::paint(output::GREEN, "✓"),
        done.branch,
        done.owner.id
    )?;
    Ok(())
}
