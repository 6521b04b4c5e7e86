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
    if task.status() == TaskStatus::InProgress {
        return Err(usage(format!(
            "task {} is running; stop it with `gza kill {}` first",
            task.id, task.id
        )));
    }
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
    let dependents = store.dependents(task.id)?;
    // What gza made for the task goes with it: its worktree (unless it holds uncommitted work
    // or another task uses it) and its logs. Its branch is the person's work and stays; the id
    // is never given again, so the branch's name keeps meaning this task.
    let kept_worktree = match &task.worktree {
        Some(path) if std::path::Path::new(path).exists() => {
            let leftover = crate::store::Leftover {
                id: task.id,
                path: path.clone(),
                branch: task.branch.clone(),
            };
            crate::runner::cleanup::remove_worktree_of(&project, &store, &leftover)?
                .map(|why| (path.clone(), why))
        }
        _ => None,
    };
    store.delete_task(task.id)?;
    for log in [
        task.log_file.clone().map(std::path::PathBuf::from),
        Some(
            project
                .logs_dir()
                .join(crate::runner::cleanup::stderr_log_name(task.id)),
        ),
    ]
    .into_iter()
    .flatten()
    {
        // Only gza's own log folder: a path stored in the database is not trusted further.
        if let Ok(log) = crate::confine::inside(&project.logs_dir(), &log) {
            let _ = std::fs::remove_file(log);
        }
    }
    let mut out = output::stdout();
    writeln!(
        out,
        "{} Deleted task {}",
        output::paint(output::GREEN, "✓"),
        task.id
    )?;
    if let Some((path, why)) = kept_worktree {
        writeln!(
            out,
            "{} its worktree {path} is kept: {why}",
            output::paint(output::YELLOW, "note:")
        )?;
    }
    if let Some(branch) = &task.branch
        && crate::git::run(
            &project.root,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{branch}"),
            ],
        )
        .is_ok()
    {
        writeln!(
            out,
            "{} its branch {branch} is kept (`git branch -D {branch}` deletes it)",
            output::paint(output::YELLOW, "note:")
        )?;
    }
    if !dependents.is_empty() {
        let ids: Vec<String> = dependents.iter().map(|d| d.to_string()).collect();
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
    let task = store.get_task(args.id)?;
    if matches!(task.status(), TaskStatus::Pending | TaskStatus::InProgress) {
        return Err(usage(format!(
            "task {} is {}; only failed, completed or dropped tasks can be retried",
            task.id,
            task.status()
        )));
    }
    let new = NewTask::follow_up(&task);
    let id = store.insert_task(&new)?;
    writeln!(
        output::stdout(),
        "{} Created task {id} (retry of {})",
        output::paint(output::GREEN, "✓"),
        task.id
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
