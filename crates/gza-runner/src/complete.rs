//! The completion hook: what happens inside the transaction that records a task's outcome.

use gza_store::Tx;

use gza_core::project::Project;
use gza_core::task::{Task, TaskId, TaskStatus, TaskType};

/// Runs after every finished task, in the transaction that records its outcome (inside a
/// savepoint: an error here rolls back only the hook's own writes, never the outcome).
///
/// A completed task that does not skip learnings counts towards the next regeneration, and how
/// the task ended is credited to the learnings it was given (`gza_store::credit_finished`);
/// neither for an A/B run (`gza ab`).
pub fn on_task_finished(tx: &Tx, _project: &Project, task: &Task) -> Result<(), String> {
    // An A/B run (`gza ab`) teaches nothing: it is neither extracted nor credited.
    let experiment = gza_store::is_ab_run(tx, task.id)
        .map_err(|e| format!("cannot tell whether the task is an A/B run: {e}"))?;
    if task.status() == TaskStatus::Completed && !task.skip_learnings && !experiment {
        gza_store::count_towards_regeneration(tx)
            .map_err(|e| format!("cannot count the task towards learnings: {e}"))?;
    }
    // How it ended is credited to the learnings it was given; a review's verdict, to those of
    // the task it reviewed.
    let reviewed = (task.task_type == TaskType::Review)
        .then_some(task.based_on)
        .flatten();
    gza_store::credit_finished(tx, task.id, reviewed)
        .map_err(|e| format!("cannot credit the task's learnings: {e}"))?;
    Ok(())
}

/// Record a completion-hook failure in `.gza/logs/hooks.log`; it never changes the task's outcome.
pub fn log_hook_error(project: &Project, task_id: TaskId, error: &str) {
    gza_core::fsutil::append_log(
        &project.logs_dir().join("hooks.log"),
        &format!("task {task_id}: {error}"),
    );
}
