//! `gza history`: tasks, newest first.

use std::collections::HashMap;
use std::io::Write;

use clap::Args;

use super::{Context, output};
use crate::store::{Store, TaskSummary};
use crate::task::{TaskId, TaskStatus, TaskType};
use crate::verify::VerifyState;

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// How many tasks to list (0 lists all).
    #[arg(short = 'n', long = "limit", default_value_t = 20)]
    limit: u32,
    #[command(flatten)]
    select: super::select::TaskSelection,
    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

impl HistoryArgs {
    /// What plain `gza history` shows.
    pub fn default_view() -> Self {
        HistoryArgs {
            limit: 20,
            select: super::select::TaskSelection::default(),
            json: false,
        }
    }
}

pub fn cmd_history(ctx: &Context, args: HistoryArgs) -> anyhow::Result<()> {
    let (project, store) = ctx.open_for_reading()?;
    let filter = args.select.filter(&store, args.limit)?;
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
    let checks = verify_states(&project, &store, &tasks)?;
    let mut table = output::Table::new(vec![
        "ID", "STATUS", "TYPE", "CREATED", "COST", "TIME", "PROMPT",
    ]);
    for t in &tasks {
        let status = match (t.state.failure_reason(), t.state.review_verdict()) {
            (Some(reason), _) if t.status() == TaskStatus::Failed => format!("failed ({reason})"),
            (_, Some(verdict)) => format!("{} ({verdict})", t.status()),
            _ => match checks.get(&t.id) {
                Some(VerifyState::Passed) => format!("{} (verified)", t.status()),
                Some(VerifyState::Failed) => format!("{} (verify failed)", t.status()),
                Some(VerifyState::Stale) => format!("{} (verify stale)", t.status()),
                None => t.status().to_string(),
            },
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

/// For each listed implement task whose branch was verified, what its latest verify run says
/// now: the branches' tips come from one `git for-each-ref`, and only when some run is listed.
fn verify_states(
    project: &crate::project::Project,
    store: &Store,
    tasks: &[TaskSummary],
) -> anyhow::Result<HashMap<TaskId, VerifyState>> {
    let owners: Vec<TaskId> = tasks
        .iter()
        .filter(|t| t.task_type == TaskType::Implement && t.status() == TaskStatus::Completed)
        .map(|t| t.id)
        .collect();
    let runs = store.latest_verifications(&owners)?;
    if runs.is_empty() {
        return Ok(HashMap::new());
    }
    let tips = crate::worktree::branch_tips(&project.root);
    let mut states = HashMap::new();
    for (owner, run) in runs {
        let task = store.get_task(owner)?;
        let tip = task.branch.as_ref().and_then(|b| tips.get(b));
        states.insert(owner, run.state(tip.map(String::as_str)));
    }
    Ok(states)
}
