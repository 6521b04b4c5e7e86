//! Running one claimed task from start to recorded outcome.

use std::io::{BufWriter, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::providers::{self, AgentRequest, Progress, Verdict};
use super::{Observer, Status, complete, kept, sandbox, worktree};
use gza_core::config::ProviderKind;
use gza_core::error::{Error, Result};
use gza_core::process;
use gza_core::project::Project;
use gza_core::prompt;
use gza_core::task::{
    Base, FailureReason, ProcessId, Task, TaskId, TaskResult, TaskState, TaskStatus, TaskType,
    Usage,
};
use gza_store::{Outcome, Store, WorkerId};

/// Grace between SIGTERM and SIGKILL when gza ends an agent.
pub const KILL_GRACE: Duration = Duration::from_secs(3);
/// How long gza keeps reading the agent's stdout after the agent has exited and its processes
/// were ended: a process that escaped both (a new session with a scrubbed environment) may
/// hold the pipe open forever.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);
/// Longest line of agent output parsed; longer lines are logged in full but parsed cut.
const MAX_PARSED_LINE: usize = 4 * 1024 * 1024;

/// What happened to one task, for the caller's summary: its state and figures as recorded.
#[derive(Debug, Clone)]
pub struct Finished {
    pub id: TaskId,
    /// Done, normally; whoever ended the task first (`gza kill`) decided its result.
    pub state: TaskState,
    pub usage: Usage,
    pub duration: Duration,
    pub branch: Option<String>,
    pub diff_stats: Option<String>,
}

/// The provider a task runs with.
pub fn provider_of(project: &Project, task: &Task) -> ProviderKind {
    task.provider
        .as_deref()
        .and_then(ProviderKind::parse)
        .unwrap_or(project.config.provider)
}

/// Where the agent works.
struct Workspace {
    dir: PathBuf,
    /// The worktree and branch a code task's changes are committed to.
    worktree: Option<worktree::Worktree>,
    /// A checkout the agent only reads (a review's), recorded so `gza clean` removes it.
    checkout: Option<PathBuf>,
    /// The branch the task's branch started from, when known.
    base_branch: Option<String>,
}

impl Workspace {
    fn in_place(project: &Project) -> Workspace {
        Workspace {
            dir: project.root.clone(),
            worktree: None,
            checkout: None,
            base_branch: None,
        }
    }

    fn on(wt: worktree::Worktree, base_branch: Option<String>) -> Workspace {
        Workspace {
            dir: wt.path.clone(),
            worktree: Some(wt),
            checkout: None,
            base_branch,
        }
    }
}

/// Warnings about the project itself, said once per `gza work` rather than once per task.
static SAID_NO_REPOSITORY: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);
static SAID_DIRTY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static SAID_LEFT_OUT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// True the first time it is asked about `said` in this process.
fn once(said: &std::sync::atomic::AtomicBool) -> bool {
    !said.swap(true, std::sync::atomic::Ordering::Relaxed)
}

fn prepare_workspace(
    project: &Project,
    store: &Store,
    task: &Task,
    ui: &dyn Observer,
) -> Result<Workspace> {
    if task.task_type == TaskType::Review {
        return review_workspace(project, store, task, ui);
    }
    if !task.task_type.changes_code() {
        return Ok(Workspace::in_place(project));
    }
    // An A/B run (`gza ab`) starts from its experiment's base commit, as every run of it does,
    // whoever runs it and whatever HEAD is now.
    if let Some(base) = store.ab_base_commit(task.id)? {
        if !crate::remote::ensure_commit(project, &base) {
            return Err(Error::Usage(format!(
                "task {} is an A/B run from commit {}, which the repository no longer has",
                task.id,
                short_commit(Some(base.as_str()))
            )));
        }
        let wt = worktree::create(
            &project.root,
            &project.worktrees_dir(),
            task.id,
            &task.prompt,
            &base,
        )?;
        return Ok(Workspace::on(wt, None));
    }
    let Some((head, head_branch)) = worktree::head(&project.root) else {
        if once(&SAID_NO_REPOSITORY) {
            ui.warn(&format!(
                "task {}: {} is not a git repository with a commit; tasks run in place, without a branch",
                task.id,
                project.root.display()
            ));
        }
        return Ok(Workspace::in_place(project));
    };
    // A resumed session must continue in the directory it started in.
    if let (Some(_), Some(parent)) = (&task.resume_session_id, task.based_on) {
        let parent = store.get_task(parent)?;
        if let (Some(dir), Some(branch)) = (&parent.worktree, &parent.branch) {
            let dir = PathBuf::from(dir);
            if dir.is_dir() {
                // The change is the branch since the work started, the interrupted run's
                // commits included: they are reviewed and merged with it.
                let base_commit = match parent.base_commit() {
                    Some(commit) => commit.to_string(),
                    None => worktree::worktree_head(&dir)?,
                };
                let wt = worktree::Worktree {
                    path: dir,
                    branch: branch.clone(),
                    base_commit,
                };
                let base_branch = parent.base_branch().map(str::to_string);
                return Ok(Workspace::on(wt, base_branch));
            }
        }
    }
    if task.task_type == TaskType::Improve && task.based_on.is_some() {
        let owner = crate::review::branch_owner(store, task)?;
        // Improving a task that made no branch (an explore task, say) starts a branch of its own.
        if owner.branch.is_some() {
            return continue_branch(project, store, task, &owner, ui);
        }
    }
    let based_on = task.based_on.map(|id| store.get_task(id)).transpose()?;
    // A branch this builds on may have been made (or moved on) on another machine.
    if let Some(parent) = &based_on
        && let Some(branch) = &parent.branch
    {
        match crate::remote::sync_branch(project, store, parent, branch) {
            Ok(Some(warning)) => ui.warn(&format!("task {}: {warning}", task.id)),
            Ok(None) => {}
            // Without it the task starts from HEAD, as it always has when the branch is gone.
            Err(e) => ui.warn(&format!("task {}: {e}", task.id)),
        }
    }
    // A retry of a code task that failed (`gza retry`, `gza watch`) starts from what that run
    // committed, and its change is measured from where that run started: it is the same piece
    // of work, reviewed and merged into the same branch. Any other task based on a branch
    // builds on it (a stacked branch, merged into it).
    let retried_base = based_on
        .as_ref()
        .filter(|t| {
            t.task_type == task.task_type
                && matches!(t.status(), TaskStatus::Failed | TaskStatus::Dropped)
        })
        .and_then(|t| t.base.clone());
    let (base, base_branch) = match based_on.and_then(|t| t.branch) {
        Some(branch) if worktree::branch_exists(&project.root, &branch) => {
            (branch.clone(), Some(branch))
        }
        _ => {
            // Another machine may have moved this branch on at origin (team mode).
            let (base, note) = crate::remote::newest_base(project, &head, head_branch.as_deref());
            if let Some(note) = note {
                ui.warn(&format!("task {}: {note}", task.id));
            }
            (base, head_branch)
        }
    };
    let (base_branch, base_commit) = match retried_base {
        Some(b) if crate::remote::ensure_commit(project, &b.commit) => (b.branch, Some(b.commit)),
        _ => (base_branch, None),
    };
    if worktree::is_dirty(&project.root) && once(&SAID_DIRTY) {
        ui.warn(&format!(
            "task {}: the main worktree has uncommitted changes; tasks start from the last commit without them",
            task.id
        ));
    }
    let mut wt = worktree::create(
        &project.root,
        &project.worktrees_dir(),
        task.id,
        &task.prompt,
        &base,
    )?;
    if let Some(commit) = base_commit {
        wt.base_commit = commit;
    }
    Ok(Workspace::on(wt, base_branch))
}

/// An improve task works on the branch of the task it improves: in the worktree where that
/// branch is checked out, or in a new one when that worktree is gone.
fn continue_branch(
    project: &Project,
    store: &Store,
    task: &Task,
    owner: &Task,
    ui: &dyn Observer,
) -> Result<Workspace> {
    let branch = owner
        .branch
        .clone()
        .ok_or_else(|| crate::review::no_branch(owner))?;
    if let Some(warning) = crate::remote::sync_branch(project, store, owner, &branch)? {
        ui.warn(&format!("task {}: {warning}", task.id));
    }
    if !worktree::branch_exists(&project.root, &branch) {
        return Err(crate::review::branch_gone(owner, &branch));
    }
    let ours = project
        .worktrees_dir()
        .canonicalize()
        .unwrap_or_else(|_| project.worktrees_dir());
    let dir = match worktree::checkout_of(&project.root, &branch)? {
        Some(path)
            if path
                .canonicalize()
                .unwrap_or(path.clone())
                .starts_with(&ours) =>
        {
            path
        }
        Some(path) => {
            return Err(Error::Usage(format!(
                "branch {branch} is checked out in {}; switch that checkout to another branch so task {} can work on it",
                path.display(),
                task.id
            )));
        }
        None => worktree::create_on_branch(
            &project.root,
            &project.worktrees_dir(),
            task.id,
            &task.prompt,
            &branch,
        )?,
    };
    if !worktree::dirty_files(&dir, 1)?.is_empty() {
        ui.warn(&format!(
            "task {}: {} has uncommitted changes; they are committed with this task",
            task.id,
            dir.display()
        ));
    }
    let base_commit = worktree::worktree_head(&dir)?;
    let wt = worktree::Worktree {
        path: dir,
        branch,
        base_commit,
    };
    Ok(Workspace::on(wt, owner.base_branch().map(str::to_string)))
}

/// A review runs in its own checkout of the reviewed branch's tip (detached): the reviewer can
/// read the changed code in full and run its tests, and nothing it touches can reach the branch.
fn review_workspace(
    project: &Project,
    store: &Store,
    task: &Task,
    ui: &dyn Observer,
) -> Result<Workspace> {
    let Some(reviewed) = crate::review::reviewed_task(store, task)? else {
        return Ok(Workspace::in_place(project));
    };
    let owner = crate::review::branch_owner(store, &reviewed)?;
    let Some(branch) = owner.branch.clone() else {
        return Ok(Workspace::in_place(project));
    };
    if worktree::head_commit(&project.root).is_none() {
        return Ok(Workspace::in_place(project));
    }
    if let Some(warning) = crate::remote::sync_branch(project, store, &owner, &branch)? {
        ui.warn(&format!("task {}: {warning}", task.id));
    }
    let tip = worktree::resolve(&project.root, &branch)
        .ok_or_else(|| crate::review::branch_gone(&owner, &branch))?;
    let path = worktree::create_detached(
        &project.root,
        &project.worktrees_dir(),
        task.id,
        &task.prompt,
        &tip,
    )?;
    Ok(Workspace {
        dir: path.clone(),
        worktree: None,
        checkout: Some(path),
        base_branch: None,
    })
}

/// The prompt for a resumed session: a new message in the old conversation.
fn resume_prompt(task: &Task) -> String {
    format!(
        "Your previous run of this task was interrupted. Do not trust earlier claims about what is \
         done: check the working tree (git status, git diff) first, then finish the task.\n\n\
         The task: {}",
        task.prompt
    )
}

/// Run `task` (already claimed by `worker`) to its end and record the outcome, in named stages:
/// prepare the workspace and prompt, spawn the agent, wait for it, judge what it reported, then
/// commit its changes and record the outcome.
pub fn run_task(
    project: &Project,
    store: &Store,
    worker: WorkerId,
    task: Task,
    teacher: &dyn super::Teacher,
    ui: &dyn Observer,
) -> Result<Finished> {
    let _span = tracing::info_span!("task", id = %task.id).entered();
    let started = Instant::now();
    let early = |stopped: Early| -> Result<Finished> {
        tracing::warn!(reason = %stopped.reason, detail = %stopped.detail, "stopped before the agent ran");
        let mut outcome = Outcome::new(TaskResult::failed(stopped.reason));
        outcome.output = Some(format!("gza: {}", stopped.detail));
        outcome.usage.duration_seconds = Some(started.elapsed().as_secs_f64());
        let ending = kept::Ending {
            outcome,
            commit: None,
            report: false,
            branch: None,
        };
        record(project, store, worker, &task, ending, started, ui)
    };
    let prepared = match prepare(project, store, &task, teacher, ui) {
        Ok(p) => p,
        Err(Stop::Early(e)) => return early(e),
        Err(Stop::Fault(e)) => return Err(e),
    };
    tracing::info!(
        dir = %prepared.workspace.dir.display(),
        branch = prepared.workspace.worktree.as_ref().map(|w| w.branch.as_str()),
        provider = %prepared.kind.as_str(),
        sandbox = %prepared.sandbox.as_str(),
        "workspace ready"
    );
    // A task that runs in place (explore, plan, review outside a repository) should only read:
    // what it changes in the main checkout is said when it ends.
    let checkout_before = prepared
        .workspace
        .worktree
        .is_none()
        .then(|| CheckoutState::read(&prepared.workspace.dir))
        .flatten();
    // What a git hook manager reads runs at the person's next git command: an in-place agent
    // that created, changed or removed one (ignored files included, which git status omits) is
    // named apart, whatever the sandbox.
    // (Outside a repository no git hook runs.)
    let hook_files_before = checkout_before
        .is_some()
        .then(|| gza_core::git::hook_manager_stamps(&prepared.workspace.dir));
    let running = match spawn(project, store, &task, &prepared, ui) {
        Ok(r) => r,
        Err(Stop::Early(e)) => return early(e),
        Err(Stop::Fault(e)) => return Err(e),
    };
    tracing::info!(pgid = running.pgid, program = %prepared.invocation.program, "agent started");
    let ended = wait(project, store, worker, &task, running, started, ui);
    tracing::info!(
        exit = ended.exit.and_then(|s| s.code()),
        forced = ?ended.forced,
        seconds = started.elapsed().as_secs(),
        "agent ended"
    );
    sandbox::clean_up(prepared.sandbox, &prepared.place(project, &task));
    if let Some(before) = &checkout_before
        && let Some(after) = CheckoutState::read(&prepared.workspace.dir)
        && let Some(change) = before.changes_to(&after)
    {
        let message = format!(
            "task {} ({}) changed the main checkout, which it should only read: {change}; see `git status` and `git diff`",
            task.id, task.task_type
        );
        tracing::warn!(task = %task.id, %change, "an in-place task changed the main checkout");
        ui.warn(&message);
    }
    if let Some(before) = &hook_files_before {
        let after = gza_core::git::hook_manager_stamps(&prepared.workspace.dir);
        let changed: Vec<&str> = before
            .iter()
            .zip(&after)
            .filter(|(b, a)| b.1 != a.1)
            .map(|(b, _)| b.0)
            .collect();
        if !changed.is_empty() {
            let message = format!(
                "task {} ({}) changed {}, which a git hook manager (lefthook, pre-commit, husky, lint-staged) runs on this machine at your next git command: read {} before you commit or push",
                task.id,
                task.task_type,
                changed.join(", "),
                if changed.len() == 1 { "it" } else { "them" }
            );
            tracing::warn!(task = %task.id, files = %changed.join(", "), "an in-place task changed a hook manager's files");
            ui.warn(&message);
        }
    }
    let catch_all = catch_all_section(project);
    // Drafts the agent wrote (to learnings.md in place, or LEARNINGS.md in its worktree).
    let mut drafts = Vec::new();
    if let Some(w) = prepared
        .learnings_guard
        .after(store, task.id, catch_all, &mut drafts)
    {
        ui.warn(&w);
    }
    let mut outcome = judge(
        task.task_type,
        &ended,
        &prepared.stderr_path,
        project.config.timeout_minutes,
    );
    outcome.usage.duration_seconds = Some(started.elapsed().as_secs_f64());
    tracing::info!(
        status = outcome.result.status().as_str(),
        reason = outcome.result.failure_reason().map(|r| r.as_str()),
        "judged"
    );
    // An agent that replaced its worktree's `.git` gets nothing run or committed there: its
    // repository's config and hooks would run on the host.
    let unsafe_checkout = prepared
        .workspace
        .worktree
        .as_ref()
        .and_then(|wt| gza_core::git::verify_worktree(&project.root, &wt.path).err());
    if let Some(e) = &unsafe_checkout {
        mark_unsafe(&mut outcome, e);
        ui.warn(&format!("task {}: {e}", task.id));
    }
    let completed = matches!(outcome.result, TaskResult::Completed { .. });
    let commit = match &prepared.workspace.worktree {
        Some(_) if unsafe_checkout.is_some() => None,
        Some(wt) => {
            if let Some(w) = super::agent_rules::take_in(
                store,
                task.id,
                &wt.path,
                completed,
                catch_all,
                &mut drafts,
            ) {
                ui.warn(&w);
            }
            Some(kept::PendingCommit {
                worktree: wt.path.clone(),
                message: commit_message(&task, completed),
                base_commit: wt.base_commit.clone(),
            })
        }
        None => None,
    };
    if !drafts.is_empty() {
        teacher.took_drafts(project, store, &drafts);
    }
    let ending = kept::Ending {
        outcome,
        commit,
        report: !task.task_type.changes_code(),
        branch: prepared
            .workspace
            .worktree
            .as_ref()
            .map(|w| w.branch.clone()),
    };
    record(project, store, worker, &task, ending, started, ui)
}

/// The main checkout as git sees it: its HEAD, and every changed or untracked path outside
/// `.gza/` with its size and modification time (so a file that was already changed and changes
/// again is noticed too).
#[derive(Debug, PartialEq, Eq)]
struct CheckoutState {
    head: Option<String>,
    paths: std::collections::BTreeMap<String, Option<(u64, i128)>>,
}

/// Paths of a changed checkout named before the rest are counted.
const CHANGED_PATHS_NAMED: usize = 5;

impl CheckoutState {
    /// `None` outside a git repository (or when git cannot say).
    fn read(dir: &Path) -> Option<CheckoutState> {
        let status = gza_core::git::run(
            dir,
            &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
        )
        .ok()?;
        let mut paths = std::collections::BTreeMap::new();
        let mut entries = status.split('\0');
        while let Some(entry) = entries.next() {
            let Some(path) = entry.get(3..).filter(|p| !p.is_empty()) else {
                continue;
            };
            // A rename names its source next.
            if entry.starts_with('R') || entry.starts_with('C') {
                entries.next();
            }
            if path == ".gza" || path.starts_with(".gza/") {
                continue;
            }
            let stamp = std::fs::symlink_metadata(dir.join(path)).ok().map(|m| {
                use std::os::unix::fs::MetadataExt;
                (
                    m.size(),
                    i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
                )
            });
            paths.insert(format!("{}{path}", &entry[..3]), stamp);
        }
        let head = gza_core::worktree::head_commit(dir);
        Some(CheckoutState { head, paths })
    }

    /// What changed from `self` to `after`, in words; `None` when nothing did.
    fn changes_to(&self, after: &CheckoutState) -> Option<String> {
        let mut changed: Vec<&str> = Vec::new();
        for (key, stamp) in &after.paths {
            if self.paths.get(key) != Some(stamp) {
                changed.push(&key[3..]);
            }
        }
        for key in self.paths.keys() {
            if !after.paths.contains_key(key) && !changed.contains(&&key[3..]) {
                changed.push(&key[3..]);
            }
        }
        changed.sort_unstable();
        changed.dedup();
        let mut parts = Vec::new();
        if self.head != after.head {
            parts.push(format!(
                "HEAD moved from {} to {}",
                short_commit(self.head.as_deref()),
                short_commit(after.head.as_deref())
            ));
        }
        if !changed.is_empty() {
            let mut named = changed[..changed.len().min(CHANGED_PATHS_NAMED)].join(", ");
            if changed.len() > CHANGED_PATHS_NAMED {
                named.push_str(&format!(
                    " and {} more",
                    changed.len() - CHANGED_PATHS_NAMED
                ));
            }
            parts.push(named);
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

fn short_commit(commit: Option<&str>) -> &str {
    commit.map_or("none", |c| c.get(..10).unwrap_or(c))
}

/// Why a stage stopped the run before the agent could finish.
enum Stop {
    /// The task fails with this reason, recorded like any outcome.
    Early(Early),
    /// gza itself failed (the database, the file system): the run ends with this error.
    Fault(Error),
}

struct Early {
    reason: FailureReason,
    detail: String,
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        Stop::Fault(e)
    }
}

/// The agent CLI's settings files in the task's folder run nothing until the person trusts
/// them as they are (`gza trust`; docs/security.md): Claude Code is told to leave out the project's
/// settings and MCP servers; Gemini CLI and Codex, which have no such switch in headless mode,
/// are not started. Returns, for Claude Code, the files it was told to leave out.
fn untrusted_agent_settings(
    project: &Project,
    kind: ProviderKind,
    dir: &Path,
    agent: &mut providers::Invocation,
) -> std::result::Result<Option<String>, Stop> {
    let cli = match kind {
        ProviderKind::Claude => "claude",
        ProviderKind::Gemini => "gemini",
        ProviderKind::Codex => "codex",
        ProviderKind::Command => return Ok(None),
    };
    let untrusted: Vec<String> = gza_core::trust::untrusted_agent_configs(dir, &project.root)
        .map_err(|e| early(FailureReason::AgentStart, e.to_string()))?
        .into_iter()
        .filter(|f| gza_core::trust::read_by(f) == Some(cli))
        .collect();
    if untrusted.is_empty() {
        return Ok(None);
    }
    let has = |f: &str| untrusted.iter().any(|u| u == f);
    let refuse = |f: &str, cli: &str| {
        early(
            FailureReason::AgentStart,
            format!(
                "{f} is not trusted as it is now (a repository or an agent may have written it), and {cli} would run its hooks and servers on this machine; read it, then run `gza trust`"
            ),
        )
    };
    match kind {
        ProviderKind::Claude => {
            let sources = match (
                has(".claude/settings.json"),
                has(".claude/settings.local.json"),
            ) {
                (true, true) => Some("user"),
                (true, false) => Some("user,local"),
                (false, true) => Some("user,project"),
                (false, false) => None,
            };
            if let Some(sources) = sources {
                agent
                    .args
                    .extend(["--setting-sources".into(), sources.into()]);
            }
            if has(".mcp.json") {
                agent.args.push("--strict-mcp-config".into());
            }
            Ok(Some(untrusted.join(", ")))
        }
        // Its settings run hooks and servers; its `.env` files set where requests (and the
        // person's key) go. Every one of them is read by the CLI, so the first is named.
        ProviderKind::Gemini => {
            let first = &untrusted[0];
            if first.ends_with(".env") {
                Err(early(
                    FailureReason::AgentStart,
                    format!(
                        "{first} is not trusted as it is now (a repository or an agent may have written it), and Gemini CLI would take its variables, which can send your API key elsewhere; read it, then run `gza trust`"
                    ),
                ))
            } else {
                Err(refuse(first, "Gemini CLI"))
            }
        }
        ProviderKind::Codex => Err(refuse(&untrusted[0], "Codex")),
        ProviderKind::Command => Ok(None),
    }
}

fn early(reason: FailureReason, detail: impl Into<String>) -> Stop {
    Stop::Early(Early {
        reason,
        detail: detail.into(),
    })
}

/// Everything a task needs before its agent starts.
struct Prepared {
    kind: ProviderKind,
    workspace: Workspace,
    prompt: String,
    log_path: PathBuf,
    stderr_path: PathBuf,
    sandbox: gza_core::config::SandboxKind,
    invocation: providers::Invocation,
    learnings_guard: super::agent_rules::LearningsFileGuard,
    /// The repository's git directory, shown read-only inside a sandbox.
    git_dir: Option<PathBuf>,
}

impl Prepared {
    fn place<'a>(&'a self, project: &'a Project, task: &Task) -> sandbox::Place<'a> {
        place_of(
            project,
            task,
            self.kind,
            &self.workspace.dir,
            self.git_dir.clone(),
        )
    }
}

fn place_of<'a>(
    project: &'a Project,
    task: &Task,
    kind: ProviderKind,
    workdir: &'a Path,
    git_dir: Option<PathBuf>,
) -> sandbox::Place<'a> {
    sandbox::Place {
        task_id: task.id,
        provider: kind,
        project_root: &project.root,
        workdir,
        home: std::env::var_os("HOME").map(PathBuf::from),
        docker_image: project.config.docker_image.as_deref(),
        git_dir,
        sandbox_env: &project.config.sandbox_env,
    }
}

/// Stage 1: the workspace, where it is recorded, the prompt, and the command that runs the agent.
fn prepare(
    project: &Project,
    store: &Store,
    task: &Task,
    teacher: &dyn super::Teacher,
    ui: &dyn Observer,
) -> std::result::Result<Prepared, Stop> {
    let kind = provider_of(project, task);
    let logs = project.logs_dir();
    std::fs::create_dir_all(&logs).map_err(|e| Error::io(&logs, "create directory", e))?;
    let log_path = logs.join(format!("{}.jsonl", task.id));
    // Room for the outcome, taken now: a disk that fills while the agent works still has
    // space for what it did (see `kept`).
    kept::reserve(project, task.id);
    let workspace = prepare_workspace(project, store, task, ui)
        .map_err(|e| early(FailureReason::GitError, e.to_string()))?;
    let (branch, wt_path) = match (&workspace.worktree, &workspace.checkout) {
        (Some(wt), _) => (
            Some(wt.branch.as_str()),
            Some(wt.path.to_string_lossy().into_owned()),
        ),
        (None, Some(path)) => (None, Some(path.to_string_lossy().into_owned())),
        (None, None) => (None, None),
    };
    let base = workspace.worktree.as_ref().map(|wt| Base {
        branch: workspace.base_branch.clone(),
        commit: wt.base_commit.clone(),
    });
    store.set_run_location(
        task.id,
        branch,
        wt_path.as_deref(),
        &log_path.to_string_lossy(),
        base.as_ref(),
    )?;
    // The comments this improve task is given close when it completes (read before its prompt
    // is built, so one added meanwhile stays open for the next).
    let comments: Vec<i64> = if task.task_type == TaskType::Improve {
        crate::review::improve_comments(store, task)
            .map_err(|e| early(FailureReason::PromptError, e.to_string()))?
            .iter()
            .map(|c| c.id)
            .collect()
    } else {
        Vec::new()
    };
    let prompt = if task.resume_session_id.is_some() {
        resume_prompt(task)
    } else {
        let learnings = teacher.for_prompt(project, store, task);
        crate::review::task_for_prompt(project, store, task)
            .and_then(|shown| prompt::build_prompt(project, &shown, learnings.as_ref()))
            .map_err(|e| early(FailureReason::PromptError, e.to_string()))?
    };
    store.set_prompt_sent(task.id, &prompt)?;
    if !comments.is_empty() && task.resume_session_id.is_none() {
        store.comments_given_to(task.id, &comments)?;
    }
    let learnings_guard = super::agent_rules::LearningsFileGuard::before(
        &project.learnings_path(),
        workspace.dir == project.root,
    );
    let sandbox_kind = project.config.sandbox_for(kind);
    let request = AgentRequest {
        prompt: &prompt,
        model: task.model.as_deref().or(project.config.model.as_deref()),
        max_turns: project.config.max_turns,
        resume_session: task.resume_session_id.as_deref(),
    };
    let git_dir = sandbox::git_common_dir(&project.root, sandbox_kind);
    let place = place_of(project, task, kind, &workspace.dir, git_dir.clone());
    let mut agent = providers::invocation(kind, &project.config, &request);
    if let Some(left_out) = untrusted_agent_settings(project, kind, &workspace.dir, &mut agent)?
        && once(&SAID_LEFT_OUT)
    {
        ui.warn(&format!(
            "task {}: Claude Code runs without {left_out}, not trusted as it is now (a repository or an agent may have written it); read it, then run `gza trust`",
            task.id
        ));
    }
    let invocation = sandbox::wrap(sandbox_kind, &place, agent)
        .and_then(|inv| sandbox::preflight(sandbox_kind, &place, &inv).map(|()| inv))
        .map_err(|reason| {
            early(
                FailureReason::SandboxError,
                format!("sandbox {}: {reason}", sandbox_kind.as_str()),
            )
        })?;
    Ok(Prepared {
        kind,
        stderr_path: logs.join(crate::cleanup::stderr_log_name(task.id)),
        log_path,
        workspace,
        prompt,
        sandbox: sandbox_kind,
        invocation,
        learnings_guard,
        git_dir,
    })
}

/// A started agent: its process group and the threads that read and wait for it.
struct Running {
    pgid: i64,
    run_tag: String,
    exit: mpsc::Receiver<std::io::Result<std::process::ExitStatus>>,
    /// One message per output stream read to its end.
    drained: mpsc::Receiver<()>,
    streams: usize,
    parser: Arc<Mutex<Option<Box<dyn providers::StreamParser>>>>,
    progress: Arc<Mutex<Progress>>,
}

/// Stage 2: start the agent in its own process group, tagged so what escapes the group can be
/// found, with threads that feed it the prompt, read its output and wait for its exit.
fn spawn(
    project: &Project,
    store: &Store,
    task: &Task,
    prepared: &Prepared,
    ui: &dyn Observer,
) -> std::result::Result<Running, Stop> {
    let invocation = &prepared.invocation;
    let logs = create_logs(project, store, task, prepared)?;
    let run_tag = format!("{}-{}", process::own_pid(), task.id);
    let mut cmd = Command::new(&invocation.program);
    if prepared.sandbox == gza_core::config::SandboxKind::Bwrap {
        // bubblewrap passes its environment on: only what the agent needs crosses.
        cmd.env_clear().envs(sandbox::agent_environment(
            prepared.kind,
            &project.config.sandbox_env,
            std::env::var_os("HOME").map(PathBuf::from).as_deref(),
        ));
    }
    cmd.args(&invocation.args)
        .current_dir(&prepared.workspace.dir)
        .env("GZA_TASK_ID", task.id.to_string())
        .env("GZA_PROJECT_ROOT", &project.root)
        .env(process::RUN_TAG_VAR, &run_tag)
        .envs(invocation.env.iter().map(|(k, v)| (k, v)))
        .stdin(if invocation.prompt_on_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().map_err(|e| {
        early(
            FailureReason::AgentStart,
            format!(
                "cannot start `{}` ({}): {e}",
                invocation.program,
                providers::config_key(prepared.kind)
            ),
        )
    })?;
    let pgid = i64::from(child.id());
    let agent = ProcessId {
        pid: pgid,
        start: process::start_ticks(pgid),
    };
    store.set_agent_process(task.id, agent)?;
    ui.started(task, prepared.kind);

    if let Some(mut stdin) = child.stdin.take() {
        let text = prepared.prompt.clone();
        // A separate thread, so an agent that does not read its stdin cannot block gza.
        std::thread::spawn(move || {
            let _ = stdin.write_all(text.as_bytes());
        });
    }
    let progress = Arc::new(Mutex::new(Progress::default()));
    let stdout = child.stdout.take().expect("stdout is piped");
    let parser = Arc::new(Mutex::new(Some(providers::parser(prepared.kind))));
    let (drained_tx, drained) = mpsc::channel::<()>();
    let mut streams = 1;
    if let Some(stderr) = child.stderr.take() {
        streams += 1;
        let drained_tx = drained_tx.clone();
        let (file, redact) = (logs.stderr, logs.redact);
        let progress = Arc::clone(&progress);
        let parser = Arc::clone(&parser);
        std::thread::spawn(move || {
            copy_stderr(stderr, file, redact, &parser, &progress);
            let _ = drained_tx.send(());
        });
    }
    {
        let progress = Arc::clone(&progress);
        let parser = Arc::clone(&parser);
        let (log, redact) = (logs.stdout, logs.redact);
        std::thread::spawn(move || {
            if redact {
                pump_output(
                    stdout,
                    gza_core::redact::RedactingWriter::new(log),
                    &parser,
                    &progress,
                );
            } else {
                pump_output(stdout, log, &parser, &progress);
            }
            let _ = drained_tx.send(());
        });
    }
    let (exit_tx, exit) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = exit_tx.send(child.wait());
    });
    Ok(Running {
        pgid,
        run_tag,
        exit,
        drained,
        streams,
        parser,
        progress,
    })
}

/// How often a running agent's worker checks that the task is still its own.
const OWNED_CHECK: Duration = Duration::from_secs(2);

/// How the agent ended.
struct Ended {
    exit: Option<std::process::ExitStatus>,
    /// Why gza ended it (a timeout, a stop request), if it did.
    forced: Option<FailureReason>,
    report: providers::AgentReport,
}

/// Stage 3: wait for the agent, showing and saving its progress, ending it on a timeout or a
/// stop request; then end what it left running and read the rest of its output, for a bounded
/// time.
fn wait(
    project: &Project,
    store: &Store,
    worker: WorkerId,
    task: &Task,
    running: Running,
    started: Instant,
    ui: &dyn Observer,
) -> Ended {
    let Running {
        pgid,
        run_tag,
        exit: exit_rx,
        drained,
        streams,
        parser,
        progress,
    } = running;
    let timeout = (project.config.timeout_minutes > 0.0)
        .then(|| Duration::from_secs_f64(project.config.timeout_minutes * 60.0));
    let mut forced: Option<FailureReason> = None;
    let mut last_saved = Progress::default();
    let mut last_save_at = Instant::now();
    let mut last_retry: Option<providers::Retry> = None;
    let mut last_owned_check = Instant::now();
    let exit = loop {
        match exit_rx.recv_timeout(Duration::from_millis(100)) {
            Ok(status) => break status.ok(),
            Err(mpsc::RecvTimeoutError::Disconnected) => break None,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if forced.is_none() {
            if process::stop_requested() {
                forced = Some(FailureReason::Killed);
            } else if timeout.is_some_and(|t| started.elapsed() >= t) {
                forced = Some(FailureReason::Timeout);
            } else if last_owned_check.elapsed() >= OWNED_CHECK {
                // `gza kill` on another machine, or the others reaped this task while this
                // worker could not reach the database: its agent stops here too. (A database
                // that cannot be reached now says nothing: the agent goes on.)
                last_owned_check = Instant::now();
                // Asked without waiting out a lost connection: watching the agent goes on.
                let owned = store.quickly(|| store.still_running_under(task.id, worker));
                if matches!(owned, Ok(false)) {
                    tracing::warn!("the task is no longer this worker's; ending its agent");
                    forced = Some(FailureReason::Killed);
                }
            }
            if forced.is_some() {
                let grace = KILL_GRACE;
                let tag = run_tag.clone();
                std::thread::spawn(move || {
                    process::terminate_group(pgid, grace);
                    process::terminate_tagged(&tag, grace);
                });
            }
        }
        let now = progress.lock().expect("progress lock").clone();
        // An agent retrying a failing API call can be silent for minutes: each retry is said,
        // on the status line (with the progress) and as a line of its own, and logged.
        if let Some(retry) = now
            .retry
            .as_ref()
            .filter(|r| last_retry.as_ref() != Some(*r))
        {
            tracing::warn!(
                task = %task.id,
                attempt = retry.attempt,
                max = retry.max,
                error = %retry.error,
                "the agent is retrying a failed API call"
            );
            ui.warn(&format!(
                "task {}: the agent's {}",
                task.id,
                retry.describe()
            ));
        }
        if now.retry != last_retry {
            last_retry = now.retry.clone();
        }
        ui.progress(
            task.id,
            Status {
                elapsed: started.elapsed(),
                progress: now.clone(),
            },
        );
        if now != last_saved && last_save_at.elapsed() >= Duration::from_secs(1) {
            let _ = store.quickly(|| {
                store.set_progress(task.id, now.turns, now.cost_usd, now.session_id.as_deref())
            });
            last_saved = now;
            last_save_at = Instant::now();
        }
    };
    // Whatever the agent left running goes with it: its group, and what left the group.
    process::terminate_group(pgid, Duration::from_millis(500));
    process::terminate_tagged(&run_tag, Duration::from_millis(500));
    // Read what is left of the output, for a bounded time.
    let deadline = Instant::now() + DRAIN_AFTER_EXIT;
    for _ in 0..streams {
        if drained
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .is_err()
        {
            break;
        }
    }
    let parser = parser
        .lock()
        .expect("parser lock")
        .take()
        .expect("the parser is taken once");
    let report = parser.finish(exit.is_some_and(|s| s.success()));
    Ended {
        exit,
        forced,
        report,
    }
}

/// Stage 4: the outcome the agent's end amounts to. Everything gza stores of agent text is
/// redacted (the raw logs too, as they are written, unless `redact_raw_logs: false`).
fn judge(task_type: TaskType, ended: &Ended, stderr_path: &Path, timeout_minutes: f64) -> Outcome {
    let report = &ended.report;
    let exit_ok = ended.exit.is_some_and(|s| s.success());
    let output = report
        .output
        .as_deref()
        .map(gza_core::redact::redact_secrets);
    let result = match (&ended.forced, &report.verdict) {
        (Some(reason), _) => TaskResult::failed(reason.clone()),
        (None, Verdict::Success) => TaskResult::Completed {
            review_verdict: (task_type == TaskType::Review)
                .then(|| output.as_deref().and_then(crate::review::parse_verdict))
                .flatten(),
        },
        (None, Verdict::Failed { reason, .. }) => TaskResult::failed(reason.clone()),
        (None, Verdict::NoResult) if exit_ok => TaskResult::failed(FailureReason::NoResult),
        (None, Verdict::NoResult) => TaskResult::failed(FailureReason::AgentExit),
    };
    let failed = matches!(result, TaskResult::Failed { .. });
    let mut outcome = Outcome {
        output,
        session_id: report.session_id.clone(),
        usage: Usage {
            cost_usd: report.cost_usd,
            input_tokens: report.input_tokens,
            output_tokens: report.output_tokens,
            num_turns: report.num_turns,
            duration_seconds: None,
        },
        ..Outcome::new(result)
    };
    if failed {
        // The stderr tail and the agent's own failure line are agent text too: redacted alike.
        let detail = gza_core::redact::redact_secrets(&failure_detail(
            &report.verdict,
            ended.forced.as_ref(),
            ended.exit,
            stderr_path,
            timeout_minutes,
        ));
        outcome.output = Some(match outcome.output.take() {
            Some(out) if !out.trim().is_empty() => format!("{out}\n\ngza: {detail}"),
            _ => format!("gza: {detail}"),
        });
    }
    outcome
}

/// The section a learning with no section of its own goes to.
fn catch_all_section(project: &Project) -> &str {
    project
        .config
        .learnings
        .sections
        .last()
        .map_or("General", |s| s)
}

/// The commit message of a task's changes.
fn commit_message(task: &Task, completed: bool) -> String {
    let first_line = task.prompt.lines().next().unwrap_or("").trim();
    format!(
        "gza task {}{}: {}\n\nTask-Id: {}",
        task.id,
        if completed { "" } else { " (unfinished)" },
        gza_core::text::one_line(first_line, 60),
        task.id
    )
}

/// Stage 5a: commit the agent's changes on the task's branch and measure them. A git failure
/// makes a completed task fail `GIT_ERROR` and returns a warning; a full disk is returned as an
/// error instead, so the outcome can wait for space rather than become a different one. Running
/// it again is harmless: with nothing left to commit it only measures the diff.
pub(super) fn commit_stage(
    commit: &kept::PendingCommit,
    outcome: &mut Outcome,
) -> Result<Option<String>> {
    let committed = worktree::commit_all(&commit.worktree, &commit.message)
        .and_then(|_| worktree::diff_stats(&commit.worktree, &commit.base_commit));
    match committed {
        Ok(stats) => {
            tracing::info!(worktree = %commit.worktree.display(), changes = %stats, "committed");
            outcome.diff_stats = Some(stats);
            Ok(None)
        }
        Err(e) if e.is_out_of_space() => Err(e),
        Err(e @ Error::UnsafeCheckout { .. }) => {
            mark_unsafe(outcome, &e);
            Ok(Some(e.to_string()))
        }
        Err(e) => {
            tracing::warn!(worktree = %commit.worktree.display(), error = %e, "commit failed");
            if matches!(outcome.result, TaskResult::Completed { .. }) {
                outcome.result = TaskResult::failed(FailureReason::GitError);
            }
            Ok(Some(format!("could not commit the agent's changes: {e}")))
        }
    }
}

/// Stage 5b (team mode): push the task's branch to `origin` after its commit, unless the agent
/// made its worktree unsafe (nothing of it leaves the machine then). The warning to show when
/// the push failed; the outcome is never changed.
pub(super) fn push_after_commit(
    project: &Project,
    store: &Store,
    task: &Task,
    worker: WorkerId,
    outcome: &Outcome,
    branch: Option<&str>,
) -> Option<String> {
    let branch = branch?;
    if outcome.result.failure_reason() == Some(&FailureReason::UnsafeWorktree) {
        return None;
    }
    crate::remote::push_branch(project, store, task.id, branch, false, Some(worker))
}

/// The task fails `UNSAFE_WORKTREE`, whatever the agent said: it replaced its worktree's `.git`.
fn mark_unsafe(outcome: &mut Outcome, e: &Error) {
    outcome.result = TaskResult::failed(FailureReason::UnsafeWorktree);
    let line = format!("gza: {e}");
    outcome.output = Some(match outcome.output.take() {
        Some(out) if !out.trim().is_empty() => format!("{out}\n\n{line}"),
        _ => line,
    });
}

/// How long a finished task's outcome waits for free space before gza leaves it on disk for
/// later (the next `gza work` records it).
const SPACE_WAIT: Duration = Duration::from_secs(600);

/// Stage 5: keep the outcome beside the logs, commit, record it in the database, and drop the
/// kept copy. A full disk is waited out (bounded, and a stop request ends the wait); what
/// cannot be recorded stays in `.gza/logs/ID.outcome.json`, which the next `gza work` records
/// instead of declaring the worker dead.
fn record(
    project: &Project,
    store: &Store,
    worker: WorkerId,
    task: &Task,
    mut ending: kept::Ending,
    started: Instant,
    ui: &dyn Observer,
) -> Result<Finished> {
    let status = ending.outcome.result.status().as_str();
    let deadline = Instant::now() + SPACE_WAIT;
    let mut waiting = false;
    let mut wait_for_space = |e: &Error| -> bool {
        if !e.is_out_of_space() || process::stop_requested() || Instant::now() >= deadline {
            return false;
        }
        if !waiting {
            ui.warn(&format!(
                "task {} {status}, but the disk is full ({e}); waiting for free space to record it \
                 (Ctrl-C stops waiting)",
                task.id
            ));
            waiting = true;
        }
        std::thread::sleep(Duration::from_millis(500));
        true
    };
    let mut kept_at = kept::keep(project, task, worker, &ending);
    while let Err(e) = &kept_at {
        if !wait_for_space(e) {
            break;
        }
        kept_at = kept::keep(project, task, worker, &ending);
    }
    let not_recorded = |e: Error, kept_at: &Result<PathBuf>| -> Error {
        let shown = match kept_at {
            Ok(path) => format!(
                "it is kept in {}; {}",
                path.strip_prefix(&project.root).unwrap_or(path).display(),
                crate::retry_advice(&e)
            ),
            Err(k) => format!(
                "it could not be kept either ({k}); the agent's output is in .gza/logs/{}.jsonl",
                task.id
            ),
        };
        Error::NotRecorded(format!(
            "task {} {status}, but its outcome could not be recorded: {e}; {shown}",
            task.id
        ))
    };
    if let Some(commit) = &ending.commit {
        loop {
            match commit_stage(commit, &mut ending.outcome) {
                Ok(None) => break,
                Ok(Some(warning)) => {
                    ui.warn(&format!("task {}: {warning}", task.id));
                    break;
                }
                Err(e) if wait_for_space(&e) => {}
                Err(e) => return Err(not_recorded(e, &kept_at)),
            }
        }
        // Before the outcome is recorded, so a clone that sees the task finished finds its
        // branch on origin.
        if let Some(warning) = push_after_commit(
            project,
            store,
            task,
            worker,
            &ending.outcome,
            ending.branch.as_deref(),
        ) {
            ui.warn(&format!("task {}: {warning}", task.id));
        }
    }
    if ending.report {
        loop {
            match write_report(project, task, ending.outcome.output.as_deref()) {
                Ok(file) => ending.outcome.report_file = file,
                Err(e) if wait_for_space(&e) => continue,
                // Without a report file the output is still in the database.
                Err(e) => ui.warn(&format!("task {}: {e}", task.id)),
            }
            break;
        }
    }
    // An agent (or anyone) that deleted or replaced .gza/gza.db would make this write vanish
    // with the old file while gza reports success: the kept outcome stays where it is.
    if let Err(replaced) = store.ensure_still_at_path() {
        let shown = match &kept_at {
            Ok(path) => format!(
                "its outcome is kept in {}, the agent's output in .gza/logs/",
                path.strip_prefix(&project.root).unwrap_or(path).display()
            ),
            Err(e) => format!(
                "and its outcome could not be kept either ({e}); the agent's output is in .gza/logs/"
            ),
        };
        return Err(Error::DatabaseReplaced(format!(
            "{replaced}; task {} ({status}) was not recorded there — {shown}",
            task.id,
        )));
    }
    let report = loop {
        let written = store.finish_task(task.id, worker, &ending.outcome, |tx, done| {
            complete::on_task_finished(tx, project, done)
        });
        match written {
            Ok(report) => break report,
            Err(e) if wait_for_space(&e) => {}
            Err(e) => return Err(not_recorded(e, &kept_at)),
        }
    };
    kept::drop_kept(project, task.id);
    if let Some(err) = &report.hook_error {
        complete::log_hook_error(project, task.id, err);
    }
    if report.fenced {
        ui.warn(&format!(
            "task {}: other workers reaped it while this worker could not renew its lease; its result was not recorded (the agent's output is in .gza/logs/)",
            task.id
        ));
    }
    let stored = store.get_task(task.id)?;
    tracing::info!(status = %stored.status(), "recorded");
    let finished = Finished {
        id: task.id,
        state: stored.state,
        usage: stored.usage,
        duration: started.elapsed(),
        branch: ending.branch,
        diff_stats: stored.diff_stats,
    };
    ui.finished(&finished);
    Ok(finished)
}

/// The agent's raw logs, created for this run.
struct Logs {
    /// Where its stdout is copied.
    stdout: BufWriter<std::fs::File>,
    /// Whether what is copied is redacted on the way.
    redact: bool,
    /// Where its stderr is copied (by [`copy_stderr`], which also reads it for retries).
    stderr: std::fs::File,
}

/// Create the agent's logs (`ID.jsonl`, `ID.stderr.log`), and record whether they are redacted
/// as they are written (`redact_raw_logs`), for `gza log --raw` to say.
fn create_logs(project: &Project, store: &Store, task: &Task, prepared: &Prepared) -> Result<Logs> {
    // Never opened through whatever is at that name: a FIFO or link planted there is replaced.
    let create = |path: &Path| {
        gza_core::fsutil::create_regular(path).map_err(|e| Error::io(path, "create", e))
    };
    let stdout = BufWriter::new(create(&prepared.log_path)?);
    let stderr = create(&prepared.stderr_path)?;
    let redact = project.config.redact_raw_logs;
    store.set_log_redacted(task.id, redact)?;
    Ok(Logs {
        stdout,
        redact,
        stderr,
    })
}

/// Longest stderr line the parser is shown; the rest of a longer one is only logged.
const MAX_STDERR_LINE: usize = 8 * 1024;

/// Copy the agent's stderr to its log as it comes (secrets redacted unless `redact_raw_logs:
/// false`), and show each line to the parser, which may find the agent retrying its API there.
fn copy_stderr(
    mut from: impl Read,
    to: std::fs::File,
    redact: bool,
    parser: &Mutex<Option<Box<dyn providers::StreamParser>>>,
    progress: &Mutex<Progress>,
) {
    let mut log: Box<dyn Write> = if redact {
        Box::new(gza_core::redact::RedactingWriter::new(BufWriter::new(to)))
    } else {
        Box::new(BufWriter::new(to))
    };
    let mut buf = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let _ = log.write_all(&buf[..n]);
        let _ = log.flush();
        for &b in &buf[..n] {
            if b != b'\n' {
                if line.len() < MAX_STDERR_LINE {
                    line.push(b);
                }
                continue;
            }
            if let Some(parser) = parser.lock().expect("parser lock").as_mut() {
                parser.stderr_line(String::from_utf8_lossy(&line).trim_end_matches('\r'));
                *progress.lock().expect("progress lock") = parser.progress();
            }
            line.clear();
        }
    }
    // Dropping the writer finishes it (a redacting writer writes what it held back).
    drop(log);
}

/// Copy the agent's stdout to the log file as it comes (through the redactor unless
/// `redact_raw_logs: false`), and feed complete lines to the parser. Stops when the stream ends
/// or the parser has been taken away (gza stopped waiting).
fn pump_output(
    mut stdout: impl Read,
    mut log: impl Write,
    parser: &Mutex<Option<Box<dyn providers::StreamParser>>>,
    progress: &Mutex<Progress>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    let mut overflow = false;
    // False once gza no longer reads.
    let take_line = |line: &mut Vec<u8>| -> bool {
        let mut guard = parser.lock().expect("parser lock");
        let Some(parser) = guard.as_mut() else {
            return false;
        };
        let text = String::from_utf8_lossy(line);
        parser.line(text.trim_end_matches('\r'));
        *progress.lock().expect("progress lock") = parser.progress();
        line.clear();
        true
    };
    loop {
        let n = match stdout.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let _ = log.write_all(&buf[..n]);
        let _ = log.flush();
        for &byte in &buf[..n] {
            if byte == b'\n' {
                if !take_line(&mut line) {
                    return;
                }
                overflow = false;
            } else if line.len() < MAX_PARSED_LINE {
                line.push(byte);
            } else if !overflow {
                overflow = true;
            }
        }
    }
    if !line.is_empty() {
        take_line(&mut line);
    }
}

fn failure_detail(
    verdict: &Verdict,
    forced: Option<&FailureReason>,
    exit: Option<std::process::ExitStatus>,
    stderr_path: &Path,
    timeout_minutes: f64,
) -> String {
    use std::os::unix::process::ExitStatusExt;
    let exit_text = match exit {
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            _ => "unknown exit".into(),
        },
        None => "exit status unknown".into(),
    };
    let mut detail = match (forced, verdict) {
        (Some(FailureReason::Timeout), _) => {
            format!("timed out after {timeout_minutes} minutes; the agent was stopped")
        }
        (Some(_), _) => "stopped by the user; the agent was ended".into(),
        (None, Verdict::Failed { detail, .. }) => format!("the agent reported failure: {detail}"),
        (None, _) => format!("the agent ended without a final result ({exit_text})"),
    };
    let stderr_tail = tail_of_file(stderr_path, 600);
    if !stderr_tail.is_empty() {
        detail.push_str("; stderr: ");
        detail.push_str(&stderr_tail);
    }
    detail
}

/// About the last `max` characters of a file as one line of text, secrets redacted. More is read
/// than kept, and redacted before the cut, so a key the window starts inside is not half-kept.
fn tail_of_file(path: &Path, max: usize) -> String {
    use std::io::{Seek, SeekFrom};
    let Ok(mut f) = gza_core::fsutil::open_regular(path, std::fs::OpenOptions::new().read(true))
    else {
        return String::new();
    };
    let window = (max + providers::REDACTION_MARGIN) as u64;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(window)));
    let mut bytes = Vec::new();
    let _ = f.take(window).read_to_end(&mut bytes);
    let flat = gza_core::text::one_line(
        &gza_core::redact::redact_secrets(&String::from_utf8_lossy(&bytes)),
        usize::MAX,
    );
    gza_core::text::tail(&flat, max).to_string()
}

/// Save an explore/plan/review task's output as its report; returns the path (`None` without
/// output).
pub(super) fn write_report(
    project: &Project,
    task: &Task,
    output: Option<&str>,
) -> Result<Option<String>> {
    let Some(output) = output else {
        return Ok(None);
    };
    let dir = project.reports_dir();
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, "create directory", e))?;
    let path = dir.join(format!(
        "{}-{}.md",
        task.id,
        worktree::slugify(&task.prompt)
    ));
    let text = format!(
        "# Task {} ({})\n\n{}\n",
        task.id,
        task.task_type,
        output.trim_end()
    );
    gza_core::fsutil::write_atomically(&path, text.as_bytes())?;
    Ok(Some(
        path.strip_prefix(&project.root)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    use super::*;

    fn ended(exit_code: i32, forced: Option<FailureReason>, verdict: Verdict) -> Ended {
        Ended {
            exit: Some(std::process::ExitStatus::from_raw(exit_code << 8)),
            forced,
            report: providers::AgentReport {
                verdict,
                output: Some("the answer".into()),
                session_id: None,
                model: None,
                cost_usd: Some(0.5),
                input_tokens: None,
                output_tokens: None,
                num_turns: Some(2),
            },
        }
    }

    fn judged(ended: &Ended) -> Outcome {
        judge(TaskType::Implement, ended, Path::new("/nonexistent"), 30.0)
    }

    #[test]
    fn a_reported_success_completes_with_the_figures() {
        let o = judged(&ended(0, None, Verdict::Success));
        assert_eq!(
            o.result,
            TaskResult::Completed {
                review_verdict: None
            }
        );
        assert_eq!(o.output.as_deref(), Some("the answer"));
        assert_eq!((o.usage.cost_usd, o.usage.num_turns), (Some(0.5), Some(2)));
    }

    #[test]
    fn gza_ending_the_agent_wins_over_what_it_said() {
        let o = judged(&ended(0, Some(FailureReason::Timeout), Verdict::Success));
        assert_eq!(o.result, TaskResult::failed(FailureReason::Timeout));
        assert!(
            o.output
                .unwrap()
                .ends_with("gza: timed out after 30 minutes; the agent was stopped")
        );
    }

    #[test]
    fn no_final_result_depends_on_the_exit_status() {
        let clean = judged(&ended(0, None, Verdict::NoResult));
        assert_eq!(clean.result, TaskResult::failed(FailureReason::NoResult));
        let crashed = judged(&ended(3, None, Verdict::NoResult));
        assert_eq!(crashed.result, TaskResult::failed(FailureReason::AgentExit));
        assert!(crashed.output.unwrap().contains("exit status 3"));
    }

    #[test]
    fn the_agents_failure_line_is_stored_redacted() {
        let key = format!("sk-ant-api03-{}", "a".repeat(90));
        let o = judged(&ended(
            1,
            None,
            Verdict::Failed {
                reason: FailureReason::AgentError,
                detail: format!("bad key {key}"),
            },
        ));
        assert_eq!(o.result, TaskResult::failed(FailureReason::AgentError));
        let out = o.output.unwrap();
        assert!(out.contains("the agent reported failure"), "{out}");
        assert!(!out.contains(&key), "{out}");
    }
}
