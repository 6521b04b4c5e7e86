//! Queries that run tasks: claiming, progress, outcomes, and finding abandoned work.

use super::Store;
use super::tasks::{LinkedTask, TASK_COLUMNS, task_from_row};
use crate::db::{Backend, DbError, DbResult, Tx};
use chrono::{DateTime, Utc};
use gza_core::error::{Error, Result};

use gza_core::task::{
    FailureReason, ProcessId, Task, TaskId, TaskResult, TaskStatus, Usage, now_timestamp,
};

/// A wait or a transaction this long is worth a line in the trace.
const SLOW: std::time::Duration = std::time::Duration::from_millis(100);

/// Runs of one transaction at most, when the connection is lost under it
/// ([`Store::immediate_retrying`]).
const TX_ATTEMPTS: u32 = 3;

/// Which run of a transaction this is ([`Store::immediate_retrying`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Attempt {
    First,
    /// An earlier run was lost before its commit was sent: it rolled back.
    AfterRollback,
    /// An earlier run was lost while its commit was on its way: it may have committed.
    CommitInDoubt,
}

/// The process that owns a claimed task, and the lease it claimed it under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerId {
    pub pid: i64,
    /// Process start time, so a reused pid is not mistaken for this worker.
    pub start: Option<i64>,
    /// The lease (its generation: an id never given out twice) the task was claimed under;
    /// every write the worker makes to the task names it (fencing). `None` for a task claimed
    /// without one (by a gza from before leases had ids).
    pub lease: Option<i64>,
}

impl super::Store {
    /// Wait (at most `limit`, ending early when `stop` says so) until a task may have become
    /// claimable: see [`crate::Db::wait_for_change`]. True when woken by a change.
    pub fn wait_for_work(
        &self,
        limit: std::time::Duration,
        stop: &dyn Fn() -> bool,
    ) -> Result<bool> {
        self.db
            .wait_for_change(limit, stop)
            .map_err(|e| self.err(e))
    }
}

impl From<ProcessId> for WorkerId {
    fn from(p: ProcessId) -> WorkerId {
        WorkerId {
            pid: p.pid,
            start: p.start,
            lease: None,
        }
    }
}

/// A finished task's worktree or log that `gza clean` may remove.
#[derive(Debug, Clone, PartialEq)]
pub struct Leftover {
    pub id: TaskId,
    /// The worktree or log file.
    pub path: String,
    pub branch: Option<String>,
}

/// What a claim found.
#[derive(Debug)]
pub enum Claim {
    /// This task is now in progress under the worker.
    Task(Box<Task>),
    /// No ready task.
    Empty,
    /// Ready tasks may wait, but `max_running` agents already run.
    Full,
    /// The worker's lease expired (it could not renew it in time, so its tasks may be reaped by
    /// others): it claims nothing under it and must take a new one.
    LeaseLost,
}

/// How a run ended, as recorded on the task row.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub result: TaskResult,
    pub output: Option<String>,
    pub session_id: Option<String>,
    /// Figures the run reported; a missing one keeps what the row has (its progress so far).
    pub usage: Usage,
    pub diff_stats: Option<String>,
    pub report_file: Option<String>,
}

impl Outcome {
    /// An outcome with `result` and nothing else known yet.
    pub fn new(result: TaskResult) -> Outcome {
        Outcome {
            result,
            output: None,
            session_id: None,
            usage: Usage::default(),
            diff_stats: None,
            report_file: None,
        }
    }
}

impl Store {
    /// Atomically take the next ready task (pending, dependency completed, pickup order) for
    /// `worker`, optionally only among `only` and only in `scope` (a group, tags). The write lock
    /// is taken before reading, so any number of workers in any number of processes never take
    /// the same task twice.
    ///
    /// With `max_running`, nothing is claimed while that many agents already run in the project
    /// (tasks in progress under a live lease, counted in the same transaction): [`Claim::Full`].
    pub fn claim_next_task<'a>(
        &self,
        worker: WorkerId,
        only: &[TaskId],
        skip: &[TaskId],
        scope: impl Into<super::Scope<'a>>,
        max_running: Option<u32>,
    ) -> Result<Claim> {
        let scope = scope.into();
        let list = |ids: &[TaskId]| -> String {
            ids.iter()
                .map(TaskId::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        // A/B runs (`gza ab`) are run only by the experiment, which names them.
        let mut filter = if only.is_empty() {
            crate::ab::not_ab_run("t")
        } else {
            format!(" AND t.id IN ({})", list(only))
        };
        if !skip.is_empty() {
            filter.push_str(&format!(" AND t.id NOT IN ({})", list(skip)));
        }
        filter.push_str(&scope.condition(self.backend(), "t", 4, 6));
        // On PostgreSQL the candidate row is locked and rows other transactions hold are skipped
        // (FOR UPDATE SKIP LOCKED), inside the transaction that holds the project's write lock
        // and counts the running agents: one claim at a time per project across machines, never
        // waiting on a row another writer holds.
        let lock = match self.backend() {
            Backend::Sqlite => "",
            Backend::Postgres => " FOR UPDATE OF t SKIP LOCKED",
        };
        let sql = format!(
            "UPDATE tasks SET status = 'in_progress', started_at = ?1, running_pid = ?2, \
               running_pid_start = ?3, lease_id = ?5, completed_at = NULL, failure_reason = NULL, \
               claim_token = ?7 \
             WHERE id = (SELECT t.id FROM tasks t LEFT JOIN tasks d ON d.id = t.depends_on \
                         WHERE t.status = 'pending' \
                           AND (t.depends_on IS NULL OR d.status = 'completed'){filter} \
                         ORDER BY t.urgent DESC, t.id LIMIT 1{lock}) \
             RETURNING id"
        );
        let stale = self.stale_before();
        // This claim's token, written on the task it takes: should the connection go while its
        // commit is on the way, the claim run again on a new connection first looks for it.
        static CLAIMS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let token = format!(
            "{}#{}",
            worker.lease_key(),
            CLAIMS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let claimed = self.immediate_retrying(|tx, attempt| {
            if attempt == Attempt::CommitInDoubt
                && let Some(task) = tx.query_opt(
                    &format!(
                        "SELECT {TASK_COLUMNS} FROM tasks WHERE claim_token = ?1 \
                         AND status = 'in_progress' AND running_pid = ?2 \
                         AND lease_id IS NOT DISTINCT FROM ?3"
                    ),
                    params![token, worker.pid, worker.lease],
                    task_from_row,
                )?
            {
                tracing::warn!(task = %task.id, "the claim committed before the connection went");
                return Ok(Claim::Task(Box::new(task)));
            }
            if let Some(lease) = worker.lease {
                let fresh: i64 = tx.one(
                    &format!(
                        "SELECT COUNT(*) FROM worker_leases WHERE id = ?1 AND heartbeat_at >= {stale}"
                    ),
                    params![lease],
                )?;
                if fresh == 0 {
                    return Ok(Claim::LeaseLost);
                }
            }
            if let Some(max) = max_running
                && super::leases::running_agents(tx)? >= i64::from(max)
            {
                return Ok(Claim::Full);
            }
            let id: Option<TaskId> = tx.query_opt(
                &sql,
                params![
                    now_timestamp(),
                    worker.pid,
                    worker.start,
                    scope.group,
                    worker.lease,
                    scope.tags_param(),
                    token
                ],
                |r| r.get(0),
            )?;
            Ok(match id {
                None => Claim::Empty,
                Some(id) => Claim::Task(Box::new(tx.query_row(
                    &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1"),
                    params![id],
                    task_from_row,
                )?)),
            })
        })?;
        Ok(claimed)
    }

    /// Run `f` as [`Store::immediate`] would run its writes, then undo everything it wrote: a
    /// preview that goes through the very code of the real thing (`learnings update --dry-run`).
    /// Statements run in one transaction that holds the write lock; each [`Store::immediate`]
    /// inside is a savepoint of it ([`crate::db::Db::preview`]); at the end it is rolled back,
    /// whatever `f` returned. Files and processes `f` touches are its own to leave alone.
    pub fn preview<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        self.db.preview(f).map_err(|e| self.err(e))?
    }

    /// Run `f` in a transaction that holds the write lock from its start (see
    /// [`crate::db::Db::transaction`]). A wait for the lock or a transaction of [`SLOW`] or more
    /// is traced (`-vv`). Inside [`Store::preview`], `f` runs in a savepoint of the preview's
    /// transaction instead.
    pub(crate) fn immediate<T>(&self, f: impl FnOnce(&Tx) -> DbResult<T>) -> Result<T> {
        self.immediate_once(f).map_err(|(_, e)| self.err(e))
    }

    /// [`Store::immediate`], telling where a failure struck: before the commit was sent (the
    /// transaction surely rolled back) or at it.
    fn immediate_once<T>(
        &self,
        f: impl FnOnce(&Tx) -> DbResult<T>,
    ) -> std::result::Result<T, (Attempt, DbError)> {
        let asked = std::time::Instant::now();
        let before = |e| (Attempt::AfterRollback, e);
        let tx = self.db.transaction().map_err(before)?;
        let waited = asked.elapsed();
        if waited >= SLOW {
            // Another process held the write lock: the busy timeout waited it out.
            tracing::debug!(ms = waited.as_millis() as u64, "waited for the write lock");
        }
        let value = f(&tx).map_err(before)?;
        tx.commit().map_err(|e| (Attempt::CommitInDoubt, e))?;
        let took = asked.elapsed() - waited;
        if took >= SLOW {
            tracing::debug!(ms = took.as_millis() as u64, "slow write transaction");
        }
        Ok(value)
    }

    /// [`Store::immediate`] for a transaction that may run again whole when the connection is
    /// lost under it (PostgreSQL restarted, the network went): the connection is opened again
    /// (with backoff, within the reconnect budget) and `f` runs again, at most
    /// [`TX_ATTEMPTS`] times in all, told whether an earlier attempt may have committed
    /// ([`Attempt::CommitInDoubt`]: the connection went while the commit was on its way). Only
    /// for transactions that are safe to run again: `f` writes nothing but the database, and
    /// its writes are fenced (by status and lease) or idempotent, or it checks first what a
    /// commit in doubt did (a claim's token).
    pub(crate) fn immediate_retrying<T>(
        &self,
        mut f: impl FnMut(&Tx, Attempt) -> DbResult<T>,
    ) -> Result<T> {
        let mut attempt = Attempt::First;
        let mut tries = 1;
        loop {
            match self.immediate_once(|tx| f(tx, attempt)) {
                Ok(value) => return Ok(value),
                Err((how, e))
                    if tries < TX_ATTEMPTS
                        && crate::db::Db::is_lost(&e)
                        && !self.db.in_preview() =>
                {
                    tracing::warn!(error = %e, "the connection was lost in a transaction; running it again");
                    tries += 1;
                    // Once in doubt, in doubt until a commit is seen.
                    if attempt != Attempt::CommitInDoubt {
                        attempt = how;
                    }
                }
                Err((_, e)) => return Err(self.err(e)),
            }
        }
    }

    /// Record where a claimed task runs, and, for a task on a worktree of its own, where its
    /// branch started (`base`): one statement, not two, as every task pays a round trip for
    /// each on a far database.
    pub fn set_run_location(
        &self,
        id: TaskId,
        branch: Option<&str>,
        worktree: Option<&str>,
        log_file: &str,
        base: Option<&gza_core::task::Base>,
    ) -> Result<()> {
        self.db
            .execute(
                "UPDATE tasks SET branch = ?2, worktree = ?3, log_file = ?4, \
                   base_branch = CASE WHEN ?5 THEN ?6 ELSE base_branch END, \
                   base_commit = CASE WHEN ?5 THEN ?7 ELSE base_commit END \
                 WHERE id = ?1",
                params![
                    id,
                    branch,
                    worktree,
                    log_file,
                    base.is_some(),
                    base.and_then(|b| b.branch.as_deref()),
                    base.map(|b| b.commit.as_str())
                ],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Record whether a task's raw logs are redacted as they are written.
    pub fn set_log_redacted(&self, id: TaskId, redacted: bool) -> Result<()> {
        self.db
            .execute(
                "UPDATE tasks SET log_redacted = ?2 WHERE id = ?1",
                params![id, redacted],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Whether a task's raw logs were redacted as they were written; `None` when no gza that
    /// redacts raw logs wrote them.
    pub fn log_redacted(&self, id: TaskId) -> Result<Option<bool>> {
        self.db
            .one("SELECT log_redacted FROM tasks WHERE id = ?1", params![id])
            .map_err(|e| self.err(e))
    }

    /// Record the agent process of a running task.
    pub fn set_agent_process(&self, id: TaskId, agent: ProcessId) -> Result<()> {
        self.db
            .execute(
                "UPDATE tasks SET agent_pid = ?2, agent_start = ?3 WHERE id = ?1 AND status = 'in_progress'",
                params![id, agent.pid, agent.start],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Record progress of a running task, for `gza ps`.
    pub fn set_progress(
        &self,
        id: TaskId,
        turns: i64,
        cost: Option<f64>,
        session_id: Option<&str>,
    ) -> Result<()> {
        self.db
            .execute(
                "UPDATE tasks SET num_turns = ?2, cost_usd = COALESCE(?3, cost_usd), \
                 session_id = COALESCE(?4, session_id) WHERE id = ?1 AND status = 'in_progress'",
                params![
                    id,
                    turns,
                    cost,
                    session_id.map(super::learnings::stored_session).as_deref()
                ],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Record how task `id` ended and run `hook` in the same transaction.
    ///
    /// The status is only set while the task is still in progress under `worker` (its pid and
    /// the lease it was claimed under); if someone else already ended it (`gza kill`), their
    /// status stands and only the figures are filled in. A task reaped while its worker was
    /// away (its lease expired) no longer names that lease: nothing of the late outcome is
    /// written. The hook runs inside a savepoint: its error rolls back its own writes and is
    /// returned beside the outcome, never instead of it.
    pub fn finish_task<H>(
        &self,
        id: TaskId,
        worker: WorkerId,
        outcome: &Outcome,
        hook: H,
    ) -> Result<FinishReport>
    where
        H: FnMut(&Tx, &Task) -> std::result::Result<(), String>,
    {
        let mut hook = hook;
        let mut hook_error = None;
        let mut fenced = false;
        // Safe to run again whole on a new connection: the status is written only while the
        // task is in progress under this worker's lease, so a commit in doubt that went through
        // makes the second run write the same figures and no second ending (nor hook).
        let owned = self.immediate_retrying(|tx, _| {
            hook_error = None;
            let result = &outcome.result;
            let owned = tx.execute(
                "UPDATE tasks SET status = ?3, failure_reason = ?4, completed_at = ?5, \
                   running_pid = NULL, running_pid_start = NULL, agent_pid = NULL, agent_start = NULL \
                 WHERE id = ?1 AND status = 'in_progress' AND running_pid = ?2 \
                   AND lease_id IS NOT DISTINCT FROM ?6",
                params![
                    id,
                    worker.pid,
                    result.status().as_str(),
                    result.failure_reason(),
                    now_timestamp(),
                    worker.lease
                ],
            )? == 1;
            let figures = tx.execute(
                "UPDATE tasks SET output = COALESCE(?2, output), session_id = COALESCE(?3, session_id), \
                   cost_usd = COALESCE(?4, cost_usd), input_tokens = COALESCE(?5, input_tokens), \
                   output_tokens = COALESCE(?6, output_tokens), num_turns = COALESCE(?7, num_turns), \
                   duration_seconds = COALESCE(?8, duration_seconds), diff_stats = COALESCE(?9, diff_stats), \
                   report_file = COALESCE(?10, report_file), \
                   review_verdict = COALESCE(?11, review_verdict) \
                 WHERE id = ?1 AND lease_id IS NOT DISTINCT FROM ?12",
                params![
                    id,
                    outcome.output,
                    outcome.session_id,
                    outcome.usage.cost_usd,
                    outcome.usage.input_tokens,
                    outcome.usage.output_tokens,
                    outcome.usage.num_turns,
                    outcome.usage.duration_seconds,
                    outcome.diff_stats,
                    outcome.report_file,
                    result.review_verdict().map(|v| v.as_str()),
                    worker.lease
                ],
            )?;
            fenced = figures == 0;
            if owned {
                let task = tx.query_row(
                    &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1"),
                    params![id],
                    task_from_row,
                )?;
                if let Err(e) = tx.savepoint("completion_hook", |tx| hook(tx, &task))? {
                    hook_error = Some(e);
                }
            }
            Ok(owned)
        })?;
        Ok(FinishReport {
            owned,
            fenced,
            hook_error,
        })
    }

    /// Whether task `id` is still in progress under `worker` (its pid and lease): false once it
    /// was killed or reaped.
    pub fn still_running_under(&self, id: TaskId, worker: WorkerId) -> Result<bool> {
        self.db
            .one(
                "SELECT EXISTS (SELECT 1 FROM tasks WHERE id = ?1 AND status = 'in_progress' \
                 AND running_pid = ?2 AND lease_id IS NOT DISTINCT FROM ?3)",
                params![id, worker.pid, worker.lease],
            )
            .map_err(|e| self.err(e))
    }

    /// Whether task `id` still names the lease `worker` claimed it under (whatever its status):
    /// false once it was reaped, so a worker that was away pushes nothing of it.
    pub fn holds_lease(&self, id: TaskId, worker: WorkerId) -> Result<bool> {
        self.db
            .one(
                "SELECT EXISTS (SELECT 1 FROM tasks WHERE id = ?1 \
                 AND lease_id IS NOT DISTINCT FROM ?2)",
                params![id, worker.lease],
            )
            .map_err(|e| self.err(e))
    }

    /// Tasks in progress.
    pub fn in_progress_tasks(&self) -> Result<Vec<Task>> {
        self.db
            .query_map(
                &format!(
                    "SELECT {TASK_COLUMNS} FROM tasks WHERE status = 'in_progress' ORDER BY id"
                ),
                params![],
                task_from_row,
            )
            .map_err(|e| self.err(e))
    }

    /// Fail a task that is in progress under the worker `pid`, with `reason`. Returns false if it
    /// was no longer in progress under that worker (it finished, or someone else ended it).
    pub fn fail_running_task(
        &self,
        id: TaskId,
        pid: Option<i64>,
        reason: FailureReason,
    ) -> Result<bool> {
        self.immediate_retrying(|tx, _| {
            Ok(tx.execute(
                "UPDATE tasks SET status = 'failed', failure_reason = ?3, completed_at = ?4, \
                   running_pid = NULL, running_pid_start = NULL, agent_pid = NULL, agent_start = NULL \
                 WHERE id = ?1 AND status = 'in_progress' AND running_pid IS NOT DISTINCT FROM ?2",
                params![id, pid, reason, now_timestamp()],
            )? == 1)
        })
    }

    /// Fail a task whose worker is gone (`WORKER_DIED`), if it is still in progress under the
    /// lease it was claimed under (`lease`, `None` for a task claimed without one). The task
    /// stops naming that lease, so its worker, should it come back, writes nothing to it.
    pub fn reap_task(&self, id: TaskId, pid: Option<i64>, lease: Option<i64>) -> Result<bool> {
        self.immediate_retrying(|tx, _| {
            Ok(tx.execute(
                "UPDATE tasks SET status = 'failed', failure_reason = ?4, completed_at = ?5, \
                   running_pid = NULL, running_pid_start = NULL, agent_pid = NULL, agent_start = NULL, \
                   lease_id = NULL \
                 WHERE id = ?1 AND status = 'in_progress' AND running_pid IS NOT DISTINCT FROM ?2 \
                   AND lease_id IS NOT DISTINCT FROM ?3",
                params![
                    id,
                    pid,
                    lease,
                    FailureReason::WorkerDied,
                    now_timestamp()
                ],
            )? == 1)
        })
    }

    /// Put a claimed task back in the queue (the run could not start, through no fault of the task).
    pub fn release_task(&self, id: TaskId, worker: WorkerId) -> Result<()> {
        self.immediate_retrying(|tx, _| {
            tx.execute(
                "UPDATE tasks SET status = 'pending', started_at = NULL, running_pid = NULL, \
                   running_pid_start = NULL, lease_id = NULL \
                 WHERE id = ?1 AND running_pid = ?2 AND status = 'in_progress' \
                   AND lease_id IS NOT DISTINCT FROM ?3",
                params![id, worker.pid, worker.lease],
            )
        })
        .map(|_| ())
    }

    /// Finished tasks (completed, failed, dropped) that still record a worktree, finished
    /// before `before` (`None`: any time), oldest first, at most `limit`.
    pub fn finished_with_worktrees(
        &self,
        before: Option<DateTime<Utc>>,
        limit: usize,
    ) -> Result<Vec<Leftover>> {
        self.leftovers("worktree", before, limit)
    }

    /// Finished tasks that still have a log file, finished before `before`, oldest first.
    pub fn finished_with_logs(
        &self,
        before: Option<DateTime<Utc>>,
        limit: usize,
    ) -> Result<Vec<Leftover>> {
        self.leftovers("log_file", before, limit)
    }

    fn leftovers(
        &self,
        column: &str,
        before: Option<DateTime<Utc>>,
        limit: usize,
    ) -> Result<Vec<Leftover>> {
        // Stored times compare as text: they are all written in one format.
        let before = before.as_ref().map(gza_core::time::to_db);
        // The partial indexes of V7 hold only these rows; the planner would rather walk every
        // finished task by status.
        let index = if column == "worktree" {
            "tasks_worktree_kept"
        } else {
            "tasks_log_kept"
        };
        self.db
            .query_map(
                &format!(
                    "SELECT id, {column}, branch FROM tasks INDEXED BY {index} WHERE {column} IS NOT NULL \
                     AND status IN ('completed', 'failed', 'dropped') \
                     AND (CAST(?1 AS TEXT) IS NULL OR completed_at < ?1) ORDER BY completed_at, id LIMIT ?2"
                ),
                params![before, i64::try_from(limit).unwrap_or(i64::MAX)],
                |r| {
                    Ok(Leftover {
                        id: r.get(0)?,
                        path: r.get(1)?,
                        branch: r.get(2)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// A pending or running task that uses `leftover`'s worktree or branch, or is based on its
    /// task (an improve task continues its branch there), if any.
    pub fn task_using(&self, leftover: &Leftover) -> Result<Option<LinkedTask>> {
        self.db
            .query_opt(
                "SELECT id, status FROM tasks WHERE status IN ('pending', 'in_progress') \
                   AND (worktree = ?1 OR (CAST(?2 AS TEXT) IS NOT NULL AND branch = ?2) OR based_on = ?3) \
                 ORDER BY id LIMIT 1",
                params![leftover.path, leftover.branch, leftover.id],
                |r| {
                    let status: String = r.get(1)?;
                    Ok(LinkedTask {
                        id: r.get(0)?,
                        status: TaskStatus::parse(&status).unwrap_or(TaskStatus::Pending),
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// How many finished tasks still have a log file, finished before `before`.
    pub fn count_finished_with_logs(&self, before: Option<DateTime<Utc>>) -> Result<i64> {
        let before = before.as_ref().map(gza_core::time::to_db);
        self.db
            .one(
                "SELECT COUNT(*) FROM tasks INDEXED BY tasks_log_kept WHERE log_file IS NOT NULL \
                 AND status IN ('completed', 'failed', 'dropped') \
                 AND (CAST(?1 AS TEXT) IS NULL OR completed_at < ?1)",
                params![before],
            )
            .map_err(|e| self.err(e))
    }

    /// Forget a task's log once it has been removed.
    pub fn clear_log(&self, id: TaskId) -> Result<()> {
        self.db
            .execute(
                "UPDATE tasks SET log_file = NULL WHERE id = ?1",
                params![id],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Forget a task's worktree once it has been removed.
    pub fn clear_worktree(&self, id: TaskId) -> Result<()> {
        self.db
            .execute(
                "UPDATE tasks SET worktree = NULL WHERE id = ?1",
                params![id],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// The branch of a task, if it has one (for tasks based on it).
    pub fn branch_of(&self, id: TaskId) -> Result<Option<String>> {
        self.db
            .query_opt("SELECT branch FROM tasks WHERE id = ?1", params![id], |r| {
                r.get(0)
            })
            .map_err(|e| self.err(e))?
            .ok_or(Error::TaskNotFound(id))
    }
}

/// What [`Store::finish_task`] did.
#[derive(Debug)]
pub struct FinishReport {
    /// False when another process had already ended the task; its status was kept.
    pub owned: bool,
    /// True when the task no longer names the lease it was claimed under (it was reaped while
    /// its worker was away): nothing of the outcome was written.
    pub fenced: bool,
    /// The completion hook's error, if it failed (its writes were rolled back).
    pub hook_error: Option<String>,
}
