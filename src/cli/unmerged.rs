//! `gza unmerged`: finished code tasks whose branch holds work not merged yet, with what their
//! review said.

use std::io::Write;

use clap::Args;
use serde::Serialize;

use super::{Context, output};
use crate::store::UnmergedTask;
use crate::task::{ReviewVerdict, TaskId, TaskStatus};

#[derive(Debug, Args)]
pub struct UnmergedArgs {
    /// How many branches to list (0 lists all).
    #[arg(short = 'n', long = "limit", default_value_t = 20)]
    limit: u32,
    /// Only tasks in this group.
    #[arg(long, short = 'g', value_name = "GROUP")]
    group: Option<String>,
    #[command(flatten)]
    tags: super::tags::TagFilter,
    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

/// The latest review of a branch, as `--json` prints it.
#[derive(Serialize)]
struct ReviewRecord {
    id: TaskId,
    status: TaskStatus,
    verdict: Option<ReviewVerdict>,
}

/// A branch as `--json` prints it.
#[derive(Serialize)]
struct BranchRecord {
    id: TaskId,
    branch: String,
    /// The branch it started from, which it is compared with.
    base: String,
    /// Commits on the branch that its base does not have.
    ahead: u64,
    review: Option<ReviewRecord>,
    pr_url: Option<String>,
    #[serde(serialize_with = "crate::time::serialize_opt")]
    completed_at: Option<chrono::DateTime<chrono::Utc>>,
    prompt: String,
}

/// Why a task gza did not merge is left out.
#[derive(Default)]
struct Left {
    /// Its branch is in its base already (merged by hand, or it changed nothing).
    merged: usize,
    /// Its branch (or its base) no longer exists.
    gone: usize,
}

pub fn cmd_unmerged(ctx: &Context, args: UnmergedArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open_for_reading()?;
    if let Some(group) = &args.group {
        super::require_group(&store, group)?;
    }
    args.tags.require_known(&store)?;
    let scope = args.tags.scope(args.group.as_deref());
    let current = crate::worktree::current_branch(&project.root);
    let mut left = Left::default();
    let mut shown = Vec::new();
    // Branches merged by hand or deleted do not count towards the limit; git is asked about
    // each candidate, newest first, only until the limit is reached.
    let want = (args.limit > 0).then_some(args.limit as usize);
    for candidate in store.unmerged(scope, None)? {
        if want.is_some_and(|w| shown.len() >= w) {
            break;
        }
        match ahead(&project.root, &candidate, current.as_deref()) {
            Some((_, 0)) => left.merged += 1,
            Some((base, n)) => shown.push(record(candidate, base, n)),
            None => left.gone += 1,
        }
    }
    let mut out = output::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &shown)?;
        writeln!(out)?;
        return Ok(());
    }
    if shown.is_empty() {
        writeln!(
            out,
            "No unmerged work: every completed code task's branch is merged"
        )?;
    } else {
        let mut table = output::Table::new(vec![
            "ID",
            "BRANCH",
            "AHEAD",
            "REVIEW",
            "COMPLETED",
            "PROMPT",
        ]);
        for b in &shown {
            table.row(vec![
                b.id.to_string(),
                b.branch.clone(),
                b.ahead.to_string(),
                review_cell(b.review.as_ref()),
                b.completed_at
                    .map(|t| output::short_time(&crate::time::to_db(&t)))
                    .unwrap_or_else(|| "-".into()),
                b.prompt.clone(),
            ]);
        }
        table.print(&mut out)?;
    }
    let mut notes = Vec::new();
    if left.merged > 0 {
        notes.push(format!(
            "{} already in {} (merged by hand, or no changes)",
            plural(left.merged),
            if left.merged == 1 {
                "its base"
            } else {
                "their bases"
            }
        ));
    }
    if left.gone > 0 {
        notes.push(format!("{} deleted", plural(left.gone)));
    }
    if !notes.is_empty() {
        writeln!(
            out,
            "{}",
            output::paint(output::DIM, format!("Not listed: {}.", notes.join("; ")))
        )?;
    }
    if let Some(first) = shown.first() {
        writeln!(
            out,
            "{}",
            output::paint(
                output::DIM,
                format!(
                    "`gza diff {0}` shows a branch's changes, `gza merge {0}` merges it, `gza checkout {0}` checks it out here",
                    first.id
                )
            )
        )?;
    }
    Ok(())
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 branch".into()
    } else {
        format!("{n} branches")
    }
}

/// The branch the task's branch is compared with, and how many commits it is ahead of it;
/// `None` when the branch or its base is gone.
fn ahead(
    root: &std::path::Path,
    task: &UnmergedTask,
    current: Option<&str>,
) -> Option<(String, u64)> {
    let base = task
        .base_branch
        .clone()
        .filter(|b| crate::worktree::branch_exists(root, b))
        .or_else(|| current.map(str::to_string))?;
    let count = crate::git::run(
        root,
        &[
            "rev-list",
            "--count",
            &format!("refs/heads/{base}..refs/heads/{}", task.branch),
        ],
    )
    .ok()?;
    Some((base, count.trim().parse().ok()?))
}

fn record(task: UnmergedTask, base: String, ahead: u64) -> BranchRecord {
    BranchRecord {
        id: task.task.id,
        branch: task.branch,
        base,
        ahead,
        review: task.review.map(|(id, status, verdict)| ReviewRecord {
            id,
            status,
            verdict,
        }),
        pr_url: task.pr_url,
        completed_at: task.task.state.completed_at(),
        prompt: crate::redact::redact_secrets(&task.task.prompt),
    }
}

/// What the branch's latest review says, in a few words.
fn review_cell(review: Option<&ReviewRecord>) -> String {
    let Some(r) = review else {
        return output::paint(output::DIM, "not reviewed");
    };
    match (r.status, r.verdict) {
        (TaskStatus::Completed, Some(v)) => {
            let style = match v {
                ReviewVerdict::ChangesRequested => output::YELLOW,
                _ => output::GREEN,
            };
            output::paint(style, format!("{v} (review {})", r.id))
        }
        (TaskStatus::Completed, None) => format!("no verdict (review {})", r.id),
        (TaskStatus::Pending | TaskStatus::InProgress, _) => {
            format!("review {} {}", r.id, r.status.as_phrase())
        }
        (TaskStatus::Failed | TaskStatus::Dropped, _) => output::paint(
            output::RED,
            format!("review {} {}", r.id, r.status.as_phrase()),
        ),
    }
}
