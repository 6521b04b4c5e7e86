//! `gza review` and `gza improve`: queue the two halves of the review loop.

use std::io::Write;

use clap::Args;

use super::add::parse_provider;
use super::{Context, output, usage};
use crate::config::ProviderKind;
use crate::review::{branch_owner, improve_prompt, review_prompt, reviewed_task};
use crate::store::NewTask;
use crate::task::{ReviewVerdict, Task, TaskId, TaskStatus, TaskType};

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
    if !task.task_type.changes_code() {
        return Err(usage(format!(
            "task {} is {}; only implement and improve tasks are reviewed (their branch holds a change)",
            task.id,
            task.task_type.with_article()
        )));
    }
    match task.status() {
        TaskStatus::Completed => {}
        TaskStatus::Pending | TaskStatus::InProgress => {
            return Err(usage(format!(
                "task {} {}; review it once it has completed (`gza work {}` runs it)",
                task.id,
                task.status().as_phrase(),
                task.id
            )));
        }
        TaskStatus::Failed | TaskStatus::Dropped => {
            return Err(usage(format!(
                "task {} {}; only completed tasks are reviewed (`gza retry {}` runs it again)",
                task.id,
                task.status().as_phrase(),
                task.id
            )));
        }
    }
    let branch = crate::branch::task_branch(&project, &store, &task)?;
    if let Some(queued) = store
        .reviews_of_branch(branch.owner.id)?
        .into_iter()
        .find(|r| matches!(r.status(), TaskStatus::Pending | TaskStatus::InProgress))
    {
        return Err(usage(format!(
            "review task {} of {} is already queued; `gza work {}` runs it",
            queued.id, branch.name, queued.id
        )));
    }
    let o = &args.options;
    let id = store.insert_task(&NewTask {
        prompt: review_prompt(&task),
        task_type: Some(TaskType::Review),
        based_on: Some(task.id),
        group: task.group.clone(),
        model: o.model.clone().or(task.model.clone()),
        provider: provider_for(o, &task),
        skip_learnings: task.skip_learnings,
        urgent: o.next,
        ..NewTask::default()
    })?;
    let mut out = output::stdout();
    if o.quiet {
        writeln!(out, "{id}")?;
    } else {
        writeln!(
            out,
            "{} Added task {id}: a review of task {} on {} (`gza work {id}` runs it)",
            output::paint(output::GREEN, "✓"),
            task.id,
            branch.name
        )?;
    }
    Ok(())
}

pub fn cmd_improve(ctx: &Context, args: ImproveArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let task = store.get_task(args.id)?;
    let review = match task.task_type {
        TaskType::Review => task.clone(),
        TaskType::Implement | TaskType::Improve => {
            let owner = branch_owner(&store, &task)?;
            store.reviews_of_branch(owner.id)?.pop().ok_or_else(|| {
                usage(format!(
                    "task {} has no review yet; `gza review {}` queues one",
                    task.id, task.id
                ))
            })?
        }
        other => {
            return Err(usage(format!(
                "task {} is {}; give a review task, or the implement task it reviewed",
                task.id,
                other.with_article()
            )));
        }
    };
    if matches!(review.status(), TaskStatus::Failed | TaskStatus::Dropped) {
        return Err(usage(format!(
            "review task {} {}; it has no findings to act on (`gza retry {}` runs it again)",
            review.id,
            review.status().as_phrase(),
            review.id
        )));
    }
    let reviewed = reviewed_task(&store, &review)?
        .filter(|t| t.task_type.changes_code())
        .ok_or_else(|| {
            usage(format!(
                "review task {} is not a review of an implement or improve task; there is no branch to improve",
                review.id
            ))
        })?;
    let owner = branch_owner(&store, &reviewed)?;
    let branch = crate::branch::task_branch(&project, &store, &owner)?;
    if let Some(queued) = store.unfinished_improve_for(review.id)? {
        return Err(usage(format!(
            "task {queued} already improves {} from review {}; `gza work {queued}` runs it",
            branch.name, review.id
        )));
    }
    let o = &args.options;
    let id = store.insert_task(&NewTask {
        prompt: improve_prompt(&owner, &review),
        task_type: Some(TaskType::Improve),
        based_on: Some(owner.id),
        depends_on: Some(review.id),
        group: owner.group.clone(),
        model: o.model.clone().or(owner.model.clone()),
        provider: provider_for(o, &owner),
        skip_learnings: owner.skip_learnings,
        urgent: o.next,
        ..NewTask::default()
    })?;
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
            owner.id,
            branch.name,
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

/// The provider a queued task names: the one given, else the one `task` named.
fn provider_for(o: &QueuedTaskOptions, task: &Task) -> Option<String> {
    o.provider
        .map(|p| p.as_str().to_string())
        .or(task.provider.clone())
}
