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
    // In team mode workers on other machines run tasks too: say on which host each one runs
    // (its lease's, as the worker named it: shown as data, one line, control characters out).
    let team = store.backend() == crate::store::Backend::Postgres;
    let hosts: std::collections::HashMap<TaskId, String> = if team {
        store
            .running_task_leases()?
            .into_iter()
            .map(|(id, l)| (id, crate::text::one_line(&l.host, 40)))
            .collect()
    } else {
        Default::default()
    };
    let mut out = output::stdout();
    if args.json {
        let mut list = serde_json::to_value(&tasks)?;
        if let Some(items) = list.as_array_mut() {
            for (item, t) in items.iter_mut().zip(&tasks) {
                // Only where a host is known (team mode), so solo scripts see what they saw.
                if let (Some(obj), Some(host)) = (item.as_object_mut(), hosts.get(&t.id)) {
                    obj.insert("host".into(), host.clone().into());
                }
            }
        }
        serde_json::to_writer_pretty(&mut out, &list)?;
        writeln!(out)?;
        return Ok(());
    }
    if tasks.is_empty() {
        writeln!(out, "No tasks running")?;
        return Ok(());
    }
    let now = chrono::Utc::now();
    let mut header = vec!["ID", "TYPE", "PROVIDER", "PID"];
    if team {
        header.push("HOST");
    }
    header.extend(["STARTED", "ELAPSED", "TURNS", "COST", "PROMPT"]);
    let mut table = output::Table::new(header);
    for t in &tasks {
        let started_at = t.state.started_at();
        let elapsed = started_at.map(|s| (now - s).num_seconds().max(0) as f64);
        let mut row = vec![
            t.id.to_string(),
            t.task_type.to_string(),
            crate::runner::provider_of(&project, t).as_str().to_string(),
            t.state
                .worker()
                .map(|w| w.pid.to_string())
                .unwrap_or_else(|| "-".into()),
        ];
        if team {
            row.push(hosts.get(&t.id).cloned().unwrap_or_else(|| "-".into()));
        }
        row.extend([
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
        table.row(row);
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
