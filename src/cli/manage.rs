//! `gza delete` and `gza retry`: act on a task that already exists.

use std::io::{BufRead, IsTerminal, Write};

use clap::Args;

use super::{Context, output, usage};
use crate::store::NewTask;
use crate::task::TaskStatus;

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The task to delete.
    id: i64,
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    yes: bool,
}

#[derive(Debug, Args)]
pub struct RetryArgs {
    /// The failed or finished task to run again.
    id: i64,
}

pub fn cmd_delete(ctx: &Context, args: DeleteArgs) -> anyhow::Result<()> {
    let (_, store) = ctx.open()?;
    let task = store.get_task(args.id)?;
    if task.status == TaskStatus::InProgress {
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
            output::one_line(&task.prompt, 60)
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
    store.delete_task(task.id)?;
    let mut out = output::stdout();
    writeln!(
        out,
        "{} Deleted task {}",
        output::paint(output::GREEN, "✓"),
        task.id
    )?;
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
    if matches!(task.status, TaskStatus::Pending | TaskStatus::InProgress) {
        return Err(usage(format!(
            "task {} is {}; only failed, completed or dropped tasks can be retried",
            task.id, task.status
        )));
    }
    let new = NewTask {
        prompt: task.prompt.clone(),
        task_type: Some(task.task_type),
        based_on: Some(task.id),
        depends_on: None,
        group: task.group.clone(),
        spec: task.spec.clone(),
        model: task.model.clone(),
        provider: task.provider.clone(),
        skip_learnings: task.skip_learnings,
        urgent: false,
    };
    let id = store.insert_task(&new)?;
    writeln!(
        output::stdout(),
        "{} Created task {id} (retry of {})",
        output::paint(output::GREEN, "✓"),
        task.id
    )?;
    Ok(())
}
