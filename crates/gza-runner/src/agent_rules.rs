//! Tier 1 rules an agent wrote to `LEARNINGS.md` in its worktree (seed 002): taken in as drafts
//! when the task completes, and kept out of the task's commit either way.

use std::path::Path;

use gza_core::learning::{AGENT_RULES_FILE, AGENT_RULES_MAX_BYTES, NewLearning, Origin, Status};
use gza_core::task::TaskId;
use gza_store::Store;

/// Read the worktree's LEARNINGS.md, put it back as it was at HEAD (or remove it when HEAD has
/// none), and, when `completed`, store the rules the agent added as drafts taught by `task_id`
/// (their ids pushed to `stored`). Returns a warning to show, if any; never fails the task.
pub fn take_in(
    store: &Store,
    task_id: TaskId,
    worktree: &Path,
    completed: bool,
    section: &str,
    stored: &mut Vec<i64>,
) -> Option<String> {
    let path = worktree.join(AGENT_RULES_FILE);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    let at_head = gza_core::git::run(worktree, &["show", &format!("HEAD:{AGENT_RULES_FILE}")]).ok();
    let text = if meta.is_file() && meta.len() <= AGENT_RULES_MAX_BYTES {
        gza_core::fsutil::read_regular_file(&path, AGENT_RULES_MAX_BYTES)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    } else {
        None
    };
    // Out of the commit: back to HEAD's version, or gone.
    let restored = match &at_head {
        Some(_) => {
            gza_core::git::run(worktree, &["checkout", "HEAD", "--", AGENT_RULES_FILE]).is_ok()
        }
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
        .map(gza_core::learning::agent_rules)
        .unwrap_or_default();
    let drafts: Vec<NewLearning> = gza_core::learning::agent_rules(text.as_deref().unwrap_or(""))
        .into_iter()
        .filter(|r| !known.contains(r))
        .map(|r| {
            let mut l = NewLearning::new(section, &r, Origin::Agent);
            l.status = Status::Draft;
            l
        })
        .collect();
    match store.add_task_drafts(task_id, &drafts) {
        Ok(ids) => stored.extend(ids),
        Err(e) => {
            warning.get_or_insert(format!(
                "task {task_id}: rules from {AGENT_RULES_FILE} not stored: {e}"
            ));
        }
    }
    warning
}

/// `.gza/learnings.md` as it was before an agent running in place started: whatever the agent
/// writes to it is the agent's (drafts it taught), never a person's pinned lines.
pub struct LearningsFileGuard {
    path: std::path::PathBuf,
    before: Option<Vec<u8>>,
    active: bool,
}

fn read_small(path: &Path) -> Option<Vec<u8>> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    (meta.is_file() && meta.len() <= AGENT_RULES_MAX_BYTES)
        .then(|| gza_core::fsutil::read_regular_file(path, AGENT_RULES_MAX_BYTES).ok())
        .flatten()
}

/// The item lines of a learnings file: their text without id comments.
fn item_texts(text: &str) -> Vec<String> {
    gza_core::learnings_md::parse(text)
        .lines
        .into_iter()
        .map(|l| l.text)
        .collect()
}

fn version_marker(text: &str) -> Option<i64> {
    gza_core::learnings_md::version(text)
}

impl LearningsFileGuard {
    /// Remember the file before an agent starts; only agents running in place are watched.
    pub fn before(learnings_path: &Path, in_place: bool) -> LearningsFileGuard {
        LearningsFileGuard {
            path: learnings_path.to_path_buf(),
            before: if in_place {
                read_small(learnings_path)
            } else {
                None
            },
            active: in_place,
        }
    }

    /// After the agent exits: lines it added become drafts taught by the task (quarantined
    /// when they read like instructions; their ids pushed to `stored`) and the file is put
    /// back as it was. A rewrite gza itself made meanwhile (a regeneration's recorded version)
    /// is left alone.
    pub fn after(
        self,
        store: &Store,
        task_id: TaskId,
        section: &str,
        stored: &mut Vec<i64>,
    ) -> Option<String> {
        if !self.active {
            return None;
        }
        let now = read_small(&self.path);
        if now == self.before {
            return None;
        }
        let now_text = String::from_utf8_lossy(now.as_deref().unwrap_or_default()).into_owned();
        let before_text =
            String::from_utf8_lossy(self.before.as_deref().unwrap_or_default()).into_owned();
        let gza_wrote = version_marker(&now_text)
            .and_then(|v| store.learnings_version(v).ok().flatten())
            .is_some_and(|content| content == now_text);
        if gza_wrote {
            return None;
        }
        let old = item_texts(&before_text);
        let added: Vec<String> = item_texts(&now_text)
            .into_iter()
            .filter(|t| !old.contains(t))
            .collect();
        let drafts: Vec<NewLearning> = added
            .iter()
            .filter(|t| t.chars().count() >= 10)
            .map(|t| {
                let mut l = NewLearning::new(section, t, Origin::Agent);
                l.status = Status::Draft;
                l
            })
            .collect();
        let mut warning = None;
        match store.add_task_drafts(task_id, &drafts) {
            Ok(ids) => stored.extend(ids),
            Err(e) => {
                warning = Some(format!(
                    "task {task_id}: lines the agent wrote to learnings.md not stored: {e}"
                ));
            }
        }
        // Put the file back: as it was when the marker is unchanged, else without the lines
        // the agent added.
        let restored = if version_marker(&now_text) == version_marker(&before_text) {
            match &self.before {
                Some(bytes) => gza_core::fsutil::write_atomically(&self.path, bytes).is_ok(),
                None => std::fs::remove_file(&self.path).is_ok(),
            }
        } else {
            let kept: String = now_text
                .lines()
                .filter(|l| item_texts(l).first().is_none_or(|t| !added.contains(t)))
                .map(|l| format!("{l}\n"))
                .collect();
            gza_core::fsutil::write_atomically(&self.path, kept.as_bytes()).is_ok()
        };
        if !restored {
            warning.get_or_insert(format!(
                "task {task_id}: could not undo the agent's change to learnings.md"
            ));
        }
        warning
    }
}
