//! The completion hook: what happens inside the transaction that records a task's outcome.

use gza_store::Tx;

use gza_core::project::Project;
use gza_core::task::{Task, TaskId, TaskStatus};

/// Runs after every finished task, in the transaction that records its outcome (inside a
/// savepoint: an error here rolls back only the hook's own writes, never the outcome).
///
/// A completed task that does not skip learnings counts towards the next regeneration.
pub fn on_task_finished(tx: &Tx, _project: &Project, task: &Task) -> Result<(), String> {
    if task.status() == TaskStatus::Completed && !task.skip_learnings {
        gza_store::count_towards_regeneration(tx)
            .map_err(|e| format!("cannot count the task towards learnings: {e}"))?;
    }
    Ok(())
}

/// Record a completion-hook failure in `.gza/logs/hooks.log`; it never changes the task's outcome.
pub fn log_hook_error(project: &Project, task_id: TaskId, error: &str) {
    gza_core::fsutil::append_log(
        &project.logs_dir().join("hooks.log"),
        &format!("task {task_id}: {error}"),
    );
}
