//! Running tasks: claiming, worktrees, agent processes, providers, and the worker loop.

mod complete;
pub mod process;
pub mod providers;
mod run;
pub mod worktree;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub use run::{Finished, KILL_GRACE, check_binary, provider_of};

/// A running task's progress.
#[derive(Debug, Clone)]
pub struct Status {
    pub elapsed: Duration,
    pub progress: providers::Progress,
}

/// Receives what the runner does, to show it to a person (or not).
pub trait Observer: Sync {
    fn warn(&self, message: &str);
    fn started(&self, task: &Task, provider: crate::config::ProviderKind);
    fn progress(&self, id: i64, status: Status);
    fn finished(&self, finished: &Finished);
}

use crate::error::{Error, Result};
use crate::project::Project;
use crate::store::{Store, WorkerId};
use crate::task::{Task, TaskStatus};

/// What `gza work` was asked to do.
#[derive(Debug, Clone)]
pub struct WorkOptions {
    /// Only these tasks (in pickup order among them).
    pub ids: Vec<i64>,
    /// Stop after this many tasks; `None` runs until the queue is empty.
    pub count: Option<usize>,
    /// Workers running at once.
    pub parallel: usize,
    /// Only tasks in this group.
    pub group: Option<String>,
}

/// This process as a task owner.
pub fn this_worker() -> WorkerId {
    let pid = process::own_pid();
    WorkerId {
        pid,
        start: process::start_ticks(pid),
    }
}

/// Run tasks until `options.count` are done, the queue is empty, or a stop is requested.
/// Returns every finished task; an error that stopped a worker is returned after the others finish.
pub fn work(project: &Project, options: &WorkOptions, ui: &dyn Observer) -> Result<Vec<Finished>> {
    {
        let store = Store::open(&project.db_path())?;
        reap_orphans(&store);
        // Refuse before claiming anything when the next task's agent cannot start. (Later
        // tasks are checked after their claim, and put back if their agent is missing.)
        if let Some(next) = store
            .pickup_queue(
                false,
                options.ids.is_empty().then_some(1),
                options.group.as_deref(),
            )?
            .into_iter()
            .find(|e| options.ids.is_empty() || options.ids.contains(&e.task.id))
        {
            check_agent(project, &store.get_task(next.task.id)?)?;
        }
        for &id in &options.ids {
            let task = store.get_task(id)?;
            if task.status != TaskStatus::Pending {
                return Err(Error::Usage(format!(
                    "task {id} is {}; only pending tasks can be run (`gza retry {id}` queues it again)",
                    task.status
                )));
            }
        }
    }
    let remaining = AtomicUsize::new(options.count.unwrap_or(usize::MAX));
    let worker = this_worker();
    let regenerations = std::sync::Mutex::new(Vec::new());
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..options.parallel.max(1))
            .map(|_| {
                scope
                    .spawn(|| worker_loop(project, options, worker, &remaining, &regenerations, ui))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker thread does not panic"))
            .collect::<Vec<_>>()
    });
    // A regeneration still running is finished before gza exits, saying so; a Ctrl-C leaves it
    // for later (it writes through a lock and a rename, so stopping it loses nothing).
    let pending = regenerations.into_inner().expect("regeneration list lock");
    if pending.iter().any(|h| !h.is_finished()) {
        ui.warn(
            "waiting for the learnings regeneration (extraction calls to the model) to finish; \
             Ctrl-C leaves it for later",
        );
    }
    for handle in pending {
        while !handle.is_finished() && !process::stop_requested() {
            std::thread::sleep(Duration::from_millis(100));
        }
        if handle.is_finished() {
            let _ = handle.join();
        }
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
    match first_error {
        Some(e) if finished.is_empty() => Err(e),
        Some(e) => {
            ui.warn(&e.to_string());
            Ok(finished)
        }
        None => Ok(finished),
    }
}

fn worker_loop(
    project: &Project,
    options: &WorkOptions,
    worker: WorkerId,
    remaining: &AtomicUsize,
    regenerations: &std::sync::Mutex<Vec<std::thread::JoinHandle<()>>>,
    ui: &dyn Observer,
) -> Result<Vec<Finished>> {
    let store = Store::open(&project.db_path())?;
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
        let Some(task) = store.claim_next_task(worker, &options.ids, options.group.as_deref())?
        else {
            break;
        };
        if let Err(e) = check_agent(project, &task) {
            // The agent cannot start: the task goes back to the queue untouched.
            store.release_task(task.id, worker)?;
            return Err(e);
        }
        done.push(run::run_task(project, &store, worker, task, ui)?);
        if let Some(handle) = crate::learn::after_task(project, &store) {
            regenerations
                .lock()
                .expect("regeneration list lock")
                .push(handle);
        }
    }
    Ok(done)
}

/// Check that the agent `task` runs with can be started; the error names it and its config key.
fn check_agent(project: &Project, task: &Task) -> Result<()> {
    let kind = provider_of(project, task);
    check_binary(
        &providers::binary(kind, &project.config),
        providers::config_key(kind),
    )
}

/// Fail every in-progress task whose worker is gone (`WORKER_DIED`) and end the agent it left
/// running. A worker is gone when its PID is dead or now belongs to a process that started at
/// another time. Returns the ids reaped. Errors are ignored: this runs before read-only commands.
pub fn reap_orphans(store: &Store) -> Vec<i64> {
    let Ok(tasks) = store.in_progress_tasks() else {
        return Vec::new();
    };
    let mut reaped = Vec::new();
    for task in tasks {
        let alive = task
            .running_pid
            .is_some_and(|pid| process::is_same_process_alive(pid, task.running_pid_start));
        if alive {
            continue;
        }
        if store
            .fail_running_task(task.id, task.running_pid, "WORKER_DIED")
            .unwrap_or(false)
        {
            end_agent(&task, Duration::from_millis(500));
            reaped.push(task.id);
        }
    }
    reaped
}

/// End the agent process group a task started, if it is still the same group.
fn end_agent(task: &Task, grace: Duration) {
    let Some(pgid) = task.agent_pid else { return };
    let leader_alive = process::start_ticks(pgid);
    let same = match (leader_alive, task.agent_start) {
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

/// Stop a running task: mark it failed `KILLED`, then end its agent's process group.
pub fn kill_task(store: &Store, id: i64) -> Result<()> {
    let task = store.get_task(id)?;
    if task.status != TaskStatus::InProgress {
        return Err(Error::Usage(format!(
            "task {id} is not running (it is {})",
            task.status
        )));
    }
    if !store.fail_running_task(id, task.running_pid, "KILLED")? {
        return Err(Error::Usage(format!(
            "task {id} finished before it could be killed"
        )));
    }
    end_agent(&task, KILL_GRACE);
    Ok(())
}
