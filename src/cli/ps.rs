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
    let running: std::collections::HashMap<TaskId, crate::store::Lease> = if team {
        store.running_task_leases()?
    } else {
        Default::default()
    };
    let hosts: std::collections::HashMap<TaskId, String> = running
        .iter()
        .map(|(id, l)| (*id, crate::text::one_line(&l.host, 40)))
        .collect();
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
    // In team mode, every worker of the project on every machine, busy or waiting for work.
    let workers: Vec<crate::store::Lease> = if team {
        store
            .leases()?
            .into_iter()
            .filter(|l| !l.expired())
            .collect()
    } else {
        Vec::new()
    };
    if tasks.is_empty() {
        writeln!(out, "No tasks running")?;
        return print_workers(&mut out, &workers, &running);
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
    print_workers(&mut out, &workers, &running)
}

/// The workers' table (team mode): host, PID, how long each has run, its last heartbeat, and
/// how many of the running tasks are its own.
fn print_workers(
    out: &mut impl Write,
    workers: &[crate::store::Lease],
    running: &std::collections::HashMap<TaskId, crate::store::Lease>,
) -> anyhow::Result<()> {
    if workers.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "Workers")?;
    let mut table = output::Table::new(vec!["HOST", "PID", "UP", "LAST BEAT", "TASKS"]);
    for l in workers {
        let tasks = running.values().filter(|r| r.id == l.id).count();
        table.row(vec![
            crate::text::one_line(&l.host, 40),
            l.pid.to_string(),
            output::duration(Some(l.running_secs.max(0.0))),
            format!("{} ago", output::duration(Some(l.age_secs.max(0.0)))),
            tasks.to_string(),
        ]);
    }
    table.print(out)?;
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
