//! `gza review` and `gza improve`: queue the two halves of the review loop.

use std::io::Write;

use clap::Args;

use super::add::parse_provider;
use super::{Context, output};
use crate::config::ProviderKind;
use crate::review::{QueueOptions, queue_improve, queue_review};
use crate::task::{ReviewVerdict, TaskId, TaskStatus};

/// Options of the queued task, shared by review and improve.
#[derive(Debug, Args)]
struct QueuedTaskOptions {
    /// Model for the new task (default: the reviewed task's, else gza.yaml).
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// Agent provider for the new task: claude, codex, gemini or command.
    #[arg(long, value_name = "PROVIDER", value_parser = parse_provider)]
    provider: Option<ProviderKind>,
    /// Run the new task before other pending tasks.
    #[arg(long)]
    next: bool,
    /// Print only the new task's id.
    #[arg(long, short = 'q')]
    quiet: bool,
}

#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// The completed implement or improve task whose branch to review.
    id: TaskId,
    #[command(flatten)]
    options: QueuedTaskOptions,
}

#[derive(Debug, Args)]
pub struct ImproveArgs {
    /// A review task, or an implement task (then its latest review).
    id: TaskId,
    #[command(flatten)]
    options: QueuedTaskOptions,
}

pub fn cmd_review(ctx: &Context, args: ReviewArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let task = store.get_task(args.id)?;
    let o = &args.options;
    let queued = queue_review(&project, &store, &task, &queue_options(o))?;
    let id = queued.id;
    let mut out = output::stdout();
    if o.quiet {
        writeln!(out, "{id}")?;
    } else {
        writeln!(
            out,
            "{} Added task {id}: a review of task {} on {} (`gza work {id}` runs it)",
            output::paint(output::GREEN, "✓"),
            task.id,
            queued.branch
        )?;
    }
    Ok(())
}

pub fn cmd_improve(ctx: &Context, args: ImproveArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let task = store.get_task(args.id)?;
    let o = &args.options;
    let queued = queue_improve(&project, &store, &task, &queue_options(o))?;
    let id = queued.id;
    let review = queued.review.expect("an improve task addresses a review");
    let mut out = output::stdout();
    if o.quiet {
        writeln!(out, "{id}")?;
    } else {
        let after = if review.status() == TaskStatus::Completed {
            String::new()
        } else {
            format!("; it waits for review {} to finish", review.id)
        };
        writeln!(
            out,
            "{} Added task {id}: improves task {} on {} from review {}'s findings (`gza work {id}` runs it{after})",
            output::paint(output::GREEN, "✓"),
            queued.owner.id,
            queued.branch,
            review.id
        )?;
    }
    if review.review_verdict() == Some(ReviewVerdict::Approved) {
        writeln!(
            output::stderr(),
            "{} review {} approved the change without follow-ups; the improve task was queued anyway",
            output::paint(output::YELLOW, "note:"),
            review.id
        )?;
    }
    Ok(())
}

/// The queued task's options as given on the command line.
fn queue_options(o: &QueuedTaskOptions) -> QueueOptions {
    QueueOptions {
        model: o.model.clone(),
        provider: o.provider.map(|p| p.as_str().to_string()),
        urgent: o.next,
    }
}
