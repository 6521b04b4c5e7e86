//! `gza watch`: the autonomous loop. It runs the queue and carries every code task's branch from
//! its first commit to its merge: a review for each finished implement or improve task, improve
//! tasks while the verdict is CHANGES_REQUESTED (at most `watch.max_rounds`), and, once a review
//! approves, the verify gate and the merge (or a pull request). It stops when nothing in its
//! scope can progress, or when asked to (Ctrl-C).
//!
//! It keeps no state of its own: every decision is read from the tasks, their reviews and the
//! verify runs, so a watch that was stopped at any point is resumed by the next one. The parts
//! are the ones `gza work`, `gza review`, `gza improve`, `gza verify`, `gza rebase` and
//! `gza merge` use (`crate::work`, `review`, `verify`, `branch`).
//!
//! - **Failures.** A task watch ran that failed is run again once it is worth it (a retry, or a
//!   resumption of the agent's session after a timeout); one that fails the same way twice in a
//!   row, reaches `watch.max_attempts`, or failed in a way only a person can fix (a bad prompt, an
//!   unsafe worktree, `gza kill`) is left for a person, and said so. A task a dead worker left
//!   (`WORKER_DIED`) is resumed the same way.
//! - **Providers.** An agent failure that points at its provider (it cannot start, exits with an
//!   error, reports an API error) pauses that provider's tasks for `watch.backoff_seconds`,
//!   doubling with each failure in a row; the other providers' tasks go on meanwhile.
//! - **Landing.** Never over uncommitted changes in the project's checkout, never into a branch
//!   other than the task's base, never onto a base that moved without rebasing onto it and
//!   verifying again.
//! - **Ctrl-C.** The running agent is ended (its task fails `KILLED`, as in `gza work`) and a
//!   task that continues it is queued at once; a verify run is ended and nothing recorded.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::branch::{self, MergeOptions, Merged};
use crate::review::{self, QueueOptions};
use crate::verify::{self, Verified};
use crate::{Finished, Observer, Teacher, WorkOptions, provider_of};
use gza_core::config::{LandMode, ProviderKind};
use gza_core::error::{Error, Result};
use gza_core::process;
use gza_core::project::Project;
use gza_core::task::{FailureReason, ReviewVerdict, Task, TaskId, TaskStatus, TaskType};
use gza_core::verify::{Verification, VerifyState};
use gza_core::worktree;
use gza_store::{NewTask, PendingCounts, Store};

/// Actions on one branch in one run past which watch gives up on it: a guard against a loop
/// that makes no progress (each pass acts at most once per branch).
const MAX_ACTIONS_PER_BRANCH: u32 = 64;
/// Ready tasks looked at per pass when choosing what to run (past those of paused providers).
const PICKUP_WINDOW: u32 = 256;
/// Consecutive start-up failures of one provider's agent (its binary missing) after which
/// watch leaves that provider's tasks pending for this run.
const MAX_START_FAILURES: u32 = 2;

/// Which tasks watch looks after.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Only tasks in this group (reviews and improve tasks inherit their task's group).
    pub group: Option<String>,
    /// Only tasks with any of these tags (all of them, with `all_tags`); a review, improve task
    /// or retry carries the tags of the task it is queued from, so it stays in scope.
    pub tags: Vec<gza_core::task::Tag>,
    pub all_tags: bool,
}

impl Scope {
    /// The same scope, as the store reads it.
    fn store(&self) -> gza_store::Scope<'_> {
        gza_store::Scope {
            group: self.group.as_deref(),
            tags: &self.tags,
            all_tags: self.all_tags,
        }
    }
}

/// What `gza watch` was asked to do.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    pub scope: Scope,
    /// Agents running at once.
    pub parallel: usize,
    /// Learnings for each prompt, and regeneration after each task.
    pub teacher: Arc<dyn Teacher>,
}

/// Something watch did or decided, shown as one line.
#[derive(Debug)]
pub enum Event<'a> {
    /// At the start: what is in scope.
    Start {
        branches: usize,
        ready: i64,
    },
    QueuedReview {
        id: TaskId,
        of: TaskId,
        branch: &'a str,
    },
    QueuedImprove {
        id: TaskId,
        owner: TaskId,
        review: TaskId,
        round: u32,
        max: u32,
        /// The review approved, but the verify failed.
        after_verify: bool,
    },
    /// A failed task is run again.
    Retrying {
        failed: TaskId,
        new: TaskId,
        reason: &'a FailureReason,
        /// Its agent session continues.
        resume: bool,
    },
    /// A task ended by the stop request; `continued_by` carries it on at the next watch.
    Interrupted {
        id: TaskId,
        continued_by: TaskId,
    },
    /// A verify run starts (it may take minutes).
    Verifying {
        owner: TaskId,
        branch: &'a str,
    },
    Verified {
        owner: TaskId,
        branch: &'a str,
        verification: &'a Verification,
    },
    Rebased {
        owner: TaskId,
        branch: &'a str,
        onto: &'a str,
    },
    Merged {
        owner: TaskId,
        merged: &'a Merged,
    },
    /// A branch found already in its base (merged outside gza), recorded as merged.
    FoundMerged {
        owner: TaskId,
        branch: &'a str,
        into: &'a str,
    },
    PullRequest {
        owner: TaskId,
        url: &'a str,
    },
    /// A provider's tasks are paused.
    BackingOff {
        provider: ProviderKind,
        seconds: u64,
        why: &'a str,
    },
    /// Nothing else to do but wait for a paused provider.
    Waiting {
        provider: ProviderKind,
        seconds: u64,
    },
    /// Left for a person: a task or branch watch will not carry further, and why.
    Attention {
        id: TaskId,
        why: &'a str,
    },
    /// A provider's agent cannot start: its tasks are left pending for this run.
    ProviderBroken {
        provider: ProviderKind,
        why: &'a str,
    },
}

/// What `gza watch` shows: the runner's task lines and watch's own events.
pub trait WatchObserver: Observer {
    fn event(&self, event: &Event);
}

/// A branch landed.
#[derive(Debug, Clone)]
pub enum Landed {
    Merged { owner: TaskId, merged: Merged },
    PullRequest { owner: TaskId, url: String },
}

/// What a watch did, for its summary.
#[derive(Debug, Default)]
pub struct Summary {
    pub finished: Vec<Finished>,
    /// Verify runs recorded, with whether they passed.
    pub verified: Vec<(TaskId, bool)>,
    pub landed: Vec<Landed>,
    /// Tasks and branches left for a person, each with why (in the order found).
    pub attention: Vec<(TaskId, String)>,
    /// Providers whose agent could not start, with the last error: their tasks were left
    /// pending.
    pub broken_providers: Vec<(ProviderKind, String)>,
    /// Stopped by a stop request (Ctrl-C).
    pub interrupted: bool,
    /// Pending tasks of the scope left: ready to run (a paused or broken provider's), and
    /// waiting on a task that did not complete.
    pub left: PendingCounts,
}

/// A paused provider and when its pause ends.
type Pause = (ProviderKind, Instant);

/// One provider's pause.
#[derive(Debug)]
struct Backoff {
    /// Failures in a row.
    failures: u32,
    until: Instant,
}

/// What a run remembers between passes (nothing of it is needed by the next run).
struct Run<'a> {
    project: &'a Project,
    store: Store,
    options: &'a WatchOptions,
    ui: &'a dyn WatchObserver,
    summary: Summary,
    /// Tasks and branches left for a person, by id (reported once).
    parked: BTreeMap<TaskId, String>,
    backoff: HashMap<ProviderKind, Backoff>,
    /// Providers whose agent cannot start: failures in a row, and the last error.
    start_failures: HashMap<ProviderKind, (u32, String)>,
    actions: HashMap<TaskId, u32>,
    /// Branches whose merge outside gza was looked for in this run.
    checked_merged: std::collections::HashSet<TaskId>,
}

/// Run the loop until nothing in scope can progress or a stop is requested.
pub fn watch(project: &Project, options: &WatchOptions, ui: &dyn WatchObserver) -> Result<Summary> {
    let store = Store::open_project(project)?;
    let scope = options.scope.store();
    let branches = store.open_branches(scope)?.len();
    let ready = store.pending_counts_capped(scope, 10_000)?.ready;
    ui.event(&Event::Start { branches, ready });
    let mut run = Run {
        project,
        store,
        options,
        ui,
        summary: Summary::default(),
        parked: BTreeMap::new(),
        backoff: HashMap::new(),
        start_failures: HashMap::new(),
        actions: HashMap::new(),
        checked_merged: std::collections::HashSet::new(),
    };
    let mut work_errors = 0;
    loop {
        if process::stop_requested() {
            break;
        }
        let acted = run.advance()?;
        if process::stop_requested() {
            break;
        }
        let (chosen, wait) = run.choose()?;
        if !chosen.is_empty() {
            let n = chosen.len();
            let work = WorkOptions {
                ids: chosen,
                count: Some(n),
                parallel: n,
                group: None,
                tags: Vec::new(),
                all_tags: false,
                teacher: Arc::clone(&options.teacher),
                watch: false,
            };
            match crate::work(project, &work, ui) {
                Ok(finished) => {
                    work_errors = 0;
                    for f in &finished {
                        run.on_finished(f)?;
                    }
                    run.summary.finished.extend(finished);
                }
                // Another worker took a chosen task first, say: the next pass sees why. A
                // fault that repeats is returned.
                Err(e) => {
                    work_errors += 1;
                    if work_errors >= 3 {
                        return Err(e);
                    }
                    ui.warn(&e.to_string());
                }
            }
            continue;
        }
        if acted {
            continue;
        }
        if let Some((provider, until)) = wait {
            let seconds = until.saturating_duration_since(Instant::now()).as_secs() + 1;
            ui.event(&Event::Waiting { provider, seconds });
            while Instant::now() < until && !process::stop_requested() {
                std::thread::sleep(Duration::from_millis(100));
            }
            continue;
        }
        break;
    }
    run.summary.interrupted = process::stop_requested();
    run.summary.left = run.store.pending_counts_capped(scope, 10_000)?;
    Ok(run.summary)
}

impl Run<'_> {
    fn scope(&self) -> gza_store::Scope<'_> {
        self.options.scope.store()
    }

    /// Leave `id` for a person, saying why (once).
    fn park(&mut self, id: TaskId, why: String) {
        if self.parked.contains_key(&id) {
            return;
        }
        self.ui.event(&Event::Attention { id, why: &why });
        self.summary.attention.push((id, why.clone()));
        self.parked.insert(id, why);
    }

    /// Leave the branch of `owner` for a person without saying so again: what stopped it (a task
    /// of its own) was said already.
    fn park_quietly(&mut self, owner: TaskId, because_of: TaskId) {
        let why = format!("see task {because_of}");
        self.parked.entry(owner).or_insert(why);
    }

    /// Count an action on the branch of `owner`; false (and the branch parked) past the guard.
    fn count_action(&mut self, owner: TaskId) -> bool {
        let n = self.actions.entry(owner).or_insert(0);
        *n += 1;
        if *n > MAX_ACTIONS_PER_BRANCH {
            self.park(
                owner,
                format!("watch acted {MAX_ACTIONS_PER_BRANCH} times on task {owner}'s branch without landing it; look at `gza show {owner}`"),
            );
            return false;
        }
        true
    }

    fn start_failures_exhausted(&self, kind: ProviderKind) -> bool {
        self.start_failures
            .get(&kind)
            .is_some_and(|(n, _)| *n >= MAX_START_FAILURES)
    }

    // ---- deciding ------------------------------------------------------------------------

    /// One pass over the scope: follow up what dead workers left, then move each open branch
    /// one step. True when something was done.
    fn advance(&mut self) -> Result<bool> {
        let mut acted = false;
        for task in self
            .store
            .failed_without_follow_up(self.scope(), &FailureReason::WorkerDied)?
        {
            if self.parked.contains_key(&task.id) || self.landed_already(&task)? {
                continue;
            }
            acted |= self.follow_up_failure(&task)?;
        }
        let open = self.store.open_branches(self.scope())?;
        if open.is_empty() {
            return Ok(acted);
        }
        // Every branch's tip in one git process.
        let tips = worktree::branch_tips(&self.project.root);
        for owner in open {
            if process::stop_requested() {
                break;
            }
            if self.parked.contains_key(&owner.id) {
                continue;
            }
            let Some(tip) = owner.branch.as_ref().and_then(|b| tips.get(b)) else {
                // Deleted (by hand, or after a merge elsewhere): nothing of it left to carry.
                continue;
            };
            if owner.base_commit() == Some(tip.as_str()) {
                // It committed nothing: said when it happened in this run, else left alone.
                if self.summary.finished.iter().any(|f| f.id == owner.id) {
                    let branch = owner.branch.clone().unwrap_or_default();
                    self.park(
                        owner.id,
                        format!(
                            "task {} committed nothing on {branch}; there is nothing to review or merge",
                            owner.id
                        ),
                    );
                }
                continue;
            }
            if self.merged_elsewhere(&owner, tip, &tips)? {
                continue;
            }
            acted |= self.advance_branch(&owner)?;
        }
        Ok(acted)
    }

    /// Whether the branch of `owner` is already in its base (merged outside gza: a pull request
    /// merged on the forge, a `git merge` by hand); then the merge is recorded, and watch leaves
    /// it. Asked once per branch and run.
    fn merged_elsewhere(
        &mut self,
        owner: &Task,
        tip: &str,
        tips: &HashMap<String, String>,
    ) -> Result<bool> {
        if !self.checked_merged.insert(owner.id) {
            return Ok(false);
        }
        let Some((base, base_tip)) = owner
            .base_branch()
            .and_then(|b| tips.get(b).map(|t| (b, t)))
        else {
            return Ok(false);
        };
        let merged = gza_core::git::succeeds(
            &self.project.root,
            &["merge-base", "--is-ancestor", tip, base_tip],
        );
        if merged {
            self.store.record_merge(owner.id, base)?;
            self.ui.event(&Event::FoundMerged {
                owner: owner.id,
                branch: owner.branch.as_deref().unwrap_or_default(),
                into: base,
            });
        }
        Ok(merged)
    }

    /// Whether the branch a failed code task or review worked on was merged meanwhile (then
    /// there is nothing to retry).
    fn landed_already(&self, task: &Task) -> Result<bool> {
        let subject = match task.task_type {
            TaskType::Review => match review::reviewed_task(&self.store, task)? {
                Some(t) => t,
                None => return Ok(false),
            },
            _ => task.clone(),
        };
        if !subject.task_type.changes_code() {
            return Ok(false);
        }
        let owner = review::branch_owner(&self.store, &subject)?;
        Ok(owner.merged.is_some() || owner.pr_url.is_some())
    }

    /// Move the branch made by `owner` one step; true when something was done.
    fn advance_branch(&mut self, owner: &Task) -> Result<bool> {
        let id = owner.id;
        let improves = self.store.improves_of_branch(id)?;
        let reviews = self.store.reviews_of_branch(id)?;
        let unfinished =
            |t: &Task| matches!(t.status(), TaskStatus::Pending | TaskStatus::InProgress);
        // A task of the branch is queued or running: the runner's turn.
        if improves.iter().chain(&reviews).any(unfinished) {
            return Ok(false);
        }
        if let Some(last) = improves.last()
            && last.status() != TaskStatus::Completed
        {
            if self.parked.contains_key(&last.id) {
                self.park_quietly(id, last.id);
                return Ok(false);
            }
            // Its retry, when it gets one, is queued when it fails; none came.
            self.park(
                id,
                format!(
                    "improve task {} of {} {}; `gza retry {}` runs it again",
                    last.id,
                    owner.branch.as_deref().unwrap_or("its branch"),
                    last.status().as_phrase(),
                    last.id
                ),
            );
            return Ok(false);
        }
        let latest = improves.last().unwrap_or(owner).clone();
        let branch = match branch::task_branch(self.project, &self.store, owner) {
            Ok(b) => b,
            Err(e) => {
                self.park(id, e.to_string());
                return Ok(false);
            }
        };
        // The latest review, when it reviewed the branch as it is now.
        let current = match reviews.last() {
            Some(r) => review::reviewed_task(&self.store, r)?
                .is_some_and(|t| t.id == latest.id)
                .then(|| r.clone()),
            None => None,
        };
        let Some(current) = current else {
            if !self.count_action(id) {
                return Ok(false);
            }
            // The reviewer is told what the checks say about this commit.
            if self.verify_configured() && self.fresh_verification(id, &branch.tip)?.is_none() {
                return self.run_verify(&latest, &branch.name);
            }
            return self.queue_review(&latest, &branch.name);
        };
        match (current.status(), current.review_verdict()) {
            (TaskStatus::Completed, Some(ReviewVerdict::ChangesRequested)) => {
                if !self.count_action(id) {
                    return Ok(false);
                }
                self.queue_improve(owner, &current, &improves, false)
            }
            (TaskStatus::Completed, Some(_)) => self.land(owner, &current, &improves),
            (TaskStatus::Completed, None) => {
                self.park(
                    id,
                    format!(
                        "review task {} gave no verdict; read it (`gza show {}`), then `gza improve {}` or `gza merge {id}`",
                        current.id, current.id, current.id
                    ),
                );
                Ok(false)
            }
            // Failed or dropped, with no retry queued.
            (_, _) if self.parked.contains_key(&current.id) => {
                self.park_quietly(id, current.id);
                Ok(false)
            }
            (status, _) => {
                self.park(
                    id,
                    format!(
                        "review task {} {}; `gza retry {}` runs it again",
                        current.id,
                        status.as_phrase(),
                        current.id
                    ),
                );
                Ok(false)
            }
        }
    }

    fn verify_configured(&self) -> bool {
        self.project
            .config
            .verify
            .as_deref()
            .is_some_and(|c| !c.trim().is_empty())
    }

    /// The latest verify run of the branch when it checked `tip`.
    fn fresh_verification(&self, owner: TaskId, tip: &str) -> Result<Option<Verification>> {
        Ok(self
            .store
            .latest_verification(owner)?
            .filter(|v| v.state(Some(tip)) != VerifyState::Stale))
    }

    fn run_verify(&mut self, task: &Task, branch: &str) -> Result<bool> {
        let owner = review::branch_owner(&self.store, task)?.id;
        self.ui.event(&Event::Verifying { owner, branch });
        match verify::verify(self.project, &self.store, task) {
            Ok(Verified::Recorded {
                verification,
                branch,
            }) => {
                self.ui.event(&Event::Verified {
                    owner,
                    branch: &branch,
                    verification: &verification,
                });
                self.summary
                    .verified
                    .push((owner, verification.outcome.passed()));
                Ok(true)
            }
            Ok(Verified::Interrupted) => Ok(false),
            Err(e) => {
                self.park(owner, format!("cannot verify {branch}: {e}"));
                Ok(false)
            }
        }
    }

    fn queue_review(&mut self, task: &Task, branch: &str) -> Result<bool> {
        match review::queue_review(self.project, &self.store, task, &QueueOptions::default()) {
            Ok(queued) => {
                self.ui.event(&Event::QueuedReview {
                    id: queued.id,
                    of: task.id,
                    branch,
                });
                Ok(true)
            }
            Err(e @ Error::Usage(_)) => {
                self.park(queued_owner(&self.store, task)?, e.to_string());
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Queue the next improve round for `review`'s findings, unless the rounds are spent.
    fn queue_improve(
        &mut self,
        owner: &Task,
        review: &Task,
        improves: &[Task],
        after_verify: bool,
    ) -> Result<bool> {
        let max = self.project.config.watch.max_rounds;
        let done = improves
            .iter()
            .filter(|t| t.status() == TaskStatus::Completed)
            .count() as u32;
        if done >= max {
            let why = if after_verify {
                format!(
                    "review task {} approved, but the verify fails (`gza show {}`), and the branch had its {max} improve rounds (watch.max_rounds); fix it by hand or `gza improve {}`",
                    review.id, owner.id, review.id
                )
            } else {
                format!(
                    "review task {} still requests changes after {max} improve {} (watch.max_rounds); read it (`gza show {}`), then `gza improve {}` or fix it by hand",
                    review.id,
                    if max == 1 { "round" } else { "rounds" },
                    review.id,
                    review.id
                )
            };
            self.park(owner.id, why);
            return Ok(false);
        }
        match review::queue_improve(self.project, &self.store, review, &QueueOptions::default()) {
            Ok(queued) => {
                self.ui.event(&Event::QueuedImprove {
                    id: queued.id,
                    owner: owner.id,
                    review: review.id,
                    round: done + 1,
                    max,
                    after_verify,
                });
                Ok(true)
            }
            Err(e @ Error::Usage(_)) => {
                self.park(owner.id, e.to_string());
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// An approved branch: into its base, rebased first when the base moved, verified at the
    /// commit that lands.
    fn land(&mut self, owner: &Task, review: &Task, improves: &[Task]) -> Result<bool> {
        let id = owner.id;
        let root = &self.project.root;
        let land = self.project.config.watch.land;
        let Some(base) = owner.base_branch().map(str::to_string) else {
            self.park(
                id,
                format!("task {id} did not record the branch it started from (HEAD was detached); merge it by hand with `gza merge {id}`"),
            );
            return Ok(false);
        };
        if land != LandMode::Pr {
            match worktree::current_branch(root) {
                Some(current) if current == base => {}
                current => {
                    let on =
                        current.map_or("a detached HEAD".to_string(), |c| format!("branch {c}"));
                    self.park(
                        id,
                        format!(
                            "approved, but the checkout is on {on}, not {base}, which task {id} started from; `git switch {base}`, then run gza watch again"
                        ),
                    );
                    return Ok(false);
                }
            }
            let dirty = worktree::dirty_files(root, 4)?;
            if !dirty.is_empty() {
                self.park(
                    id,
                    format!(
                        "approved, but the checkout has uncommitted changes ({}); watch never merges over them: commit or stash them, then run gza watch again",
                        dirty.join(", ")
                    ),
                );
                return Ok(false);
            }
        }
        if !self.count_action(id) {
            return Ok(false);
        }
        let branch = branch::task_branch(self.project, &self.store, owner)?;
        // A base that moved: rebase onto it (the next pass verifies the new tip).
        if let Some(base_tip) = worktree::resolve(root, &base)
            && !gza_core::git::succeeds(
                root,
                &["merge-base", "--is-ancestor", &base_tip, &branch.tip],
            )
        {
            return match branch::rebase(self.project, &self.store, owner) {
                Ok(rebased) => {
                    self.ui.event(&Event::Rebased {
                        owner: id,
                        branch: &rebased.branch,
                        onto: &rebased.onto,
                    });
                    Ok(true)
                }
                Err(e) => {
                    self.park(id, format!("approved, but {base} moved and {e}"));
                    Ok(false)
                }
            };
        }
        if self.verify_configured() {
            match self.fresh_verification(id, &branch.tip)? {
                None => {
                    let latest = improves.last().unwrap_or(owner).clone();
                    return self.run_verify(&latest, &branch.name);
                }
                Some(v) if !v.outcome.passed() => {
                    return self.queue_improve(owner, review, improves, true);
                }
                Some(_) => {}
            }
        }
        match land {
            LandMode::Merge | LandMode::Squash => {
                let options = MergeOptions {
                    squash: land == LandMode::Squash,
                    delete_branch: self.project.config.watch.delete_branch,
                    force: false,
                    unattended: true,
                };
                match branch::merge(self.project, &self.store, owner, options) {
                    Ok(merged) => {
                        self.ui.event(&Event::Merged {
                            owner: id,
                            merged: &merged,
                        });
                        self.summary
                            .landed
                            .push(Landed::Merged { owner: id, merged });
                        Ok(true)
                    }
                    Err(e @ Error::Usage(_)) => {
                        self.park(id, format!("approved and verified, but {e}"));
                        Ok(false)
                    }
                    Err(e) => Err(e),
                }
            }
            LandMode::Pr => match branch::open_pull_request(self.project, &self.store, owner) {
                Ok(pr) => {
                    self.ui.event(&Event::PullRequest {
                        owner: id,
                        url: &pr.url,
                    });
                    self.summary.landed.push(Landed::PullRequest {
                        owner: id,
                        url: pr.url,
                    });
                    Ok(true)
                }
                Err(e @ Error::Usage(_)) => {
                    self.park(id, format!("approved and verified, but {e}"));
                    Ok(false)
                }
                Err(e) => Err(e),
            },
        }
    }

    // ---- running -------------------------------------------------------------------------

    /// The ready tasks of the scope to run now (at most `parallel`, pickup order, none of a
    /// paused or broken provider), and, when a paused provider holds some back, the earliest
    /// time one is free again.
    fn choose(&mut self) -> Result<(Vec<TaskId>, Option<Pause>)> {
        let now = Instant::now();
        let mut chosen = Vec::new();
        let mut wait: Option<Pause> = None;
        let queue = self
            .store
            .pickup_queue(false, Some(PICKUP_WINDOW), self.scope())?;
        for entry in queue {
            if chosen.len() >= self.options.parallel.max(1) {
                break;
            }
            let id = entry.task.id;
            if self.parked.contains_key(&id) {
                continue;
            }
            let task = self.store.get_task(id)?;
            let kind = provider_of(self.project, &task);
            if self.start_failures_exhausted(kind) {
                continue;
            }
            if let Some(b) = self.backoff.get(&kind)
                && b.until > now
            {
                if wait.is_none_or(|(_, t)| b.until < t) {
                    wait = Some((kind, b.until));
                }
                continue;
            }
            if let Err(e) = crate::check_agent(self.project, &task) {
                let why = e.to_string();
                let n = {
                    let entry = self
                        .start_failures
                        .entry(kind)
                        .or_insert((0, String::new()));
                    entry.0 += 1;
                    entry.1 = why.clone();
                    entry.0
                };
                if n < MAX_START_FAILURES {
                    self.back_off(kind, &why);
                } else {
                    self.ui.event(&Event::ProviderBroken {
                        provider: kind,
                        why: &why,
                    });
                    self.summary.broken_providers.push((kind, why));
                }
                continue;
            }
            self.start_failures.remove(&kind);
            chosen.push(id);
        }
        Ok((chosen, wait))
    }

    /// Pause `kind`'s tasks after a failure (one more in a row).
    fn back_off(&mut self, kind: ProviderKind, why: &str) {
        let config = &self.project.config.watch;
        let failures = self.backoff.get(&kind).map_or(0, |b| b.failures) + 1;
        let seconds = (config.backoff_seconds * 2f64.powi(failures.min(30) as i32 - 1))
            .min(config.backoff_max_seconds)
            .max(0.0);
        self.backoff.insert(
            kind,
            Backoff {
                failures,
                until: Instant::now() + Duration::from_secs_f64(seconds),
            },
        );
        self.ui.event(&Event::BackingOff {
            provider: kind,
            seconds: seconds.ceil() as u64,
            why,
        });
    }

    /// After a task watch ran has ended: the provider's pause, and what follows a failure.
    fn on_finished(&mut self, finished: &Finished) -> Result<()> {
        let task = self.store.get_task(finished.id)?;
        let kind = provider_of(self.project, &task);
        let Some(reason) = task.failure_reason().cloned() else {
            if task.status() == TaskStatus::Completed {
                self.backoff.remove(&kind);
            }
            return Ok(());
        };
        if reason == FailureReason::Killed && process::stop_requested() {
            // Ended by this watch's stop request: continued at the next watch.
            let new = continuation(self.project, &task, true);
            let continued_by = self.store.insert_task(&new)?;
            self.ui.event(&Event::Interrupted {
                id: task.id,
                continued_by,
            });
            return Ok(());
        }
        if reason.is_provider_failure() {
            let why = format!("task {} failed with {reason}", task.id);
            self.back_off(kind, &why);
        }
        self.follow_up_failure(&task)?;
        Ok(())
    }

    /// Run failed `task` again when that is worth it, or leave it for a person; true when a
    /// task was queued.
    fn follow_up_failure(&mut self, task: &Task) -> Result<bool> {
        let Some(reason) = task.failure_reason().cloned() else {
            return Ok(false);
        };
        let id = task.id;
        let needs_person = match &reason {
            FailureReason::Killed => Some("it was killed (gza kill)".to_string()),
            FailureReason::PromptError => {
                Some("its prompt could not be built (`gza show` says why)".to_string())
            }
            FailureReason::UnsafeWorktree => {
                Some("its agent replaced the worktree's .git, so nothing was committed".to_string())
            }
            _ => None,
        };
        if let Some(why) = needs_person {
            self.park(
                id,
                format!("task {id} failed with {reason}: {why}; `gza retry {id}` runs it again"),
            );
            return Ok(false);
        }
        // The attempts so far: this task and the retries it repeats, newest first.
        let mut attempts = vec![task.clone()];
        while let Some(previous) = attempts
            .last()
            .and_then(|t| t.based_on)
            .map(|p| self.store.get_task(p))
            .transpose()?
            .filter(|p| p.task_type == task.task_type && p.status() == TaskStatus::Failed)
        {
            if attempts.len() >= 1000 {
                break;
            }
            attempts.push(previous);
        }
        if let Some(previous) = attempts.get(1)
            && previous.failure_reason() == Some(&reason)
        {
            self.park(
                id,
                format!(
                    "task {id} failed the same way twice in a row ({reason}, as task {} did); see `gza log {id}`, then `gza retry {id}`",
                    previous.id
                ),
            );
            return Ok(false);
        }
        let max = self.project.config.watch.max_attempts as usize;
        if attempts.len() >= max {
            self.park(
                id,
                format!(
                    "task {id} failed {} times (watch.max_attempts), last with {reason}; see `gza log {id}`, then `gza retry {id}`",
                    attempts.len()
                ),
            );
            return Ok(false);
        }
        let new = continuation(self.project, task, false);
        let resume = new.resume_session_id.is_some();
        let new_id = self.store.insert_task(&new)?;
        self.ui.event(&Event::Retrying {
            failed: id,
            new: new_id,
            reason: &reason,
            resume,
        });
        Ok(true)
    }
}

/// The owner of the branch `task` works on, for parking (the task itself when it has none).
fn queued_owner(store: &Store, task: &Task) -> Result<TaskId> {
    Ok(review::branch_owner(store, task)?.id)
}

/// The task that carries failed `task` on: a resumption of its agent's session when the agent
/// was cut off mid-way (a stop, a timeout, its turns spent, its worker gone) and its provider
/// can continue one, else a retry. `first` runs it before other pending tasks.
fn continuation(project: &Project, task: &Task, first: bool) -> NewTask {
    let kind = provider_of(project, task);
    let cut_off = matches!(
        task.failure_reason(),
        Some(
            FailureReason::Killed
                | FailureReason::Timeout
                | FailureReason::MaxTurns
                | FailureReason::WorkerDied
        )
    );
    let session = task
        .session_id
        .clone()
        .filter(|_| cut_off && crate::providers::supports_resume(kind));
    let mut new = NewTask::follow_up(task);
    new.urgent = first || task.urgent;
    if let Some(session) = session {
        new.provider = Some(kind.as_str().to_string());
        new.resume_session_id = Some(session);
    }
    new
}
