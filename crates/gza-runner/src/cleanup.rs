//! Removing what finished tasks leave behind: worktrees and logs older than `cleanup_days`.
//! A worktree with uncommitted changes, or one a pending or running task uses, is never removed;
//! each kept one comes with the reason.

use std::path::Path;

use gza_core::error::Result;
use gza_core::project::Project;
use gza_core::worktree;
use gza_store::{Leftover, Store};

/// Which leftovers to consider.
#[derive(Debug, Clone, Copy)]
pub struct Scope {
    /// Only tasks finished more than this many days ago; `None`: every finished task.
    pub older_than_days: Option<u32>,
    /// Look at no more than this many worktrees and logs (`gza work` cleans a few at start).
    pub limit: usize,
    /// Only say what would be removed.
    pub dry_run: bool,
}

/// What a clean-up did (or, with `dry_run`, would do).
#[derive(Debug, Default)]
pub struct Report {
    /// Worktrees removed (or to remove), by task.
    pub removed: Vec<Leftover>,
    /// Worktrees kept, each with why.
    pub kept: Vec<(Leftover, String)>,
    /// Log files removed (or to remove).
    pub logs: usize,
}

/// The file name of a task's agent stderr in `.gza/logs/`.
pub fn stderr_log_name(id: gza_core::task::TaskId) -> String {
    format!("{id}.stderr.log")
}

/// The file names of the verify runs' outputs of task `id`'s branch start with this.
pub fn verify_log_prefix(id: gza_core::task::TaskId) -> String {
    format!("{id}.verify-")
}

/// The outputs of verify runs in `logs`, by the task whose branch they checked (read once per
/// clean-up, however many logs go).
fn verify_logs(logs: &Path) -> std::collections::HashMap<i64, Vec<std::path::PathBuf>> {
    let mut found: std::collections::HashMap<i64, Vec<std::path::PathBuf>> = Default::default();
    let Ok(entries) = std::fs::read_dir(logs) else {
        return found;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if let Some((id, _)) = name.split_once(".verify-")
            && name.ends_with(".log")
            && let Ok(id) = id.parse::<i64>()
        {
            found.entry(id).or_default().push(entry.path());
        }
    }
    found
}

/// The time `days` ago.
fn days_ago(days: u32) -> chrono::DateTime<chrono::Utc> {
    gza_core::time::now() - chrono::Duration::days(i64::from(days))
}

/// Why `leftover`'s worktree must stay, if it must.
fn reason_to_keep(store: &Store, leftover: &Leftover) -> Result<Option<String>> {
    if let Some(user) = store.task_using(leftover)? {
        return Ok(Some(format!("task {} ({}) uses it", user.id, user.status)));
    }
    let dir = Path::new(&leftover.path);
    if !dir.exists() {
        return Ok(None);
    }
    match worktree::uncommitted(dir) {
        Ok(files) if files.is_empty() => Ok(None),
        Ok(files) => Ok(Some(format!(
            "uncommitted changes ({}{}); commit or discard them, then run gza clean again",
            files.join(", "),
            if files.len() >= 3 { ", …" } else { "" }
        ))),
        Err(e) => Ok(Some(format!(
            "cannot tell whether it has uncommitted changes: {e}"
        ))),
    }
}

/// Remove one task's worktree (`gza delete`), unless it must stay: returns why it was kept.
pub fn remove_worktree_of(
    project: &Project,
    store: &Store,
    leftover: &Leftover,
) -> Result<Option<String>> {
    if let Some(why) = reason_to_keep(store, leftover)? {
        return Ok(Some(why));
    }
    match worktree::remove(&project.root, Path::new(&leftover.path)) {
        Ok(()) => Ok(None),
        Err(e) => Ok(Some(e.to_string())),
    }
}

/// Remove the worktrees and logs `scope` selects, keeping what must stay.
pub fn clean(project: &Project, store: &Store, scope: Scope) -> Result<Report> {
    let before = scope.older_than_days.map(days_ago);
    let mut report = Report::default();
    for leftover in store.finished_with_worktrees(before, scope.limit)? {
        if let Some(why) = reason_to_keep(store, &leftover)? {
            report.kept.push((leftover, why));
            continue;
        }
        if !scope.dry_run {
            if let Err(e) = worktree::remove(&project.root, Path::new(&leftover.path)) {
                report.kept.push((leftover, e.to_string()));
                continue;
            }
            store.clear_worktree(leftover.id)?;
        }
        report.removed.push(leftover);
    }
    if scope.dry_run {
        let n = store.count_finished_with_logs(before)?;
        report.logs = usize::try_from(n).unwrap_or(0).min(scope.limit);
        return Ok(report);
    }
    let mut verify_logs_found = None;
    for log in store.finished_with_logs(before, scope.limit)? {
        match std::fs::remove_file(&log.path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => continue,
        }
        // The agent's stderr goes with its log: a finished task's is never read again; so do
        // the outputs of its branch's verify runs (their ends stay in the database).
        let _ = std::fs::remove_file(project.logs_dir().join(stderr_log_name(log.id)));
        let verify_logs = verify_logs_found.get_or_insert_with(|| verify_logs(&project.logs_dir()));
        for path in verify_logs.remove(&log.id.0).unwrap_or_default() {
            let _ = std::fs::remove_file(path);
        }
        store.clear_log(log.id)?;
        report.logs += 1;
    }
    Ok(report)
}
