//! `gza delete` and `gza retry`: act on a task that already exists.

use std::io::{BufRead, IsTerminal, Write};

use clap::Args;

use super::{Context, output, usage};
use crate::store::NewTask;
use crate::task::{TaskId, TaskStatus};

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The task to delete.
    id: TaskId,
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    yes: bool,
}

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The failed task whose agent session to continue.
    id: TaskId,
}

#[derive(Debug, Args)]
pub struct RetryArgs {
    /// The failed or finished task to run again.
    id: TaskId,
}

pub fn cmd_delete(ctx: &Context, args: DeleteArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let task = store.get_task(args.id)?;
    crate::actions::check_deletable(&task)?;
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return Err(usage(format!(
                "deleting task {} needs confirmation; pass --yes to delete without asking",
                task.id
            )));
        }
        let mut err = output::stderr();
        write!(
            err,
            "Delete task {}: {}? [y/N] ",
            task.id,
            output::one_line(&crate::redact::redact(&task.prompt), 60)
        )?;
        err.flush()?;
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            writeln!(output::stdout(), "Cancelled")?;
            return Ok(());
        }
    }
    let deleted = crate::actions::delete_task(&project, &store, task.id)?;
    let mut out = output::stdout();
    writeln!(
        out,
        "{} Deleted task {}",
        output::paint(output::GREEN, "✓"),
        deleted.id
    )?;
    if let Some((path, why)) = deleted.kept_worktree {
        writeln!(
            out,
            "{} its worktree {path} is kept: {why}",
            output::paint(output::YELLOW, "note:")
        )?;
    }
    if let Some(branch) = &deleted.kept_branch {
        writeln!(
            out,
            "{} its branch {branch} is kept (`git branch -D {branch}` deletes it)",
            output::paint(output::YELLOW, "note:")
        )?;
    }
    if !deleted.dependents.is_empty() {
        let ids: Vec<String> = deleted.dependents.iter().map(|d| d.to_string()).collect();
        writeln!(
            out,
            "{} task(s) {} depended on it and no longer wait",
            output::paint(output::YELLOW, "note:"),
            ids.join(", ")
        )?;
    }
    Ok(())
}

pub fn cmd_retry(ctx: &Context, args: RetryArgs) -> anyhow::Result<()> {
    let (_, store) = ctx.open()?;
    let id = crate::actions::retry_task(&store, args.id)?;
    writeln!(
        output::stdout(),
        "{} Created task {id} (retry of {})",
        output::paint(output::GREEN, "✓"),
        args.id
    )?;
    Ok(())
}

pub fn cmd_resume(ctx: &Context, args: ResumeArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open()?;
    let task = store.get_task(args.id)?;
    if task.status() != TaskStatus::Failed {
        return Err(usage(format!(
            "task {} is {}; only failed tasks can be resumed",
            task.id,
            task.status()
        )));
    }
    let kind = crate::runner::provider_of(&project, &task);
    if !crate::runner::providers::supports_resume(kind) {
        return Err(usage(format!(
            "provider {} cannot continue a session; `gza retry {}` runs the task again",
            kind.as_str(),
            task.id
        )));
    }
    let Some(session) = task.session_id.clone() else {
        return Err(usage(format!(
            "task {} has no agent session to resume; `gza retry {}` runs it again",
            task.id, task.id
        )));
    };
    let new = NewTask {
        provider: Some(kind.as_str().to_string()),
        urgent: true,
        resume_session_id: Some(session),
        ..NewTask::follow_up(&task)
    };
    let id = store.insert_task(&new)?;
    writeln!(
        output::stdout(),
        "{} Created task {id} (resume of {}); `gza work {id}` runs it",
        output::paint(output::GREEN, "✓"),
        task.id
    )?;
    Ok(())
}
