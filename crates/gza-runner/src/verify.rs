//! The verify gate: running the project's check command (`verify:` in the settings) on a task's
//! branch and recording what it said.
//!
//! The command is the person's (a repository's `gza.yaml` sets it only once trusted). It runs
//! with `sh -c` in a checkout of the branch's tip: the worktree gza made for the branch when that
//! is clean and checked out there, else a temporary detached checkout, removed afterwards. It
//! runs in the sandbox the task's agent gets, as the `command` provider would (the basic
//! variables and `sandbox_env`; no agent's keys or home directory), in its own process group,
//! with a timeout; Ctrl-C ends it and records nothing. Its output (stdout and stderr together)
//! goes to `.gza/logs/ID.verify-COMMIT.log`, redacted as it is written unless
//! `redact_raw_logs: false`; the end of it, redacted, is stored with the result.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::branch::TaskBranch;
use crate::providers::Invocation;
use crate::sandbox;
use gza_core::config::{ProviderKind, SandboxKind};
use gza_core::error::{Error, Result};
use gza_core::process;
use gza_core::project::Project;
use gza_core::task::{Task, TaskStatus, TaskType};
use gza_core::verify::{Verification, VerifyOutcome};
use gza_core::worktree;
use gza_store::{NewVerification, Store};

/// Most bytes of output kept with the result.
const TAIL_BYTES: usize = 8 * 1024;
/// Most lines of output kept with the result.
const TAIL_LINES: usize = 60;
/// How long gza keeps reading the output after the command and its processes were ended.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);
/// Grace between SIGTERM and SIGKILL when gza ends the command.
const KILL_GRACE: Duration = Duration::from_secs(3);

/// How a verify ended.
#[derive(Debug)]
pub enum Verified {
    /// It ran to an end (passed, failed or timed out), and was recorded.
    Recorded {
        verification: Verification,
        branch: String,
    },
    /// A stop was requested (Ctrl-C) while it ran: it was ended and nothing was recorded.
    Interrupted,
}

/// The command the settings give, or a one-line error saying how to set one.
pub fn command(project: &Project) -> Result<String> {
    if let Some(command) = project
        .config
        .verify
        .as_deref()
        .filter(|c| !c.trim().is_empty())
    {
        return Ok(command.to_string());
    }
    if project.ignored_settings.iter().any(|k| k == "verify") {
        return Err(Error::Usage(
            "gza.yaml sets verify, which gza ignores until you trust it: `gza trust` shows it"
                .into(),
        ));
    }
    Err(Error::Usage(
        "no verify command: set `verify:` in gza.yaml (or gza.local.yaml) to the project's check command, e.g. verify: \"cargo test\""
            .into(),
    ))
}

/// The code task whose branch `task` is about: itself, or the task a review reviewed.
fn subject(store: &Store, task: &Task) -> Result<Task> {
    if task.task_type == TaskType::Review {
        return crate::review::reviewed_task(store, task)?.ok_or_else(|| {
            Error::Usage(format!(
                "review task {} reviews no task, so there is no branch to verify",
                task.id
            ))
        });
    }
    Ok(task.clone())
}

/// What a verify of `task` (a code task, or a review of one) would check: its branch, checked
/// to exist with no task running on it, and the command; a one-line error otherwise.
pub fn target(project: &Project, store: &Store, task: &Task) -> Result<(TaskBranch, String)> {
    let command = command(project)?;
    let subject = subject(store, task)?;
    let branch = crate::branch::task_branch(project, store, &subject)?;
    for t in std::iter::once(branch.owner.clone()).chain(store.improves_of_branch(branch.owner.id)?)
    {
        if t.status() == TaskStatus::InProgress {
            return Err(Error::Usage(format!(
                "task {} is running on {}; verify it once it has finished",
                t.id, branch.name
            )));
        }
    }
    Ok((branch, command))
}

/// Run the verify command on the branch of `task` (a code task, or a review of one) at its tip,
/// and record the result against the task that made the branch.
pub fn verify(project: &Project, store: &Store, task: &Task) -> Result<Verified> {
    let (branch, command) = target(project, store, task)?;
    let (dir, temporary) = checkout(project, &branch)?;
    let result = run_in(project, &branch, &dir, &command);
    if temporary {
        let _ = gza_core::git::output(
            &project.root,
            &["worktree", "remove", "--force", &dir.to_string_lossy()],
        );
    }
    let Some(ran) = result? else {
        return Ok(Verified::Interrupted);
    };
    let verification = store.record_verification(&NewVerification {
        task_id: branch.owner.id,
        commit: &branch.tip,
        command: &command,
        outcome: ran.outcome,
        output_tail: &ran.tail,
        duration_seconds: ran.duration.as_secs_f64(),
        log_file: Some(&ran.log.to_string_lossy()),
    })?;
    Ok(Verified::Recorded {
        verification,
        branch: branch.name,
    })
}

/// Where the command runs: the branch's own worktree under `.gza/worktrees/` when it is checked
/// out there at the tip with no uncommitted change to a tracked file (and its `.git` is still
/// git's), else a new detached checkout of the tip (`true`: remove it afterwards).
fn checkout(project: &Project, branch: &TaskBranch) -> Result<(PathBuf, bool)> {
    let root = &project.root;
    let ours = project
        .worktrees_dir()
        .canonicalize()
        .unwrap_or_else(|_| project.worktrees_dir());
    if let Some(dir) = worktree::checkout_of(root, &branch.name)?
        && dir.canonicalize().unwrap_or(dir.clone()).starts_with(&ours)
        && gza_core::git::verify_worktree(root, &dir).is_ok()
        && worktree::worktree_head(&dir).ok().as_deref() == Some(branch.tip.as_str())
        && worktree::dirty_files(&dir, 1).is_ok_and(|d| d.is_empty())
    {
        return Ok((dir, false));
    }
    let dir = worktree::create_detached(
        root,
        &project.worktrees_dir(),
        branch.owner.id,
        "verify",
        &branch.tip,
    )?;
    Ok((dir, true))
}

/// What one run of the command left.
struct Ran {
    outcome: VerifyOutcome,
    tail: String,
    duration: Duration,
    log: PathBuf,
}

/// Run `command` in `dir`; `None` when a stop was requested meanwhile.
fn run_in(
    project: &Project,
    branch: &TaskBranch,
    dir: &Path,
    command: &str,
) -> Result<Option<Ran>> {
    let owner = &branch.owner;
    let kind = project
        .config
        .sandbox_for(crate::provider_of(project, owner));
    let git_dir = sandbox::git_common_dir(&project.root, kind);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    // The command provider's place: the basic variables and sandbox_env, no agent's keys or home.
    let place = sandbox::Place {
        task_id: owner.id,
        provider: ProviderKind::Command,
        project_root: &project.root,
        workdir: dir,
        home: home.clone(),
        docker_image: project.config.docker_image.as_deref(),
        git_dir,
        sandbox_env: &project.config.sandbox_env,
    };
    let invocation = Invocation {
        program: "sh".into(),
        args: vec!["-c".into(), command.to_string()],
        prompt_on_stdin: false,
        env: Vec::new(),
    };
    let invocation = sandbox::wrap(kind, &place, invocation)
        .and_then(|inv| sandbox::preflight(kind, &place, &inv).map(|()| inv))
        .map_err(|why| {
            Error::Usage(format!(
                "cannot run the verify command in sandbox {}: {why}",
                kind.as_str()
            ))
        })?;

    let logs = project.logs_dir();
    std::fs::create_dir_all(&logs).map_err(|e| Error::io(&logs, "create directory", e))?;
    let short = branch.tip.get(..10).unwrap_or(&branch.tip);
    let log_path = logs.join(format!(
        "{}{short}.log",
        crate::cleanup::verify_log_prefix(owner.id)
    ));
    let log = gza_core::fsutil::create_regular(&log_path)
        .map_err(|e| Error::io(&log_path, "create", e))?;
    let (reader, writer) = std::io::pipe().map_err(|e| Error::io(&logs, "open a pipe for", e))?;
    let run_tag = format!("{}-verify-{}", process::own_pid(), owner.id);
    let mut cmd = Command::new(&invocation.program);
    if kind == SandboxKind::Bwrap {
        cmd.env_clear().envs(sandbox::agent_environment(
            ProviderKind::Command,
            &project.config.sandbox_env,
            home.as_deref(),
        ));
    }
    let stderr = writer
        .try_clone()
        .map_err(|e| Error::io(&logs, "open a pipe for", e))?;
    cmd.args(&invocation.args)
        .current_dir(dir)
        .env("GZA_TASK_ID", owner.id.to_string())
        .env("GZA_PROJECT_ROOT", &project.root)
        .env(process::RUN_TAG_VAR, &run_tag)
        .envs(invocation.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(stderr)
        .process_group(0);
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|e| {
        Error::Usage(format!(
            "cannot start the verify command (`{}`): {e}",
            invocation.program
        ))
    })?;
    // The pipe's write ends are the child's now; ours closed with `cmd`.
    drop(cmd);
    let pgid = i64::from(child.id());
    let redact = project.config.redact_raw_logs;
    let (drained_tx, drained) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let tail = if redact {
            copy_keeping_tail(reader, gza_core::redact::RedactingWriter::new(log))
        } else {
            copy_keeping_tail(reader, log)
        };
        let _ = drained_tx.send(tail);
    });
    let timeout = (project.config.verify_timeout_minutes > 0.0)
        .then(|| Duration::from_secs_f64(project.config.verify_timeout_minutes * 60.0));
    let mut timed_out = false;
    let mut interrupted = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if process::stop_requested() {
            interrupted = true;
        } else if timeout.is_some_and(|t| started.elapsed() >= t) {
            timed_out = true;
        }
        if interrupted || timed_out {
            process::terminate_group(pgid, KILL_GRACE);
            process::terminate_tagged(&run_tag, KILL_GRACE);
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let duration = started.elapsed();
    // What the command left running goes with it.
    process::terminate_group(pgid, Duration::from_millis(500));
    process::terminate_tagged(&run_tag, Duration::from_millis(500));
    sandbox::clean_up(kind, &place);
    let tail = drained.recv_timeout(DRAIN_AFTER_EXIT).unwrap_or_default();
    if interrupted {
        return Ok(None);
    }
    let mut tail = tail_text(&tail);
    let mut outcome = match (timed_out, status) {
        (true, _) => VerifyOutcome::TimedOut,
        (false, Some(s)) if s.success() => VerifyOutcome::Passed,
        (false, s) => VerifyOutcome::Failed {
            exit_code: s.and_then(|s| s.code()),
        },
    };
    // What passed must be the commit itself: a command that rewrote tracked files checked
    // something else. (The changes are left for the next improve task to see.)
    // The code under test ran there: its `.git` is checked again before git runs in it.
    if let Err(e) = gza_core::git::verify_worktree(&project.root, dir) {
        if !tail.is_empty() {
            tail.push('\n');
        }
        tail.push_str(&format!("gza: {e}"));
        return Ok(Some(Ran {
            outcome: VerifyOutcome::Failed {
                exit_code: outcome.exit_code(),
            },
            tail,
            duration,
            log: log_path,
        }));
    }
    let changed = worktree::dirty_files(dir, 4).unwrap_or_default();
    if !changed.is_empty() {
        let named = if changed.len() > 3 {
            format!("{}, …", changed[..3].join(", "))
        } else {
            changed.join(", ")
        };
        if !tail.is_empty() {
            tail.push('\n');
        }
        tail.push_str(&format!(
            "gza: the command changed tracked files ({named}); a check must pass on the commit as it is"
        ));
        if outcome.passed() {
            outcome = VerifyOutcome::Failed { exit_code: Some(0) };
        }
    }
    Ok(Some(Ran {
        outcome,
        tail,
        duration,
        log: log_path,
    }))
}

/// Copy `from` to `to` until its end, keeping the last [`TAIL_BYTES`] bytes read.
fn copy_keeping_tail(mut from: impl Read, mut to: impl Write) -> Vec<u8> {
    let mut tail: VecDeque<u8> = VecDeque::with_capacity(TAIL_BYTES);
    let mut buf = [0u8; 16 * 1024];
    let mut writing = true;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        // A full disk stops the log, not the reading (the command must not block on its pipe).
        if writing && to.write_all(&buf[..n]).is_err() {
            writing = false;
        }
        let chunk = &buf[..n];
        let keep = &chunk[chunk.len().saturating_sub(TAIL_BYTES)..];
        let overflow = (tail.len() + keep.len()).saturating_sub(TAIL_BYTES);
        tail.drain(..overflow);
        tail.extend(keep);
    }
    let _ = to.flush();
    drop(to);
    tail.into()
}

/// The end of the output as stored: whole lines only (a line cut at its start could hide part
/// of a secret from the redactor), at most [`TAIL_LINES`], redacted.
fn tail_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = if bytes.len() >= TAIL_BYTES {
        text.split_once('\n').map_or("", |(_, rest)| rest)
    } else {
        &text
    };
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let kept = lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n");
    gza_core::redact::redact_secrets(&kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_whole_lines() {
        let mut out = Vec::new();
        let input: String = (0..5000).map(|i| format!("line {i}\n")).collect();
        let tail = copy_keeping_tail(input.as_bytes(), &mut out);
        assert_eq!(out, input.as_bytes(), "the log gets everything");
        assert_eq!(tail.len(), TAIL_BYTES);
        let text = tail_text(&tail);
        assert_eq!(text.lines().count(), TAIL_LINES);
        assert!(text.ends_with("line 4999"), "{text}");
        assert!(text.starts_with("line 49"), "{text}");
        assert_eq!(tail_text(b"short\noutput\n"), "short\noutput");
    }

    #[test]
    fn secrets_never_reach_the_stored_tail() {
        let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
        let text = tail_text(format!("export GITHUB_TOKEN={token}\nFAILED\n").as_bytes());
        assert!(!text.contains(&token), "{text}");
        assert!(text.ends_with("FAILED"), "{text}");
    }
}
