//! A finished task's branch: merging it, rebasing it on its base, and opening a pull request.
//!
//! Every operation checks what it needs before touching anything, and leaves the repository as
//! it found it when git stops half-way (a conflict is aborted and the result verified).

use std::path::{Path, PathBuf};

use crate::review::{branch_gone, branch_owner, no_branch};
use gza_core::error::{Error, Result};
use gza_core::git;
use gza_core::project::Project;
use gza_core::task::{Task, TaskStatus};
use gza_core::worktree;
use gza_store::Store;

/// Files named in a one-line message before the rest are counted.
const FILES_NAMED: usize = 3;

/// A task's branch, checked to exist, with the task that made it.
pub struct TaskBranch {
    pub owner: Task,
    pub name: String,
    pub tip: String,
}

/// The task that made `task`'s branch, and the branch's name (not checked to exist).
fn branch_name(store: &Store, task: &Task) -> Result<(Task, String)> {
    let owner = branch_owner(store, task)?;
    let name = task
        .branch
        .clone()
        .or_else(|| owner.branch.clone())
        .ok_or_else(|| no_branch(task))?;
    Ok((owner, name))
}

/// The branch `task` worked on; it must exist.
pub fn task_branch(project: &Project, store: &Store, task: &Task) -> Result<TaskBranch> {
    let (owner, name) = branch_name(store, task)?;
    // Made on another machine, or moved on there: fetched first (team mode).
    crate::remote::sync_branch_or_warn(project, store, task, &name)?;
    let tip = worktree::resolve(&project.root, &name).ok_or_else(|| {
        // The merge may be recorded on the task that made the branch (an improve task shares
        // its implement task's branch).
        branch_gone(
            if task.merged.is_none() && owner.merged.is_some() {
                &owner
            } else {
                task
            },
            &name,
        )
    })?;
    Ok(TaskBranch { owner, name, tip })
}

/// The commits `revs` name, in one git process; `None` when any of them does not resolve.
fn resolve_all(root: &Path, revs: &[&str]) -> Option<Vec<String>> {
    let args: Vec<String> = std::iter::once("rev-parse".to_string())
        .chain(revs.iter().map(|r| format!("{r}^{{commit}}")))
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = git::run(root, &args).ok()?;
    let commits: Vec<String> = out.lines().map(str::to_string).collect();
    (commits.len() == revs.len()).then_some(commits)
}

/// Refuse a task that has not completed.
fn require_completed(task: &Task, action: &str) -> Result<()> {
    let hint = match task.status() {
        TaskStatus::Completed => return Ok(()),
        TaskStatus::Pending => format!("run it first with `gza work {}`", task.id),
        TaskStatus::InProgress => "wait until it has finished (`gza ps`)".to_string(),
        TaskStatus::Failed | TaskStatus::Dropped => {
            format!("`gza retry {}` runs it again", task.id)
        }
    };
    Err(Error::Usage(format!(
        "task {} {}; only completed tasks can be {action}; {hint}",
        task.id,
        task.status().as_phrase()
    )))
}

/// `names` for a one-line message: the first few, then how many more.
fn name_files(names: &[String]) -> String {
    if names.len() <= FILES_NAMED {
        names.join(", ")
    } else {
        format!(
            "{} and {} more",
            names[..FILES_NAMED].join(", "),
            names.len() - FILES_NAMED
        )
    }
}

/// Refuse when `dir` has uncommitted changes to tracked files.
fn require_clean(dir: &Path, what: &str, then: &str) -> Result<()> {
    let dirty = worktree::dirty_files(dir, FILES_NAMED + 1)?;
    if dirty.is_empty() {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "{what} has uncommitted changes ({}); commit or stash them, then {then}",
        name_files(&dirty)
    )))
}

/// Files left in conflict in `dir`.
fn conflicted_files(dir: &Path) -> Vec<String> {
    git::run(dir, &["diff", "--name-only", "--diff-filter=U"])
        .map(|out| out.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

// ---- merge ------------------------------------------------------------------------------------

/// How `gza merge` merges.
#[derive(Debug, Clone, Copy, Default)]
pub struct MergeOptions {
    /// One new commit with the branch's changes, instead of a merge.
    pub squash: bool,
    /// Delete the branch (and the worktrees gza made for it) once merged.
    pub delete_branch: bool,
    /// Merge even when the branch's latest verify failed or is stale.
    pub force: bool,
    /// No person is there (`gza watch`): a branch that changes the git hooks the merge would
    /// run is refused rather than merged with the hooks off.
    pub unattended: bool,
}

/// What happened to the branch after a merge, when asked to delete it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deletion {
    NotAsked,
    /// Deleted here; and what became of its copy on `origin` (team mode).
    Deleted(OnOrigin),
    /// Kept, and why.
    Kept(String),
}

/// What became of a deleted branch's copy on `origin`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnOrigin {
    /// Nothing to do: pushing is off, there is no `origin`, or the branch is not there.
    Absent,
    Deleted,
    /// Left there, and why (it moved on since this clone saw it, or origin refused).
    Kept(String),
}

/// What `gza merge` did.
#[derive(Debug, Clone)]
pub struct Merged {
    pub branch: String,
    pub into: String,
    /// The branch was merged already; nothing changed.
    pub already: bool,
    /// The squash commit, when one was made (else HEAD before the merge).
    pub head: String,
    pub deletion: Deletion,
    /// The hook files (under the checkout's `core.hooksPath`) the branch changed: the person's
    /// hooks were off for this merge, so none of them ran.
    pub hooks_not_run: Vec<String>,
    /// The person's hooks a merge would run that were there and did not run (no hook runs at
    /// a merge gza makes).
    pub hooks_skipped: Vec<String>,
    /// The branch was merged before (when and into what) and deleted since: `already` too.
    pub deleted_after: Option<gza_core::task::Merge>,
}

/// Merge the branch of completed task `task` into the branch checked out at the project root.
///
/// Refused, with nothing changed, when: the task is not completed or has no branch; the branch
/// is gone; HEAD is detached or is the task's branch; tracked files have uncommitted changes.
/// A conflict is aborted, and the checkout verified to be back where it was.
pub fn merge(
    project: &Project,
    store: &Store,
    task: &Task,
    options: MergeOptions,
) -> Result<Merged> {
    require_completed(task, "merged")?;
    let root = &project.root;
    let (owner, name) = branch_name(store, task)?;
    // Made on another machine, or moved on there: what is merged is origin's newest (team
    // mode; nothing is asked of git on one machine).
    crate::remote::sync_branch_or_warn(project, store, task, &name)?;
    // HEAD, the branch it is on and the task's branch tip, in one git process when all exist.
    let (before, into, tip) = match worktree::head_and(root, &name) {
        Some(found) => found,
        None => {
            // Merged with --delete-branch before: nothing to do, as for a branch merged already.
            if let Some(merged) = task.merged.as_ref().or(owner.merged.as_ref())
                && worktree::resolve(root, &name).is_none()
            {
                return Ok(Merged {
                    branch: name,
                    into: merged.into.clone(),
                    already: true,
                    head: String::new(),
                    deletion: Deletion::NotAsked,
                    hooks_not_run: Vec::new(),
                    hooks_skipped: Vec::new(),
                    deleted_after: Some(merged.clone()),
                });
            }
            task_branch(project, store, task)?;
            return Err(Error::Usage(format!(
                "{} has no commit to merge into",
                root.display()
            )));
        }
    };
    let branch = TaskBranch { owner, name, tip };
    let into = into.ok_or_else(|| {
        Error::Usage(format!(
            "HEAD is detached in {}; check out the branch to merge into (git switch BRANCH), then run `gza merge {}` again",
            root.display(),
            task.id
        ))
    })?;
    if into == branch.name {
        return Err(Error::Usage(format!(
            "{} is checked out here; switch to the branch to merge it into (git switch main), then run `gza merge {}` again",
            branch.name, task.id
        )));
    }
    if !options.force {
        verify_gate(store, task, &branch)?;
    }
    require_clean(
        root,
        "the working tree",
        &format!("run `gza merge {}` again", task.id),
    )?;
    // No git hook runs at a merge gza makes. A hook runs on this machine, outside any
    // sandbox, and may run whatever the branch changed: the branch's own versions of hooks kept
    // in the checkout (`core.hooksPath: .husky`; husky 9's stubs in `.husky/_` run the scripts
    // one folder up), a hook manager's committed configuration (lefthook.yml,
    // .pre-commit-config.yaml), `post-merge: npm install` running the branch's package.json.
    // No list of files says what a hook reads, so none runs, and the person is told which of
    // theirs did not. A branch that changes the checkout's hooks folder itself is not merged
    // unattended either: the person's next git command would run them.
    let hooks_changed = hooks_changed_by(root, &before, &branch.tip);
    if !hooks_changed.is_empty() && options.unattended {
        return Err(Error::Usage(format!(
            "{} changes the git hooks this checkout runs ({}), so it is not merged unattended; read them, then run `gza merge {}`",
            branch.name,
            name_files(&hooks_changed),
            task.id
        )));
    }
    let hooks_skipped = git::hooks_present(root, MERGE_HOOKS);
    // Both kinds of merge find out for themselves when the branch is merged already.
    let already = if options.squash {
        !squash_merge(root, task, &branch, &before)?
    } else {
        !plain_merge(root, task, &branch, &into, &before)?
    };
    store.record_merge(branch.owner.id, &into)?;
    let deletion = if options.delete_branch {
        delete_branch(project, store, &branch)?
    } else {
        Deletion::NotAsked
    };
    let head = if options.squash && !already {
        worktree::head_commit(root).unwrap_or(before)
    } else {
        before
    };
    Ok(Merged {
        branch: branch.name,
        into,
        already,
        head,
        deletion,
        hooks_not_run: hooks_changed,
        hooks_skipped: if already { Vec::new() } else { hooks_skipped },
        deleted_after: None,
    })
}

/// The hooks a merge or a squash merge's commit would run: none runs (see [`merge`]).
const MERGE_HOOKS: &[&str] = &[
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "pre-commit",
    "post-commit",
    "post-merge",
];

/// The hooks a hook manager installs (lefthook, pre-commit, husky 4, simple-git-hooks): when
/// the checkout has one of them, what the manager reads runs at the person's next git command.
const MANAGED_HOOKS: &[&str] = &[
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-merge-commit",
    "post-merge",
    "post-checkout",
    "post-rewrite",
    "pre-rebase",
    "pre-push",
];

/// The files the person's next git command runs that `tip` changes since it left `base`: those
/// under the checkout's hooks folder, when it is part of the checkout ([`git::hooks_in_tree`]),
/// and, when the checkout has a hook installed, what a hook manager reads
/// ([`git::HOOK_MANAGER_FILES`]: lefthook.yml, .pre-commit-config.yaml, package.json; hostile
/// review 14). When git cannot say, they all count as changed: the merge then runs without
/// hooks rather than with ones nobody looked at.
fn hooks_changed_by(root: &Path, base: &str, tip: &str) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    if let Some(dir) = git::hooks_in_tree(root) {
        paths.push(dir.to_string_lossy().into_owned());
    }
    if !git::hooks_present(root, MANAGED_HOOKS).is_empty() {
        paths.extend(
            git::HOOK_MANAGER_FILES
                .iter()
                .map(|f| format!(":(literal){f}")),
        );
    }
    if paths.is_empty() {
        return Vec::new();
    }
    let range = format!("{base}...{tip}");
    let mut args = vec!["diff", "--name-only", &range, "--"];
    args.extend(paths.iter().map(String::as_str));
    match git::run(root, &args) {
        Ok(names) => names.lines().map(str::to_string).collect(),
        Err(_) => paths
            .iter()
            .map(|p| p.trim_start_matches(":(literal)").to_string())
            .collect(),
    }
}

/// Refuse a branch whose latest verify run failed at its tip, or checked another commit (the
/// branch moved since). A branch never verified passes: the gate is what was recorded.
pub fn verify_gate(store: &Store, task: &Task, branch: &TaskBranch) -> Result<()> {
    use gza_core::verify::VerifyState;
    let Some(v) = store.latest_verification(branch.owner.id)? else {
        return Ok(());
    };
    let id = task.id;
    match v.state(Some(&branch.tip)) {
        VerifyState::Passed => Ok(()),
        VerifyState::Failed => Err(Error::Usage(format!(
            "the verify of {} {} at {} (`gza show {id}` has the end of its output); fix it (`gza improve {id}`) and run `gza verify {id}` again, or merge anyway with --force",
            branch.name,
            v.outcome.describe(),
            v.short_commit()
        ))),
        VerifyState::Stale => Err(Error::Usage(format!(
            "{} moved since its verify {} at {}; run `gza verify {id}` on its tip, or merge anyway with --force",
            branch.name,
            v.outcome.describe(),
            v.short_commit()
        ))),
    }
}

/// `git merge`; returns false when the branch was merged already. On failure the merge is
/// aborted and the checkout checked to be as it was.
fn plain_merge(
    root: &Path,
    task: &Task,
    branch: &TaskBranch,
    into: &str,
    before: &str,
) -> Result<bool> {
    let message = format!(
        "Merge task {}: {}\n\nTask-Id: {}",
        task.id,
        title(&branch.owner.prompt),
        task.id
    );
    let out =
        git::output_without_hooks(root, &["merge", "--no-edit", "-m", &message, &branch.tip])?;
    if out.status.success() {
        // git's messages are in English here (see git::command).
        let said = String::from_utf8_lossy(&out.stdout);
        return Ok(!said.contains("Already up to date") && !said.contains("Already up-to-date"));
    }
    let conflicts = conflicted_files(root);
    let _ = git::output(root, &["merge", "--abort"]);
    restored(root, before, "merge --abort")?;
    if conflicts.is_empty() {
        return Err(Error::Usage(format!(
            "git could not merge {} into {into}: {}; nothing was changed",
            branch.name,
            git::one_line(&String::from_utf8_lossy(&out.stderr))
        )));
    }
    Err(Error::Usage(format!(
        "merging {} into {into} conflicts in {}; the merge was aborted and nothing changed: rebase the task first with `gza rebase {}`, or merge by hand",
        branch.name,
        name_files(&conflicts),
        task.id
    )))
}

/// `git merge --squash` and one commit; returns false when the branch brought no change (it
/// was merged before). On a conflict everything is reset to `before`.
fn squash_merge(root: &Path, task: &Task, branch: &TaskBranch, before: &str) -> Result<bool> {
    let out = git::output_without_hooks(root, &["merge", "--squash", &branch.tip])?;
    if !out.status.success() {
        let conflicts = conflicted_files(root);
        let _ = git::output(root, &["reset", "--merge"]);
        restored(root, before, "reset --merge")?;
        let why = if conflicts.is_empty() {
            git::one_line(&String::from_utf8_lossy(&out.stderr))
        } else {
            format!("conflicts in {}", name_files(&conflicts))
        };
        return Err(Error::Usage(format!(
            "squash-merging {} stopped: {why}; nothing was changed: rebase the task first with `gza rebase {}`, or merge by hand",
            branch.name, task.id
        )));
    }
    if git::succeeds(root, &["diff", "--cached", "--quiet"]) {
        return Ok(false);
    }
    let prompt = branch.owner.prompt.trim();
    let message = format!(
        "{} (gza task {})\n\n{}\n\nTask-Id: {}",
        title(prompt),
        task.id,
        prompt,
        task.id
    );
    // Without hooks: prepare-commit-msg and post-commit run even with --no-verify, from the
    // checkout that now holds the branch's files.
    let out =
        git::output_without_hooks(root, &["commit", "--quiet", "--no-verify", "-m", &message])?;
    if !out.status.success() {
        let _ = git::output(root, &["reset", "--merge"]);
        restored(root, before, "reset --merge")?;
        return Err(Error::Usage(format!(
            "git could not commit the squash merge of {}: {}; nothing was changed",
            branch.name,
            git::one_line(&String::from_utf8_lossy(&out.stderr))
        )));
    }
    Ok(true)
}

/// Check that an aborted operation left HEAD at `before` and no tracked file changed.
fn restored(dir: &Path, before: &str, how: &str) -> Result<()> {
    let head = worktree::head_commit(dir);
    let clean = worktree::dirty_files(dir, 1).is_ok_and(|d| d.is_empty());
    if head.as_deref() == Some(before) && clean {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "git stopped half-way and `git {how}` did not restore {}; check `git status` there before going on",
            dir.display()
        )))
    }
}

/// Delete a merged branch and the worktrees gza made for it; a worktree with uncommitted
/// changes, or a checkout gza did not make, keeps the branch.
fn delete_branch(project: &Project, store: &Store, branch: &TaskBranch) -> Result<Deletion> {
    // A worktree deleted by hand still holds its branch until pruned.
    let _ = git::output(&project.root, &["worktree", "prune"]);
    let ours = canonical(&project.worktrees_dir());
    for (path, checked_out) in worktree::checkouts(&project.root)? {
        if checked_out.as_deref() != Some(branch.name.as_str()) {
            continue;
        }
        if !canonical(&path).starts_with(&ours) {
            return Ok(Deletion::Kept(format!(
                "it is checked out in {}",
                path.display()
            )));
        }
        let removed = git::output(
            &project.root,
            &["worktree", "remove", &path.to_string_lossy()],
        )?;
        if !removed.status.success() {
            return Ok(Deletion::Kept(format!(
                "its worktree {} has uncommitted changes",
                path.display()
            )));
        }
    }
    store.clear_branch_worktrees(branch.owner.id)?;
    let tip = worktree::resolve(&project.root, &format!("refs/heads/{}", branch.name));
    // The branch's changes are in HEAD (merged or squashed), so -D loses nothing.
    git::run(&project.root, &["branch", "-D", &branch.name])?;
    // Its copy on origin (pushed for the other clones) goes too, if it is still what was
    // merged: other clones would otherwise fetch a merged branch back.
    let on_origin = match tip {
        Some(tip) => crate::remote::delete_branch(project, &branch.name, &tip),
        None => OnOrigin::Absent,
    };
    Ok(Deletion::Deleted(on_origin))
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// A commit or pull-request title from a prompt: its first line, at most 72 characters.
pub fn title(prompt: &str) -> String {
    gza_core::text::one_line(prompt.lines().next().unwrap_or("").trim(), 72)
}

// ---- rebase -----------------------------------------------------------------------------------

/// What `gza rebase` did.
#[derive(Debug, Clone)]
pub struct Rebased {
    pub branch: String,
    pub onto: String,
    /// The branch already contained its base's tip; nothing changed.
    pub up_to_date: bool,
    /// Commits on the branch after its base.
    pub ahead: u64,
}

/// Rebase task `task`'s branch onto the current tip of the branch it started from (the branch
/// checked out at the project root when that is not recorded).
///
/// The rebase runs where the branch is checked out, or in a temporary worktree when it is not,
/// so the checkout at the project root is never switched. A conflict is aborted and the branch
/// verified to be unchanged.
pub fn rebase(project: &Project, store: &Store, task: &Task) -> Result<Rebased> {
    if task.status() == TaskStatus::InProgress {
        return Err(Error::Usage(format!(
            "task {} is running; rebase it once it has finished",
            task.id
        )));
    }
    let root = &project.root;
    let (owner, name) = branch_name(store, task)?;
    let onto = match owner.base_branch().map(str::to_string) {
        Some(base) => base,
        None => worktree::current_branch(root).ok_or_else(|| {
            Error::Usage(format!(
                "task {} did not record the branch it started from and HEAD is detached; check out that branch, then run `gza rebase {}` again",
                task.id, task.id
            ))
        })?,
    };
    if onto == name {
        return Err(Error::Usage(format!(
            "task {}'s branch {name} cannot be rebased onto itself; check out the branch it should follow, then run `gza rebase {}` again",
            task.id, task.id
        )));
    }
    crate::remote::sync_branch_or_warn(project, store, task, &name)?;
    let Some(commits) = resolve_all(root, &[&name, &onto]) else {
        task_branch(project, store, task)?;
        return Err(Error::Usage(format!(
            "branch {onto}, which task {} started from, no longer exists; rebase by hand with `git rebase BRANCH {name}`",
            task.id
        )));
    };
    let (tip, onto_commit) = (commits[0].clone(), commits[1].clone());
    let branch = TaskBranch { owner, name, tip };
    // Commits on the base that the branch lacks, and commits on the branch after the base.
    let counts = git::run(
        root,
        &[
            "rev-list",
            "--left-right",
            "--count",
            &format!("{onto_commit}...{}", branch.tip),
        ],
    )?;
    let mut counts = counts
        .split_whitespace()
        .map(|n| n.parse::<u64>().unwrap_or(0));
    let (behind, ahead) = (counts.next().unwrap_or(0), counts.next().unwrap_or(0));
    let up_to_date = behind == 0;
    if !up_to_date {
        let checkout = worktree::checkout_of(root, &branch.name)?;
        // No clean check first: git refuses to rebase uncommitted changes, and says so.
        let (dir, temporary) = match checkout {
            Some(dir) => (dir, false),
            None => (
                worktree::create_on_branch(
                    root,
                    &project.worktrees_dir(),
                    task.id,
                    "rebase",
                    &branch.name,
                )?,
                true,
            ),
        };
        let result = rebase_in(&dir, task, &branch, &onto, &onto_commit);
        if temporary {
            let _ = git::output(
                root,
                &["worktree", "remove", "--force", &dir.to_string_lossy()],
            );
        }
        result?;
        store.rebased_onto(branch.owner.id, &onto_commit)?;
        // The branch was rewritten: origin's copy is replaced, if it is still the one this
        // clone fetched.
        if let Some(warning) =
            crate::remote::push_branch(project, store, branch.owner.id, &branch.name, true, None)
        {
            eprintln!("warning: task {}: {warning}", task.id);
        }
    }
    Ok(Rebased {
        branch: branch.name,
        onto,
        up_to_date,
        ahead,
    })
}

fn rebase_in(
    dir: &Path,
    task: &Task,
    branch: &TaskBranch,
    onto: &str,
    onto_commit: &str,
) -> Result<()> {
    let out = git::output(dir, &["rebase", "--quiet", onto_commit])?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("cannot rebase") {
        // Refused before it started: uncommitted changes where the branch is checked out.
        require_clean(
            dir,
            &format!("{}, where {} is checked out,", dir.display(), branch.name),
            &format!("run `gza rebase {}` again", task.id),
        )?;
        return Err(Error::Usage(format!(
            "git refused to rebase {}: {}",
            branch.name,
            git::one_line(&stderr)
        )));
    }
    let conflicts = conflicted_files(dir);
    let _ = git::output(dir, &["rebase", "--abort"]);
    restored(dir, &branch.tip, "rebase --abort")?;
    let why = if conflicts.is_empty() {
        git::one_line(&String::from_utf8_lossy(&out.stderr))
    } else {
        format!("conflicts in {}", name_files(&conflicts))
    };
    Err(Error::Usage(format!(
        "rebasing task {}'s branch {} onto {onto} stopped: {why}; the rebase was aborted and the branch is unchanged: resolve it by hand (git rebase {onto} {})",
        task.id, branch.name, branch.name
    )))
}

// ---- pull requests ----------------------------------------------------------------------------

/// A pull request for a task.
#[derive(Debug, Clone)]
pub struct PullRequest {
    pub url: String,
    /// It existed before this call.
    pub existing: bool,
}

/// Most bytes of the agent's report put in a pull request's description (GitHub's limit is
/// 65,536 characters for the whole body).
const MAX_PR_REPORT_BYTES: usize = 40 * 1024;

/// Push completed task `task`'s branch and open a pull request for it with `gh`, titled and
/// described from the task. Needs `gh` installed and logged in, and a git remote.
pub fn open_pull_request(project: &Project, store: &Store, task: &Task) -> Result<PullRequest> {
    require_completed(task, "opened as pull requests")?;
    let branch = task_branch(project, store, task)?;
    if let Some(url) = task.pr_url.clone().or_else(|| branch.owner.pr_url.clone()) {
        return Ok(PullRequest {
            url,
            existing: true,
        });
    }
    let root = &project.root;
    let gh = |args: &[&str], stdin: Option<&str>| gh_output(root, args, stdin);
    let auth = gh(&["auth", "status"], None)?;
    if !auth.status.success() {
        return Err(Error::Usage(format!(
            "gh is not logged in to GitHub; run `gh auth login`, then `gza pr {}` again",
            task.id
        )));
    }
    let remote = push_remote(root, &branch.name)?;
    let pushed = git::output(
        root,
        &["push", "--quiet", "--set-upstream", &remote, &branch.name],
    )?;
    if !pushed.status.success() {
        return Err(Error::Usage(format!(
            "cannot push {} to {remote}: {}",
            branch.name,
            git::one_line(&String::from_utf8_lossy(&pushed.stderr))
        )));
    }
    let body = pr_body(project, store, task, &branch);
    let title = title(&branch.owner.prompt);
    let mut args = vec![
        "pr",
        "create",
        "--head",
        &branch.name,
        "--title",
        &title,
        "--body-file",
        "-",
    ];
    if let Some(base) = branch.owner.base_branch() {
        args.extend(["--base", base]);
    }
    let out = gh(&args, Some(&body))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let url = |text: &str| {
        text.split_whitespace()
            .rev()
            .find(|w| w.starts_with("https://") || w.starts_with("http://"))
            .map(str::to_string)
    };
    let (url, existing) = if out.status.success() {
        (url(&stdout), false)
    } else if stderr.contains("already exists") {
        (url(&stderr), true)
    } else {
        return Err(Error::Usage(format!(
            "`gh pr create` failed: {}",
            git::one_line(&stderr)
        )));
    };
    let url = url.ok_or_else(|| {
        Error::Usage(format!(
            "`gh pr create` gave no pull request address: {}",
            git::one_line(&format!("{stdout}\n{stderr}"))
        ))
    })?;
    store.set_pr_url(branch.owner.id, &url)?;
    if task.id != branch.owner.id {
        store.set_pr_url(task.id, &url)?;
    }
    Ok(PullRequest { url, existing })
}

/// Run `gh` in `dir`, never prompting; a missing `gh` is a one-line error.
fn gh_output(dir: &Path, args: &[&str], stdin: Option<&str>) -> Result<std::process::Output> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("gh")
        .args(args)
        .current_dir(dir)
        .env("GH_PROMPT_DISABLED", "1")
        .env("NO_COLOR", "1")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::Usage(
                "the GitHub CLI `gh` is not installed; install it (https://cli.github.com) and run `gh auth login` to open pull requests"
                    .into(),
            ),
            _ => Error::io(dir, "run gh in", e),
        })?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let _ = pipe.write_all(text.as_bytes());
    }
    child
        .wait_with_output()
        .map_err(|e| Error::io(dir, "run gh in", e))
}

/// The remote to push `branch` to: its upstream's, else `origin`, else the only remote.
fn push_remote(root: &Path, branch: &str) -> Result<String> {
    if let Ok(remote) = git::run(root, &["config", &format!("branch.{branch}.remote")])
        && !remote.trim().is_empty()
    {
        return Ok(remote.trim().to_string());
    }
    let remotes: Vec<String> = git::run(root, &["remote"])?
        .lines()
        .map(str::to_string)
        .collect();
    if remotes.iter().any(|r| r == "origin") {
        return Ok("origin".into());
    }
    match remotes.as_slice() {
        [only] => Ok(only.clone()),
        [] => Err(Error::Usage(
            "the repository has no git remote to push to; add one with `git remote add origin URL`"
                .into(),
        )),
        _ => Err(Error::Usage(format!(
            "the repository has several remotes ({}) and no `origin`; set the branch's with `git branch --set-upstream-to REMOTE/{branch}`",
            remotes.join(", ")
        ))),
    }
}

/// A pull request's description: the task, the agent's report, the reviews.
fn pr_body(project: &Project, store: &Store, task: &Task, branch: &TaskBranch) -> String {
    let owner = &branch.owner;
    let mut body = format!("{}\n", owner.prompt.trim());
    if let Some(report) = owner
        .output
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty())
    {
        let cut = report.floor_char_boundary(MAX_PR_REPORT_BYTES);
        body.push_str("\n## What the agent reported\n\n");
        body.push_str(&report[..cut]);
        if cut < report.len() {
            body.push_str("\n\n(cut; `gza show` has the rest)");
        }
        body.push('\n');
    }
    let reviews = store.reviews_of_branch(owner.id).unwrap_or_default();
    if !reviews.is_empty() {
        body.push_str("\n## Reviews\n\n");
        for r in reviews {
            let verdict = r
                .review_verdict()
                .map(|v| v.to_string())
                .unwrap_or_else(|| r.status().to_string());
            body.push_str(&format!("- gza task {}: {verdict}\n", r.id));
        }
    }
    let stats = crate::review::change_range(project, owner)
        .ok()
        .and_then(|r| git::run(&project.root, &["diff", "--shortstat", &r.base, &r.tip]).ok())
        .filter(|s| !s.trim().is_empty())
        .map(|s| format!(" {}.", s.trim()))
        .unwrap_or_default();
    body.push_str(&format!(
        "\n---\nOpened by gza from task {}.{stats}\n",
        task.id
    ));
    body
}

// ---- checkout ---------------------------------------------------------------------------------

/// What `gza checkout` did.
#[derive(Debug, Clone)]
pub struct CheckedOut {
    pub branch: String,
    pub owner: Task,
    /// The branch was checked out here already; nothing changed.
    pub already: bool,
    /// The worktree gza made for the branch, removed so the branch could be checked out here.
    pub removed_worktree: Option<PathBuf>,
}

/// Check out the branch of `task` (the branch its improve tasks share) in the project's main
/// checkout.
///
/// Refused, with nothing changed, when: the task has no branch or it is gone; a task of the
/// branch is running; the main checkout has uncommitted changes to tracked files; the branch is
/// checked out in a worktree that has uncommitted changes, or in a checkout gza did not make.
/// A clean worktree gza made for the branch is removed (the branch and its commits stay), as git
/// checks a branch out in one place at a time.
pub fn checkout(project: &Project, store: &Store, task: &Task) -> Result<CheckedOut> {
    // A review ran on the branch of the task it reviewed.
    let reviewed = match task.task_type {
        gza_core::task::TaskType::Review => crate::review::reviewed_task(store, task)?,
        _ => None,
    };
    let branch = task_branch(project, store, reviewed.as_ref().unwrap_or(task))?;
    let root = &project.root;
    if worktree::current_branch(root).as_deref() == Some(branch.name.as_str()) {
        return Ok(CheckedOut {
            branch: branch.name,
            owner: branch.owner,
            already: true,
            removed_worktree: None,
        });
    }
    let family: Vec<Task> = std::iter::once(branch.owner.clone())
        .chain(store.improves_of_branch(branch.owner.id)?)
        .collect();
    if let Some(running) = family.iter().find(|t| t.status() == TaskStatus::InProgress) {
        return Err(Error::Usage(format!(
            "task {} is running on branch {}; wait for it to finish (`gza ps`) or stop it (`gza kill {}`)",
            running.id, branch.name, running.id
        )));
    }
    require_clean(
        root,
        "the checkout here",
        &format!("run `gza checkout {}` again", task.id),
    )?;
    // A worktree deleted by hand still holds its branch until pruned.
    let _ = git::output(root, &["worktree", "prune"]);
    let mut removed_worktree = None;
    if let Some(path) = worktree::checkout_of(root, &branch.name)? {
        if !canonical(&path).starts_with(canonical(&project.worktrees_dir())) {
            return Err(Error::Usage(format!(
                "branch {} is checked out in {}; switch that checkout to another branch first",
                branch.name,
                path.display()
            )));
        }
        let changed = worktree::uncommitted(&path)?;
        if !changed.is_empty() {
            return Err(Error::Usage(format!(
                "branch {}'s worktree {} has uncommitted changes ({}); commit or remove them there, then run `gza checkout {}` again",
                branch.name,
                path.display(),
                name_files(&changed),
                task.id
            )));
        }
        worktree::remove(root, &path)?;
        store.clear_branch_worktrees(branch.owner.id)?;
        removed_worktree = Some(path);
    }
    git::run(root, &["switch", "--no-guess", &branch.name])?;
    Ok(CheckedOut {
        branch: branch.name,
        owner: branch.owner,
        already: false,
        removed_worktree,
    })
}
