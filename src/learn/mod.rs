//! Learning accumulation: every completed task teaches the next ones.
//!
//! Each completed task is extracted once (0-3 learnings, kept in the database with their
//! source); a regeneration merges the learnings of the window of recent tasks with the user's
//! pinned lines and renders `.gza/learnings.md` deterministically.

pub mod extract;
pub mod items;
pub mod regenerate;

use crate::project::Project;
use crate::prompt::InjectedLearnings;
use crate::store::Store;
use crate::task::Task;

/// The learnings a task is given, or `None` when there are none or the task opts out; records
/// which version the task saw. A broken learnings file is logged and skipped: it must never
/// stop a task from running.
pub fn learnings_for_prompt(
    project: &Project,
    store: &Store,
    task: &Task,
) -> Option<InjectedLearnings> {
    if task.skip_learnings || !project.config.learnings.enabled {
        return None;
    }
    match crate::prompt::read_learnings_file(project) {
        Ok(learnings) => {
            if learnings.is_some() {
                let version = store.last_learnings_version_id().ok().flatten();
                let _ = store.set_learnings_version(task.id, version);
            }
            learnings
        }
        Err(e) => {
            log(
                project,
                &format!("task {}: learnings not injected: {e}", task.id),
            );
            None
        }
    }
}

/// Append a line to `.gza/logs/learnings.log`.
pub fn log(project: &Project, line: &str) {
    crate::fsutil::append_log(&project.logs_dir().join("learnings.log"), line);
}

/// After a task is recorded: regenerate when `regenerate_every` completed tasks have piled up.
/// Without an LLM this is as cheap as writing a file and runs at once; with one it runs on a
/// thread (returned, for the caller to wait on before exiting) so the next task is not delayed.
/// Never fails: a failure is logged and the regeneration simply happens again next time.
pub fn after_task(project: &Project, store: &Store) -> Option<std::thread::JoinHandle<()>> {
    let config = &project.config.learnings;
    if !config.enabled {
        return None;
    }
    let due = store
        .learnings_metadata()
        .is_ok_and(|m| m.tasks_since_regen >= i64::from(config.regenerate_every));
    if !due {
        return None;
    }
    let client = match crate::llm::client_for(config, &project.config.providers.claude.path) {
        Ok(c) => c,
        Err(e) => {
            log(project, &format!("regeneration skipped: {e}"));
            return None;
        }
    };
    if client.is_none() {
        regenerate_and_log(project, store, None);
        return None;
    }
    let project = project.clone();
    Some(std::thread::spawn(move || {
        match Store::open(&project.db_path()) {
            Ok(store) => regenerate_and_log(&project, &store, client.as_deref()),
            Err(e) => log(&project, &format!("regeneration failed: {e}")),
        }
    }))
}

fn regenerate_and_log(
    project: &Project,
    store: &Store,
    client: Option<&dyn crate::llm::ExtractionClient>,
) {
    let options = regenerate::Options {
        window: project.config.learnings.window_size,
        dry_run: false,
    };
    match regenerate::regenerate(project, store, client, options) {
        Ok(report) => {
            for (id, err) in &report.failures {
                log(
                    project,
                    &format!("task {id}: extraction failed ({err}); it is tried again next time"),
                );
            }
            log(
                project,
                &format!(
                    "regenerated from {} tasks: {} items (+{} -{}), {} LLM calls",
                    report.record.window_tasks,
                    report.record.items,
                    report.record.added,
                    report.record.removed,
                    report.record.llm_calls
                ),
            );
        }
        Err(e) => log(project, &format!("regeneration failed: {e}")),
    }
}
