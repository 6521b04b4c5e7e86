//! The board: pending, blocked, running, done and failed tasks, live; adding a task; the list of
//! one column a page at a time.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use maud::{Markup, html};

use super::{Failure, Flash, Nav, act, button, done, given, layout, query, read, shown};
use crate::serve::App;
use crate::store::{PendingTask, Store, TaskFilter, TaskSummary};
use crate::task::{TaskId, TaskStatus, TaskType};

/// Cards per column; the rest are a page away.
const COLUMN: u32 = 25;
/// Rows per page of a list.
const PAGE: u32 = 50;
/// Counts of a filtered board stop here ("10000+"), so they cost the same however long the
/// history is.
const COUNT_CAP: i64 = 10_000;

/// One view of the board: its filter. Pages with the same filter share one live view.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct BoardKey {
    pub group: Option<String>,
    pub task_type: Option<TaskType>,
}

impl BoardKey {
    fn filter(&self) -> TaskFilter<'_> {
        TaskFilter {
            group: self.group.as_deref(),
            task_type: self.task_type,
        }
    }

    fn query(&self) -> String {
        query(&[
            ("group", self.group.as_deref().unwrap_or("")),
            ("type", self.task_type.map(|t| t.as_str()).unwrap_or("")),
        ])
    }
}

#[derive(Debug, Default, serde::Deserialize)]
pub struct BoardQuery {
    group: Option<String>,
    #[serde(rename = "type")]
    task_type: Option<String>,
    flash: Option<String>,
}

/// The filter a query asks for, checked.
pub fn board_key(group: &Option<String>, task_type: &Option<String>) -> Result<BoardKey, Failure> {
    let task_type = match given(task_type) {
        Some(t) => Some(TaskType::parse(t).ok_or_else(|| {
            Failure::bad_request(format!(
                "unknown task type {:?}; expected one of {}",
                crate::cli::output::one_line(t, 40),
                TaskType::names()
            ))
        })?),
        None => None,
    };
    Ok(BoardKey {
        group: given(group).map(str::to_string),
        task_type,
    })
}

pub async fn board_page(
    State(app): State<Arc<App>>,
    Query(q): Query<BoardQuery>,
) -> Result<Markup, Failure> {
    let key = board_key(&q.group, &q.task_type)?;
    read(&app, move |app, store| {
        let groups = store.groups_in_use(200)?;
        let columns = board_columns(app, store, &key)?;
        let stream = format!("/events/board{}", key.query());
        let body = html! {
            div.toolbar {
                form.filters method="get" action="/" {
                    label { "Group "
                        select name="group" {
                            option value="" { "all" }
                            @for g in &groups {
                                option value=(g) selected[key.group.as_deref() == Some(g.as_str())] { (shown(g)) }
                            }
                        }
                    }
                    label { "Type "
                        select name="type" {
                            option value="" { "all" }
                            @for t in TaskType::ALL {
                                option value=(t.as_str()) selected[key.task_type == Some(*t)] { (t.as_str()) }
                            }
                        }
                    }
                    button type="submit" { "Filter" }
                }
                @if !app.read_only {
                    details.add {
                        summary { "Add a task" }
                        form.add method="post" action="/tasks" {
                            (super::csrf_field(app))
                            textarea name="prompt" rows="4" required placeholder="What the agent should do" {}
                            div.row {
                                label { "Type "
                                    select name="type" {
                                        @for t in TaskType::ALL {
                                            option value=(t.as_str()) { (t.as_str()) }
                                        }
                                    }
                                }
                                label { "Group " input name="group" value=[key.group.as_deref()] list="groups"; }
                                datalist id="groups" { @for g in &groups { option value=(g) {} } }
                                label { input type="checkbox" name="next" value="1"; " run next" }
                                label { input type="checkbox" name="no_learnings" value="1"; " no learnings" }
                                button type="submit" { "Add" }
                            }
                        }
                    }
                }
            }
            div #board data-stream=(stream) { (columns) }
        };
        Ok(layout(app, Nav::Board, "Board", q.flash.as_deref(), body))
    })
    .await
}

/// What a board view's open pages are sent: its columns, rendered.
pub fn board_payload(app: &App, store: &Store, key: &BoardKey) -> Result<String, crate::Error> {
    let html = board_columns(app, store, key)?.into_string();
    Ok(serde_json::json!({ "html": html }).to_string())
}

/// The five columns.
fn board_columns(app: &App, store: &Store, key: &BoardKey) -> Result<Markup, crate::Error> {
    let filter = key.filter();
    let ready = store.pending_tasks(false, filter, COLUMN)?;
    let blocked = store.pending_tasks(true, filter, COLUMN)?;
    let running = store.tasks_with_status(TaskStatus::InProgress, filter, None, COLUMN)?;
    // In team mode, the host each running task's worker is on (its lease's), as `gza ps` shows.
    let hosts = if store.backend() == crate::store::Backend::Postgres {
        store.running_task_leases()?
    } else {
        Default::default()
    };
    let completed = store.tasks_with_status(TaskStatus::Completed, filter, None, COLUMN)?;
    let mut failed = store.tasks_with_status(TaskStatus::Failed, filter, None, COLUMN)?;
    failed.extend(store.tasks_with_status(TaskStatus::Dropped, filter, None, COLUMN)?);
    failed.sort_by_key(|t| std::cmp::Reverse(t.id));
    failed.truncate(COLUMN as usize);
    // Counts: the running totals when nothing is filtered (exact, no scan); else counted up to
    // a cap.
    let count = |status: TaskStatus, shown: usize| -> Result<String, crate::Error> {
        if shown < COLUMN as usize {
            return Ok(shown.to_string());
        }
        let n = store.count_with_status_capped(status, filter, COUNT_CAP)?;
        Ok(if n >= COUNT_CAP {
            format!("{COUNT_CAP}+")
        } else {
            n.to_string()
        })
    };
    let (ready_n, blocked_n) = if ready.len() < COLUMN as usize && blocked.len() < COLUMN as usize {
        (ready.len().to_string(), blocked.len().to_string())
    } else if key.task_type.is_none() {
        let counts = store.pending_counts_capped(key.group.as_deref(), COUNT_CAP)?;
        let cap = |n: i64| {
            if n >= COUNT_CAP {
                format!("{COUNT_CAP}+")
            } else {
                n.to_string()
            }
        };
        (cap(counts.ready), cap(counts.blocked))
    } else {
        let more = |v: &Vec<PendingTask>| {
            if v.len() < COLUMN as usize {
                v.len().to_string()
            } else {
                format!("{}+", v.len())
            }
        };
        (more(&ready), more(&blocked))
    };
    let failed_n = if failed.len() < COLUMN as usize {
        failed.len().to_string()
    } else {
        let n = store.count_with_status_capped(TaskStatus::Failed, filter, COUNT_CAP)?
            + store.count_with_status_capped(TaskStatus::Dropped, filter, COUNT_CAP)?;
        if n >= COUNT_CAP {
            format!("{COUNT_CAP}+")
        } else {
            n.to_string()
        }
    };
    let list_link = |status: &str, last: Option<TaskId>| -> Option<String> {
        last.map(|id| {
            let mut pairs = vec![("status", status.to_string()), ("before", id.to_string())];
            if let Some(g) = &key.group {
                pairs.push(("group", g.clone()));
            }
            if let Some(t) = key.task_type {
                pairs.push(("type", t.as_str().to_string()));
            }
            let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
            format!("/tasks{}", query(&pairs))
        })
    };
    let full = |v: usize| v >= COLUMN as usize;
    Ok(html! {
        section.column.pending data-status="pending" {
            h2 { "Pending " span.count { (ready_n) } }
            @for t in &ready { (card(app, &t.task, None, None)) }
            @if ready.is_empty() { p.empty { "Nothing waiting" } }
        }
        section.column.blocked data-status="blocked" {
            h2 { "Blocked " span.count { (blocked_n) } }
            @for t in &blocked { (card(app, &t.task, t.blocked_by.as_ref(), None)) }
            @if blocked.is_empty() { p.empty { "Nothing blocked" } }
        }
        section.column.running data-status="in_progress" {
            h2 { "Running " span.count { (count(TaskStatus::InProgress, running.len())?) } }
            @for t in &running { (card(app, t, None, hosts.get(&t.id).map(|l| l.host.as_str()))) }
            @if running.is_empty() { p.empty { "Nothing running" } }
        }
        section.column.done data-status="completed" {
            h2 { "Done " span.count { (count(TaskStatus::Completed, completed.len())?) } }
            @for t in &completed { (card(app, t, None, None)) }
            @if full(completed.len()) {
                @if let Some(href) = list_link("completed", completed.last().map(|t| t.id)) {
                    a.more href=(href) { "Older →" }
                }
            }
        }
        section.column.failed data-status="failed" {
            h2 { "Failed " span.count { (failed_n) } }
            @for t in &failed { (card(app, t, None, None)) }
            @if full(failed.len()) {
                @if let Some(href) = list_link("failed", failed.last().map(|t| t.id)) {
                    a.more href=(href) { "Older →" }
                }
            }
        }
    })
}

/// One task on the board.
/// One task's card; `host` is the host its worker runs on (team mode's running tasks).
fn card(
    app: &App,
    t: &TaskSummary,
    blocked_by: Option<&crate::store::LinkedTask>,
    host: Option<&str>,
) -> Markup {
    let status = t.status();
    let href = format!("/tasks/{}", t.id);
    html! {
        article.card id=(format!("task-{}", t.id)) data-id=(t.id.0) data-status=(status.as_str()) {
            div.head {
                a.id href=(href) { "#" (t.id) }
                span.type { (t.task_type.as_str()) }
                @if t.urgent { span.badge.urgent { "next" } }
                @if let Some(g) = &t.group {
                    a.group href=(format!("/{}", query(&[("group", g)]))) { (shown(g)) }
                }
            }
            a.prompt href=(href) { (crate::cli::output::one_line(&shown(&t.prompt), 140)) }
            div.meta {
                @match status {
                    TaskStatus::InProgress => {
                        @if let Some(started) = t.state.started_at() {
                            span.elapsed data-since=(crate::time::to_db(&started)) {
                                (crate::cli::output::duration(Some((chrono::Utc::now() - started).num_seconds().max(0) as f64)))
                            }
                        }
                        @if let Some(w) = t.state.worker() {
                            span.worker title="worker process" { "pid " (w.pid) }
                        }
                        @if let Some(h) = host { span.host title="the worker's host" { "on " (shown(h)) } }
                        @if t.cost_usd.is_some() { span.cost { (crate::cli::output::cost(t.cost_usd)) } }
                    }
                    TaskStatus::Failed | TaskStatus::Dropped => {
                        span.reason { (t.state.failure_reason().map_or(status.as_str().to_string(), |r| r.to_string())) }
                    }
                    TaskStatus::Completed => {
                        @if let Some(v) = t.state.review_verdict() { span.verdict { (v.as_str()) } }
                        @if t.cost_usd.is_some() { span.cost { (crate::cli::output::cost(t.cost_usd)) } }
                        @if t.duration_seconds.is_some() { span { (crate::cli::output::duration(t.duration_seconds)) } }
                    }
                    TaskStatus::Pending => {
                        @if let Some(b) = blocked_by {
                            span.blocked { "waits for " a href=(format!("/tasks/{}", b.id)) { "#" (b.id) } " (" (b.status.as_str()) ")" }
                        }
                    }
                }
            }
            div.actions {
                @match status {
                    TaskStatus::InProgress => {
                        (button(app, &format!("/tasks/{}/kill", t.id), "Kill", Some("Stop this task? It fails with KILLED."), "danger"))
                    }
                    TaskStatus::Pending => {
                        (button(app, &format!("/tasks/{}/delete", t.id), "Delete", Some("Delete this task?"), "quiet"))
                    }
                    _ => {
                        (button(app, &format!("/tasks/{}/retry", t.id), "Retry", None, ""))
                        (button(app, &format!("/tasks/{}/delete", t.id), "Delete", Some("Delete this task? Its branch is kept."), "quiet"))
                    }
                }
            }
        }
    }
}

#[derive(Debug, Default, serde::Deserialize)]
pub struct ListQuery {
    status: Option<String>,
    group: Option<String>,
    #[serde(rename = "type")]
    task_type: Option<String>,
    before: Option<i64>,
    flash: Option<String>,
}

/// One status's tasks, newest first, a page at a time (keyset: `before` an id).
pub async fn list_page(
    State(app): State<Arc<App>>,
    Query(q): Query<ListQuery>,
) -> Result<Markup, Failure> {
    let key = board_key(&q.group, &q.task_type)?;
    let statuses: Vec<TaskStatus> = match given(&q.status) {
        None | Some("failed") => vec![TaskStatus::Failed, TaskStatus::Dropped],
        Some(s) => vec![TaskStatus::parse(s).ok_or_else(|| {
            Failure::bad_request(format!(
                "unknown status {:?}; expected one of {}",
                crate::cli::output::one_line(s, 40),
                TaskStatus::names()
            ))
        })?],
    };
    let before = q.before.map(TaskId);
    read(&app, move |app, store| {
        let mut rows = Vec::new();
        for s in &statuses {
            rows.extend(store.tasks_with_status(*s, key.filter(), before, PAGE)?);
        }
        rows.sort_by_key(|t| std::cmp::Reverse(t.id));
        rows.truncate(PAGE as usize);
        let title = match statuses.as_slice() {
            [TaskStatus::Failed, TaskStatus::Dropped] => "Failed and dropped tasks".to_string(),
            [s] => format!("{} tasks", s.as_str()),
            _ => "Tasks".into(),
        };
        let next = (rows.len() == PAGE as usize).then(|| {
            let status = q.status.clone().unwrap_or_else(|| "failed".into());
            let last = rows.last().map(|t| t.id.to_string()).unwrap_or_default();
            format!(
                "/tasks{}",
                query(&[
                    ("status", &status),
                    ("before", &last),
                    ("group", key.group.as_deref().unwrap_or("")),
                    ("type", key.task_type.map(|t| t.as_str()).unwrap_or("")),
                ])
            )
        });
        let body = html! {
            h1 { (title) }
            p { a href=(format!("/{}", key.query())) { "← Board" } }
            table.list {
                thead { tr { th { "ID" } th { "Type" } th { "Status" } th { "Group" } th { "Cost" } th { "Prompt" } } }
                tbody {
                    @for t in &rows {
                        tr {
                            td { a href=(format!("/tasks/{}", t.id)) { (t.id) } }
                            td { (t.task_type.as_str()) }
                            td { (t.status().as_str()) @if let Some(r) = t.state.failure_reason() { " " span.reason { (r.as_str()) } } }
                            td { @if let Some(g) = &t.group { (shown(g)) } }
                            td { (crate::cli::output::cost(t.cost_usd)) }
                            td.prompt { (crate::cli::output::one_line(&shown(&t.prompt), 120)) }
                        }
                    }
                }
            }
            @if rows.is_empty() { p.empty { "No tasks here" } }
            @if let Some(next) = next { p { a.more href=(next) { "Older →" } } }
        };
        Ok(layout(app, Nav::Board, &title, q.flash.as_deref(), body))
    })
    .await
}

#[derive(Debug, serde::Deserialize)]
pub struct AddForm {
    prompt: String,
    #[serde(rename = "type")]
    task_type: Option<String>,
    group: Option<String>,
    next: Option<String>,
    no_learnings: Option<String>,
}

/// `gza add`, from the board's form.
pub async fn add_task(
    State(app): State<Arc<App>>,
    axum::Form(form): axum::Form<AddForm>,
) -> Result<Response, Failure> {
    let task_type = match given(&form.task_type) {
        Some(t) => Some(TaskType::parse(t).ok_or_else(|| {
            Failure::bad_request(format!(
                "unknown task type; expected one of {}",
                TaskType::names()
            ))
        })?),
        None => None,
    };
    let add = crate::actions::AddTask {
        // A browser sends a textarea's line breaks as CRLF; the prompt keeps the person's lines.
        prompt: form.prompt.replace("\r\n", "\n"),
        task_type,
        group: given(&form.group).map(str::to_string),
        urgent: form.next.is_some(),
        no_learnings: form.no_learnings.is_some(),
        ..Default::default()
    };
    let group = add.group.clone();
    let id = act(&app, move |app, store| {
        crate::actions::add_task(&app.project, store, &add)
    })
    .await?;
    let back = format!("/{}", query(&[("group", group.as_deref().unwrap_or(""))]));
    Ok(done(&back, Flash::Added(id.0)))
}
