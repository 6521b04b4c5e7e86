//! `gza search`: tasks whose prompt or output holds some words, newest first, with the words
//! marked in a snippet of each.

use std::io::Write;

use clap::Args;
use gza_core::search::{SearchQuery, Snippet, snippet};
use serde::Serialize;

use super::{Context, output, usage};
use crate::store::{SearchFilter, SearchHit, SearchOrder};
use crate::task::{TaskStatus, TaskType};

/// Counts above this are shown as "N+": counting every match would make a search cost the
/// history. Counting a common word's 10,000 matches cost PostgreSQL 30-40 ms (each match's
/// row is visited) and SQLite a walk of as many index entries; past a thousand a person only
/// needs to know there are many.
const COUNT_CAP: i64 = 1_000;
/// Characters of context a snippet shows before its first match.
const LEAD_CHARS: usize = 24;
/// How a match is marked where there is no colour (a pipe, NO_COLOR), and in JSON.
const MARK: (&str, &str) = ("«", "»");

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to find: every word must occur in the task's prompt or output (case and accents
    /// aside; a word also finds the words it begins, so `auth` finds `authentication`);
    /// "quoted words" must occur together, in order.
    #[arg(required = true, value_name = "WORDS")]
    words: Vec<String>,
    /// How many tasks to list (0 lists all).
    #[arg(short = 'n', long = "limit", default_value_t = 10)]
    limit: u32,
    /// Best matches first (a match in the prompt counts twice one in the output), not newest.
    #[arg(long)]
    relevance: bool,
    #[command(flatten)]
    select: super::select::TaskSelection,
    /// Print JSON for scripts (snippets mark matches with « and »).
    #[arg(long)]
    json: bool,
}

/// One hit as `--json` prints it.
#[derive(Serialize)]
struct HitRecord {
    id: crate::task::TaskId,
    task_type: TaskType,
    status: TaskStatus,
    group: Option<String>,
    #[serde(serialize_with = "crate::time::serialize")]
    created_at: chrono::DateTime<chrono::Utc>,
    /// Where the words were found: "prompt", "output" or both.
    matched_in: Vec<&'static str>,
    prompt: String,
    output: Option<String>,
}

pub fn cmd_search(ctx: &Context, args: SearchArgs) -> anyhow::Result<()> {
    let text = args.words.join(" ");
    let query = SearchQuery::parse(&text).map_err(usage)?;
    let (_, store) = ctx.open_for_reading()?;
    let filter = SearchFilter {
        tasks: args.select.filter(&store, args.limit)?,
        order: if args.relevance {
            SearchOrder::Relevance
        } else {
            SearchOrder::Newest
        },
    };
    let mut out = output::stdout();
    let width = output::width().saturating_sub(10).max(30);
    if args.json {
        // The store hands over one task at a time and only the snippets are kept, so a search
        // for everything never holds every output at once.
        let mut records = Vec::new();
        store.search_tasks(&query, &filter, |hit| {
            records.push(record(&hit, &query, width));
            Ok(())
        })?;
        serde_json::to_writer_pretty(&mut out, &records)?;
        writeln!(out)?;
        return Ok(());
    }
    let coloured = anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never;
    let mark = output::YELLOW.bold();
    let (open, close) = if coloured {
        (mark.render().to_string(), mark.render_reset().to_string())
    } else {
        (MARK.0.to_string(), MARK.1.to_string())
    };
    let mut shown = 0usize;
    let mut lines = Vec::new();
    store.search_tasks(&query, &filter, |hit| {
        lines.push(render(&hit, &query, width, &open, &close));
        shown += 1;
        Ok(())
    })?;
    if shown == 0 {
        let scope = args.select.describe();
        writeln!(out, "No task matches {text:?}{scope}")?;
        return Ok(());
    }
    for block in &lines {
        write!(out, "{block}")?;
    }
    if let Some(limit) = filter.tasks.limit.filter(|&l| shown == l as usize) {
        let total = store.count_search(&query, &filter, COUNT_CAP)?;
        if total > i64::from(limit) {
            let more = total - i64::from(limit);
            let plus = if total >= COUNT_CAP { "+" } else { "" };
            writeln!(
                out,
                "{}",
                output::paint(
                    output::DIM,
                    format!("… {more}{plus} more match (-n 0 lists all)")
                )
            )?;
        }
    }
    Ok(())
}

/// The prompt and output of a hit, redacted whole before anything is cut from them (a secret is
/// never half shown), and a snippet of each around its first match.
fn snippets(hit: &SearchHit, query: &SearchQuery, width: usize) -> (Snippet, Option<Snippet>) {
    let prompt = crate::redact::redact(&hit.prompt);
    let prompt = snippet(&prompt, query, width, LEAD_CHARS);
    let output = hit.output.as_deref().and_then(|text| {
        let text = crate::redact::redact(text);
        let s = snippet(&text, query, width, LEAD_CHARS);
        s.has_match().then_some(s)
    });
    (prompt, output)
}

fn record(hit: &SearchHit, query: &SearchQuery, width: usize) -> HitRecord {
    let (prompt, output) = snippets(hit, query, width);
    let mut matched_in = Vec::new();
    if prompt.has_match() {
        matched_in.push("prompt");
    }
    if output.is_some() {
        matched_in.push("output");
    }
    HitRecord {
        id: hit.task.id,
        task_type: hit.task.task_type,
        status: hit.task.status(),
        group: hit.task.group.clone(),
        created_at: hit.task.created_at,
        matched_in,
        prompt: prompt.render(MARK.0, MARK.1),
        output: output.map(|s| s.render(MARK.0, MARK.1)),
    }
}

/// A hit as a person reads it: the task's id, type, status and date, then the prompt (its
/// match marked, or its start) and, when the output matched, the output around the match.
fn render(hit: &SearchHit, query: &SearchQuery, width: usize, open: &str, close: &str) -> String {
    let t = &hit.task;
    let status = match (t.state.failure_reason(), t.state.review_verdict()) {
        (Some(reason), _) if t.status() == TaskStatus::Failed => format!("failed ({reason})"),
        (_, Some(verdict)) => format!("{} ({verdict})", t.status()),
        _ => t.status().to_string(),
    };
    let (prompt, output) = snippets(hit, query, width);
    let mut block = format!(
        "{}  {}  {}  {}\n",
        output::paint(output::BOLD, format!("Task {}", t.id)),
        t.task_type,
        output::paint(output::status_style(t.status()), status),
        output::paint(
            output::DIM,
            output::short_time(&crate::time::to_db(&t.created_at))
        ),
    );
    block.push_str(&format!("  prompt: {}\n", prompt.render(open, close)));
    if let Some(output) = output {
        block.push_str(&format!("  output: {}\n", output.render(open, close)));
    }
    block
}
