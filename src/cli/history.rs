//! `gza history`: tasks, newest first.

use std::io::Write;

use clap::Args;

use super::{Context, output};
use crate::store::HistoryFilter;
use crate::task::{TaskStatus, TaskType};

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// How many tasks to list (0 lists all).
    #[arg(short = 'n', long = "limit", default_value_t = 20)]
    limit: u32,
    /// Only tasks with this status: pending, in_progress, completed, failed or dropped.
    #[arg(long, value_parser = super::parse_status)]
    status: Option<TaskStatus>,
    /// Only tasks of this type.
    #[arg(long = "type", short = 't', value_parser = super::parse_type)]
    task_type: Option<TaskType>,
    /// Only tasks in this group.
    #[arg(long, short = 'g', value_name = "GROUP")]
    group: Option<String>,
    #[command(flatten)]
    tags: super::tags::TagFilter,
    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

impl HistoryArgs {
    /// What plain `gza history` shows.
    pub fn default_view() -> Self {
        HistoryArgs {
            limit: 20,
            status: None,
            task_type: None,
            group: None,
            tags: super::tags::TagFilter::default(),
            json: false,
        }
    }
}

pub fn cmd_history(ctx: &Context, args: HistoryArgs) -> anyhow::Result<()> {
    let (_, store) = ctx.open_for_reading()?;
    if let Some(group) = &args.group {
        super::require_group(&store, group)?;
    }
    args.tags.require_known(&store)?;
    let filter = HistoryFilter {
        limit: (args.limit > 0).then_some(args.limit),
        status: args.status,
        task_type: args.task_type,
        group: args.group.clone(),
        tags: args.tags.tags.clone(),
        all_tags: args.tags.all_tags,
    };
    let tasks = store.history(&filter)?;
    let mut out = output::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &tasks)?;
        writeln!(out)?;
        return Ok(());
    }
    if tasks.is_empty() {
        writeln!(out, "No tasks yet. Add one with: gza add \"…\"")?;
        return Ok(());
    }
    let mut table = output::Table::new(vec![
        "ID", "STATUS", "TYPE", "CREATED", "COST", "TIME", "PROMPT",
    ]);
    for t in &tasks {
        let status = match (t.state.failure_reason(), t.state.review_verdict()) {
            (Some(reason), _) if t.status() == TaskStatus::Failed => format!("failed ({reason})"),
            (_, Some(verdict)) => format!("{} ({verdict})", t.status()),
            _ => t.status().to_string(),
        };
        table.row(vec![
            t.id.to_string(),
            output::paint(output::status_style(t.status()), status),
            t.task_type.to_string(),
            output::short_time(&crate::time::to_db(&t.created_at)),
            output::cost(t.cost_usd),
            output::duration(t.duration_seconds),
            crate::redact::redact_secrets(&t.prompt),
        ]);
    }
    table.print(&mut out)?;
    Ok(())
}
