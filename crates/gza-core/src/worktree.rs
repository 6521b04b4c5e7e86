//! Git: worktrees and branches for code tasks, and committing what an agent changed.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

use crate::git::run as git;

/// The commit HEAD points at, or `None` outside a repository or before the first commit.
pub fn head_commit(root: &Path) -> Option<String> {
    git(root, &["rev-parse", "--verify", "--quiet", "HEAD"]).ok()
}

/// Where HEAD is: its commit and the branch checked out (`None` when detached), in one git
/// process; `None` outside a repository or before the first commit.
pub fn head(root: &Path) -> Option<(String, Option<String>)> {
    let out = git(root, &["rev-parse", "HEAD", "--abbrev-ref", "HEAD"]).ok()?;
    let mut lines = out.lines();
    let commit = lines.next()?.trim().to_string();
    let branch = lines
        .next()
        .map(str::trim)
        .filter(|b| !b.is_empty() && *b != "HEAD")
        .map(str::to_string);
    Some((commit, branch))
}

/// HEAD's commit, the branch checked out (`None` when detached) and the commit `rev` names, in
/// one git process; `None` when HEAD or `rev` does not resolve.
pub fn head_and(root: &Path, rev: &str) -> Option<(String, Option<String>, String)> {
    let out = git(
        root,
        &[
            "rev-parse",
            "HEAD",
            &format!("{rev}^{{commit}}"),
            "--abbrev-ref",
            "HEAD",
        ],
    )
    .ok()?;
    let mut lines = out.lines().map(str::trim);
    let head = lines.next()?.to_string();
    let commit = lines.next()?.to_string();
    let branch = lines
        .next()
        .filter(|b| !b.is_empty() && *b != "HEAD")
        .map(str::to_string);
    Some((head, branch, commit))
}

/// The branch checked out at `root` (`None` when HEAD is detached or there is no repository).
pub fn current_branch(root: &Path) -> Option<String> {
    git(root, &["symbolic-ref", "--quiet", "--short", "HEAD"])
        .ok()
        .filter(|b| !b.is_empty())
}

/// Up to three files with uncommitted changes in the checkout at `dir`, untracked files
/// included (ignored files are not).
pub fn uncommitted(dir: &Path) -> Result<Vec<String>> {
    let status = git(dir, &["status", "--porcelain", "--untracked-files=normal"])?;
    Ok(status
        .lines()
        .filter_map(|l| l.get(3..))
        .take(3)
        .map(str::to_string)
        .collect())
}

/// The tracked files with uncommitted changes (staged or not), at most `max` of them.
pub fn dirty_files(root: &Path, max: usize) -> Result<Vec<String>> {
    let status = git(root, &["status", "--porcelain", "--untracked-files=no"])?;
    Ok(status
        .lines()
        .filter_map(|l| l.get(3..))
        .take(max)
        .map(str::to_string)
        .collect())
}

/// The commit a branch (or any revision) points at, if it exists.
pub fn resolve(root: &Path, rev: &str) -> Option<String> {
    git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .ok()
}

/// Every checkout of the repository (the main one first) and the branch each has checked out.
/// Checkouts whose directory was deleted by hand are left out (git still lists them until
/// `git worktree prune`).
pub fn checkouts(root: &Path) -> Result<Vec<(PathBuf, Option<String>)>> {
    let list = git(root, &["worktree", "list", "--porcelain"])?;
    let mut found = Vec::new();
    for block in list.split("\n\n") {
        let mut path = None;
        let mut branch = None;
        let mut prunable = false;
        for line in block.lines() {
            if let Some(p) = line.strip_prefix("worktree ") {
                path = Some(PathBuf::from(p));
            } else if let Some(b) = line.strip_prefix("branch refs/heads/") {
                branch = Some(b.to_string());
            } else if line.starts_with("prunable") {
                prunable = true;
            }
        }
        if let Some(path) = path.filter(|p| !prunable && p.is_dir()) {
            found.push((path, branch));
        }
    }
    Ok(found)
}

/// Where `branch` is checked out, if anywhere.
pub fn checkout_of(root: &Path, branch: &str) -> Result<Option<PathBuf>> {
    Ok(checkouts(root)?
        .into_iter()
        .find(|(_, b)| b.as_deref() == Some(branch))
        .map(|(p, _)| p))
}

/// The tip of every local branch, by name, from one git process (empty when git fails).
pub fn branch_tips(root: &Path) -> std::collections::HashMap<String, String> {
    git(
        root,
        &[
            "for-each-ref",
            "--format=%(refname:short) %(objectname)",
            "refs/heads/",
        ],
    )
    .unwrap_or_default()
    .lines()
    .filter_map(|l| l.split_once(' '))
    .map(|(name, commit)| (name.to_string(), commit.to_string()))
    .collect()
}

/// True when tracked files have uncommitted changes.
pub fn is_dirty(root: &Path) -> bool {
    git(root, &["status", "--porcelain", "--untracked-files=no"]).is_ok_and(|s| !s.is_empty())
}

/// True when `branch` exists.
pub fn branch_exists(root: &Path, branch: &str) -> bool {
    git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ],
    )
    .is_ok()
}

/// A branch-name fragment from a prompt: lowercase words joined by `-`, at most 40 characters.
pub fn slugify(text: &str) -> String {
    let mut slug = String::new();
    for word in text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word = word.to_ascii_lowercase();
        if slug.len() + word.len() + 1 > 40 {
            if slug.is_empty() {
                slug.push_str(&word[..40]);
            }
            break;
        }
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(&word);
    }
    if slug.is_empty() { "task".into() } else { slug }
}

/// A fresh worktree on a new branch.
#[derive(Debug, Clone)]
pub struct Worktree {
    pub path: PathBuf,
    pub branch: String,
    /// The commit the branch started from, for diff stats.
    pub base_commit: String,
}

/// Create a worktree for task `id` under `worktrees_dir` on a new branch `gza/<id>-<slug>` (with a
/// numeric suffix if that branch or directory exists) starting at `base` (a branch or commit).
pub fn create(
    root: &Path,
    worktrees_dir: &Path,
    id: crate::task::TaskId,
    prompt: &str,
    base: &str,
) -> Result<Worktree> {
    let (branch, path) = free_names(root, worktrees_dir, id, prompt, true);
    std::fs::create_dir_all(worktrees_dir)
        .map_err(|e| Error::io(worktrees_dir, "create directory", e))?;
    let base_commit = git(
        root,
        &["rev-parse", "--verify", &format!("{base}^{{commit}}")],
    )?;
    let path_text = path.to_string_lossy().into_owned();
    add_worktree(
        root,
        worktrees_dir,
        &[
            "worktree",
            "add",
            "--quiet",
            "-b",
            &branch,
            &path_text,
            &base_commit,
        ],
    )?;
    Ok(Worktree {
        path,
        branch,
        base_commit,
    })
}

/// A branch `gza/<id>-<slug>` and a directory under `worktrees_dir` that are both free (a numeric
/// suffix is added when not); the branch is only checked when `new_branch`.
fn free_names(
    root: &Path,
    worktrees_dir: &Path,
    id: crate::task::TaskId,
    prompt: &str,
    new_branch: bool,
) -> (String, PathBuf) {
    let stem = format!("{id}-{}", slugify(prompt));
    (1..)
        .map(|n| {
            let name = if n == 1 {
                stem.clone()
            } else {
                format!("{stem}-{n}")
            };
            (format!("gza/{name}"), worktrees_dir.join(&name))
        })
        .find(|(branch, path)| {
            let taken = path.exists() || (new_branch && branch_exists(root, branch));
            !taken
        })
        .expect("some suffix is free")
}

/// A new worktree for task `id` under `worktrees_dir` with the existing `branch` checked out
/// (for a task that continues another's branch).
pub fn create_on_branch(
    root: &Path,
    worktrees_dir: &Path,
    id: crate::task::TaskId,
    prompt: &str,
    branch: &str,
) -> Result<PathBuf> {
    let (_, path) = free_names(root, worktrees_dir, id, prompt, false);
    std::fs::create_dir_all(worktrees_dir)
        .map_err(|e| Error::io(worktrees_dir, "create directory", e))?;
    // A checkout whose directory was deleted by hand still holds the branch until pruned.
    let _ = git(root, &["worktree", "prune"]);
    add_worktree(
        root,
        worktrees_dir,
        &[
            "worktree",
            "add",
            "--quiet",
            &path.to_string_lossy(),
            branch,
        ],
    )?;
    Ok(path)
}

/// A new worktree for task `id` under `worktrees_dir` at `commit`, on no branch (for a task that
/// only reads, such as a review: nothing it does can reach a branch).
pub fn create_detached(
    root: &Path,
    worktrees_dir: &Path,
    id: crate::task::TaskId,
    prompt: &str,
    commit: &str,
) -> Result<PathBuf> {
    let (_, path) = free_names(root, worktrees_dir, id, prompt, false);
    std::fs::create_dir_all(worktrees_dir)
        .map_err(|e| Error::io(worktrees_dir, "create directory", e))?;
    add_worktree(
        root,
        worktrees_dir,
        &[
            "worktree",
            "add",
            "--quiet",
            "--detach",
            &path.to_string_lossy(),
            commit,
        ],
    )?;
    Ok(path)
}

/// `git worktree add …` in `root`, one at a time per clone. Git does not make two at once
/// safely: while one `worktree add` is writing a new entry under `.git/worktrees/`, another
/// that looks at every entry (to refuse a branch checked out twice) dies on the half-written
/// one ("failed to read …/commondir"), and the task fails `GIT_ERROR`. So every gza process of
/// the clone takes `.gza/worktrees.lock` (an flock, released by the kernel should the process
/// be killed) around it. An entry that a killed `worktree add` left half-written stays locked
/// ("initializing") and breaks every later add the same way; when an add fails, such entries
/// are removed (under the lock, none is being written) and the add is tried once more.
fn add_worktree(root: &Path, worktrees_dir: &Path, args: &[&str]) -> Result<()> {
    let lock_path = worktrees_dir.with_extension("lock");
    // Without the lock (a read-only .gza, say) the add still runs, as before.
    let lock = crate::fsutil::open_regular(
        &lock_path,
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true),
    )
    .and_then(|f| f.lock().map(|()| f));
    let result = match git(root, args) {
        Err(e) if lock.is_ok() && remove_abandoned_adds(root) => {
            tracing::warn!(error = %e, "removed worktree entries a killed `git worktree add` left; adding again");
            git(root, args)
        }
        other => other,
    };
    drop(lock);
    result.map(|_| ())
}

/// Remove the entries under `.git/worktrees/` that a `git worktree add` began and never finished
/// (no `commondir` or `gitdir`, still locked "initializing"); true when there were any. Only
/// called with `.gza/worktrees.lock` held, when no gza is adding one.
fn remove_abandoned_adds(root: &Path) -> bool {
    let Ok(common) = git(
        root,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    ) else {
        return false;
    };
    let Ok(entries) = std::fs::read_dir(Path::new(common.trim()).join("worktrees")) else {
        return false;
    };
    let mut removed = false;
    for entry in entries.flatten() {
        let dir = entry.path();
        let whole = dir.join("commondir").is_file() && dir.join("gitdir").is_file();
        let initializing =
            std::fs::read_to_string(dir.join("locked")).is_ok_and(|l| l.trim() == "initializing");
        if !whole && initializing && std::fs::remove_dir_all(&dir).is_ok() {
            removed = true;
        }
    }
    removed
}

/// The largest file of an agent's that gza commits (GitHub refuses larger ones too).
pub const MAX_COMMITTED_FILE_BYTES: u64 = 100 * 1024 * 1024;
/// The most an agent's changed files may hold in all for gza to commit them.
pub const MAX_COMMITTED_BYTES: u64 = 1024 * 1024 * 1024;

/// Refuse to commit what `git add` would read without bound: a file over
/// [`MAX_COMMITTED_FILE_BYTES`], or changed files over [`MAX_COMMITTED_BYTES`] in all. A sparse
/// file takes no disk but `git add` reads and compresses every byte of its length (about 16 s of
/// CPU per GiB; a 1 TiB one, hours), and would put it in the branch (hostile review 13).
fn check_sizes(worktree: &Path) -> Result<()> {
    // Without optional locks: status would otherwise refresh and write the index, which on a
    // full disk fails before `git add` can say so in the form that waits for space.
    let listed = git(
        worktree,
        &[
            "--no-optional-locks",
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
        ],
    )?;
    let mut total: u64 = 0;
    for entry in listed.split('\0') {
        let Some(path) = entry.get(3..).filter(|p| !p.is_empty()) else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(worktree.join(path)) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let size = meta.len();
        total = total.saturating_add(size);
        if size > MAX_COMMITTED_FILE_BYTES || total > MAX_COMMITTED_BYTES {
            return Err(Error::Usage(format!(
                "the agent left {path} ({}; {} in all so far), more than gza commits ({} a file, {} in all); nothing was committed: the worktree {} keeps it, to shrink or commit by hand",
                human_bytes(size),
                human_bytes(total),
                human_bytes(MAX_COMMITTED_FILE_BYTES),
                human_bytes(MAX_COMMITTED_BYTES),
                worktree.display()
            )));
        }
    }
    Ok(())
}

fn human_bytes(n: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if n >= 1024 * MIB {
        format!("{:.1} GiB", n as f64 / (1024 * MIB) as f64)
    } else {
        format!("{:.1} MiB", n as f64 / MIB as f64)
    }
}

/// Commit everything the agent changed in `worktree`; returns false when there was nothing.
/// Files too large to commit ([`check_sizes`]) fail it before anything is read.
pub fn commit_all(worktree: &Path, message: &str) -> Result<bool> {
    check_sizes(worktree)?;
    git(worktree, &["add", "--all"])?;
    if git(worktree, &["diff", "--cached", "--quiet"]).is_ok() {
        return Ok(false);
    }
    git(
        worktree,
        &["commit", "--quiet", "--no-verify", "-m", message],
    )?;
    Ok(true)
}

/// `git diff --shortstat` from `base` to the worktree's HEAD, e.g. "2 files changed, 10 insertions(+)".
pub fn diff_stats(worktree: &Path, base: &str) -> Result<String> {
    let stats = git(worktree, &["diff", "--shortstat", base, "HEAD"])?;
    Ok(if stats.is_empty() {
        "no changes".into()
    } else {
        stats.trim().to_string()
    })
}

/// The commit a worktree's HEAD is at.
pub fn worktree_head(worktree: &Path) -> Result<String> {
    git(worktree, &["rev-parse", "HEAD"])
}

/// Remove a worktree (its branch stays).
/// Remove a worktree. git itself refuses one with uncommitted changes or untracked files: this
/// never forces, so nothing uncommitted is ever deleted here.
pub fn remove(root: &Path, path: &Path) -> Result<()> {
    if path.exists() {
        git(root, &["worktree", "remove", &path.to_string_lossy()])?;
    }
    let _ = git(root, &["worktree", "prune"]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_short_lowercase_words() {
        assert_eq!(
            slugify("Add user authentication (JWT)!"),
            "add-user-authentication-jwt"
        );
        assert_eq!(slugify("ünïcode only ✓"), "n-code-only");
        assert_eq!(slugify("!!!"), "task");
        assert!(slugify(&"word ".repeat(30)).len() <= 40);
        assert_eq!(slugify(&"x".repeat(80)).len(), 40);
    }
}
