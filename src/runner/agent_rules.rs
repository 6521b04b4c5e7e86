//! Tier 1 rules an agent wrote to `LEARNINGS.md` in its worktree (seed 002): taken in as drafts
//! when the task completes, and kept out of the task's commit either way.

use std::path::Path;

use crate::learning::{AGENT_RULES_FILE, AGENT_RULES_MAX_BYTES, NewLearning, Origin, Status};
use crate::store::Store;

/// Read the worktree's LEARNINGS.md, put it back as it was at HEAD (or remove it when HEAD has
/// none), and, when `completed`, store the rules the agent added as drafts taught by `task_id`.
/// Returns a warning to show, if any; never fails the task.
pub fn take_in(
    store: &Store,
    task_id: i64,
    worktree: &Path,
    completed: bool,
    section: &str,
) -> Option<String> {
    let path = worktree.join(AGENT_RULES_FILE);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    let at_head = crate::git::run(worktree, &["show", &format!("HEAD:{AGENT_RULES_FILE}")]).ok();
    let text = if meta.is_file() && meta.len() <= AGENT_RULES_MAX_BYTES {
        std::fs::read(&path)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    } else {
        None
    };
    // Out of the commit: back to HEAD's version, or gone.
    let restored = match &at_head {
        Some(_) => crate::git::run(worktree, &["checkout", "HEAD", "--", AGENT_RULES_FILE]).is_ok(),
        None => std::fs::remove_file(&path).is_ok(),
    };
    let mut warning = (!restored)
        .then(|| format!("task {task_id}: could not keep {AGENT_RULES_FILE} out of the commit"));
    if !meta.is_file() || meta.len() > AGENT_RULES_MAX_BYTES {
        warning.get_or_insert(format!(
            "task {task_id}: {AGENT_RULES_FILE} is not a regular file of at most {AGENT_RULES_MAX_BYTES} bytes; its rules were not read"
        ));
        return warning;
    }
    if !completed {
        return warning;
    }
    let known = at_head
        .as_deref()
        .map(crate::learning::agent_rules)
        .unwrap_or_default();
    let drafts: Vec<NewLearning> = crate::learning::agent_rules(text.as_deref().unwrap_or(""))
        .into_iter()
        .filter(|r| !known.contains(r))
        .map(|r| {
            let mut l = NewLearning::new(section, &r, Origin::Agent);
            l.status = Status::Draft;
            l
        })
        .collect();
    if let Err(e) = store.add_task_drafts(task_id, &drafts) {
        warning.get_or_insert(format!(
            "task {task_id}: rules from {AGENT_RULES_FILE} not stored: {e}"
        ));
    }
    warning
}
