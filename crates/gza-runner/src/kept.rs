//! A finished task's outcome, kept in `.gza/logs/ID.outcome.json` from the moment the agent ends
//! until the database has it.
//!
//! The file is reserved (64 KiB of spaces, which JSON reads as whitespace) before the agent
//! starts, and the outcome is later written over it in place: a disk the agent filled still has
//! room for what the agent did. Once the outcome is in the database the file goes. When the
//! worker could not record it (the disk stayed full, the worker was stopped or killed), the next
//! `gza work` finds the file when it declares that worker dead, and records the kept outcome
//! instead of `WORKER_DIED`.

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use gza_core::error::{Error, Result};
use gza_core::project::Project;
use gza_core::task::{FailureReason, ReviewVerdict, Task, TaskId, TaskResult, TaskStatus, Usage};
use gza_store::{Outcome, WorkerId};

/// Bytes reserved for a task's outcome before its agent starts.
const RESERVED: usize = 64 * 1024;

/// A commit of the agent's changes that is still to be made (making it again is harmless).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingCommit {
    pub worktree: PathBuf,
    pub message: String,
    pub base_commit: String,
}

/// How a run ended, before it is in the database.
#[derive(Debug, Clone)]
pub struct Ending {
    pub outcome: Outcome,
    pub commit: Option<PendingCommit>,
    /// The output is still to be saved as the task's report (explore, plan and review tasks).
    pub report: bool,
    pub branch: Option<String>,
}

/// An outcome found on disk, with the worker that wrote it.
#[derive(Debug)]
pub struct Kept {
    pub worker_pid: i64,
    pub ending: Ending,
}

fn path(project: &Project, id: TaskId) -> PathBuf {
    project.logs_dir().join(format!("{id}.outcome.json"))
}

/// Reserve room for task `id`'s outcome. Failing to is not an error: the outcome is then
/// written as a new file, which needs space when the run ends.
pub fn reserve(project: &Project, id: TaskId) {
    // No fsync: the file system counts the blocks as taken at write time (ext4's delayed
    // allocation reserves them too), which is all a full disk later needs.
    let reserve = || -> std::io::Result<()> {
        let mut f = gza_core::fsutil::create_regular(&path(project, id))?;
        f.write_all(&[b' '; RESERVED])
    };
    let _ = reserve();
}

/// Write `ending` for `task`, run by `worker`; returns where it is.
pub fn keep(project: &Project, task: &Task, worker: WorkerId, ending: &Ending) -> Result<PathBuf> {
    let path = path(project, task.id);
    let full = render((task.id, &task.prompt), worker, ending, None);
    if full.len() <= RESERVED && write_over(&path, full.as_bytes()).is_ok() {
        return Ok(path);
    }
    match gza_core::fsutil::write_atomically(&path, full.as_bytes()) {
        Ok(()) => Ok(path),
        Err(e) => {
            // No room for a bigger file: the output is cut to fit the reservation (the whole
            // stream is in the task's .jsonl log).
            let mut budget = RESERVED / 2;
            while budget > 0 {
                let cut = render((task.id, &task.prompt), worker, ending, Some(budget));
                if cut.len() <= RESERVED {
                    return write_over(&path, cut.as_bytes()).map(|()| path.clone());
                }
                budget /= 2;
            }
            Err(e)
        }
    }
}

/// Write `bytes` over the start of the reserved file at `path`, which must be at least as long.
fn write_over(path: &Path, bytes: &[u8]) -> Result<()> {
    let write = || -> std::io::Result<()> {
        let mut f =
            gza_core::fsutil::open_regular_here(path, std::fs::OpenOptions::new().write(true))?;
        let len = f.metadata()?.len();
        if (len as usize) < bytes.len() {
            return Err(std::io::Error::other("the reserved file is too short"));
        }
        f.seek(SeekFrom::Start(0))?;
        f.write_all(bytes)?;
        // Whatever an earlier, longer write left after the JSON becomes whitespace.
        let rest = len as usize - bytes.len();
        f.write_all(&vec![b' '; rest])
        // No fsync: the page cache outlives a killed worker, and the database write that
        // follows is the durable record (an fsync here cost ~10 ms a task on a busy disk).
    };
    write().map_err(|e| Error::io(path, "write", e))
}

/// The kept file as it is written and read.
#[derive(Debug, Serialize, Deserialize)]
struct KeptRecord {
    task_id: TaskId,
    prompt: String,
    worker_pid: i64,
    status: TaskStatus,
    failure_reason: Option<FailureReason>,
    output: Option<String>,
    session_id: Option<String>,
    cost_usd: Option<f64>,
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    num_turns: Option<i64>,
    duration_seconds: Option<f64>,
    diff_stats: Option<String>,
    report_file: Option<String>,
    /// A verdict this gza does not know reads as none.
    #[serde(deserialize_with = "known_verdict")]
    review_verdict: Option<ReviewVerdict>,
    #[serde(default)]
    report: bool,
    branch: Option<String>,
    commit: Option<PendingCommit>,
}

fn known_verdict<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<ReviewVerdict>, D::Error> {
    let text: Option<String> = Option::deserialize(d)?;
    Ok(text.as_deref().and_then(ReviewVerdict::parse))
}

fn render(
    task: (TaskId, &str),
    worker: WorkerId,
    ending: &Ending,
    output_budget: Option<usize>,
) -> String {
    let (task_id, prompt) = task;
    let o = &ending.outcome;
    let output = match (&o.output, output_budget) {
        (Some(out), Some(budget)) if out.len() > budget => {
            let start = out.ceil_char_boundary(out.len() - budget);
            Some(format!(
                "[the start is cut; the whole output is in .gza/logs/{}.jsonl]\n{}",
                task_id,
                &out[start..]
            ))
        }
        (out, _) => out.clone(),
    };
    let record = KeptRecord {
        task_id,
        prompt: prompt.to_string(),
        worker_pid: worker.pid,
        status: o.result.status(),
        failure_reason: o.result.failure_reason().cloned(),
        output,
        session_id: o.session_id.clone(),
        cost_usd: o.usage.cost_usd,
        input_tokens: o.usage.input_tokens,
        output_tokens: o.usage.output_tokens,
        num_turns: o.usage.num_turns,
        duration_seconds: o.usage.duration_seconds,
        diff_stats: o.diff_stats.clone(),
        report_file: o.report_file.clone(),
        review_verdict: o.result.review_verdict(),
        report: ending.report,
        branch: ending.branch.clone(),
        commit: ending.commit.clone(),
    };
    serde_json::to_string_pretty(&record).unwrap_or_default() + "\n"
}

/// The outcome kept for task `id`, if a whole one is there (a reservation never written, or a
/// write cut short by a crash, is not).
pub fn read(project: &Project, id: TaskId) -> Option<Kept> {
    let path = path(project, id);
    let bytes = gza_core::fsutil::read_regular_file(&path, 4 * RESERVED as u64).ok()?;
    let kept = parse(id, &bytes)?;
    // Only gza writes these, but a file that names a commit outside the project's worktrees
    // is not one of them: committing there would run git on some other checkout.
    if let Some(c) = &kept.ending.commit {
        let ours = project
            .worktrees_dir()
            .canonicalize()
            .unwrap_or_else(|_| project.worktrees_dir());
        let at = c
            .worktree
            .canonicalize()
            .unwrap_or_else(|_| c.worktree.clone());
        if !at.starts_with(&ours) || at == ours {
            return None;
        }
    }
    Some(kept)
}

fn parse(id: TaskId, bytes: &[u8]) -> Option<Kept> {
    let r: KeptRecord = serde_json::from_slice(bytes).ok()?;
    if r.task_id != id {
        return None;
    }
    let result = match r.status {
        TaskStatus::Completed => TaskResult::Completed {
            review_verdict: r.review_verdict,
        },
        TaskStatus::Failed => TaskResult::Failed {
            reason: r.failure_reason,
        },
        TaskStatus::Dropped => TaskResult::Dropped,
        // Only an ended run is kept.
        TaskStatus::Pending | TaskStatus::InProgress => return None,
    };
    let outcome = Outcome {
        result,
        output: r.output,
        session_id: r.session_id,
        usage: Usage {
            cost_usd: r.cost_usd,
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens,
            num_turns: r.num_turns,
            duration_seconds: r.duration_seconds,
        },
        diff_stats: r.diff_stats,
        report_file: r.report_file,
    };
    Some(Kept {
        worker_pid: r.worker_pid,
        ending: Ending {
            outcome,
            commit: r.commit,
            report: r.report,
            branch: r.branch,
        },
    })
}

/// The outcome is in the database: the kept copy goes.
pub fn drop_kept(project: &Project, id: TaskId) {
    let _ = std::fs::remove_file(path(project, id));
}

/// Remove the reservations (room made for an outcome, never written over: blanks only) of
/// tasks no longer in progress. A worker whose task was reaped while it was away, or that was
/// killed before its agent ended, leaves one behind: it holds no outcome, so nothing can ever
/// record it, and every later `gza work` would keep it. The files are listed before the tasks
/// are read, so a reservation made meanwhile is of a task that reads as in progress.
pub fn drop_stale_reservations(project: &Project, store: &gza_store::Store) {
    let Ok(entries) = std::fs::read_dir(project.logs_dir()) else {
        return;
    };
    let found: Vec<(TaskId, PathBuf)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            let id = name.strip_suffix(".outcome.json")?.parse().ok()?;
            Some((TaskId(id), e.path()))
        })
        .collect();
    if found.is_empty() {
        return;
    }
    let Ok(running) = store.in_progress_tasks() else {
        return;
    };
    for (id, path) in found {
        if running.iter().any(|t| t.id == id) {
            continue;
        }
        let blank = gza_core::fsutil::read_regular_file(&path, 4 * RESERVED as u64)
            .is_ok_and(|bytes| bytes.iter().all(u8::is_ascii_whitespace));
        if blank {
            let _ = std::fs::remove_file(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> (TaskId, &'static str) {
        (TaskId(7), "fix the parser")
    }

    fn ending(output: &str) -> Ending {
        Ending {
            outcome: Outcome {
                output: Some(output.into()),
                usage: Usage {
                    cost_usd: Some(0.25),
                    num_turns: Some(3),
                    ..Usage::default()
                },
                ..Outcome::new(TaskResult::Completed {
                    review_verdict: None,
                })
            },
            commit: Some(PendingCommit {
                worktree: "/tmp/wt".into(),
                message: "gza task 7: fix the parser".into(),
                base_commit: "abc".into(),
            }),
            report: false,
            branch: Some("gza/7-fix".into()),
        }
    }

    const WORKER: WorkerId = WorkerId {
        lease: None,
        pid: 42,
        start: None,
    };

    #[test]
    fn a_kept_outcome_reads_back_whole() {
        let text = render(task(), WORKER, &ending("done"), None);
        let mut bytes = text.into_bytes();
        // As written over a reservation: spaces follow.
        bytes.extend(std::iter::repeat_n(b' ', 1000));
        let kept = parse(TaskId(7), &bytes).expect("parses");
        assert_eq!(kept.worker_pid, 42);
        assert_eq!(kept.ending.outcome, ending("done").outcome);
        assert_eq!(kept.ending.commit, ending("done").commit);
        assert_eq!(kept.ending.branch.as_deref(), Some("gza/7-fix"));
    }

    #[test]
    fn a_reservation_a_torn_write_or_another_task_is_not_an_outcome() {
        assert!(parse(TaskId(7), &[b' '; 100]).is_none());
        let text = render(task(), WORKER, &ending("done"), None);
        assert!(parse(TaskId(7), &text.as_bytes()[..text.len() / 2]).is_none());
        assert!(parse(TaskId(8), text.as_bytes()).is_none());
    }

    #[test]
    fn a_cut_output_keeps_its_end_and_says_where_the_rest_is() {
        let long = format!("{}THE END", "x".repeat(RESERVED * 2));
        let text = render(task(), WORKER, &ending(&long), Some(1000));
        assert!(text.len() < RESERVED);
        let kept = parse(TaskId(7), text.as_bytes()).unwrap();
        let out = kept.ending.outcome.output.unwrap();
        assert!(out.ends_with("THE END"));
        assert!(out.contains(".gza/logs/7.jsonl"));
    }

    #[test]
    fn an_outcome_kept_by_the_gza_before_typed_state_reads_back() {
        // Written by `json!` before the kept record was a struct: same keys, same values.
        let old = r#"{
  "task_id": 7,
  "prompt": "fix the parser",
  "worker_pid": 42,
  "status": "failed",
  "failure_reason": "GIT_ERROR",
  "output": "done",
  "session_id": null,
  "cost_usd": 0.25,
  "input_tokens": null,
  "output_tokens": null,
  "num_turns": 3,
  "duration_seconds": 1.5,
  "diff_stats": null,
  "report_file": null,
  "review_verdict": "SOMETHING_NEW",
  "report": false,
  "branch": "gza/7-fix",
  "commit": {
    "worktree": "/tmp/wt",
    "message": "gza task 7: fix the parser",
    "base_commit": "abc"
  }
}
"#;
        let kept = parse(TaskId(7), old.as_bytes()).expect("parses");
        let o = &kept.ending.outcome;
        assert_eq!(o.result, TaskResult::failed(FailureReason::GitError));
        assert_eq!(o.usage.duration_seconds, Some(1.5));
        assert_eq!(kept.ending.commit, ending("done").commit);
        // And what this gza writes is that same file.
        let mut failed = ending("done");
        failed.outcome.result = TaskResult::failed(FailureReason::GitError);
        failed.outcome.usage.duration_seconds = Some(1.5);
        let ours = render(task(), WORKER, &failed, None);
        let known = old.replace(
            r#""review_verdict": "SOMETHING_NEW""#,
            r#""review_verdict": null"#,
        );
        assert_eq!(ours, known);
    }
}
