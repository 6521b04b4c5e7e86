//! What a person can do to tasks and learnings, for every front end: `gza add`, `delete`,
//! `retry`, `kill` and `gza learnings edit/archive/restore/promote` call these, and so does the
//! dashboard (`gza serve`), so a page and a command can never disagree on a check or a store
//! call. Each function takes the project and an open store, checks everything before it changes
//! anything, and returns what happened as data; printing (or rendering) is the caller's.
//!
//! Errors a person can fix are [`Error::Usage`] (or another user error of [`Error`]), with a
//! message that says what to do in the words of the command line (`gza kill 12`), which the
//! dashboard shows as it is.

use std::path::Path;

use crate::config::ProviderKind;
use crate::error::Error;
use crate::learn::rank::Ranker;
use crate::learn::{items, regenerate};
use crate::learning::{Learning, Priority, Status, label, parse_label};
use crate::project::Project;
use crate::store::{LearningEdit, NewTask, Store};
use crate::task::{TaskId, TaskStatus, TaskType};

/// Prompts above this size are refused: far beyond any agent's context window.
pub const MAX_PROMPT_BYTES: usize = 16 * 1024 * 1024;

/// Longest group name accepted; names are labels, not text.
const MAX_GROUP_CHARS: usize = 100;

/// The project's database opened for a command that may write: orphaned tasks of dead workers
/// are reaped (each with a note) and what hooks spooled while the database was busy is taken
/// in, as every writing command does.
pub fn open_store(project: &Project, mut note: impl FnMut(&str)) -> Result<Store, Error> {
    let store = Store::open_project(project)?;
    for reaped in crate::runner::reap_orphans(project, &store) {
        if let Some(text) = reaped.note() {
            note(&text);
        }
    }
    crate::learn::take_in_spooled(project, &store);
    Ok(store)
}

// ---------------------------------------------------------------------------------------------
// Tasks

/// A task to queue, as a person described it.
#[derive(Debug, Clone, Default)]
pub struct AddTask {
    pub prompt: String,
    pub task_type: Option<TaskType>,
    pub based_on: Option<TaskId>,
    pub depends_on: Option<TaskId>,
    pub group: Option<String>,
    /// A spec file, as the person named it (relative to the current directory or absolute).
    pub spec: Option<std::path::PathBuf>,
    pub model: Option<String>,
    pub provider: Option<ProviderKind>,
    pub no_learnings: bool,
    pub urgent: bool,
    /// Tags besides those of the task it is based on.
    pub tags: Vec<crate::task::Tag>,
}

/// Check and queue a task; its id.
pub fn add_task(project: &Project, store: &Store, add: &AddTask) -> Result<TaskId, Error> {
    validate_prompt(&add.prompt)?;
    let group = add
        .group
        .as_deref()
        .map(parse_group)
        .transpose()
        .map_err(Error::Usage)?;
    let new = NewTask {
        prompt: add.prompt.clone(),
        task_type: add.task_type,
        based_on: add.based_on,
        depends_on: add.depends_on,
        group,
        spec: add
            .spec
            .as_deref()
            .map(|s| resolve_spec(project, s))
            .transpose()?,
        model: add.model.clone(),
        provider: add.provider.map(|p| p.as_str().to_string()),
        skip_learnings: add.no_learnings,
        urgent: add.urgent,
        resume_session_id: None,
        tags: add.tags.clone(),
    };
    store.insert_task(&new)
}

/// A group name: one trimmed line of at most 100 characters.
pub fn parse_group(text: &str) -> Result<String, String> {
    let name = text.trim();
    if name.is_empty() {
        return Err("a group name cannot be empty".into());
    }
    if name.chars().any(char::is_control) {
        return Err("a group name is one line of text, without control characters".into());
    }
    if name.chars().count() > MAX_GROUP_CHARS {
        return Err(format!(
            "a group name has at most {MAX_GROUP_CHARS} characters"
        ));
    }
    Ok(name.to_string())
}

/// A prompt is non-empty plain text within [`MAX_PROMPT_BYTES`].
pub fn validate_prompt(prompt: &str) -> Result<(), Error> {
    if prompt.trim().is_empty() {
        return Err(Error::Usage(
            "the prompt is empty; say what the agent should do".into(),
        ));
    }
    if let Some(at) = prompt.find('\0') {
        return Err(Error::Usage(format!(
            "the prompt contains a NUL byte (at byte {at}); prompts must be plain text"
        )));
    }
    if prompt.len() > MAX_PROMPT_BYTES {
        return Err(Error::Usage(format!(
            "the prompt is {} bytes; the limit is {MAX_PROMPT_BYTES}: put large material in a --spec file",
            prompt.len()
        )));
    }
    Ok(())
}

/// A spec path as stored: relative to the project root. The file must exist and lie inside the
/// project (through `..` and symbolic links): its text goes to the model. A relative path is
/// taken from the current directory (the command line) — the dashboard passes paths relative to
/// the project root made absolute.
pub fn resolve_spec(project: &Project, spec: &Path) -> Result<String, Error> {
    let absolute = std::path::absolute(spec).map_err(|e| Error::io(spec, "resolve", e))?;
    if let Err(outside) = crate::confine::inside(&project.root, &absolute) {
        return Err(Error::Usage(format!(
            "spec file {} leads outside the project (to {}); gza sends only files inside the project to the agent: copy it in",
            spec.display(),
            outside.resolved.display()
        )));
    }
    let meta = std::fs::metadata(&absolute).ok().filter(|m| m.is_file());
    let Some(meta) = meta else {
        return Err(Error::Usage(format!(
            "spec file {} does not exist or is not a regular file",
            spec.display()
        )));
    };
    // Checked now, not only when a worker builds the prompt: a spec too large to send would
    // otherwise be accepted here and fail the task later.
    let max = gza_core::prompt::MAX_SPEC_BYTES;
    if meta.len() > max {
        return Err(Error::Usage(format!(
            "spec file {} is {} bytes; gza sends spec files of at most {max} bytes to the agent: shorten it or split the task",
            spec.display(),
            meta.len()
        )));
    }
    let root = project.root.canonicalize().unwrap_or(project.root.clone());
    let relative = absolute
        .strip_prefix(&project.root)
        .or_else(|_| absolute.strip_prefix(&root))
        .unwrap_or(&absolute);
    Ok(relative.to_string_lossy().into_owned())
}

/// What deleting a task did besides deleting it.
#[derive(Debug, Clone)]
pub struct Deleted {
    pub id: TaskId,
    /// Its worktree, kept, and why (uncommitted work, another task uses it).
    pub kept_worktree: Option<(String, String)>,
    /// Its branch, which is the person's work and stays.
    pub kept_branch: Option<String>,
    /// Pending tasks that depended on it and no longer wait.
    pub dependents: Vec<TaskId>,
}

/// Refuse to delete a running task (it must be killed first), then delete it with what gza made
/// for it: its worktree (unless it holds uncommitted work or another task uses it) and its logs.
pub fn delete_task(project: &Project, store: &Store, id: TaskId) -> Result<Deleted, Error> {
    let task = store.get_task(id)?;
    check_deletable(&task)?;
    let dependents = store.dependents(task.id)?;
    // Its branch is the person's work and stays; the id is never given again, so the branch's
    // name keeps meaning this task.
    let kept_worktree = match &task.worktree {
        Some(path) if Path::new(path).exists() => {
            let leftover = crate::store::Leftover {
                id: task.id,
                path: path.clone(),
                branch: task.branch.clone(),
            };
            crate::runner::cleanup::remove_worktree_of(project, store, &leftover)?
                .map(|why| (path.clone(), why))
        }
        _ => None,
    };
    store.delete_task(task.id)?;
    for log in [
        task.log_file.clone().map(std::path::PathBuf::from),
        Some(
            project
                .logs_dir()
                .join(crate::runner::cleanup::stderr_log_name(task.id)),
        ),
    ]
    .into_iter()
    .flatten()
    {
        // Only gza's own log folder: a path stored in the database is not trusted further.
        if let Ok(log) = crate::confine::inside(&project.logs_dir(), &log) {
            let _ = std::fs::remove_file(log);
        }
    }
    let kept_branch = task.branch.clone().filter(|branch| {
        crate::git::run(
            &project.root,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{branch}"),
            ],
        )
        .is_ok()
    });
    Ok(Deleted {
        id: task.id,
        kept_worktree,
        kept_branch,
        dependents,
    })
}

/// A running task cannot be deleted: it must be stopped first.
pub fn check_deletable(task: &crate::task::Task) -> Result<(), Error> {
    if task.status() == TaskStatus::InProgress {
        return Err(Error::Usage(format!(
            "task {} is running; stop it with `gza kill {}` first",
            task.id, task.id
        )));
    }
    Ok(())
}

/// Queue a failed, completed or dropped task again, as a new task based on it; the new id.
pub fn retry_task(store: &Store, id: TaskId) -> Result<TaskId, Error> {
    let task = store.get_task(id)?;
    if matches!(task.status(), TaskStatus::Pending | TaskStatus::InProgress) {
        return Err(Error::Usage(format!(
            "task {} is {}; only failed, completed or dropped tasks can be retried",
            task.id,
            task.status()
        )));
    }
    store.insert_task(&NewTask::follow_up(&task))
}

/// Stop a running task: it fails with KILLED and its agent's processes are ended.
pub fn kill_task(store: &Store, id: TaskId) -> Result<(), Error> {
    crate::runner::kill_task(store, id)
}

// ---------------------------------------------------------------------------------------------
// Learnings

/// The learning an id (`L12`) names, or a one-line error saying what to do.
pub fn learning_by_id(store: &Store, id: &str) -> Result<Learning, Error> {
    let Some(n) = parse_label(id) else {
        return Err(Error::Usage(format!(
            "{:?} is not a learning id; ids look like L12 (`gza learnings show` lists them)",
            crate::cli::output::one_line(id, 40)
        )));
    };
    store.learning(n)?.ok_or_else(|| {
        Error::Usage(format!(
            "no learning {}; `gza learnings show --all` lists them",
            label(n)
        ))
    })
}

/// Wait (up to a minute; `waiting` is called once if it must) for a running regeneration to
/// finish; the lock is returned.
pub fn wait_for_regeneration(
    project: &Project,
    waiting: impl FnOnce(),
) -> Result<regenerate::RegenLock, Error> {
    // Every change takes this lock before it stores anything: a damaged learnings.md or lock
    // refuses it here, whole, from the CLI and the web page alike.
    project.check_learnings_files()?;
    regenerate::RegenLock::wait(project, std::time::Duration::from_secs(60), waiting)
}

/// Rewrite learnings.md from the records after a change, taking in the person's edits first.
/// While a regeneration runs, the file is left to it: it takes in the person's edits and renders
/// the records (this change included) when it finishes.
pub fn rewrite_file(
    project: &Project,
    store: &Store,
    ranker: Option<&Ranker>,
) -> Result<(), Error> {
    let options = regenerate::Options::rewrite(project.config.learnings.window_size);
    match regenerate::regenerate(project, store, None, ranker, options) {
        Err(Error::Busy(_)) => Ok(()),
        other => other.map(|_| ()),
    }
}

/// A learning's text as a person wrote it: cleaned, 2 to 80 words.
pub fn learning_text(text: &str) -> Result<String, Error> {
    items::clean_person_item(text).ok_or_else(|| {
        Error::Usage(format!(
            "a learning is 2 to {} words of plain text",
            items::MAX_WORDS_BY_A_PERSON
        ))
    })
}

/// The section a new or edited learning goes to: a configured one (in any case), or a new one
/// after them, with a note naming the configured ones (a typo shows at once).
pub fn new_section(project: &Project, name: &str) -> Result<(String, Option<String>), Error> {
    let sections = &project.config.learnings.sections;
    if let Some(s) = sections
        .iter()
        .find(|c| c.eq_ignore_ascii_case(name.trim()))
    {
        return Ok((s.clone(), None));
    }
    let clean = crate::redact::one_clean_line(name);
    if clean.is_empty() || clean.chars().count() > 60 {
        return Err(Error::Usage(format!(
            "a section is a name of 1 to 60 characters; learnings.sections lists: {}",
            sections.join(", ")
        )));
    }
    let note = format!(
        "section {clean:?} is not in learnings.sections ({}); it is kept after them",
        sections.join(", ")
    );
    Ok((clean, Some(note)))
}

/// A learning whose status a change reached: `changed` is false when it already had it.
#[derive(Debug, Clone)]
pub struct StatusChange {
    pub learning: Learning,
    pub changed: bool,
}

/// Archive or restore learnings (every id is checked before anything changes), with `reason`
/// kept with each, then learnings.md rewritten.
pub fn set_learning_status(
    project: &Project,
    store: &Store,
    ids: &[String],
    status: Status,
    reason: Option<&str>,
    waiting: impl FnOnce(),
) -> Result<Vec<StatusChange>, Error> {
    let learnings = ids
        .iter()
        .map(|id| learning_by_id(store, id))
        .collect::<Result<Vec<_>, _>>()?;
    drop(wait_for_regeneration(project, waiting)?);
    rewrite_file(project, store, None)?;
    let reason = reason.map(crate::redact::one_clean_line);
    let default_reason = if status == Status::Archived {
        "archived with `gza learnings archive`"
    } else {
        "restored with `gza learnings restore`"
    };
    let mut changes = Vec::new();
    for learning in learnings {
        let changed = store.set_learning_status(
            learning.id,
            status,
            Some(reason.as_deref().unwrap_or(default_reason)),
        )?;
        changes.push(StatusChange { learning, changed });
    }
    let ranker = Ranker::load(project);
    let _ = ranker.embed_missing(store);
    rewrite_file(project, store, Some(&ranker))?;
    Ok(changes)
}

/// Accept drafts or quarantined learnings (every id is checked before anything changes): they
/// become active and may be injected. learnings.md is rewritten.
pub fn promote_learnings(
    project: &Project,
    store: &Store,
    ids: &[String],
    waiting: impl FnOnce(),
) -> Result<Vec<StatusChange>, Error> {
    let learnings = ids
        .iter()
        .map(|id| learning_by_id(store, id))
        .collect::<Result<Vec<_>, _>>()?;
    drop(wait_for_regeneration(project, waiting)?);
    rewrite_file(project, store, None)?;
    let numbers: Vec<i64> = learnings.iter().map(|l| l.id).collect();
    let changed = store.promote_learnings(&numbers, "promoted with `gza learnings promote`")?;
    let ranker = Ranker::load(project);
    let _ = ranker.embed_missing(store);
    rewrite_file(project, store, Some(&ranker))?;
    Ok(learnings
        .into_iter()
        .zip(changed)
        .map(|(learning, changed)| StatusChange { learning, changed })
        .collect())
}

/// A change to a learning as a person asked for it; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct EditLearning {
    pub text: Option<String>,
    pub section: Option<String>,
    pub priority: Option<Priority>,
    pub keywords: Option<Vec<String>>,
    /// New "applies when" hints, replacing the old ones (`Some([])` removes them).
    pub applies_when: Option<Vec<String>>,
    /// New trigger conditions and checklist (`Some((default, []))` removes them).
    pub triggers: Option<(crate::learning::Triggers, Vec<String>)>,
}

/// What an edit did.
#[derive(Debug, Clone)]
pub struct Edited {
    pub learning: Learning,
    /// Notes for the person (a section not configured).
    pub notes: Vec<String>,
    /// Why the edited learning is now held back as a draft, when the edit made it so.
    pub held: Option<String>,
}

/// Change a learning's text, section, priority, keywords or triggers; learnings.md is
/// rewritten. An edit that makes it read like an instruction holds it back (quarantine).
pub fn edit_learning(
    project: &Project,
    store: &Store,
    id: &str,
    change: &EditLearning,
    waiting: impl FnOnce(),
) -> Result<Edited, Error> {
    let learning = learning_by_id(store, id)?;
    let mut notes = Vec::new();
    let section = match change.section.as_deref() {
        Some(s) => {
            let (section, note) = new_section(project, s)?;
            notes.extend(note);
            Some(section)
        }
        None => None,
    };
    let edit = LearningEdit {
        triggers: change.triggers.clone(),
        text: change.text.as_deref().map(learning_text).transpose()?,
        section,
        priority: change.priority,
        keywords: change.keywords.clone().map(|k| {
            k.into_iter()
                .map(|k| k.trim().to_string())
                .filter(|k| !k.is_empty())
                .collect()
        }),
        applies_when: change.applies_when.clone().map(|w| {
            w.iter()
                .map(|w| crate::redact::one_clean_line(w))
                .filter(|w| !w.is_empty())
                .collect()
        }),
    };
    if edit.text.is_none()
        && edit.section.is_none()
        && edit.priority.is_none()
        && edit.keywords.is_none()
        && edit.applies_when.is_none()
        && edit.triggers.is_none()
    {
        return Err(Error::Usage(
            "nothing to change; pass --text, --section, --priority, --keywords, --when or triggers (--tool, --file, …)".into(),
        ));
    }
    // Take in the file's pending edits first, so this change is made on top of them.
    drop(wait_for_regeneration(project, waiting)?);
    rewrite_file(project, store, None)?;
    store.edit_learning(learning.id, &edit)?;
    let ranker = Ranker::load(project);
    let _ = ranker.embed_missing(store);
    rewrite_file(project, store, Some(&ranker))?;
    let now = store.learning(learning.id)?.unwrap_or(learning.clone());
    let held = if learning.lifecycle.quarantine_reason.is_none() {
        now.lifecycle.quarantine_reason.clone()
    } else {
        None
    };
    Ok(Edited {
        learning: now,
        notes,
        held,
    })
}
