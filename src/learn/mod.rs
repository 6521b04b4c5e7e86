//! Learning accumulation: what finished tasks teach the next ones.

use crate::project::Project;
use crate::prompt::InjectedLearnings;
use crate::store::Store;
use crate::task::Task;

/// The learnings a task is given, or `None` when there are none or the task opts out.
/// A broken learnings file is logged and skipped: it must never stop a task from running.
pub fn learnings_for_prompt(
    project: &Project,
    _store: &Store,
    task: &Task,
) -> Option<InjectedLearnings> {
    if task.skip_learnings || !project.config.learnings.enabled {
        return None;
    }
    match crate::prompt::read_learnings_file(project) {
        Ok(learnings) => learnings,
        Err(e) => {
            crate::fsutil::append_log(
                &project.logs_dir().join("learnings.log"),
                &format!("task {}: learnings not injected: {e}", task.id),
            );
            None
        }
    }
}
