//! Running tasks: claiming, worktrees, agent processes, providers, and the worker loop.

mod agent_rules;
pub mod branch;
pub mod cleanup;
mod complete;
mod kept;
pub mod providers;
pub mod remote;
pub mod review;
mod run;
pub mod sandbox;
pub mod verify;
pub mod watch;

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::time::Duration;

use gza_core::worktree;
pub use run::{Finished, KILL_GRACE, provider_of};

/// A running task's progress.
#[derive(Debug, Clone)]
pub struct Status {
    pub elapsed: Duration,
    pub progress: providers::Progress,
}

/// What the runner needs from the learnings room. The CLI hands it in, so the runner never calls
/// into `learn` (which calls the LLM clients) itself. Neither call may fail a task: each logs
/// its own faults and gives nothing.
pub trait Teacher: Send + Sync + std::fmt::Debug {
    /// The learnings `task` is given, recorded against it; `None` when there are none.
    fn for_prompt(
        &self,
        project: &Project,
        store: &Store,
        task: &Task,
    ) -> Option<gza_core::prompt::InjectedLearnings>;
    /// After a task finished: start a regeneration when one is due, returning its thread.
    fn after_task(&self, project: &Project, store: &Store) -> Option<std::thread::JoinHandle<()>>;
    /// Drafts the task's agent wrote were stored (`ids`): one that says what a known learning
    /// says is to be folded into it, as what an extraction finds is. Nothing by default.
    fn took_drafts(&self, _project: &Project, _store: &Store, _ids: &[i64]) {}
}

/// Receives what the runner does, to show it to a person (or not).
pub trait Observer: Sync {
    fn warn(&self, message: &str);
    fn started(&self, task: &Task, provider: gza_core::config::ProviderKind);
    fn progress(&self, id: TaskId, status: Status);
    fn finished(&self, finished: &Finished);
}

use gza_core::error::{Error, Result};
use gza_core::process::{self, check_binary};
use gza_core::project::Project;
use gza_core::task::{FailureReason, Task, TaskId, TaskStatus};
use gza_store::{Claim, Pool, Pooled, Store, TaskLease, WorkerId};

/// What `gza work` was asked to do.
#[derive(Debug, Clone)]
pub struct WorkOptions {
    /// Only these tasks (in pickup order among them).
    pub ids: Vec<TaskId>,
    /// Stop after this many tasks; `None` runs until the queue is empty.
    pub count: Option<usize>,
    /// Workers running at once.
    pub parallel: usize,
    /// Only tasks in this group.
    pub group: Option<String>,
    /// Only tasks with any of these tags (all of them, with `all_tags`).
    pub tags: Vec<gza_core::task::Tag>,
    pub all_tags: bool,
    /// Learnings for each prompt, and regeneration after each task.
    pub teacher: std::sync::Arc<dyn Teacher>,
    /// When nothing is ready, wait for work (woken by the database) instead of returning,
    /// until a stop is requested or `count` tasks are done.
    pub watch: bool,
}

impl WorkOptions {
    /// The group and tags asked for.
    pub fn scope(&self) -> gza_store::Scope<'_> {
        gza_store::Scope {
            group: self.group.as_deref(),
            tags: &self.tags,
            all_tags: self.all_tags,
        }
    }
}

/// This process as a task owner (without a lease yet).
pub fn this_worker() -> WorkerId {
    let pid = process::own_pid();
    WorkerId {
        pid,
        start: process::start_ticks(pid),
        lease: None,
    }
}

/// This worker's current lease, shared by its threads: the heartbeat renews it and, when it
/// expired (the database could not be reached in time), takes a new one; a claim names it.
struct LeaseCell {
    /// This process as a task owner.
    base: WorkerId,
    id: AtomicI64,
    /// A claim found the lease expired: the heartbeat takes a new one at once.
    lost: AtomicBool,
}

impl LeaseCell {
    /// This process under its current lease.
    fn worker(&self) -> WorkerId {
        WorkerId {
            lease: Some(self.id.load(Ordering::SeqCst)),
            ..self.base
        }
    }
}

/// Take a lease for `worker`, naming this host and machine.
fn acquire(store: &Store, worker: WorkerId) -> Result<i64> {
    store.acquire_lease(
        worker,
        &process::host_name(),
        &process::machine(),
        process::pid_namespace().as_deref(),
    )
}

/// How long a watching worker waits without news before it tries to claim again.
const WATCH_RECHECK: Duration = Duration::from_secs(30);

/// Run tasks until `options.count` are done, the queue is empty, or a stop is requested.
/// Returns every finished task; an error that stopped a worker is returned after the others finish.
pub fn work(project: &Project, options: &WorkOptions, ui: &dyn Observer) -> Result<Vec<Finished>> {
    work_in(&Pool::new(project), options, ui)
}

/// [`work`] on the stores of `pool`, which the caller goes on using after (for what it prints
/// and the hooks' snapshot): one connection for the whole run when one task runs at a time.
pub fn work_in(pool: &Pool<'_>, options: &WorkOptions, ui: &dyn Observer) -> Result<Vec<Finished>> {
    let project = pool.project();
    let worker = this_worker();
    let span = tracing::info_span!("work", pid = worker.pid);
    let _entered = span.enter();
    let lease = LeaseCell {
        base: worker,
        id: AtomicI64::new(0),
        lost: AtomicBool::new(false),
    };
    tracing::info!(
        parallel = options.parallel,
        count = options.count,
        "worker starting"
    );
    {
        let store = pool.get()?;
        for reaped in reap_orphans(project, &store) {
            if let Some(note) = reaped.note() {
                ui.warn(&note);
            }
        }
        // The lease is taken before anything is claimed, and renewed while this process runs.
        lease.id.store(acquire(&store, worker)?, Ordering::SeqCst);
        // A few worktrees and logs of long-finished tasks go at each start (`gza clean` takes
        // the rest); what must stay is kept, and a failure here never stops work.
        if project.config.cleanup_days > 0 {
            let scope = cleanup::Scope {
                older_than_days: Some(project.config.cleanup_days),
                limit: 20,
                dry_run: false,
            };
            let _ = cleanup::clean(project, &store, scope);
        }
        // Tasks asked for by id: refuse before claiming anything when the first one's agent
        // cannot start. (From the queue, a task whose agent cannot start is skipped and the
        // rest run; see `worker_loop`.)
        if !options.ids.is_empty()
            && let Some(next) = store
                .pickup_queue(false, options.ids.is_empty().then_some(1), options.scope())?
                .into_iter()
                .find(|e| options.ids.is_empty() || options.ids.contains(&e.task.id))
        {
            check_agent(project, &store.get_task(next.task.id)?)?;
        }
        for &id in &options.ids {
            let task = store.get_task(id)?;
            if task.status() != TaskStatus::Pending {
                return Err(Error::Usage(format!(
                    "task {id} is {}; only pending tasks can be run (`gza retry {id}` queues it again)",
                    task.status()
                )));
            }
        }
    }
    let remaining = AtomicUsize::new(options.count.unwrap_or(usize::MAX));
    let regenerations = std::sync::Mutex::new(Vec::new());
    let skipped = std::sync::Mutex::new(Vec::new());
    let finished_working = std::sync::atomic::AtomicBool::new(false);
    let results = std::thread::scope(|scope| {
        scope.spawn(|| heartbeat(pool, worker, &lease, &finished_working, ui));
        let handles: Vec<_> = (0..options.parallel.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let _entered = span.enter();
                    worker_loop(
                        pool,
                        options,
                        &lease,
                        &remaining,
                        &regenerations,
                        &skipped,
                        ui,
                    )
                })
            })
            .collect();
        let results = handles
            .into_iter()
            .map(|h| h.join().expect("worker thread does not panic"))
            .collect::<Vec<_>>();
        finished_working.store(true, Ordering::SeqCst);
        results
    });
    // A regeneration still running is finished before gza exits, saying so; a Ctrl-C leaves it
    // for later (it writes through a lock and a rename, so stopping it loses nothing).
    let pending = regenerations.into_inner().expect("regeneration list lock");
    if pending.iter().any(|h| !h.is_finished()) {
        let learnings = &project.config.learnings;
        ui.warn(&format!(
            "waiting for the learnings regeneration (extraction calls to the model; none starts after {} s, \
             one takes at most {} s) to finish; Ctrl-C leaves it for later",
            learnings.extraction_deadline_seconds,
            learnings.timeout_seconds.saturating_mul(2)
        ));
    }
    for handle in pending {
        while !handle.is_finished() && !process::stop_requested() {
            std::thread::sleep(Duration::from_millis(100));
        }
        if handle.is_finished() {
            let _ = handle.join();
        }
    }
    if let Ok(store) = pool.get() {
        let _ = store.drop_lease(lease.id.load(Ordering::SeqCst));
    }
    let mut finished = Vec::new();
    let mut first_error = None;
    for result in results {
        match result {
            Ok(mut done) => finished.append(&mut done),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    finished.sort_by_key(|f| f.id);
    // Tasks whose agent could not start were left pending: one line each, or, when nothing
    // else ran, the error.
    let skipped: Vec<String> = skipped
        .into_inner()
        .expect("skipped list lock")
        .into_iter()
        .map(|(id, why)| {
            format!(
                "task {id} was skipped and left pending: {why}; or give it another agent with `gza edit {id} --provider …`, then `gza work {id}`"
            )
        })
        .collect();
    if finished.is_empty() && first_error.is_none() && !skipped.is_empty() {
        return Err(Error::Usage(skipped.join("; ")));
    }
    for line in &skipped {
        ui.warn(line);
    }
    match first_error {
        Some(e) if finished.is_empty() => Err(e),
        Some(e) => {
            ui.warn(&e.to_string());
            Ok(finished)
        }
        None => Ok(finished),
    }
}

/// How often a working worker looks for tasks whose worker died: a third of the time a lease
/// takes to go stale.
const REAP_EVERY_SECS: f64 = gza_store::LEASE_STALE_SECS / 3.0;

/// Renew this worker's lease every few seconds until `done`. A lease that can no longer be
/// renewed (it expired while the database could not be reached: the other workers may have
/// reaped its tasks) is replaced by a new one, so this worker goes on claiming; what it writes
/// for tasks of the old one is refused once they are reaped. A database that cannot be reached
/// is tried again at the next beat, on a new connection. The store is taken from `pool` at the
/// first beat (a task shorter than a beat needs none of its own) and held from then on.
fn heartbeat(
    pool: &Pool<'_>,
    worker: WorkerId,
    lease: &LeaseCell,
    done: &AtomicBool,
    ui: &dyn Observer,
) {
    let project = pool.project();
    let mut store: Option<Pooled<'_>> = None;
    let mut last = std::time::Instant::now();
    let mut last_reap = std::time::Instant::now();
    while !done.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
        let lost = lease.lost.load(Ordering::SeqCst);
        if !lost && last.elapsed().as_secs_f64() < gza_store::LEASE_RENEW_SECS {
            continue;
        }
        last = std::time::Instant::now();
        if store.is_none() {
            store = pool.get().ok();
        }
        let Some(db) = &store else {
            continue;
        };
        // A worker that died elsewhere (another machine, another PID namespace) is known dead
        // only once its lease expires, long after any worker started: the live ones reap what
        // it left, so its tasks do not stay "in progress" while the queue waits.
        if last_reap.elapsed().as_secs_f64() >= REAP_EVERY_SECS {
            last_reap = std::time::Instant::now();
            for reaped in reap_orphans(project, db) {
                tracing::warn!(task = %reaped.id, "reaped a task whose worker is gone");
                if let Some(note) = reaped.note() {
                    ui.warn(&note);
                }
            }
        }
        // A failed renewal (a busy or unreachable database) is retried at the next beat; the
        // lease has six beats of slack before it is stale.
        let renewed = if lost {
            Ok(false)
        } else {
            db.renew_lease(lease.id.load(Ordering::SeqCst))
        };
        match renewed {
            Ok(true) => {}
            Ok(false) => match acquire(db, worker) {
                Ok(id) => {
                    let old = lease.id.swap(id, Ordering::SeqCst);
                    lease.lost.store(false, Ordering::SeqCst);
                    tracing::warn!(old, new = id, "lease expired; took a new one");
                    ui.warn(&format!(
                        "this worker could not renew its lease in time (lease {old}); its running tasks may be reaped by other workers and their results refused; it goes on under lease {id}"
                    ));
                }
                Err(_) => {
                    if let Some(s) = store.take() {
                        s.discard();
                    }
                }
            },
            Err(_) => {
                if let Some(s) = store.take() {
                    s.discard();
                }
            }
        }
    }
}

fn worker_loop(
    pool: &Pool<'_>,
    options: &WorkOptions,
    lease: &LeaseCell,
    remaining: &AtomicUsize,
    regenerations: &std::sync::Mutex<Vec<std::thread::JoinHandle<()>>>,
    skipped: &std::sync::Mutex<Vec<(TaskId, String)>>,
    ui: &dyn Observer,
) -> Result<Vec<Finished>> {
    let project = pool.project();
    let store = pool.get()?;
    let mut done = Vec::new();
    loop {
        if process::stop_requested() {
            break;
        }
        // Reserve a slot before claiming so parallel workers never overshoot --count.
        if remaining
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_err()
        {
            break;
        }
        let max = project.config.max_concurrent;
        let mut said_waiting = false;
        let mut said_idle = false;
        let task = loop {
            let skip: Vec<TaskId> = skipped
                .lock()
                .expect("skipped list lock")
                .iter()
                .map(|(id, _)| *id)
                .collect();
            let worker = lease.worker();
            match store.claim_next_task(worker, &options.ids, &skip, options.scope(), Some(max))? {
                Claim::Task(task) => {
                    tracing::info!(task = %task.id, kind = %task.task_type, "claimed");
                    break Some((*task, worker));
                }
                Claim::Empty if options.watch && options.ids.is_empty() => {
                    if process::stop_requested() {
                        break None;
                    }
                    if !said_idle {
                        ui.warn("no task is ready; waiting for one (Ctrl-C stops)");
                        said_idle = true;
                    }
                    // Woken when a task is added, queued again or ends (on PostgreSQL by a
                    // notification; on SQLite by the file's change counter); claimed again at
                    // least every WATCH_RECHECK, for work that becomes ready without a change
                    // (a dead worker's lease expiring).
                    store.wait_for_work(WATCH_RECHECK, &process::stop_requested)?;
                }
                Claim::Empty => {
                    tracing::debug!("nothing ready to claim");
                    break None;
                }
                Claim::Full | Claim::LeaseLost if process::stop_requested() => break None,
                Claim::LeaseLost => {
                    // The heartbeat takes a new lease; claim again under it.
                    lease.lost.store(true, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(250));
                }
                Claim::Full => {
                    if !said_waiting {
                        ui.warn(&format!(
                            "waiting for a free agent slot: {max} already run in this project (max_concurrent)"
                        ));
                        said_waiting = true;
                    }
                    std::thread::sleep(Duration::from_millis(250));
                }
            }
        };
        let Some((task, worker)) = task else {
            break;
        };
        if let Err(e) = check_agent(project, &task) {
            // The agent cannot start: the task goes back to the queue untouched. Asked for by
            // id, that ends the run; from the queue, the task is skipped and the rest run.
            store.release_task(task.id, worker)?;
            if !options.ids.is_empty() {
                return Err(e);
            }
            skipped
                .lock()
                .expect("skipped list lock")
                .push((task.id, e.to_string()));
            remaining.fetch_add(1, Ordering::SeqCst);
            continue;
        }
        done.push(run::run_task(
            project,
            &store,
            worker,
            task,
            options.teacher.as_ref(),
            ui,
        )?);
        if let Some(handle) = options.teacher.after_task(project, &store) {
            regenerations
                .lock()
                .expect("regeneration list lock")
                .push(handle);
        }
    }
    Ok(done)
}

/// Check that the agent `task` runs with can be started; the error names it and its config key.
/// In a container the binary is the image's, checked when the task starts.
pub fn check_agent(project: &Project, task: &Task) -> Result<()> {
    let kind = provider_of(project, task);
    if project.config.sandbox_for(kind) == gza_core::config::SandboxKind::Docker {
        return Ok(());
    }
    check_binary(
        &providers::binary(kind, &project.config),
        providers::config_key(kind),
    )
}

/// A task whose worker was found dead.
#[derive(Debug)]
pub struct Reaped {
    pub id: TaskId,
    /// The outcome the worker had kept on disk and that was recorded instead of `WORKER_DIED`.
    pub recovered: Option<TaskStatus>,
    /// Why the outcome the worker kept could not be recorded now, and what to do: the file
    /// stays, and so does
    /// the task (in progress, for the next `gza work` to try again), never `WORKER_DIED`.
    pub unrecorded: Option<String>,
}

impl Reaped {
    /// What a person is told, when there is something to tell.
    pub fn note(&self) -> Option<String> {
        if let Some(why) = &self.unrecorded {
            return Some(format!(
                "task {id}: the outcome its worker kept in .gza/logs/{id}.outcome.json could not be recorded: {why}",
                id = self.id,
            ));
        }
        self.recovered.map(|status| {
            format!(
                "task {}: its worker stopped before recording how it ended; recorded the outcome it kept in .gza/logs/{}.outcome.json ({status})",
                self.id, self.id
            )
        })
    }
}

/// End every in-progress task whose worker is gone, and the agent it left running. A task whose
/// worker kept its outcome on disk (it ended while the disk was full, or was killed between the
/// agent's end and the database write) gets that outcome; the others fail `WORKER_DIED`.
///
/// Only positive evidence of death counts: the lease the task was claimed under expired (its
/// worker stopped renewing it, on the database's clock), or the worker runs on this machine,
/// in this boot and this process's PID namespace (so its PID is visible) and that PID is dead
/// or now belongs to a process that started at another time. A PID means nothing across
/// machines or namespaces: a worker elsewhere with a fresh lease is alive, whatever /proc says
/// here. The agent of a task is ended, and its kept outcome read, only on its own machine.
/// Errors are ignored.
pub fn reap_orphans(project: &Project, store: &Store) -> Vec<Reaped> {
    let reaped = reap_in_progress(project, store);
    kept::drop_stale_reservations(project, store);
    reaped
}

fn reap_in_progress(project: &Project, store: &Store) -> Vec<Reaped> {
    let Ok(tasks) = store.in_progress_tasks() else {
        return Vec::new();
    };
    let here = process::pid_namespace();
    let machine = process::machine();
    let shared = store.backend() == gza_store::Backend::Postgres;
    let mut reaped = Vec::new();
    for task in tasks {
        let Some(owner) = task.state.worker() else {
            continue;
        };
        let pid_dead = || !process::is_same_process_alive(owner.pid, owner.start);
        let (dead, local, lease) = match store.task_lease(task.id) {
            Ok(TaskLease::Held {
                lease,
                claimed_under,
            }) => {
                // A lease without a machine was written by a gza from before leases named one,
                // on this machine (SQLite is one machine's).
                let same_machine =
                    lease.machine == machine || (lease.machine.is_empty() && !shared);
                let local = same_machine && here.is_some() && lease.pid_ns == here;
                (
                    lease.expired() || (local && pid_dead()),
                    local,
                    claimed_under,
                )
            }
            // Its worker gave its lease up (it ended) or was forgotten: gone. Its PID means
            // something only in one machine's database.
            Ok(TaskLease::Gone { lease }) => (true, !shared, Some(lease)),
            // No lease: the worker gave it up (it finished) or predates leases; where PIDs
            // are visible (one machine's database), the PID decides.
            Ok(TaskLease::None) if !shared => (here.is_none() || pid_dead(), true, None),
            Ok(TaskLease::None) | Err(_) => (false, false, None),
        };
        if !dead {
            continue;
        }
        let worker = WorkerId {
            lease,
            ..WorkerId::from(owner)
        };
        if local && !pid_dead() {
            // Its worker still runs here though its lease expired (cut off from the database,
            // or stopped): the task is reaped first, so the outcome the worker writes once its
            // agent is stopped finds the task no longer under its lease and is refused; then
            // the agent is stopped. What the worker keeps on the way is not its to record.
            if store
                .reap_task(task.id, Some(owner.pid), lease)
                .unwrap_or(false)
            {
                end_agent(&task, Duration::from_millis(500));
                kept::drop_kept(project, task.id);
                reaped.push(Reaped {
                    id: task.id,
                    recovered: None,
                    unrecorded: None,
                });
            }
            continue;
        }
        if local {
            // The agent goes first, so a kept commit is made on a worktree nothing still writes to.
            end_agent(&task, Duration::from_millis(500));
        }
        // An outcome kept in this clone's logs by the task's worker (its pid in the file) is
        // evidence enough of where it ran, whichever machine reaps.
        match record_kept(project, store, &task, worker) {
            Replay::Recorded(status) => {
                if status.is_some() {
                    reaped.push(Reaped {
                        id: task.id,
                        recovered: status,
                        unrecorded: None,
                    });
                }
                continue;
            }
            // A kept outcome is what the worker did: it is never deleted, nor its task turned
            // into `WORKER_DIED`, because recording it failed this time.
            Replay::Failed(e) => {
                reaped.push(Reaped {
                    id: task.id,
                    recovered: None,
                    unrecorded: Some(format!(
                        "{e}; the file stays and the task stays in progress: {}",
                        retry_advice(&e)
                    )),
                });
                continue;
            }
            Replay::NoneKept => {}
        }
        if store
            .reap_task(task.id, Some(owner.pid), lease)
            .unwrap_or(false)
        {
            // A reservation never written over, or a write cut short, holds no outcome.
            kept::drop_kept(project, task.id);
            reaped.push(Reaped {
                id: task.id,
                recovered: None,
                unrecorded: None,
            });
        }
    }
    reaped
}

/// What replaying a dead worker's kept outcome came to.
enum Replay {
    /// No whole outcome of this worker is kept: the task is the reaper's.
    NoneKept,
    /// Recorded; the status when this replay was the one that recorded it.
    Recorded(Option<TaskStatus>),
    /// It is kept but could not be recorded now: the file stays.
    Failed(Error),
}

/// What a person does about an outcome kept on disk that could not be recorded, from the
/// error's kind: free space when the disk is full; otherwise fix what the error names (the
/// file is read again as it is). Never "free some space" for a cause that is not a full disk.
pub fn retry_advice(e: &Error) -> &'static str {
    if e.is_out_of_space() {
        "free some space and the next `gza work` records it"
    } else {
        "fix what the error names and the next `gza work` records it (until then the task stays in progress; deleting the file gives it up as WORKER_DIED)"
    }
}

/// Record the outcome a dead worker kept for `task`, committing its changes first if that was
/// still to do. What cannot be recorded now stays on disk, and says why.
fn record_kept(project: &Project, store: &Store, task: &Task, worker: WorkerId) -> Replay {
    let Some(kept::Kept { worker_pid, ending }) = kept::read(project, task.id) else {
        return Replay::NoneKept;
    };
    if worker_pid != worker.pid {
        return Replay::NoneKept;
    }
    let mut outcome = ending.outcome;
    if let Some(commit) = &ending.commit {
        match run::commit_stage(commit, &mut outcome) {
            Ok(None) => {}
            Ok(Some(warning)) => {
                gza_core::fsutil::append_log(
                    &project.logs_dir().join("work.log"),
                    &format!("task {}: {warning}", task.id),
                );
            }
            Err(e) => return Replay::Failed(e),
        }
        if let Some(warning) = run::push_after_commit(
            project,
            store,
            task,
            worker,
            &outcome,
            ending.branch.as_deref(),
        ) {
            gza_core::fsutil::append_log(
                &project.logs_dir().join("work.log"),
                &format!("task {}: {warning}", task.id),
            );
        }
    }
    if ending.report {
        outcome.report_file = run::write_report(project, task, outcome.output.as_deref())
            .ok()
            .flatten();
    }
    let report = match store.finish_task(task.id, worker, &outcome, |tx, done| {
        complete::on_task_finished(tx, project, done)
    }) {
        Ok(report) => report,
        Err(e) => return Replay::Failed(e),
    };
    kept::drop_kept(project, task.id);
    if let Some(err) = &report.hook_error {
        complete::log_hook_error(project, task.id, err);
    }
    Replay::Recorded(report.owned.then(|| outcome.result.status()))
}

/// End the agent process group a task started, if it is still the same group.
fn end_agent(task: &Task, grace: Duration) {
    let Some(agent) = task.state.agent() else {
        return;
    };
    let pgid = agent.pid;
    let leader_alive = process::start_ticks(pgid);
    let same = match (leader_alive, agent.start) {
        (Some(now), Some(then)) => now == then,
        // The leader is gone but members of its group remain: a PID is never reused as the id
        // of a group that still has members, so this is still the agent's group.
        (None, _) => process::group_exists(pgid),
        (Some(_), None) => false,
    };
    if same {
        process::terminate_group(pgid, grace);
    }
}

/// Stop a running task: mark it failed `KILLED`, then end its agent's process group when it
/// runs on this machine (a PID means nothing on another).
pub fn kill_task(store: &Store, id: TaskId) -> Result<()> {
    let task = store.get_task(id)?;
    if task.status() != TaskStatus::InProgress {
        return Err(Error::Usage(format!(
            "task {id} is not running (it is {})",
            task.status()
        )));
    }
    let worker_pid = task.state.worker().map(|w| w.pid);
    let local = match store.task_lease(id)? {
        TaskLease::Held { lease, .. } => {
            lease.machine == process::machine()
                || (lease.machine.is_empty() && store.backend() == gza_store::Backend::Sqlite)
        }
        TaskLease::Gone { .. } => false,
        TaskLease::None => store.backend() == gza_store::Backend::Sqlite,
    };
    if !store.fail_running_task(id, worker_pid, FailureReason::Killed)? {
        return Err(Error::Usage(format!(
            "task {id} finished before it could be killed"
        )));
    }
    if local {
        end_agent(&task, KILL_GRACE);
    }
    Ok(())
}
