//! Git across machines (team mode, issue 21): a task's branch goes to `origin` after its
//! commit, and comes from it before a command on another clone needs it.
//!
//! Several clones of one repository share one queue in a shared database: a task worked on
//! machine A is reviewed, improved, diffed, merged or rebased on machine B. So, when the `push`
//! setting is on ([`Project::push_enabled`]: by default exactly when the database is
//! PostgreSQL), the worker pushes a task's branch after committing it, and the commands that
//! need a branch fetch it first when this clone lacks it or has an older tip. All of it goes
//! through [`git::remote`]: the clone's own `origin`, hooks off, no prompt, a time limit.
//!
//! Nothing here changes a task's outcome: a push that fails is one line (shown, and kept in
//! `branch_pushes` for `gza show` and for the clone that then cannot find the branch), and the
//! next command that needs the branch on this machine pushes it again.

use std::path::Path;
use std::time::Duration;

use gza_core::error::{Error, Result};
use gza_core::git::{self, REMOTE};
use gza_core::project::Project;
use gza_core::task::{Task, TaskId};
use gza_core::worktree;
use gza_store::{Store, WorkerId};

/// The longest a push of one branch may take before gza gives up on it.
const PUSH_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest a fetch of one branch or commit may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(30);

/// gza's own fetch from origin (`refspec`, or every branch): quiet, no tags, no FETCH_HEAD,
/// through `git::remote` (hooks off, no prompt, the time limit).
fn fetch(root: &Path, refspec: Option<&str>) -> gza_core::Result<String> {
    let mut args = vec![
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        REMOTE,
    ];
    args.extend(refspec);
    git::remote(root, &args, FETCH_TIMEOUT)
}

/// Whether the clone at `root` has an `origin` (asked of its config, which contacts nothing).
fn has_origin(root: &Path) -> bool {
    git::succeeds(root, &["config", "--get", &format!("remote.{REMOTE}.url")])
}

/// Whether `branch` can stand in a refspec as one branch: a shared database is written by
/// every machine of the team, so a name read from it must not smuggle in a second ref (`:`),
/// an option (`-`), a pattern or a path out of `refs/heads/`.
fn plain_branch(branch: &str) -> bool {
    !branch.is_empty()
        && !branch.starts_with(['-', '/', '.'])
        && !branch.ends_with(['/', '.'])
        && !branch.contains("..")
        && !branch.contains("//")
        && !branch.contains("@{")
        && !branch.ends_with(".lock")
        && branch
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.' | '+'))
}

/// Push `branch` to origin.
fn push(root: &Path, branch: &str, force: bool) -> Result<()> {
    if !plain_branch(branch) {
        return Err(Error::Usage(format!(
            "{branch:?} is not a plain branch name; gza pushes only its own task branches"
        )));
    }
    if !has_origin(root) {
        return Err(Error::Usage(format!(
            "this clone has no remote named {REMOTE}"
        )));
    }
    let refspec = format!("refs/heads/{branch}:refs/heads/{branch}");
    let lease = format!("--force-with-lease=refs/heads/{branch}");
    let mut args = vec!["push", "--quiet", "--no-verify", "--no-signed"];
    if force {
        args.push(&lease);
    }
    args.extend([REMOTE, refspec.as_str()]);
    git::remote(root, &args, PUSH_TIMEOUT).map(drop)
}

/// The reason in a git failure, without the command gza ran (the line that shows it names
/// the branch and what to do): redacted (a remote's URL may carry a token), one short line.
fn reason(e: &Error) -> String {
    let text = match e {
        Error::Git { message, .. } if !message.is_empty() => message.clone(),
        other => other.to_string(),
    };
    // git's advice ("Please make sure you have the correct access rights…") and the "To URL"
    // header say nothing the line around it does not.
    let said: Vec<&str> = text
        .split("; ")
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("To ") && !l.starts_with("Please make sure"))
        .filter(|l| !l.starts_with("and the repository exists"))
        .take(2)
        .collect();
    let text = if said.is_empty() {
        text.clone()
    } else {
        said.join("; ")
    };
    let line = gza_core::redact::one_clean_line(&gza_core::redact::redact(&text));
    gza_core::text::one_line(&line, 300)
}

/// After a task's commit: push `branch` to `origin` when the `push` setting is on, record how
/// it went, and return the one line to show when it failed. `force` (after `gza rebase`
/// rewrote the branch) replaces origin's branch only if it is still what this clone last saw.
/// A worker pushes (`under` its id) only while its task still names the lease it claimed it
/// under: one whose task was reaped while it was away (a partition, a suspended machine)
/// neither pushes nor records a push, as it records no result. Its lease can also run out
/// while the push is on its way, so a worker's push is fenced on both sides
/// ([`push_fenced`]): it replaces only the tip this clone last saw on origin, and is taken
/// back when the task turns out to have been reaped by the time it landed.
pub fn push_branch(
    project: &Project,
    store: &Store,
    task: TaskId,
    branch: &str,
    force: bool,
    under: Option<WorkerId>,
) -> Option<String> {
    if !project.push_enabled() {
        return None;
    }
    let root = &project.root;
    // A clone with no origin that did not ask for pushing (a shared database used from one
    // machine) has nowhere to push and nothing to say about it. Asked first: it is the clone's
    // own config, where the lease is a round trip to the database.
    if project.config.push != Some(true) && !has_origin(root) {
        return None;
    }
    if let Some(worker) = under
        && !store.holds_lease(task, worker).unwrap_or(false)
    {
        tracing::warn!(
            branch,
            task = task.0,
            "not pushed: the task was reaped while this worker was away"
        );
        return None;
    }
    let tip = worktree::resolve(root, &format!("refs/heads/{branch}"))?;
    let (pushed, before) = match under {
        Some(_) => match push_fenced(root, branch, &tip) {
            Ok(before) => (Ok(()), Some(before)),
            Err(e) => (Err(e), None),
        },
        None => (push(root, branch, force), None),
    };
    let error = pushed.as_ref().err().map(reason);
    let recorded = store.record_push(
        branch,
        task,
        &gza_core::process::host_name(),
        &tip,
        error.as_deref(),
        under,
    );
    match (&recorded, before) {
        // Not recorded: the task no longer names this worker's lease (the record is fenced on
        // it), so the branch it pushed is not the task's to publish.
        (Ok(false), Some(before)) => {
            take_back(root, branch, &tip, before.as_deref(), task);
            return None;
        }
        (Err(e), _) => tracing::warn!(error = %e, branch, "could not record the push"),
        _ => {}
    }
    let error = error?;
    tracing::warn!(branch, error = %error, "push failed");
    Some(format!(
        "could not push branch {branch} to {REMOTE} ({error}); other machines cannot review or \
         merge it until it is there: fix {REMOTE} and run `git push {REMOTE} {branch}` here (the \
         next gza command that needs the branch here also tries again)"
    ))
}

/// How many times a worker's push is tried again when origin's branch is not the tip this clone
/// last saw, and how long it waits between tries: a late worker's push that landed first is
/// taken back within moments ([`take_back`]).
const STALE_TRIES: u32 = 3;
const STALE_WAIT: Duration = Duration::from_millis(700);

/// A worker's push of `branch` at `tip`: a compare-and-swap on origin's ref. It replaces only
/// the tip this clone last saw there (its remote-tracking ref: what the run fetched when it
/// started, or what this clone pushed last; nothing for a new branch), and only with a
/// descendant of it, so a worker can never replace what another pushed since, whatever its
/// lease says. Returns origin's tip before the push (`None`: the branch was new there), which
/// is what [`take_back`] restores. Refused because origin moved on, it waits a moment and tries
/// again: what moved it may be a late worker's push that is taken back.
fn push_fenced(root: &Path, branch: &str, tip: &str) -> Result<Option<String>> {
    if !plain_branch(branch) {
        return Err(Error::Usage(format!(
            "{branch:?} is not a plain branch name; gza pushes only its own task branches"
        )));
    }
    if !has_origin(root) {
        return Err(Error::Usage(format!(
            "this clone has no remote named {REMOTE}"
        )));
    }
    let seen = worktree::resolve(root, &format!("refs/remotes/{REMOTE}/{branch}"));
    if let Some(seen) = &seen
        && !is_ancestor(root, seen, tip)
    {
        return Err(Error::Usage(format!(
            "{REMOTE}'s copy ({}) is not an ancestor of this run's commit; nothing of it is replaced",
            &seen[..seen.len().min(8)]
        )));
    }
    let lease = format!(
        "--force-with-lease=refs/heads/{branch}:{}",
        seen.as_deref().unwrap_or("")
    );
    let refspec = format!("{tip}:refs/heads/{branch}");
    let args = [
        "push",
        "--quiet",
        "--no-verify",
        "--no-signed",
        lease.as_str(),
        REMOTE,
        refspec.as_str(),
    ];
    let mut tries = 0;
    loop {
        match git::remote(root, &args, PUSH_TIMEOUT) {
            Ok(_) => return Ok(seen),
            Err(e) if tries + 1 < STALE_TRIES && e.to_string().contains("stale info") => {
                tries += 1;
                std::thread::sleep(STALE_WAIT);
            }
            Err(e) => return Err(e),
        }
    }
}

/// Undo a worker's push of `branch` (origin moved from `before` to `tip`) made after its task
/// was reaped: origin's branch goes back to `before` (deleted when it was new there), only if
/// it is still `tip`. A branch someone built on since is left as it is, and said.
fn take_back(root: &Path, branch: &str, tip: &str, before: Option<&str>, task: TaskId) {
    let lease = format!("--force-with-lease=refs/heads/{branch}:{tip}");
    let refspec = format!("{}:refs/heads/{branch}", before.unwrap_or(""));
    let args = [
        "push",
        "--quiet",
        "--no-verify",
        "--no-signed",
        lease.as_str(),
        REMOTE,
        refspec.as_str(),
    ];
    match git::remote(root, &args, PUSH_TIMEOUT) {
        Ok(_) => tracing::warn!(
            branch,
            task = task.0,
            "the task was reaped while its branch was being pushed: origin's branch is back as it was"
        ),
        Err(e) => tracing::warn!(
            branch,
            task = task.0,
            error = %reason(&e),
            "the task was reaped while its branch was being pushed, and origin's branch moved on since: left as it is"
        ),
    }
}

/// Why `branch` is not on `origin`, from the record of its last push, for a clone that lacks it.
fn why_not_on_origin(store: &Store, branch: &str) -> String {
    match store.branch_push(branch).ok().flatten() {
        Some(p) => match &p.error {
            Some(error) => format!(
                "its push from {} failed ({error}); run `git push {REMOTE} {branch}` in the clone on {} that ran it",
                p.host, p.host
            ),
            None => format!(
                "it was pushed from {} but is gone from {REMOTE} (deleted there?); push it again from a clone that has it",
                p.host
            ),
        },
        None => format!(
            "the clone that ran the task never pushed it (`push` off there?); run `git push {REMOTE} {branch}` in that clone"
        ),
    }
}

/// Before a command that needs `task`'s branch `branch`: when `push` is on, fetch origin's
/// copy and bring the local branch up to it when it is behind; push it when this clone is
/// ahead (a push that failed before). Returns a warning line when the local branch is used
/// although it may not be origin's; an error when this clone lacks the branch and cannot
/// fetch it, saying what to do.
pub fn sync_branch(
    project: &Project,
    store: &Store,
    task: &Task,
    branch: &str,
) -> Result<Option<String>> {
    // Without `push` (one machine) nothing is fetched: a missing branch is left to the
    // caller's own message (deleted by hand, most likely), at no cost.
    if !project.push_enabled() {
        return Ok(None);
    }
    let root = &project.root;
    if !plain_branch(branch) || worktree::head_commit(root).is_none() {
        return Ok(None);
    }
    let local_ref = format!("refs/heads/{branch}");
    let local = worktree::resolve(root, &local_ref);
    let missing = |why: String| -> Result<Option<String>> {
        Err(Error::Usage(format!(
            "branch {branch} of task {} is not in this clone and {why}",
            task.id
        )))
    };
    if !has_origin(root) {
        return match local {
            Some(_) => Ok(None),
            None if project.config.push != Some(true) => Ok(None),
            None => missing(format!(
                "there is no {REMOTE} to fetch it from; restore it from `git reflog`, or queue the task again with `gza retry {}`",
                task.id
            )),
        };
    }
    let tracking = format!("refs/remotes/{REMOTE}/{branch}");
    // What this clone last saw on origin: a local branch still there has nothing of its own,
    // so origin's, even rewritten (a rebase on another machine), replaces it.
    let seen = worktree::resolve(root, &tracking);
    let fetched = fetch(root, Some(&format!("+{local_ref}:{tracking}")));
    let remote = match fetched {
        Ok(_) => worktree::resolve(root, &tracking),
        Err(e) if reason(&e).contains("couldn't find remote ref") => None,
        Err(e) => {
            return match local {
                Some(_) => Ok(Some(format!(
                    "could not fetch branch {branch} from {REMOTE} ({}); using this clone's copy, which may be behind",
                    reason(&e)
                ))),
                None => missing(format!(
                    "could not be fetched from {REMOTE} ({}); check that {REMOTE} is reachable (`git fetch {REMOTE} {branch}`) and run the command again",
                    reason(&e)
                )),
            };
        }
    };
    match (local, remote) {
        (None, None) => missing(format!(
            "not on {REMOTE}: {}",
            why_not_on_origin(store, branch)
        )),
        (None, Some(tip)) => {
            git::run(root, &["update-ref", &local_ref, &tip, ""])?;
            Ok(None)
        }
        (Some(_), None) => Ok(push_branch(project, store, task.id, branch, false, None)),
        (Some(here), Some(there)) if here == there => Ok(None),
        (Some(here), Some(there))
            if is_ancestor(root, &here, &there) || seen.as_deref() == Some(here.as_str()) =>
        {
            move_to(project, branch, &local_ref, &here, &there)
        }
        (Some(here), Some(there)) if is_ancestor(root, &there, &here) => {
            Ok(push_branch(project, store, task.id, branch, false, None))
        }
        (Some(_), Some(_)) => Ok(Some(format!(
            "branch {branch} here and on {REMOTE} have diverged; using this clone's (see `git log {branch}...{REMOTE}/{branch}`)"
        ))),
    }
}

/// [`sync_branch`] for a command a person runs: its warning goes to stderr.
pub fn sync_branch_or_warn(
    project: &Project,
    store: &Store,
    task: &Task,
    branch: &str,
) -> Result<()> {
    if let Some(line) = sync_branch(project, store, task, branch)? {
        eprintln!("warning: task {}: {line}", task.id);
    }
    Ok(())
}

fn is_ancestor(root: &Path, older: &str, newer: &str) -> bool {
    git::succeeds(root, &["merge-base", "--is-ancestor", older, newer])
}

/// Move the local `branch` from `here` to origin's `there` (a descendant, or a rewrite of a
/// tip this clone had pushed or fetched and never added to). A branch checked out in one of
/// gza's task worktrees without uncommitted changes moves with its checkout; one checked out
/// elsewhere (the person's checkout) is left to the person.
fn move_to(
    project: &Project,
    branch: &str,
    local_ref: &str,
    here: &str,
    there: &str,
) -> Result<Option<String>> {
    let root = &project.root;
    match worktree::checkout_of(root, branch)? {
        None => {
            git::run(root, &["update-ref", local_ref, there, here])?;
            Ok(None)
        }
        Some(dir) => {
            let ours = project
                .worktrees_dir()
                .canonicalize()
                .unwrap_or_else(|_| project.worktrees_dir());
            let in_ours = dir.canonicalize().unwrap_or(dir.clone()).starts_with(&ours);
            if in_ours && worktree::dirty_files(&dir, 1)?.is_empty() {
                // `--keep` refuses rather than lose anything in the checkout.
                git::run(&dir, &["reset", "--quiet", "--keep", there])?;
                return Ok(None);
            }
            Ok(Some(format!(
                "branch {branch} is behind {REMOTE}'s and checked out in {} with changes or outside gza's worktrees; using this clone's copy: bring it up to `{REMOTE}/{branch}` there",
                dir.display()
            )))
        }
    }
}

/// The commit a new task starts from when it builds on this checkout's branch `branch` (at
/// `head`): with `push` on, origin's copy of that branch when it is ahead of this checkout
/// (another machine merged work there), so a worker's tasks never start from a stale base.
/// This checkout is left as it is (it is the person's); the second value says, once per new
/// tip, that the task starts ahead of it. A fetch that fails, a branch origin lacks, or one
/// that has diverged from this checkout leaves `head`.
pub fn newest_base(
    project: &Project,
    head: &str,
    branch: Option<&str>,
) -> (String, Option<String>) {
    static SAID: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
    // After a fetch that failed (origin down or unreachable), the next tasks of this worker
    // do not wait for it again for a while: each would wait up to FETCH_TIMEOUT.
    static FAILED_AT: std::sync::Mutex<Option<std::time::Instant>> = std::sync::Mutex::new(None);
    const RETRY_AFTER: Duration = Duration::from_secs(300);
    let unchanged = (head.to_string(), None);
    let Some(branch) = branch.filter(|b| plain_branch(b)) else {
        return unchanged;
    };
    let root = &project.root;
    if !project.push_enabled() || !has_origin(root) {
        return unchanged;
    }
    let mut failed_at = FAILED_AT.lock().unwrap_or_else(|e| e.into_inner());
    if failed_at.is_some_and(|at| at.elapsed() < RETRY_AFTER) {
        return unchanged;
    }
    let tracking = format!("refs/remotes/{REMOTE}/{branch}");
    if let Err(e) = fetch(root, Some(&format!("+refs/heads/{branch}:{tracking}"))) {
        let why = reason(&e);
        // A branch origin does not have is an answer, not a fault of origin's.
        if !why.contains("couldn't find remote ref") {
            tracing::warn!(error = %why, branch, "could not fetch the base branch; new tasks start from this checkout");
            *failed_at = Some(std::time::Instant::now());
        }
        return unchanged;
    }
    *failed_at = None;
    drop(failed_at);
    let Some(there) = worktree::resolve(root, &tracking) else {
        return unchanged;
    };
    if there == head || !is_ancestor(root, head, &there) {
        return unchanged;
    }
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    let note = (said.as_deref() != Some(there.as_str())).then(|| {
        format!(
            "new tasks start from {REMOTE}/{branch} ({}), which is ahead of this checkout; `git pull` brings it here",
            &there[..there.len().min(8)]
        )
    });
    *said = Some(there.clone());
    (there, note)
}

/// After a merged task branch was deleted here: delete `branch` on `origin` too when `push` is
/// on, but only if origin's copy is still `tip` (what was merged): a branch another machine
/// added to since is kept, and said.
pub fn delete_branch(project: &Project, branch: &str, tip: &str) -> crate::branch::OnOrigin {
    use crate::branch::OnOrigin;
    let root = &project.root;
    if !project.push_enabled() || !plain_branch(branch) || !has_origin(root) {
        return OnOrigin::Absent;
    }
    let lease = format!("--force-with-lease=refs/heads/{branch}:{tip}");
    let refspec = format!(":refs/heads/{branch}");
    let args = [
        "push",
        "--quiet",
        "--no-verify",
        lease.as_str(),
        REMOTE,
        refspec.as_str(),
    ];
    match git::remote(root, &args, PUSH_TIMEOUT) {
        Ok(_) => {
            // This clone's view of origin follows.
            let _ = git::output(
                root,
                &[
                    "update-ref",
                    "-d",
                    &format!("refs/remotes/{REMOTE}/{branch}"),
                ],
            );
            OnOrigin::Deleted
        }
        Err(e) => {
            let why = reason(&e);
            if why.contains("remote ref does not exist") {
                OnOrigin::Absent
            } else if why.contains("stale info") || why.contains("rejected") {
                OnOrigin::Kept(format!(
                    "it moved on at {REMOTE} since it was merged here (`git log {REMOTE}/{branch}`)"
                ))
            } else {
                OnOrigin::Kept(format!("{REMOTE} refused to delete it ({why})"))
            }
        }
    }
}

/// Before a worktree is made from `commit` (a task's recorded base): when this clone lacks it
/// and `push` is on, fetch it from `origin` (by id, else every branch). True when the clone has
/// it after.
pub fn ensure_commit(project: &Project, commit: &str) -> bool {
    let root = &project.root;
    if worktree::resolve(root, commit).is_some() {
        return true;
    }
    // A full commit id only: the value comes from the shared database and goes on git's
    // command line.
    let full_id = matches!(commit.len(), 40 | 64) && commit.bytes().all(|b| b.is_ascii_hexdigit());
    if !full_id || !project.push_enabled() || !has_origin(root) {
        return false;
    }
    let by_id = fetch(root, Some(commit));
    if by_id.is_err() || worktree::resolve(root, commit).is_none() {
        // A server that gives only its branches' tips: the commit is in one of them.
        let _ = fetch(root, None);
    }
    worktree::resolve(root, commit).is_some()
}

#[cfg(test)]
mod tests {
    use super::plain_branch;

    #[test]
    fn only_plain_branch_names_reach_a_refspec() {
        for ok in ["gza/12-fix-the-login-page", "gza/3-a-2", "feature/x_y.z"] {
            assert!(plain_branch(ok), "{ok}");
        }
        for bad in [
            "",
            "x:refs/heads/main",
            "-f",
            "--upload-pack=evil",
            "gza/../../main",
            "refs/*",
            "a b",
            "a@{0}",
            "x.lock",
            "/abs",
            "gza/1\nmain",
        ] {
            assert!(!plain_branch(bad), "{bad}");
        }
    }
}
