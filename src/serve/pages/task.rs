//! One task: its facts (live), the review/improve chain, the prompt as sent with each injected
//! learning linked, its output, and its log rendered as `gza log` renders it, growing while the
//! agent works.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::{Path as UrlPath, Query, State};
use axum::response::Response;
use maud::{Markup, html};

use super::{Failure, Flash, Nav, act, button, done, layout, read, shown};
use crate::config::ProviderKind;
use crate::error::Error;
use crate::project::Project;
use crate::serve::App;
use crate::store::Store;
use crate::task::{Task, TaskId, TaskStatus};

/// The most of a log the page shows at first: its end, from a line boundary, and at most
/// [`LOG_TAIL_LINES`] rendered lines of it (`gza log` has the rest).
pub const LOG_TAIL_BYTES: u64 = 256 * 1024;
pub const LOG_TAIL_LINES: usize = 1000;
/// The most a live stream reads at once.
pub const LOG_CHUNK_BYTES: u64 = 256 * 1024;

#[derive(Debug, Default, serde::Deserialize)]
pub struct TaskQuery {
    flash: Option<String>,
}

pub fn parse_id(text: &str) -> Result<TaskId, Failure> {
    text.trim_start_matches('#')
        .parse::<i64>()
        .ok()
        .filter(|n| *n > 0)
        .map(TaskId)
        .ok_or_else(|| {
            Failure::bad_request(format!(
                "{:?} is not a task id; ids are numbers, as the board shows them",
                crate::cli::output::one_line(text, 40)
            ))
        })
}

pub async fn task_page(
    State(app): State<Arc<App>>,
    UrlPath(id): UrlPath<String>,
    Query(q): Query<TaskQuery>,
) -> Result<Markup, Failure> {
    let id = parse_id(&id)?;
    read(&app, move |app, store| {
        let task = store.get_task(id)?;
        let kind = crate::runner::provider_of(&app.project, &task);
        let chain = chain(store, &task)?;
        let given = store.task_injections(task.id)?;
        let mut learnings = Vec::new();
        for g in &given {
            if let Some(l) = store.learning(g.learning)? {
                learnings.push((g.clone(), l));
            }
        }
        let (prompt, sent) = match store.prompt_sent(task.id)? {
            Some(sent) => (sent, true),
            None => (preview_prompt(&app.project, store, &task), false),
        };
        let log = log_path(&app.project, &task);
        let (log_lines, offset) = match &log {
            Some(path) => read_log_tail(path, kind, LOG_TAIL_BYTES),
            None => (Vec::new(), 0),
        };
        let title = format!("Task {}", task.id);
        let body = html! {
            div.task-head {
                h1 { (title) " " span.status.(task.status().as_str()) data-live="status" { (task.status().as_str()) } }
                div.actions { (actions(app, &task)) }
            }
            div #facts data-stream=(format!("/events/tasks/{}", task.id)) { (facts(app, &task)) }
            @if chain.len() > 1 {
                section.chain {
                    h2 { "Review and improve chain" }
                    ol {
                        @for t in &chain {
                            li class=[(t.id == task.id).then_some("here")] {
                                a href=(format!("/tasks/{}", t.id)) { "#" (t.id) } " "
                                span.type { (t.task_type.as_str()) } " "
                                span.status.(t.status().as_str()) { (t.status().as_str()) }
                                @if let Some(v) = t.review_verdict() { " " span.verdict { (v.as_str()) } }
                            }
                        }
                    }
                }
            }
            section.tasklog {
                h2 { "Log" }
                @match &log {
                    Some(_) => {
                        @if offset > LOG_TAIL_BYTES || log_lines.len() == LOG_TAIL_LINES {
                            p.note { "The log's last lines; `gza log " (task.id) "` shows all of it." }
                        }
                        div #log.log data-offset=(offset) data-task=(task.id.0) {
                            @for line in &log_lines { div.line { (line) } }
                        }
                    }
                    None => {
                        p.empty #log data-offset="0" data-task=(task.id.0) {
                            @if task.status() == TaskStatus::Pending { "No log yet: the task has not started" }
                            @else { "No log: `gza clean` removes the logs of finished tasks, and a task that ended before its agent started has none" }
                        }
                    }
                }
            }
            section.prompt {
                h2 {
                    @if sent { "Prompt as sent" } @else { "Prompt (what gza work would send now)" }
                }
                @if !learnings.is_empty() {
                    p.given {
                        "Learnings given: "
                        @for (g, l) in &learnings {
                            a.learning href=(format!("/learnings/{}", l.label())) title=(shown(&l.text)) { (l.label()) }
                            span.how { " (" (g.event) ") " }
                        }
                    }
                }
                pre.prompt { (linked_prompt(&shown(&prompt), &learnings.iter().map(|(_, l)| (l.id, l.text.clone())).collect::<Vec<_>>())) }
            }
            @if let Some(output) = task.output.as_deref().filter(|o| !o.trim().is_empty()) {
                section.output {
                    h2 { "Output" }
                    pre { (shown(output.trim_end())) }
                }
            }
        };
        Ok(layout(app, Nav::None, &title, q.flash.as_deref(), body))
    })
    .await
}

/// The task's branch chain: the task that owns the branch, its reviews and improve tasks, by id.
fn chain(store: &Store, task: &Task) -> Result<Vec<Task>, Error> {
    if !task.task_type.changes_code() && task.task_type != crate::task::TaskType::Review {
        return Ok(vec![task.clone()]);
    }
    let owner = if task.task_type == crate::task::TaskType::Review {
        match task.based_on {
            Some(base) => match store.get_task(base) {
                Ok(t) => crate::review::branch_owner(store, &t)?,
                Err(Error::TaskNotFound(_)) => return Ok(vec![task.clone()]),
                Err(e) => return Err(e),
            },
            None => return Ok(vec![task.clone()]),
        }
    } else {
        crate::review::branch_owner(store, task)?
    };
    let mut all = vec![owner.clone()];
    all.extend(store.reviews_of_branch(owner.id)?);
    all.extend(store.improves_of_branch(owner.id)?);
    all.sort_by_key(|t| t.id);
    all.dedup_by_key(|t| t.id);
    Ok(all)
}

/// What `gza work` would send for a task that has not run (as `gza show --prompt` says it).
fn preview_prompt(project: &Project, store: &Store, task: &Task) -> String {
    let learnings =
        crate::learn::learnings_for_prompt(project, store, task, crate::learn::Selection::Preview);
    crate::review::task_for_prompt(project, store, task)
        .and_then(|shown| crate::prompt::build_prompt(project, &shown, learnings.as_ref()))
        .unwrap_or_else(|e| format!("(the prompt cannot be built now: {e})\n\n{}", task.prompt))
}

/// The prompt with each injected learning's text (and each `<!-- L12 -->` marker) a link to it.
fn linked_prompt(prompt: &str, learnings: &[(i64, String)]) -> Markup {
    let mut spans: Vec<(usize, usize, i64)> = Vec::new();
    for (id, text) in learnings {
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        for (at, _) in prompt.match_indices(text) {
            spans.push((at, at + text.len(), *id));
        }
        let marker = format!("<!-- {} -->", crate::learning::label(*id));
        for (at, _) in prompt.match_indices(&marker) {
            spans.push((at, at + marker.len(), *id));
        }
    }
    spans.sort();
    let mut kept: Vec<(usize, usize, i64)> = Vec::new();
    for s in spans {
        if kept.last().is_none_or(|last| s.0 >= last.1) {
            kept.push(s);
        }
    }
    let mut pieces: Vec<(&str, Option<i64>)> = Vec::new();
    let mut at = 0;
    for (start, end, id) in kept {
        pieces.push((&prompt[at..start], None));
        pieces.push((&prompt[start..end], Some(id)));
        at = end;
    }
    pieces.push((&prompt[at..], None));
    html! {
        @for (text, id) in pieces {
            @match id {
                Some(id) => a.learning href=(format!("/learnings/{}", crate::learning::label(id))) { (text) },
                None => (text),
            }
        }
    }
}

/// The task's facts, which its open pages are sent again when they change.
pub fn facts(app: &App, t: &Task) -> Markup {
    let out = crate::cli::output::duration;
    let u = &t.usage;
    let provider = crate::runner::provider_of(&app.project, t);
    let row = |name: &str, value: Option<Markup>| -> Markup {
        html! { @if let Some(v) = value { tr { th { (name) } td { (v) } } } }
    };
    let text = |v: Option<String>| v.map(|v| html! { (shown(&v)) });
    let link =
        |id: Option<TaskId>| id.map(|id| html! { a href=(format!("/tasks/{id}")) { "#" (id) } });
    let elapsed = t.state.started_at().map(|s| {
        let end = t.state.completed_at().unwrap_or_else(chrono::Utc::now);
        (end - s).num_seconds().max(0) as f64
    });
    html! {
        table.facts {
            (row("Status", Some(html! { span.status.(t.status().as_str()) { (t.status().as_str()) } })))
            @if t.status() == TaskStatus::Failed {
                (row("Failure reason", Some(html! { (t.failure_reason().map_or("UNKNOWN".to_string(), |r| r.to_string())) })))
            }
            (row("Type", Some(html! { (t.task_type.as_str()) })))
            (row("Provider", Some(html! {
                @match &t.provider { Some(p) => { (shown(p)) }, None => { (provider.as_str()) " (the default in the settings)" } }
            })))
            (row("Model", text(t.model.clone())))
            (row("Spec", text(t.spec.clone())))
            (row("Group", t.group.as_ref().map(|g| html! { a href=(format!("/{}", super::query(&[("group", g)]))) { (shown(g)) } })))
            (row("Based on", link(t.based_on)))
            (row("Depends on", link(t.depends_on)))
            (row("Branch", text(t.branch.clone())))
            (row("Base", match (t.base_branch(), t.base_commit()) {
                (Some(b), Some(c)) => Some(html! { (shown(b)) " at " code { (c.get(..10).unwrap_or(c)) } }),
                (None, Some(c)) => Some(html! { code { (c.get(..10).unwrap_or(c)) } }),
                _ => None,
            }))
            (row("Verdict", t.review_verdict().map(|v| html! { span.verdict { (v.as_str()) } })))
            (row("Changes", text(t.diff_stats.clone())))
            (row("Merged", t.merged.as_ref().map(|m| html! { "into " (shown(&m.into)) " at " (crate::time::to_db(&m.at)) })))
            (row("Pull request", t.pr_url.as_ref().map(|url| {
                // Only a web address is a link: a `javascript:` one stays text.
                if url.starts_with("https://") || url.starts_with("http://") {
                    html! { a href=(url) rel="noreferrer noopener" { (shown(url)) } }
                } else {
                    html! { (shown(url)) }
                }
            })))
            (row("Cost", u.cost_usd.map(|c| html! { (crate::cli::output::cost(Some(c))) })))
            (row("Tokens", (u.input_tokens.is_some() || u.output_tokens.is_some()).then(|| html! {
                (u.input_tokens.map_or("-".into(), |n| n.to_string())) " in / "
                (u.output_tokens.map_or("-".into(), |n| n.to_string())) " out"
            })))
            (row("Turns", u.num_turns.map(|n| html! { (n) })))
            (row("Duration", u.duration_seconds.or(elapsed).map(|d| html! { (out(Some(d))) })))
            (row("Learnings", Some(html! {
                @if t.skip_learnings { "skipped (--no-learnings)" }
                @else if let Some(v) = t.learnings_version { "given version " (v) }
                @else { "injected and learned from" }
            })))
            (row("Worktree", text(t.worktree.clone())))
            (row("Report", text(t.report_file.clone())))
            (row("Created", Some(html! { (crate::time::to_db(&t.created_at)) })))
            (row("Started", t.state.started_at().map(|s| html! { (crate::time::to_db(&s)) })))
            (row("Completed", t.state.completed_at().map(|s| html! { (crate::time::to_db(&s)) })))
            (row("Worker", t.state.worker().map(|w| html! { "pid " (w.pid) })))
        }
    }
}

/// The buttons a task's status allows.
fn actions(app: &App, t: &Task) -> Markup {
    let id = t.id;
    html! {
        @match t.status() {
            TaskStatus::InProgress => {
                (button(app, &format!("/tasks/{id}/kill"), "Kill", Some("Stop this task? It fails with KILLED."), "danger"))
            }
            TaskStatus::Pending => {
                (button(app, &format!("/tasks/{id}/delete"), "Delete", Some("Delete this task?"), "quiet"))
            }
            _ => {
                (button(app, &format!("/tasks/{id}/retry"), "Retry", None, ""))
                (button(app, &format!("/tasks/{id}/delete"), "Delete", Some("Delete this task? Its branch is kept."), "quiet"))
            }
        }
    }
}

/// What a task's live view holds: its facts rendered, its log, whether it runs.
pub fn task_live(
    app: &App,
    store: &Store,
    id: TaskId,
) -> Result<(String, Option<PathBuf>, bool), Error> {
    let task = store.get_task(id)?;
    let html = serde_json::json!({
        "html": facts(app, &task).into_string(),
        "status": task.status().as_str(),
        "actions": actions(app, &task).into_string(),
    })
    .to_string();
    Ok((
        html,
        log_path(&app.project, &task),
        task.status() == TaskStatus::InProgress,
    ))
}

/// The task's log, when it has one inside the project's logs folder (a path stored in the
/// database is not trusted further).
pub fn log_path(project: &Project, task: &Task) -> Option<PathBuf> {
    let file = task.log_file.as_deref()?;
    crate::confine::inside(&project.logs_dir(), Path::new(file)).ok()
}

/// The provider whose stream a task's log holds.
pub fn provider(project: &Project, task: &Task) -> ProviderKind {
    crate::runner::provider_of(project, task)
}

/// The rendered lines of the last `max` bytes of a log (from a line boundary), and the offset
/// after the last complete line read.
pub fn read_log_tail(path: &Path, kind: ProviderKind, max: u64) -> (Vec<String>, u64) {
    let Ok(mut file) = crate::fsutil::open_regular(path, std::fs::OpenOptions::new().read(true))
    else {
        return (Vec::new(), 0);
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(max);
    let (mut lines, end, _) = read_lines(&mut file, kind, start, len, start > 0);
    if lines.len() > LOG_TAIL_LINES {
        lines.drain(..lines.len() - LOG_TAIL_LINES);
    }
    (lines, end)
}

/// Rendered lines of `file` from `from` to at most `to`: only complete lines (a partial last
/// line waits for its end), unless `finished`. Skips to the first line boundary when
/// `mid_line`. Returns the lines, the offset after them, and whether it stopped short of `to`.
pub fn read_lines(
    file: &mut std::fs::File,
    kind: ProviderKind,
    from: u64,
    to: u64,
    mid_line: bool,
) -> (Vec<String>, u64, bool) {
    let want = to
        .saturating_sub(from)
        .min(LOG_TAIL_BYTES.max(LOG_CHUNK_BYTES));
    let mut bytes = Vec::with_capacity(want as usize);
    if file.seek(SeekFrom::Start(from)).is_err() || file.take(want).read_to_end(&mut bytes).is_err()
    {
        return (Vec::new(), from, false);
    }
    let mut begin = 0;
    if mid_line {
        match bytes.iter().position(|b| *b == b'\n') {
            Some(nl) => begin = nl + 1,
            None => return (Vec::new(), from, false),
        }
    }
    let end = match bytes.iter().rposition(|b| *b == b'\n') {
        Some(nl) if nl + 1 > begin => nl + 1,
        _ => begin,
    };
    let text = String::from_utf8_lossy(&bytes[begin..end]);
    let lines = text
        .lines()
        .filter_map(|line| crate::cli::log::render_log_line(kind, line))
        .collect();
    let short = from + (want) < to;
    (lines, from + end as u64, short)
}

/// The rest of a finished task's log: its unterminated last line, if any.
pub fn read_last_partial(file: &mut std::fs::File, kind: ProviderKind, from: u64) -> Vec<String> {
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(from)).is_err()
        || file.take(LOG_CHUNK_BYTES).read_to_end(&mut bytes).is_err()
    {
        return Vec::new();
    }
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|line| crate::cli::log::render_log_line(kind, line))
        .collect()
}

pub async fn retry(
    State(app): State<Arc<App>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, Failure> {
    let id = parse_id(&id)?;
    let new = act(&app, move |_, store| crate::actions::retry_task(store, id)).await?;
    Ok(done(&format!("/tasks/{new}"), Flash::Retried(new.0)))
}

pub async fn kill(
    State(app): State<Arc<App>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, Failure> {
    let id = parse_id(&id)?;
    act(&app, move |_, store| crate::actions::kill_task(store, id)).await?;
    Ok(done(&format!("/tasks/{id}"), Flash::Killed(id.0)))
}

pub async fn delete(
    State(app): State<Arc<App>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, Failure> {
    let id = parse_id(&id)?;
    let deleted = act(&app, move |app, store| {
        crate::actions::delete_task(&app.project, store, id)
    })
    .await?;
    Ok(done("/", Flash::Deleted(deleted.id.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injected_learnings_are_linked_and_the_rest_escaped() {
        let prompt =
            "Fix it.\n<learnings>\n- [Testing] Run <b>make</b> first <!-- L3 -->\n</learnings>";
        let html = linked_prompt(prompt, &[(3, "Run <b>make</b> first".into())]).into_string();
        assert!(
            html.contains(
                r#"<a class="learning" href="/learnings/L3">Run &lt;b&gt;make&lt;/b&gt; first</a>"#
            ),
            "{html}"
        );
        assert!(
            html.contains(r#"<a class="learning" href="/learnings/L3">&lt;!-- L3 --&gt;</a>"#),
            "{html}"
        );
        assert!(html.starts_with("Fix it.\n&lt;learnings&gt;"), "{html}");
        assert!(html.ends_with("&lt;/learnings&gt;"), "{html}");
    }
}
