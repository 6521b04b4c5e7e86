//! Starting git: the one place that runs it, gives the commits it makes an author, and turns its
//! failures into one-line errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::error::{Error, Result};

/// Subcommands that can write commits, so they need an identity and must not start git's
/// background maintenance (about 10 ms each) or an editor.
const COMMITTING: [&str; 4] = ["commit", "merge", "rebase", "cherry-pick"];

/// A git command in `dir`, set up for `args`.
fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir);
    let committing = args.first().is_some_and(|a| COMMITTING.contains(a));
    if committing {
        cmd.args(["-c", "maintenance.auto=false"]);
    }
    cmd.args(args);
    // Merge and rebase messages are read (and shown) in English.
    if committing {
        cmd.env("LC_ALL", "C");
    }
    // git must never wait for a person: no editor, no credential prompt.
    cmd.env("GIT_EDITOR", "true")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_MERGE_AUTOEDIT", "no");
    // Commits need an identity; a machine without one configured still gets a clear author.
    if committing && !has_identity(dir) {
        for (key, value) in [
            ("GIT_AUTHOR_NAME", "gza"),
            ("GIT_AUTHOR_EMAIL", "gza@localhost"),
            ("GIT_COMMITTER_NAME", "gza"),
            ("GIT_COMMITTER_EMAIL", "gza@localhost"),
        ] {
            cmd.env(key, value);
        }
    }
    cmd
}

fn start_error(dir: &Path, e: std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            Error::Usage("git is not installed; install git to run code tasks in worktrees".into())
        }
        _ => Error::io(dir, "run git in", e),
    }
}

/// Run git in `dir` and return its output whatever its exit status (for commands whose
/// failure is an answer, such as a merge that conflicts).
pub fn output(dir: &Path, args: &[&str]) -> Result<Output> {
    command(dir, args).output().map_err(|e| start_error(dir, e))
}

/// Run git in `dir`; stdout on success, an [`Error::Git`] naming the command otherwise. Callers
/// for whom a failure is an answer (does this branch exist?) turn it into one with `.ok()`.
pub fn run(dir: &Path, args: &[&str]) -> Result<String> {
    let out = output(dir, args)?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
    } else {
        Err(failed(dir, args, &out.stderr))
    }
}

/// The error for git exiting non-zero: the command, where, and git's message as one line.
fn failed(dir: &Path, args: &[&str], stderr: &[u8]) -> Error {
    Error::Git {
        dir: dir.to_path_buf(),
        command: args.join(" "),
        message: one_line(&String::from_utf8_lossy(stderr)),
    }
}

/// True when git exits 0.
pub fn succeeds(dir: &Path, args: &[&str]) -> bool {
    output(dir, args).is_ok_and(|o| o.status.success())
}

/// Run git in `dir` and keep at most `max` bytes of its stdout; returns them and how many bytes
/// it printed in all. Fails like [`run`] when git does.
pub fn output_capped(dir: &Path, args: &[&str], max: usize) -> Result<(Vec<u8>, usize)> {
    use std::io::Read;
    let mut child = command(dir, args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| start_error(dir, e))?;
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0;
    loop {
        let n = match stdout.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(dir, "read git output in", e)),
        };
        let room = max.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
        total += n;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| Error::io(dir, "run git in", e))?;
    if !out.status.success() {
        return Err(failed(dir, args, &out.stderr));
    }
    Ok((kept, total))
}

/// Run git in `dir` with this process's stdout (for output a person reads, such as a diff,
/// which git pages and colours itself). Git's stderr is passed on when it succeeds and becomes
/// the [`Error::Git`] when it fails.
pub fn run_to_stdout(dir: &Path, args: &[&str]) -> Result<()> {
    let out = command(dir, args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|child| child.wait_with_output())
        .map_err(|e| start_error(dir, e))?;
    if out.status.success() {
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        Ok(())
    } else {
        Err(failed(dir, args, &out.stderr))
    }
}

/// Git's message as one line: lines joined with `; `, hints dropped.
pub fn one_line(stderr: &str) -> String {
    stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("hint:"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether git has a committer identity here: from the environment, else asked once per
/// process (per repository).
fn has_identity(dir: &Path) -> bool {
    let set = |key: &str| std::env::var_os(key).is_some_and(|v| !v.is_empty());
    if set("GIT_AUTHOR_EMAIL") && set("GIT_COMMITTER_EMAIL") {
        return true;
    }
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static KNOWN: OnceLock<Mutex<HashMap<PathBuf, bool>>> = OnceLock::new();
    let known = KNOWN.get_or_init(Mutex::default);
    let key = dir.parent().unwrap_or(dir).to_path_buf();
    if let Some(&answer) = known.lock().expect("identity cache").get(&key) {
        return answer;
    }
    let answer = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["config", "user.email"])
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty());
    known.lock().expect("identity cache").insert(key, answer);
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_become_one_line_without_hints() {
        assert_eq!(
            one_line(
                "error: could not apply 1a2b\nhint: Resolve all conflicts\n\nCONFLICT (content): a.txt\n"
            ),
            "error: could not apply 1a2b; CONFLICT (content): a.txt"
        );
    }
}
