//! `gza next`: the pending queue in the order `gza work` takes it.

use std::io::Write;

use clap::Args;

use super::{Context, output};

/// Counts above this are shown as "N+": counting every pending task would make `next` O(queue).
const COUNT_CAP: i64 = 10_000;

#[derive(Debug, Args)]
pub struct NextArgs {
    /// Also list tasks blocked by an unfinished dependency.
    #[arg(long)]
    all: bool,
    /// How many tasks to list (0 lists all).
    #[arg(short = 'n', long = "limit", default_value_t = 50)]
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

pub fn cmd_next(ctx: &Context, args: NextArgs) -> anyhow::Result<()> {
    let (_, store) = ctx.open_for_reading()?;
    if let Some(group) = args.group.as_deref() {
        super::require_group(&store, group)?;
    }
    args.tags.require_known(&store)?;
    let group = args.tags.scope(args.group.as_deref());
    let limit = (args.limit > 0).then_some(args.limit);
    let ready = store.pickup_queue(false, limit, group)?;
    // Counted only up to a cap: `next` stays fast with a million pending tasks.
    let counts = store.pending_counts_capped(group, COUNT_CAP)?;
    let (ready_count, blocked_count) = (counts.ready, counts.blocked);
    let mut out = output::stdout();
    if args.json {
        let entries = if args.all {
            store.pickup_queue(true, limit, group)?
        } else {
            ready
        };
        serde_json::to_writer_pretty(&mut out, &entries)?;
        writeln!(out)?;
        return Ok(());
    }
    if ready.is_empty() && blocked_count == 0 {
        match args.group.as_deref() {
            Some(group) => write!(out, "No pending tasks in group {group}")?,
            None => write!(out, "No pending tasks")?,
        }
        writeln!(out, "{}", super::tags::describe(&args.tags))?;
        return Ok(());
    }
    if ready.is_empty() {
        writeln!(out, "No runnable tasks")?;
    } else {
        let mut table = output::Table::new(vec!["#", "ID", "TYPE", "PROMPT"]);
        for (pos, entry) in ready.iter().enumerate() {
            let t = &entry.task;
            let mut kind = t.task_type.to_string();
            if t.urgent {
                kind.push_str(" (urgent)");
            }
            table.row(vec![
                (pos + 1).to_string(),
                t.id.to_string(),
                kind,
                crate::redact::redact_secrets(&t.prompt),
            ]);
        }
        table.print(&mut out)?;
        if let Some(limit) = limit.filter(|&l| ready.len() == l as usize) {
            let total = ready_count;
            if total > i64::from(limit) {
                let more = total - i64::from(limit);
                let more = if total >= COUNT_CAP {
                    format!("{more}+")
                } else {
                    more.to_string()
                };
                writeln!(
                    out,
                    "{}",
                    output::paint(output::DIM, format!("… {more} more ready (-n 0 lists all)"))
                )?;
            }
        }
    }
    if blocked_count == 0 {
        return Ok(());
    }
    if !args.all {
        let noun = if blocked_count == 1 { "task" } else { "tasks" };
        let plus = if blocked_count >= COUNT_CAP { "+" } else { "" };
        writeln!(
            out,
            "\n({blocked_count}{plus} {noun} blocked by dependencies; --all lists them)"
        )?;
        return Ok(());
    }
    let blocked: Vec<_> = store
        .pickup_queue(true, None, group)?
        .into_iter()
        .filter(|e| e.blocked_by.is_some())
        .collect();
    writeln!(out, "\nBlocked:")?;
    let mut table = output::Table::new(vec!["#", "ID", "TYPE", "WAITS FOR", "PROMPT"]);
    for entry in &blocked {
        let dep = entry.blocked_by.expect("filtered to blocked entries");
        table.row(vec![
            "-".into(),
            entry.task.id.to_string(),
            entry.task.task_type.to_string(),
            output::paint(output::YELLOW, format!("{} ({})", dep.id, dep.status)),
            crate::redact::redact_secrets(&entry.task.prompt),
        ]);
    }
    table.print(&mut out)?;
    Ok(())
}
