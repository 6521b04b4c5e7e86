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

use serde_json::{Value, json};

use gza_core::error::{Error, Result};
use gza_core::project::Project;
use gza_core::task::{ReviewVerdict, Task, TaskStatus};
use gza_store::{Outcome, WorkerId};

/// Bytes reserved for a task's outcome before its agent starts.
const RESERVED: usize = 64 * 1024;

/// A commit of the agent's changes that is still to be made (making it again is harmless).
#[derive(Debug, Clone, PartialEq)]
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

fn path(project: &Project, id: i64) -> PathBuf {
    project.logs_dir().join(format!("{id}.outcome.json"))
}

/// Reserve room for task `id`'s outcome. Failing to is not an error: the outcome is then
/// written as a new file, which needs space when the run ends.
pub fn reserve(project: &Project, id: i64) {
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
        let mut f = gza_core::fsutil::open_regular(path, std::fs::OpenOptions::new().write(true))?;
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

fn render(
    task: (i64, &str),
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
    let record = json!({
        "task_id": task_id,
        "prompt": prompt,
        "worker_pid": worker.pid,
        "status": o.status.map(|s| s.as_str()),
        "failure_reason": o.failure_reason,
        "output": output,
        "session_id": o.session_id,
        "cost_usd": o.cost_usd,
        "input_tokens": o.input_tokens,
        "output_tokens": o.output_tokens,
        "num_turns": o.num_turns,
        "duration_seconds": o.duration_seconds,
        "diff_stats": o.diff_stats,
        "report_file": o.report_file,
        "review_verdict": o.review_verdict.map(|v| v.as_str()),
        "report": ending.report,
        "branch": ending.branch,
        "commit": ending.commit.as_ref().map(|c| json!({
            "worktree": c.worktree,
            "message": c.message,
            "base_commit": c.base_commit,
        })),
    });
    serde_json::to_string_pretty(&record).unwrap_or_default() + "\n"
}

/// The outcome kept for task `id`, if a whole one is there (a reservation never written, or a
/// write cut short by a crash, is not).
pub fn read(project: &Project, id: i64) -> Option<Kept> {
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

fn parse(id: i64, bytes: &[u8]) -> Option<Kept> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    if v["task_id"].as_i64()? != id {
        return None;
    }
    let text = |key: &str| v[key].as_str().map(str::to_string);
    let outcome = Outcome {
        status: Some(TaskStatus::parse(v["status"].as_str()?)?),
        failure_reason: text("failure_reason"),
        output: text("output"),
        session_id: text("session_id"),
        cost_usd: v["cost_usd"].as_f64(),
        input_tokens: v["input_tokens"].as_i64(),
        output_tokens: v["output_tokens"].as_i64(),
        num_turns: v["num_turns"].as_i64(),
        duration_seconds: v["duration_seconds"].as_f64(),
        diff_stats: text("diff_stats"),
        report_file: text("report_file"),
        review_verdict: v["review_verdict"].as_str().and_then(ReviewVerdict::parse),
    };
    let commit = match &v["commit"] {
        Value::Null => None,
        c => Some(PendingCommit {
            worktree: PathBuf::from(c["worktree"].as_str()?),
            message: c["message"].as_str()?.to_string(),
            base_commit: c["base_commit"].as_str()?.to_string(),
        }),
    };
    Some(Kept {
        worker_pid: v["worker_pid"].as_i64()?,
        ending: Ending {
            outcome,
            commit,
            report: v["report"].as_bool().unwrap_or(false),
            branch: text("branch"),
        },
    })
}

/// The outcome is in the database: the kept copy goes.
pub fn drop_kept(project: &Project, id: i64) {
    let _ = std::fs::remove_file(path(project, id));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> (i64, &'static str) {
        (7, "fix the parser")
    }

    fn ending(output: &str) -> Ending {
        Ending {
            outcome: Outcome {
                status: Some(TaskStatus::Completed),
                output: Some(output.into()),
                cost_usd: Some(0.25),
                num_turns: Some(3),
                ..Outcome::default()
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
        pid: 42,
        start: None,
    };

    #[test]
    fn a_kept_outcome_reads_back_whole() {
        let text = render(task(), WORKER, &ending("done"), None);
        let mut bytes = text.into_bytes();
        // As written over a reservation: spaces follow.
        bytes.extend(std::iter::repeat_n(b' ', 1000));
        let kept = parse(7, &bytes).expect("parses");
        assert_eq!(kept.worker_pid, 42);
        assert_eq!(kept.ending.outcome.status, Some(TaskStatus::Completed));
        assert_eq!(kept.ending.outcome.output.as_deref(), Some("done"));
        assert_eq!(kept.ending.outcome.num_turns, Some(3));
        assert_eq!(kept.ending.commit, ending("done").commit);
        assert_eq!(kept.ending.branch.as_deref(), Some("gza/7-fix"));
    }

    #[test]
    fn a_reservation_a_torn_write_or_another_task_is_not_an_outcome() {
        assert!(parse(7, &[b' '; 100]).is_none());
        let text = render(task(), WORKER, &ending("done"), None);
        assert!(parse(7, &text.as_bytes()[..text.len() / 2]).is_none());
        assert!(parse(8, text.as_bytes()).is_none());
    }

    #[test]
    fn a_cut_output_keeps_its_end_and_says_where_the_rest_is() {
        let long = format!("{}THE END", "x".repeat(RESERVED * 2));
        let text = render(task(), WORKER, &ending(&long), Some(1000));
        assert!(text.len() < RESERVED);
        let kept = parse(7, text.as_bytes()).unwrap();
        let out = kept.ending.outcome.output.unwrap();
        assert!(out.ends_with("THE END"));
        assert!(out.contains(".gza/logs/7.jsonl"));
    }
}
