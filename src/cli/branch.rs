//! `gza diff`, `gza merge`, `gza rebase` and `gza pr`: act on a task's branch.

use std::io::Write;

use clap::Args;

use super::{Context, output};
use crate::branch::{Deletion, MergeOptions, OnOrigin};
use crate::error::Error;
use crate::task::{ReviewVerdict, TaskId, TaskStatus};

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The task whose changes to show (its branch since the task started).
    id: TaskId,
    /// Only the files changed and the lines added and removed.
    #[arg(long)]
    stat: bool,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The completed task whose branch to merge into the branch checked out here.
    id: TaskId,
    /// Put the branch's changes in one new commit instead of merging its commits.
    #[arg(long)]
    squash: bool,
    /// Delete the branch, and the worktrees gza made for it, once merged.
    #[arg(long)]
    delete_branch: bool,
    /// Merge even though the branch's latest verify failed, or ran on an older commit.
    #[arg(long)]
    force: bool,
}

#[derive(Debug, Args)]
pub struct RebaseArgs {
    /// The task whose branch to rebase onto the current tip of the branch it started from.
    id: TaskId,
}

#[derive(Debug, Args)]
pub struct PrArgs {
    /// The completed task to open a pull request for (needs `gh`, logged in).
    id: TaskId,
}

pub fn cmd_diff(ctx: &Context, args: DiffArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open_for_reading()?;
    let task = store.get_task(args.id)?;
    let Some(branch) = task.branch.clone() else {
        return Err(crate::review::no_branch(&task).into());
    };
    // Made on another machine, or moved on there: fetched first (team mode).
    crate::remote::sync_branch_or_warn(&project, &store, &task, &branch)?;
    // One git process when all is well; what went wrong is worked out only when it fails.
    let range = match task.base_commit() {
        Some(base) => vec![base.to_string(), branch],
        // Tasks run before bases were recorded: from where the branch forked from HEAD.
        None => vec![format!("HEAD...{branch}")],
    };
    let mut git_args = vec!["diff"];
    if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        git_args.push("--no-color");
    }
    if args.stat {
        git_args.push("--stat");
    }
    git_args.extend(range.iter().map(String::as_str));
    git_args.push("--");
    if let Err(e) = crate::git::run_to_stdout(&project.root, &git_args) {
        // A branch deleted by hand is the user's to fix; anything else is git failing.
        if matches!(e, Error::Git { .. }) {
            crate::review::change_range(&project, &task)?;
        }
        return Err(e.into());
    }
    Ok(())
}

pub fn cmd_merge(ctx: &Context, args: MergeArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let task = store.get_task(args.id)?;
    let options = MergeOptions {
        squash: args.squash,
        delete_branch: args.delete_branch,
        force: args.force,
        unattended: false,
    };
    let merged = crate::branch::merge(&project, &store, &task, options)?;
    let mut out = output::stdout();
    let ok = output::paint(output::GREEN, "✓");
    if let Some(before) = &merged.deleted_after {
        writeln!(
            out,
            "{}; nothing to do",
            crate::review::merged_and_deleted(task.id, &merged.branch, before)
        )?;
    } else if merged.already {
        writeln!(
            out,
            "Task {}'s branch {} is already merged into {}; nothing to do",
            task.id, merged.branch, merged.into
        )?;
    } else if args.squash {
        writeln!(
            out,
            "{ok} Squash-merged {} into {} as one commit {} (task {})",
            merged.branch,
            merged.into,
            merged.head.get(..10).unwrap_or(&merged.head),
            task.id
        )?;
    } else {
        writeln!(
            out,
            "{ok} Merged {} into {} (task {})",
            merged.branch, merged.into, task.id
        )?;
    }
    if !merged.hooks_not_run.is_empty() {
        writeln!(
            output::stderr(),
            "note: {} changes the git hooks this checkout runs ({}); the merge ran without hooks. Read them before your next git command runs them",
            merged.branch,
            merged.hooks_not_run.join(", ")
        )?;
    } else if !merged.hooks_skipped.is_empty() {
        writeln!(
            output::stderr(),
            "note: the merge ran without your git hooks ({}): a hook may run what the branch changed; read the merged change, then run them yourself if you want them",
            merged.hooks_skipped.join(", ")
        )?;
    }
    match merged.deletion {
        Deletion::NotAsked => {}
        Deletion::Deleted(on_origin) => {
            let there = if on_origin == OnOrigin::Deleted {
                " here and on origin"
            } else {
                ""
            };
            writeln!(out, "{ok} Deleted branch {}{there}", merged.branch)?;
            if let OnOrigin::Kept(why) = on_origin {
                writeln!(
                    output::stderr(),
                    "{} kept branch {} on origin: {why}",
                    output::paint(output::YELLOW, "warning:"),
                    merged.branch
                )?;
            }
        }
        Deletion::Kept(why) => writeln!(
            output::stderr(),
            "{} kept branch {}: {why}",
            output::paint(output::YELLOW, "warning:"),
            merged.branch
        )?,
    }
    let owner = crate::review::branch_owner(&store, &task)?;
    if !merged.already
        && project
            .config
            .verify
            .as_deref()
            .is_some_and(|v| !v.trim().is_empty())
        && store.latest_verification(owner.id)?.is_none()
    {
        writeln!(
            output::stderr(),
            "{} {} was merged without a verify run (`gza verify ID` runs the check command before a merge)",
            output::paint(output::YELLOW, "note:"),
            merged.branch
        )?;
    }
    if let Some(review) = store.reviews_of_branch(owner.id)?.pop()
        && !merged.already
    {
        let note = match (review.status(), review.review_verdict()) {
            (_, Some(ReviewVerdict::ChangesRequested)) => Some(format!(
                "the latest review (task {}) requested changes",
                review.id
            )),
            (TaskStatus::Pending | TaskStatus::InProgress, _) => {
                Some(format!("review task {} has not run yet", review.id))
            }
            _ => None,
        };
        if let Some(note) = note {
            writeln!(
                output::stderr(),
                "{} {note}",
                output::paint(output::YELLOW, "note:")
            )?;
        }
    }
    Ok(())
}

pub fn cmd_rebase(ctx: &Context, args: RebaseArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let task = store.get_task(args.id)?;
    let rebased = crate::branch::rebase(&project, &store, &task)?;
    let mut out = output::stdout();
    let commits = if rebased.ahead == 1 {
        "commit"
    } else {
        "commits"
    };
    if rebased.up_to_date {
        writeln!(
            out,
            "Task {}'s branch {} already contains the tip of {}; nothing to do ({} {commits} ahead)",
            task.id, rebased.branch, rebased.onto, rebased.ahead
        )?;
    } else {
        writeln!(
            out,
            "{} Rebased {} onto {} ({} {commits} ahead)",
            output::paint(output::GREEN, "✓"),
            rebased.branch,
            rebased.onto,
            rebased.ahead
        )?;
    }
    Ok(())
}

pub fn cmd_pr(ctx: &Context, args: PrArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let task = store.get_task(args.id)?;
    let pr = crate::branch::open_pull_request(&project, &store, &task)?;
    let mut out = output::stdout();
    if pr.existing {
        writeln!(
            out,
            "Task {} already has a pull request: {}",
            task.id, pr.url
        )?;
    } else {
        writeln!(
            out,
            "{} Opened a pull request for task {}: {}",
            output::paint(output::GREEN, "✓"),
            task.id,
            pr.url
        )?;
    }
    Ok(())
}
