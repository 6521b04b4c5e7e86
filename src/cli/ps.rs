//! `gza ps` and `gza kill`: running tasks.

use std::io::Write;

use clap::Args;

use super::{Context, output};
use crate::task::TaskId;

#[derive(Debug, Args)]
pub struct PsArgs {
    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct KillArgs {
    /// The running task to stop.
    id: TaskId,
}

pub fn cmd_ps(ctx: &Context, args: PsArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open_for_reading()?;
    let tasks = store.in_progress_tasks()?;
    let mut out = output::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &tasks)?;
        writeln!(out)?;
        return Ok(());
    }
    if tasks.is_empty() {
        writeln!(out, "No tasks running")?;
        return Ok(());
    }
    let now = chrono::Utc::now();
    let mut table = output::Table::new(vec![
        "ID", "TYPE", "PROVIDER", "PID", "STARTED", "ELAPSED", "TURNS", "COST", "PROMPT",
    ]);
    for t in &tasks {
        let started_at = t.state.started_at();
        let elapsed = started_at.map(|s| (now - s).num_seconds().max(0) as f64);
        table.row(vec![
            t.id.to_string(),
            t.task_type.to_string(),
            crate::runner::provider_of(&project, t).as_str().to_string(),
            t.state
                .worker()
                .map(|w| w.pid.to_string())
                .unwrap_or_else(|| "-".into()),
            started_at
                .map(|s| output::short_time(&crate::time::to_db(&s)))
                .unwrap_or_default(),
            output::duration(elapsed),
            t.usage
                .num_turns
                .map(|n| n.to_string())
                .unwrap_or_else(|| "-".into()),
            output::cost(t.usage.cost_usd),
            crate::redact::redact_secrets(&t.prompt),
        ]);
    }
    table.print(&mut out)?;
    Ok(())
}

pub fn cmd_kill(ctx: &Context, args: KillArgs) -> anyhow::Result<()> {
    let (_, store) = ctx.open()?;
    crate::actions::kill_task(&store, args.id)?;
    writeln!(
        output::stdout(),
        "{} Task {} killed",
        output::paint(output::GREEN, "✓"),
        args.id
    )?;
    Ok(())
}
