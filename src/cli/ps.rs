//! `gza ps` and `gza kill`: running tasks.

use std::io::Write;

use clap::Args;

use super::{Context, output};
use crate::task::TaskId;

#[derive(Debug, Args)]
pub struct PsArgs {
    /// Print JSON for scripts: the running tasks, each with its worker in team mode.
    #[arg(long)]
    json: bool,
    /// List the project's live workers instead (every machine's in team mode), busy or waiting
    /// for work: host, PID, how long each has run, its last heartbeat and its tasks.
    #[arg(long)]
    workers: bool,
}

/// One live worker as `gza ps --json` and `gza ps --workers --json` give it.
#[derive(serde::Serialize)]
struct WorkerJson {
    /// Its lease's generation: never given to another worker.
    lease: i64,
    host: String,
    pid: i64,
    /// Seconds since it started, and since its last heartbeat, on the database's clock.
    up_secs: f64,
    last_beat_secs: f64,
    /// The running tasks it claimed.
    tasks: Vec<TaskId>,
}

fn worker_json(
    l: &crate::store::Lease,
    running: &std::collections::HashMap<TaskId, crate::store::Lease>,
) -> WorkerJson {
    let mut tasks: Vec<TaskId> = running
        .iter()
        .filter(|(_, r)| r.id == l.id)
        .map(|(id, _)| *id)
        .collect();
    tasks.sort();
    WorkerJson {
        lease: l.id,
        host: crate::text::one_line(&l.host, 40),
        pid: l.pid,
        up_secs: (l.running_secs.max(0.0) * 10.0).round() / 10.0,
        last_beat_secs: (l.age_secs.max(0.0) * 10.0).round() / 10.0,
        tasks,
    }
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
    if args.workers {
        // Every live worker, on either backend (in team mode, every machine's).
        let running = store.running_task_leases()?;
        let workers: Vec<crate::store::Lease> = store
            .leases()?
            .into_iter()
            .filter(|l| !l.expired())
            .collect();
        if args.json {
            let list: Vec<WorkerJson> = workers.iter().map(|l| worker_json(l, &running)).collect();
            serde_json::to_writer_pretty(&mut out, &list)?;
            writeln!(out)?;
            return Ok(());
        }
        if workers.is_empty() {
            writeln!(out, "No workers running")?;
            return Ok(());
        }
        return print_workers(&mut out, &workers, &running);
    }
    if args.json {
        let mut list = serde_json::to_value(&tasks)?;
        if let Some(items) = list.as_array_mut() {
            for (item, t) in items.iter_mut().zip(&tasks) {
                // Only where a host is known (team mode), so solo scripts see what they saw.
                if let (Some(obj), Some(host)) = (item.as_object_mut(), hosts.get(&t.id)) {
                    obj.insert("host".into(), host.clone().into());
                }
                // And the worker that runs it (team mode): `gza ps --workers --json` lists
                // every worker, idle ones too.
                if let (Some(obj), Some(lease)) = (item.as_object_mut(), running.get(&t.id)) {
                    obj.insert(
                        "worker".into(),
                        serde_json::to_value(worker_json(lease, &running))?,
                    );
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
