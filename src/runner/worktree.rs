//! Git: worktrees and branches for code tasks, and committing what an agent changed.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};

/// Run git in `dir`; stdout on success, a [`Error::Usage`] naming the command otherwise.
fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir);
    if args.first() == Some(&"commit") {
        // A task's commit should not start git's background maintenance (about 10 ms each).
        cmd.args(["-c", "maintenance.auto=false"]);
    }
    cmd.args(args);
    // Commits need an identity; a machine without one configured still gets a clear author.
    if args.first() == Some(&"commit") && !has_identity(dir) {
        for (key, value) in [
            ("GIT_AUTHOR_NAME", "gza"),
            ("GIT_AUTHOR_EMAIL", "gza@localhost"),
            ("GIT_COMMITTER_NAME", "gza"),
            ("GIT_COMMITTER_EMAIL", "gza@localhost"),
        ] {
            cmd.env(key, value);
        }
    }
    let out = cmd.output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            Error::Usage("git is not installed; install git to run code tasks in worktrees".into())
        }
        _ => Error::io(dir, "run git in", e),
    })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
    } else {
        Err(Error::Usage(format!(
            "`git {}` failed in {}: {}",
            args.join(" "),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// Whether git has a committer identity here; asked once per process (per repository).
fn has_identity(dir: &Path) -> bool {
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

/// The commit HEAD points at, or `None` outside a repository or before the first commit.
pub fn head_commit(root: &Path) -> Option<String> {
    git(root, &["rev-parse", "--verify", "--quiet", "HEAD"]).ok()
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
    id: i64,
    prompt: &str,
    base: &str,
) -> Result<Worktree> {
    let stem = format!("{id}-{}", slugify(prompt));
    let (branch, path) = (1..)
        .map(|n| {
            let name = if n == 1 {
                stem.clone()
            } else {
                format!("{stem}-{n}")
            };
            (format!("gza/{name}"), worktrees_dir.join(&name))
        })
        .find(|(branch, path)| !branch_exists(root, branch) && !path.exists())
        .expect("some suffix is free");
    std::fs::create_dir_all(worktrees_dir)
        .map_err(|e| Error::io(worktrees_dir, "create directory", e))?;
    let base_commit = git(
        root,
        &["rev-parse", "--verify", &format!("{base}^{{commit}}")],
    )?;
    let path_text = path.to_string_lossy().into_owned();
    git(
        root,
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

/// Commit everything the agent changed in `worktree`; returns false when there was nothing.
pub fn commit_all(worktree: &Path, message: &str) -> Result<bool> {
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
pub fn remove(root: &Path, path: &Path) -> Result<()> {
    if path.exists() {
        git(
            root,
            &["worktree", "remove", "--force", &path.to_string_lossy()],
        )?;
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
