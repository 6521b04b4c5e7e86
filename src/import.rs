//! `gza import`: queue the tasks of a task file written for Python gza (gza-agent's importer).
//!
//! The file is a mapping with an optional default `group` and `spec`, and `tasks`: a list of
//! mappings with
//! - `prompt` (required),
//! - `type`: implement (the default), explore, plan or review; `task` (gza-agent 0.3) is read
//!   as implement; `improve` entries are skipped, since an improve task is made from a review,
//! - `group` and `spec`: override the file's defaults (null clears them),
//! - `depends_on`: the 1-based position of another task in the file (it may come later, but
//!   the dependencies must not form a cycle),
//! - `review: true`: also queue a review of the task, which runs once the task has completed.
//!
//! Each entry is keyed by a hash of its type, group, spec and prompt (and which repetition of
//! them it is in the file), so importing a file again queues only the entries not queued yet.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};

use crate::error::{Error, Result};
use crate::project::Project;
use crate::store::{BatchOutcome, BatchTask, NewTask, Store, TaskRef};
use crate::task::TaskType;

/// Prompts above this size are refused, as in `gza add`.
const MAX_PROMPT_BYTES: usize = 16 * 1024 * 1024;

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    #[serde(default)]
    group: Option<String>,
    #[serde(default)]
    spec: Option<String>,
    #[serde(default)]
    tasks: Option<Vec<FileEntry>>,
}

/// One entry of `tasks`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEntry {
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default, rename = "type")]
    task_type: Option<String>,
    #[serde(default, deserialize_with = "present")]
    group: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    spec: Option<Option<String>>,
    #[serde(default)]
    depends_on: Option<DependsOn>,
    #[serde(default)]
    review: bool,
}

/// `depends_on: 2`, or Python gza's list form `depends_on: [2]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum DependsOn {
    One(i64),
    Many(Vec<i64>),
}

/// A key that is present (`Some`, its value possibly null) rather than absent (`None`).
fn present<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

/// An entry that will be queued.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its 1-based position in the file.
    pub position: usize,
    pub prompt: String,
    pub task_type: TaskType,
    pub group: Option<String>,
    pub spec: Option<String>,
    /// The 1-based position of the entry it depends on.
    pub depends_on: Option<usize>,
    pub review: bool,
    key: String,
}

/// An entry that will not be queued, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    pub position: usize,
    pub prompt: String,
    pub reason: String,
}

/// What importing a file would do.
#[derive(Debug, Default)]
pub struct Plan {
    pub entries: Vec<Entry>,
    pub skipped: Vec<Skipped>,
    /// Everything wrong with the file; when there is any, nothing is imported.
    pub problems: Vec<String>,
    /// The entries that have a problem of their own, with it (also in `problems`), so a dry run
    /// can show every entry of the file in place.
    pub rejected: Vec<Skipped>,
}

/// What importing a file did.
#[derive(Debug, Default)]
pub struct Report {
    /// Newly queued: (position in the file, task id).
    pub queued: Vec<(usize, crate::task::TaskId)>,
    /// Reviews queued for entries with `review: true`: (position, review task id).
    pub reviews: Vec<(usize, crate::task::TaskId)>,
    /// Entries queued by an earlier import: (position, task id).
    pub already: Vec<(usize, crate::task::TaskId)>,
    pub skipped: Vec<Skipped>,
}

/// The largest import file gza reads: thousands of tasks fit in far less.
const MAX_BYTES: u64 = 4 * 1024 * 1024;

/// Read an import file (called `name` in messages); a file that is not YAML of this shape is
/// an error naming the line.
fn read(path: &Path, name: &str) -> Result<TaskFile> {
    // A FIFO or a device named here would block (or fill memory) forever, so it is refused in
    // one line; so is a file larger than any task list, before it is read.
    let text = gza_core::fsutil::read_named_text(path, &format!("import file {name}"), MAX_BYTES)?;
    gza_core::yaml::from_str(&text).map_err(|e| {
        let at = e
            .location
            .map(|(line, column)| format!(":{line}:{column}"))
            .unwrap_or_default();
        let message = e.message.replace("unknown field", "unknown key");
        Error::Usage(format!(
            "{name}{at}: {message}; `gza import --help` describes the format"
        ))
    })
}

/// FNV-1a, 64 bits: a stable hash (unlike std's, which may change between Rust releases).
fn fnv1a(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain([0xff]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// A prompt shortened for a report line.
pub fn preview(prompt: &str) -> String {
    crate::text::one_line(prompt, 50)
}

/// Check a parsed file against the project and work out what to queue.
/// Record an entry-level problem: in the plan's problems, and beside the entry it is about.
fn reject(plan: &mut Plan, position: usize, prompt: Option<&str>, problem: String) {
    plan.rejected.push(Skipped {
        position,
        prompt: prompt.map(str::trim).unwrap_or("").to_string(),
        reason: problem
            .strip_prefix(&format!("entry {position}: "))
            .unwrap_or(&problem)
            .to_string(),
    });
    plan.problems.push(problem);
}

fn plan_file(project: &Project, file: TaskFile) -> Plan {
    let mut plan = Plan::default();
    let entries = match file.tasks {
        Some(tasks) if !tasks.is_empty() => tasks,
        _ => {
            plan.problems
                .push("the file has no tasks; list them under `tasks:`".into());
            return plan;
        }
    };
    let count = entries.len();
    let spec_of = |spec: &str, plan: &mut Plan, position: Option<usize>| -> Option<String> {
        let absolute = project.root.join(spec);
        // The file's text goes to the model: a task file may name only files in the project.
        if let Err(outside) = crate::confine::inside(&project.root, Path::new(spec)) {
            let whose = match position {
                Some(p) => format!("entry {p}: spec file"),
                None => "the default spec file".into(),
            };
            plan.problems.push(format!(
                "{whose} {spec} leads outside the project (to {}); a task file may name only files inside the project",
                outside.resolved.display()
            ));
            return None;
        }
        if absolute.is_file() {
            return Some(
                absolute
                    .strip_prefix(&project.root)
                    .unwrap_or(&absolute)
                    .to_string_lossy()
                    .into_owned(),
            );
        }
        plan.problems.push(match position {
            Some(p) => format!("entry {p}: spec file {spec} does not exist"),
            None => format!("the default spec file {spec} does not exist"),
        });
        None
    };
    let default_spec = file
        .spec
        .as_deref()
        .and_then(|s| spec_of(s, &mut plan, None));
    let mut repeats: HashMap<u64, usize> = HashMap::new();
    let mut skipped_positions = vec![false; count + 1];
    let mut candidates = Vec::with_capacity(count);
    for (i, raw) in entries.into_iter().enumerate() {
        let position = i + 1;
        let prompt = match raw.prompt.as_deref().map(str::trim) {
            Some(p) if !p.is_empty() => p.to_string(),
            _ => {
                let problem = format!("entry {position}: `prompt` is missing or empty");
                reject(&mut plan, position, None, problem);
                continue;
            }
        };
        if prompt.contains('\0') {
            let problem = format!("entry {position}: the prompt contains a NUL byte");
            reject(
                &mut plan,
                position,
                Some(&prompt.replace('\0', " ")),
                problem,
            );
            continue;
        }
        if prompt.len() > MAX_PROMPT_BYTES {
            let problem = format!(
                "entry {position}: the prompt is {} bytes; the limit is {MAX_PROMPT_BYTES}",
                prompt.len()
            );
            reject(&mut plan, position, Some(&prompt), problem);
            continue;
        }
        let task_type = match raw.task_type.as_deref().unwrap_or("implement") {
            "task" => TaskType::Implement,
            "improve" => {
                skipped_positions[position] = true;
                plan.skipped.push(Skipped {
                    position,
                    prompt,
                    reason: "an improve task is made from a review's findings; queue it with `gza improve REVIEW_ID` once the review has run".into(),
                });
                continue;
            }
            name => match TaskType::parse(name) {
                Some(t) => t,
                None => {
                    let problem = format!(
                        "entry {position}: unknown type `{name}`; expected implement, explore, plan or review"
                    );
                    reject(&mut plan, position, Some(&prompt), problem);
                    continue;
                }
            },
        };
        let group = match raw.group {
            Some(g) => g,
            None => file.group.clone(),
        }
        .map(|g| g.trim().to_string())
        .filter(|g| !g.is_empty());
        let spec = match raw.spec {
            Some(Some(s)) => spec_of(&s, &mut plan, Some(position)),
            Some(None) => None,
            None => default_spec.clone(),
        };
        // A gza task waits for one other: a list of one is that one; a longer list is refused
        // with what to do, an empty one is none.
        let depends_on = match raw.depends_on {
            None => None,
            Some(DependsOn::One(d)) => Some(d),
            Some(DependsOn::Many(list)) => match list.as_slice() {
                [] => None,
                [d] => Some(*d),
                _ => {
                    let problem = format!(
                        "entry {position}: depends_on lists {} entries, and a gza task waits for one; keep the one it needs last (the others can depend on each other in a chain)",
                        list.len()
                    );
                    reject(&mut plan, position, Some(&prompt), problem);
                    continue;
                }
            },
        };
        let depends_on = match depends_on {
            None => None,
            Some(d) if d < 1 || d as usize > count => {
                let problem = format!(
                    "entry {position}: depends_on {d} is not an entry of this file (1 to {count})"
                );
                reject(&mut plan, position, Some(&prompt), problem);
                continue;
            }
            Some(d) if d as usize == position => {
                let problem = format!("entry {position}: it depends on itself");
                reject(&mut plan, position, Some(&prompt), problem);
                continue;
            }
            Some(d) => Some(d as usize),
        };
        let spec_text = spec.clone().unwrap_or_default();
        let group_text = group.clone().unwrap_or_default();
        let hash = fnv1a(&[task_type.as_str(), &group_text, &spec_text, &prompt]);
        let repeat = repeats.entry(hash).or_insert(0);
        *repeat += 1;
        candidates.push(Entry {
            position,
            key: format!("import:v1:{hash:016x}:{repeat}"),
            prompt,
            task_type,
            group,
            spec,
            depends_on,
            review: raw.review,
        });
    }
    // Each entry depends on at most one other, so the dependencies form chains; walk each chain
    // once (linear in the file's size) to find the cycles.
    let mut target = vec![None; count + 1];
    for e in &candidates {
        target[e.position] = e.depends_on;
    }
    const UNSEEN: u8 = 0;
    const ON_WALK: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![UNSEEN; count + 1];
    for e in &candidates {
        let mut walk = Vec::new();
        let mut current = Some(e.position);
        while let Some(p) = current {
            match state[p] {
                DONE => break,
                ON_WALK => {
                    let start = walk.iter().position(|&w| w == p).expect("on this walk");
                    let mut names: Vec<String> = walk[start..]
                        .iter()
                        .map(|w: &usize| w.to_string())
                        .collect();
                    names.push(p.to_string());
                    plan.problems.push(format!(
                        "entries {} depend on each other in a cycle; break it by removing one depends_on",
                        names.join(" → ")
                    ));
                    break;
                }
                _ => {
                    state[p] = ON_WALK;
                    walk.push(p);
                    current = target[p];
                }
            }
        }
        for p in walk {
            state[p] = DONE;
        }
    }
    if !plan.problems.is_empty() {
        // Nothing is queued, but a dry run still shows every entry that reads well.
        plan.entries = candidates;
        return plan;
    }
    // An entry that depends on a skipped one is skipped too (the chains have no cycle now).
    let mut slot = vec![None; count + 1];
    for (i, c) in candidates.iter().enumerate() {
        slot[c.position] = Some(i);
    }
    let mut resolved = vec![false; count + 1];
    for e in &candidates {
        let mut chain = Vec::new();
        let mut current = e.position;
        let skipped = loop {
            if resolved[current] || skipped_positions[current] {
                break skipped_positions[current];
            }
            chain.push(current);
            match target[current] {
                Some(next) => current = next,
                None => break false,
            }
        };
        for p in chain {
            resolved[p] = true;
            if skipped && !skipped_positions[p] {
                skipped_positions[p] = true;
                let c = &candidates[slot[p].expect("a candidate")];
                let (prompt, dep) = (c.prompt.clone(), c.depends_on.unwrap_or(0));
                plan.skipped.push(Skipped {
                    position: p,
                    prompt,
                    reason: format!("it depends on entry {dep} of the file, which is skipped"),
                });
            }
        }
    }
    plan.skipped.sort_by_key(|s| s.position);
    plan.entries = candidates
        .into_iter()
        .filter(|e| !skipped_positions[e.position])
        .collect();
    plan
}

/// Read `path` (called `name` in messages) and work out what importing it would queue;
/// problems are listed in the plan.
pub fn plan(project: &Project, path: &Path, name: &str) -> Result<Plan> {
    Ok(plan_file(project, read(path, name)?))
}

/// Queue what `plan` holds, in one transaction. The plan must have no problems.
pub fn apply(store: &Store, plan: Plan) -> Result<Report> {
    assert!(
        plan.problems.is_empty(),
        "a plan with problems is not applied"
    );
    let index: HashMap<usize, usize> = plan
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.position, i))
        .collect();
    let mut batch: Vec<BatchTask> = plan
        .entries
        .iter()
        .map(|e| BatchTask {
            task: NewTask {
                prompt: e.prompt.clone(),
                task_type: Some(e.task_type),
                group: e.group.clone(),
                spec: e.spec.clone(),
                ..NewTask::default()
            },
            key: e.key.clone(),
            based_on: None,
            depends_on: e.depends_on.map(|d| TaskRef::Batch(index[&d])),
            prompt_names: None,
        })
        .collect();
    // A review runs after the task it reviews and is based on it, as `gza review` would make it.
    let mut review_of = Vec::new();
    for (i, e) in plan.entries.iter().enumerate() {
        if e.review && e.task_type.changes_code() {
            review_of.push((e.position, batch.len()));
            batch.push(BatchTask {
                task: NewTask {
                    prompt: format!(
                        "Review task {{id}} ({}): {}",
                        e.task_type,
                        crate::text::one_line(e.prompt.lines().next().unwrap_or("").trim(), 100)
                    ),
                    task_type: Some(TaskType::Review),
                    group: e.group.clone(),
                    ..NewTask::default()
                },
                key: format!("{}/review", e.key),
                based_on: Some(TaskRef::Batch(i)),
                depends_on: Some(TaskRef::Batch(i)),
                prompt_names: Some(TaskRef::Batch(i)),
            });
        }
    }
    let outcomes = store.insert_batch(&batch)?;
    let mut report = Report {
        skipped: plan.skipped,
        ..Report::default()
    };
    for (e, outcome) in plan.entries.iter().zip(&outcomes) {
        match *outcome {
            BatchOutcome::Inserted(id) => report.queued.push((e.position, id)),
            BatchOutcome::AlreadyThere(id) => report.already.push((e.position, id)),
        }
    }
    for (position, at) in review_of {
        if let BatchOutcome::Inserted(id) = outcomes[at] {
            report.reviews.push((position, id));
        }
    }
    Ok(report)
}

/// The file's path as the user gave it, resolved against the directory gza runs in.
pub fn resolve(dir: &Path, file: &Path) -> PathBuf {
    if file.is_absolute() {
        file.to_path_buf()
    } else {
        dir.join(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("SPEC.md"), "spec").unwrap();
        let project = Project::new(dir.path().to_path_buf(), crate::config::Config::default());
        (dir, project)
    }

    fn plan_text(text: &str) -> Plan {
        let (_dir, project) = project();
        plan_file(&project, serde_norway::from_str(text).unwrap())
    }

    #[test]
    fn defaults_overrides_and_types() {
        let plan = plan_text(
            "group: g\nspec: SPEC.md\ntasks:\n  - prompt: a\n  - prompt: b\n    type: task\n    group: null\n    spec: null\n  - prompt: c\n    type: explore\n    group: h\n",
        );
        assert!(plan.problems.is_empty(), "{:?}", plan.problems);
        let e = &plan.entries;
        assert_eq!(
            (e[0].task_type, e[0].group.as_deref(), e[0].spec.as_deref()),
            (TaskType::Implement, Some("g"), Some("SPEC.md"))
        );
        assert_eq!(
            (e[1].task_type, e[1].group.as_deref(), e[1].spec.as_deref()),
            (TaskType::Implement, None, None)
        );
        assert_eq!(
            (e[2].task_type, e[2].group.as_deref()),
            (TaskType::Explore, Some("h"))
        );
    }

    #[test]
    fn repeated_entries_get_distinct_keys_and_keys_are_stable() {
        let plan = plan_text("tasks:\n  - prompt: same\n  - prompt: same\n");
        assert_ne!(plan.entries[0].key, plan.entries[1].key);
        assert_eq!(
            plan.entries[0].key,
            plan_text("tasks:\n  - prompt: same\n").entries[0].key
        );
        // Keys are stored: the hash must never change.
        assert_eq!(
            fnv1a(&["a"]),
            0x089b_c907_b544_c769,
            "FNV-1a of \"a\" then 0xff"
        );
    }

    #[test]
    fn depends_on_in_pythons_list_form() {
        let plan = plan_text(
            "tasks:\n  - prompt: a\n  - prompt: b\n    depends_on: [1]\n  - prompt: c\n    depends_on: []\n",
        );
        assert!(plan.problems.is_empty(), "{:?}", plan.problems);
        assert_eq!(plan.entries[1].depends_on, Some(1));
        assert_eq!(plan.entries[2].depends_on, None);
        let plan = plan_text(
            "tasks:\n  - prompt: a\n  - prompt: b\n  - prompt: c\n  - prompt: d\n    depends_on: [1, 2]\n",
        );
        assert_eq!(
            plan.problems,
            [
                "entry 4: depends_on lists 2 entries, and a gza task waits for one; keep the one it needs last (the others can depend on each other in a chain)"
            ]
        );
    }

    #[test]
    fn cycles_and_bad_references_are_problems() {
        let plan = plan_text(
            "tasks:\n  - prompt: a\n    depends_on: 3\n  - prompt: b\n    depends_on: 1\n  - prompt: c\n    depends_on: 2\n  - prompt: d\n    depends_on: 9\n  - prompt: e\n    depends_on: 5\n",
        );
        assert_eq!(
            plan.problems,
            vec![
                "entry 4: depends_on 9 is not an entry of this file (1 to 5)",
                "entry 5: it depends on itself",
                "entries 1 → 3 → 2 → 1 depend on each other in a cycle; break it by removing one depends_on",
            ]
        );
    }

    #[test]
    fn improve_entries_and_their_dependents_are_skipped() {
        let plan = plan_text(
            "tasks:\n  - prompt: a\n  - prompt: fix it\n    type: improve\n  - prompt: c\n    depends_on: 4\n  - prompt: d\n    depends_on: 2\n",
        );
        assert!(plan.problems.is_empty());
        let skipped: Vec<usize> = plan.skipped.iter().map(|s| s.position).collect();
        assert_eq!(skipped, vec![2, 3, 4]);
        assert_eq!(plan.entries.len(), 1);
    }
}
