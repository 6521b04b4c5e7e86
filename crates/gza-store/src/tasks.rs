//! Queries on the `tasks` table.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::Store;
use super::tags::Scope;
use crate::db::{DbError, DbResult, Row, Val};
use gza_core::error::{Error, Result};
use gza_core::task::{
    Base, FailureReason, Merge, ReviewVerdict, StateColumns, Tag, Task, TaskId, TaskState,
    TaskStatus, TaskType, Usage, now_timestamp,
};

pub(super) const TASK_COLUMNS: &str = "id, prompt, task_type, status, based_on, depends_on, group_name, spec, \
     model, provider, skip_learnings, urgent, created_at, started_at, completed_at, running_pid, \
     branch, log_file, output, failure_reason, cost_usd, input_tokens, output_tokens, num_turns, \
     duration_seconds, session_id, running_pid_start, agent_pid, agent_start, worktree, diff_stats, \
     report_file, resume_session_id, learnings_version, base_branch, base_commit, review_verdict, \
     merged_at, merged_into, pr_url";

/// Characters of a prompt kept in list views; full prompts can be megabytes.
pub(crate) const SUMMARY_PROMPT_CHARS: i64 = 200;

/// A task to insert.
#[derive(Debug, Clone, Default)]
pub struct NewTask {
    pub prompt: String,
    /// Continue this agent session (`gza resume`).
    pub resume_session_id: Option<String>,
    pub task_type: Option<TaskType>,
    pub based_on: Option<TaskId>,
    pub depends_on: Option<TaskId>,
    pub group: Option<String>,
    pub spec: Option<String>,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub skip_learnings: bool,
    pub urgent: bool,
    /// Tags besides those of the task it is based on, which it always carries.
    pub tags: Vec<Tag>,
}

impl NewTask {
    /// A new pending task that runs `task` again: same prompt and options, based on it.
    pub fn follow_up(task: &Task) -> NewTask {
        NewTask {
            prompt: task.prompt.clone(),
            resume_session_id: None,
            task_type: Some(task.task_type),
            based_on: Some(task.id),
            // An improve task keeps the review it addresses; other dependencies have run.
            depends_on: task
                .depends_on
                .filter(|_| task.task_type == TaskType::Improve),
            group: task.group.clone(),
            spec: task.spec.clone(),
            model: task.model.clone(),
            provider: task.provider.clone(),
            skip_learnings: task.skip_learnings,
            urgent: false,
            tags: Vec::new(),
        }
    }
}

/// Changes to a pending task; `None` leaves a field as it is, `Some(None)` clears it.
#[derive(Debug, Clone, Default)]
pub struct TaskEdit {
    pub prompt: Option<String>,
    pub task_type: Option<TaskType>,
    pub based_on: Option<Option<TaskId>>,
    pub depends_on: Option<Option<TaskId>>,
    pub group: Option<Option<String>>,
    pub spec: Option<Option<String>>,
    pub model: Option<Option<String>>,
    pub provider: Option<Option<String>>,
    pub skip_learnings: Option<bool>,
    pub urgent: Option<bool>,
}

/// The columns list views need, with the prompt cut short.
#[derive(Debug, Clone)]
pub struct TaskSummary {
    pub id: TaskId,
    pub prompt: String,
    pub task_type: TaskType,
    pub state: TaskState,
    pub urgent: bool,
    pub depends_on: Option<TaskId>,
    pub group: Option<String>,
    pub created_at: DateTime<Utc>,
    pub cost_usd: Option<f64>,
    pub duration_seconds: Option<f64>,
}

impl TaskSummary {
    pub fn status(&self) -> TaskStatus {
        self.state.status()
    }
}

/// A task summary as `gza history --json` and `gza next --json` print it.
#[derive(Serialize)]
struct SummaryRecord<'a> {
    id: TaskId,
    prompt: &'a str,
    task_type: TaskType,
    status: TaskStatus,
    urgent: bool,
    depends_on: Option<TaskId>,
    group: Option<&'a str>,
    #[serde(serialize_with = "gza_core::time::serialize")]
    created_at: DateTime<Utc>,
    #[serde(serialize_with = "gza_core::time::serialize_opt")]
    completed_at: Option<DateTime<Utc>>,
    failure_reason: Option<&'a FailureReason>,
    cost_usd: Option<f64>,
    duration_seconds: Option<f64>,
    review_verdict: Option<ReviewVerdict>,
}

impl Serialize for TaskSummary {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        SummaryRecord {
            id: self.id,
            prompt: &self.prompt,
            task_type: self.task_type,
            status: self.status(),
            urgent: self.urgent,
            depends_on: self.depends_on,
            group: self.group.as_deref(),
            created_at: self.created_at,
            completed_at: self.state.completed_at(),
            failure_reason: self.state.failure_reason(),
            cost_usd: self.cost_usd,
            duration_seconds: self.duration_seconds,
            review_verdict: self.state.review_verdict(),
        }
        .serialize(s)
    }
}

/// A task another one refers to, with its status: what a pending task waits for, or what still
/// uses a finished task's worktree. Printed as `[id, "status"]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkedTask {
    pub id: TaskId,
    pub status: TaskStatus,
}

impl Serialize for LinkedTask {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        (self.id, self.status).serialize(s)
    }
}

/// A pending task in pickup order, and what (if anything) it waits for.
#[derive(Debug, Clone, Serialize)]
pub struct QueueEntry {
    #[serde(flatten)]
    pub task: TaskSummary,
    /// The unfinished task this one depends on, with that task's status.
    pub blocked_by: Option<LinkedTask>,
}

/// How many pending tasks are ready to run and how many wait on a dependency, each counted up
/// to a cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PendingCounts {
    pub ready: i64,
    pub blocked: i64,
}

/// Filters for `gza history`.
#[derive(Debug, Clone, Default)]
pub struct HistoryFilter {
    pub limit: Option<u32>,
    pub status: Option<TaskStatus>,
    pub task_type: Option<TaskType>,
    pub group: Option<String>,
    /// Only tasks with any of these tags (all of them, with `all_tags`).
    pub tags: Vec<Tag>,
    pub all_tags: bool,
}

impl HistoryFilter {
    /// The group and tags asked for.
    pub fn scope(&self) -> Scope<'_> {
        Scope {
            group: self.group.as_deref(),
            tags: &self.tags,
            all_tags: self.all_tags,
        }
    }
}

/// Counts and totals for `gza stats`, in the shape `gza stats --json` prints.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct Stats {
    pub total: i64,
    pub by_status: StatusCounts,
    pub cost_usd: Figure,
    pub tokens: Tokens,
    pub duration_seconds: Figure,
    /// The runs of `gza ab` experiments, kept out of everything above (they are measurements,
    /// not the project's work, as the queue and history's counts keep them out) but not hidden:
    /// they cost money. Absent from JSON when there are none.
    #[serde(skip_serializing_if = "AbTotals::is_empty")]
    pub ab_runs: AbTotals,
}

/// What the A/B experiments' runs amount to.
#[derive(Debug, Clone, Copy, Serialize, Default, PartialEq)]
pub struct AbTotals {
    pub runs: i64,
    pub cost_usd: f64,
    pub duration_seconds: f64,
}

impl AbTotals {
    fn is_empty(&self) -> bool {
        self.runs == 0
    }
}

/// How many tasks have each status.
#[derive(Debug, Clone, Copy, Serialize, Default, PartialEq, Eq)]
pub struct StatusCounts {
    pub pending: i64,
    pub in_progress: i64,
    pub completed: i64,
    pub failed: i64,
    pub dropped: i64,
}

impl StatusCounts {
    /// The count of `status`.
    pub fn get(&self, status: TaskStatus) -> i64 {
        match status {
            TaskStatus::Pending => self.pending,
            TaskStatus::InProgress => self.in_progress,
            TaskStatus::Completed => self.completed,
            TaskStatus::Failed => self.failed,
            TaskStatus::Dropped => self.dropped,
        }
    }

    fn get_mut(&mut self, status: TaskStatus) -> &mut i64 {
        match status {
            TaskStatus::Pending => &mut self.pending,
            TaskStatus::InProgress => &mut self.in_progress,
            TaskStatus::Completed => &mut self.completed,
            TaskStatus::Failed => &mut self.failed,
            TaskStatus::Dropped => &mut self.dropped,
        }
    }

    /// Every status with its count, in the order statuses are listed.
    pub fn iter(&self) -> impl Iterator<Item = (TaskStatus, i64)> + '_ {
        TaskStatus::ALL.iter().map(|s| (*s, self.get(*s)))
    }
}

/// A total over the tasks, and its mean over the tasks that have the figure.
#[derive(Debug, Clone, Copy, Serialize, Default, PartialEq)]
pub struct Figure {
    pub total: f64,
    pub mean: Option<f64>,
}

#[derive(Debug, Clone, Copy, Serialize, Default, PartialEq, Eq)]
pub struct Tokens {
    pub input: i64,
    pub output: i64,
}

/// A value in a task row that gza cannot read, named by its task and column so the error says
/// which row to correct (`classify` makes it an [`Error::BadRow`]).
#[derive(Debug)]
struct BadValue {
    task: Option<i64>,
    column: String,
    text: String,
    expected: &'static str,
}

impl std::fmt::Display for BadValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.task {
            Some(id) => write!(f, "task {id}'s {}", self.column)?,
            None => write!(f, "a task's {}", self.column)?,
        }
        write!(f, " is {:?}, not {}", self.text, self.expected)
    }
}

impl std::error::Error for BadValue {}

/// The error for `text` in column `idx` of a task row (whose first column is its id).
fn bad_value(row: &Row, idx: usize, text: &str, expected: &'static str) -> DbError {
    DbError::Bad(
        BadValue {
            task: row.get(0).ok(),
            column: row.column_name(idx),
            text: text.to_string(),
            expected,
        }
        .to_string(),
    )
}

fn parse_enum<T>(row: &Row, idx: usize, parse: fn(&str) -> Option<T>) -> DbResult<T> {
    let text: String = row.get(idx)?;
    parse(&text).ok_or_else(|| bad_value(row, idx, &text, "a value this gza knows"))
}

fn optional_enum<T>(row: &Row, idx: usize, parse: fn(&str) -> Option<T>) -> DbResult<Option<T>> {
    match row.value(idx)? {
        Val::Null => Ok(None),
        _ => parse_enum(row, idx, parse).map(Some),
    }
}

/// A stored time; text that is no time is an error naming the value.
pub(super) fn time_column(row: &Row, idx: usize) -> DbResult<Option<DateTime<Utc>>> {
    let text: Option<String> = row.get(idx)?;
    text.map(|t| {
        gza_core::time::parse_db(&t).ok_or_else(|| {
            bad_value(
                row,
                idx,
                &t,
                "a time as gza writes it (2026-11-22T07:50:09Z)",
            )
        })
    })
    .transpose()
}

fn required_time(row: &Row, idx: usize) -> DbResult<DateTime<Utc>> {
    time_column(row, idx)?.ok_or_else(|| DbError::Column {
        index: idx,
        name: row.column_name(idx),
        message: "NULL where a time was expected".into(),
    })
}

/// Where a row's state columns are: the same columns, at other places in other queries.
struct StateAt {
    status: usize,
    started_at: usize,
    completed_at: usize,
    running_pid: usize,
    running_pid_start: usize,
    agent_pid: usize,
    agent_start: usize,
    failure_reason: usize,
    review_verdict: usize,
}

fn state_from_row(row: &Row, at: &StateAt) -> DbResult<TaskState> {
    Ok(TaskState::from_columns(StateColumns {
        status: parse_enum(row, at.status, TaskStatus::parse)?,
        started_at: time_column(row, at.started_at)?,
        completed_at: time_column(row, at.completed_at)?,
        running_pid: row.get(at.running_pid)?,
        running_pid_start: row.get(at.running_pid_start)?,
        agent_pid: row.get(at.agent_pid)?,
        agent_start: row.get(at.agent_start)?,
        failure_reason: row.get(at.failure_reason)?,
        review_verdict: optional_enum(row, at.review_verdict, ReviewVerdict::parse)?,
    }))
}

pub(super) fn task_from_row(row: &Row) -> DbResult<Task> {
    let state = state_from_row(
        row,
        &StateAt {
            status: 3,
            started_at: 13,
            completed_at: 14,
            running_pid: 15,
            running_pid_start: 26,
            agent_pid: 27,
            agent_start: 28,
            failure_reason: 19,
            review_verdict: 36,
        },
    )?;
    let base_branch: Option<String> = row.get(34)?;
    let base_commit: Option<String> = row.get(35)?;
    let merged_at = time_column(row, 37)?;
    let merged_into: Option<String> = row.get(38)?;
    Ok(Task {
        id: row.get(0)?,
        prompt: row.get(1)?,
        task_type: parse_enum(row, 2, TaskType::parse)?,
        created_at: required_time(row, 12)?,
        based_on: row.get(4)?,
        depends_on: row.get(5)?,
        group: row.get(6)?,
        spec: row.get(7)?,
        model: row.get(8)?,
        provider: row.get(9)?,
        skip_learnings: row.get(10)?,
        urgent: row.get(11)?,
        resume_session_id: row.get(32)?,
        state,
        branch: row.get(16)?,
        worktree: row.get(29)?,
        log_file: row.get(17)?,
        base: base_commit.map(|commit| Base {
            branch: base_branch,
            commit,
        }),
        session_id: row.get(25)?,
        output: row.get(18)?,
        usage: Usage {
            cost_usd: row.get(20)?,
            input_tokens: row.get(21)?,
            output_tokens: row.get(22)?,
            num_turns: row.get(23)?,
            duration_seconds: row.get(24)?,
        },
        diff_stats: row.get(30)?,
        report_file: row.get(31)?,
        learnings_version: row.get(33)?,
        merged: merged_at
            .zip(merged_into)
            .map(|(at, into)| Merge { at, into }),
        pr_url: row.get(39)?,
    })
}

pub(crate) const SUMMARY_COLUMNS: &str = "t.id, substr(t.prompt, 1, ?1), t.task_type, t.status, t.urgent, \
     t.depends_on, t.group_name, t.created_at, t.completed_at, t.failure_reason, t.cost_usd, \
     t.duration_seconds, t.review_verdict, t.started_at, t.running_pid, t.running_pid_start, \
     t.agent_pid, t.agent_start";

/// Columns after [`SUMMARY_COLUMNS`] start here.
pub(crate) const AFTER_SUMMARY: usize = 18;

pub(crate) fn summary_from_row(row: &Row) -> DbResult<TaskSummary> {
    let state = state_from_row(
        row,
        &StateAt {
            status: 3,
            started_at: 13,
            completed_at: 8,
            running_pid: 14,
            running_pid_start: 15,
            agent_pid: 16,
            agent_start: 17,
            failure_reason: 9,
            review_verdict: 12,
        },
    )?;
    Ok(TaskSummary {
        id: row.get(0)?,
        prompt: row.get(1)?,
        task_type: parse_enum(row, 2, TaskType::parse)?,
        state,
        urgent: row.get(4)?,
        depends_on: row.get(5)?,
        group: row.get(6)?,
        created_at: required_time(row, 7)?,
        cost_usd: row.get(10)?,
        duration_seconds: row.get(11)?,
    })
}

/// The id a new task gets: above every task there is and every task ever deleted (V12), so an
/// id, and the branch named after it, always means one task.
pub(crate) fn next_task_id(backend: crate::db::Backend) -> String {
    format!(
        "(SELECT {} + 1)",
        backend.greatest(
            "COALESCE((SELECT MAX(id) FROM tasks), 0)",
            "COALESCE((SELECT MAX(id) FROM task_id_floor), 0)"
        )
    )
}

impl Store {
    /// Insert a task and return its id. References must name existing tasks. A task based on
    /// another carries that task's tags, besides its own.
    pub fn insert_task(&self, new: &NewTask) -> Result<TaskId> {
        for id in [new.based_on, new.depends_on].into_iter().flatten() {
            self.require_task(id)?;
        }
        // Under the write lock: the next id is read and taken in one step, on any backend.
        let next_id = next_task_id(self.backend());
        self.immediate(|tx| {
            let id: TaskId = tx.one(
                &format!(
                    "INSERT INTO tasks (id, prompt, task_type, based_on, depends_on, group_name, \
                     spec, model, provider, skip_learnings, urgent, created_at, resume_session_id) \
                     VALUES ({next_id}, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) \
                     RETURNING id"
                ),
                params![
                    new.prompt,
                    new.task_type.unwrap_or(TaskType::Implement).as_str(),
                    new.based_on,
                    new.depends_on,
                    new.group,
                    new.spec,
                    new.model,
                    new.provider,
                    new.skip_learnings,
                    new.urgent,
                    now_timestamp(),
                    new.resume_session_id,
                ],
            )?;
            if let Some(from) = new.based_on {
                super::tags::inherit(tx, from, id)?;
            }
            super::tags::add(tx, id, &new.tags)?;
            Ok(id)
        })
    }

    /// The task with `id`, or [`Error::TaskNotFound`].
    pub fn get_task(&self, id: TaskId) -> Result<Task> {
        self.db
            .query_opt(
                &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1"),
                params![id],
                task_from_row,
            )
            .map_err(|e| self.err(e))?
            .ok_or(Error::TaskNotFound(id))
    }

    pub(crate) fn require_task(&self, id: TaskId) -> Result<()> {
        let exists: bool = self
            .db
            .one(
                "SELECT EXISTS (SELECT 1 FROM tasks WHERE id = ?1)",
                params![id],
            )
            .map_err(|e| self.err(e))?;
        if exists {
            Ok(())
        } else {
            Err(Error::TaskNotFound(id))
        }
    }

    /// Tasks newest first, filtered.
    pub fn history(&self, filter: &HistoryFilter) -> Result<Vec<TaskSummary>> {
        let mut sql = format!("SELECT {SUMMARY_COLUMNS} FROM tasks t WHERE 1 = 1");
        let mut values: Vec<&dyn crate::db::ToParam> = vec![&SUMMARY_PROMPT_CHARS];
        let status = filter.status.map(|s| s.as_str());
        let task_type = filter.task_type.map(|t| t.as_str());
        let limit = filter.limit.map_or(i64::MAX, i64::from);
        if let Some(status) = &status {
            values.push(status);
            sql.push_str(&format!(" AND t.status = ?{}", values.len()));
        }
        if let Some(task_type) = &task_type {
            values.push(task_type);
            sql.push_str(&format!(" AND t.task_type = ?{}", values.len()));
        }
        // The highest parameter must appear in the statement; an absent group or tag binds NULL.
        let scope = filter.scope();
        let tags = scope.tags_param();
        values.push(&scope.group);
        let group_at = values.len();
        values.push(&tags);
        sql.push_str(&scope.condition(self.backend(), "t", group_at, values.len()));
        values.push(&limit);
        sql.push_str(&format!(" ORDER BY t.id DESC LIMIT ?{}", values.len()));
        self.db
            .query_map(&sql, &values, summary_from_row)
            .map_err(|e| self.err(e))
    }

    /// Pending tasks in pickup order (urgent first, then oldest), of the scope (a group, tags)
    /// when given. With `include_blocked`, tasks whose dependency is not completed are listed
    /// too, marked with what blocks them. `limit` bounds the number of entries returned.
    pub fn pickup_queue<'a>(
        &self,
        include_blocked: bool,
        limit: Option<u32>,
        scope: impl Into<Scope<'a>>,
    ) -> Result<Vec<QueueEntry>> {
        let scope = scope.into();
        // A/B runs (`gza ab`) wait for their experiment, not in the queue.
        let in_group = scope.condition(self.backend(), "t", 4, 5) + &crate::ab::not_ab_run("t");
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS}, d.status FROM tasks t \
             LEFT JOIN tasks d ON d.id = t.depends_on \
             WHERE t.status = 'pending'{in_group} \
               AND (?2 OR t.depends_on IS NULL OR d.status = 'completed') \
             ORDER BY t.urgent DESC, t.id LIMIT ?3"
        );
        let limit = limit.map_or(i64::MAX, i64::from);
        self.db
            .query_map(
                &sql,
                params![
                    SUMMARY_PROMPT_CHARS,
                    include_blocked,
                    limit,
                    scope.group,
                    scope.tags_param()
                ],
                |row| {
                    let task = summary_from_row(row)?;
                    let dep_status: Option<String> = row.get(AFTER_SUMMARY)?;
                    let blocked_by = match (task.depends_on, dep_status.as_deref()) {
                        (Some(_), Some("completed")) => None,
                        (Some(dep), status) => Some(LinkedTask {
                            id: dep,
                            status: status
                                .and_then(TaskStatus::parse)
                                .unwrap_or(TaskStatus::Dropped),
                        }),
                        (None, _) => None,
                    };
                    Ok(QueueEntry { task, blocked_by })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// How many pending tasks (of the scope, when given) are ready to run, and how many wait on
    /// an unfinished dependency, each counted up to `cap` (so the cost is bounded however long the
    /// queue is): ready ones along the pickup index, blocked ones from the pending-dependency index.
    pub fn pending_counts_capped<'a>(
        &self,
        scope: impl Into<Scope<'a>>,
        cap: i64,
    ) -> Result<PendingCounts> {
        let scope = scope.into();
        let tags = scope.tags_param();
        // A/B runs (`gza ab`) wait for their experiment, not in the queue.
        let in_group = scope.condition(self.backend(), "t", 1, 3) + &crate::ab::not_ab_run("t");
        let ready = self
            .db
            .one(
                // The dependency's status is looked up only for a task that has one: as a join
                // (or an EXISTS, which PostgreSQL hashes), PostgreSQL's planner read every task
                // of the history to count the ready ones (54 ms at 100,000 tasks).
                &format!(
                    "SELECT COUNT(*) FROM (SELECT 1 FROM tasks t \
                     WHERE t.status = 'pending'{in_group} \
                       AND (t.depends_on IS NULL \
                            OR (SELECT d.status FROM tasks d WHERE d.id = t.depends_on) = 'completed') \
                     LIMIT ?2) AS ready"
                ),
                params![scope.group, cap, tags],
            )
            .map_err(|e| self.err(e))?;
        let blocked = self
            .db
            .one(
                &format!(
                    "SELECT COUNT(*) FROM (SELECT 1 FROM tasks t INDEXED BY tasks_pending_deps \
                     LEFT JOIN tasks d ON d.id = t.depends_on \
                     WHERE t.status = 'pending' AND t.depends_on IS NOT NULL{in_group} \
                       AND (d.status IS NULL OR d.status != 'completed') LIMIT ?2) AS blocked"
                ),
                params![scope.group, cap, tags],
            )
            .map_err(|e| self.err(e))?;
        Ok(PendingCounts { ready, blocked })
    }

    /// Whether any task is in `group`.
    pub fn group_exists(&self, group: &str) -> Result<bool> {
        self.db
            .one(
                "SELECT EXISTS (SELECT 1 FROM tasks WHERE group_name = ?1)",
                params![group],
            )
            .map_err(|e| self.err(e))
    }

    /// The groups in use, by name, at most `limit` of them.
    pub fn group_names(&self, limit: u32) -> Result<Vec<String>> {
        self.db
            .query_map(
                "SELECT DISTINCT group_name FROM tasks WHERE group_name IS NOT NULL \
                 ORDER BY group_name LIMIT ?1",
                params![limit],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Apply `edit` to task `id`. References must exist and `depends_on` must not form a cycle.
    pub fn edit_task(&self, id: TaskId, edit: &TaskEdit) -> Result<()> {
        self.require_task(id)?;
        for reference in [edit.based_on, edit.depends_on]
            .into_iter()
            .flatten()
            .flatten()
        {
            if reference == id {
                return Err(Error::Usage(format!("task {id} cannot refer to itself")));
            }
            self.require_task(reference)?;
        }
        if let Some(Some(dep)) = edit.depends_on
            && let Some(path) = self.dependency_path(dep, id)?
        {
            return Err(Error::Usage(format!(
                "--depends-on {dep} would make a cycle ({id} -> {}); choose another task",
                path.iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(" -> ")
            )));
        }
        self.immediate(|tx| {
            let set = |column: &str, value: &dyn crate::db::ToParam| -> DbResult<()> {
                tx.execute(
                    &format!("UPDATE tasks SET {column} = ?1 WHERE id = ?2"),
                    params![value, id],
                )
                .map(|_| ())
            };
            if let Some(p) = &edit.prompt {
                set("prompt", p)?;
            }
            if let Some(t) = edit.task_type {
                set("task_type", &t.as_str())?;
            }
            if let Some(v) = edit.based_on {
                set("based_on", &v)?;
            }
            if let Some(v) = edit.depends_on {
                set("depends_on", &v)?;
            }
            if let Some(v) = &edit.group {
                set("group_name", v)?;
            }
            if let Some(v) = &edit.spec {
                set("spec", v)?;
            }
            if let Some(v) = &edit.model {
                set("model", v)?;
            }
            if let Some(v) = &edit.provider {
                set("provider", v)?;
            }
            if let Some(v) = edit.skip_learnings {
                set("skip_learnings", &v)?;
            }
            if let Some(v) = edit.urgent {
                set("urgent", &v)?;
            }
            Ok(())
        })
    }

    /// The chain of `depends_on` links from `from` that reaches `target`, if any.
    fn dependency_path(&self, from: TaskId, target: TaskId) -> Result<Option<Vec<TaskId>>> {
        let mut path = vec![from];
        let mut current = from;
        // The chain is acyclic by construction, but bound the walk anyway.
        for _ in 0..100_000 {
            if current == target {
                return Ok(Some(path));
            }
            let next: Option<TaskId> = self
                .db
                .query_opt(
                    "SELECT depends_on FROM tasks WHERE id = ?1",
                    params![current],
                    |r| r.get(0),
                )
                .map_err(|e| self.err(e))?
                .flatten();
            match next {
                Some(n) => {
                    path.push(n);
                    current = n;
                }
                None => return Ok(None),
            }
        }
        Ok(None)
    }

    /// Delete task `id`. Tasks that referred to it keep running without the reference.
    pub fn delete_task(&self, id: TaskId) -> Result<()> {
        let changed =
            self.immediate(|tx| tx.execute("DELETE FROM tasks WHERE id = ?1", params![id]))?;
        if changed == 0 {
            return Err(Error::TaskNotFound(id));
        }
        Ok(())
    }

    /// Pending tasks that depend on `id`.
    pub fn dependents(&self, id: TaskId) -> Result<Vec<TaskId>> {
        self.db
            .query_map(
                "SELECT id FROM tasks WHERE depends_on = ?1 AND status = 'pending' ORDER BY id",
                params![id],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Counts by status and cost, token and duration totals, from the running totals the
    /// database keeps per status (migration V8), so the cost does not grow with the task count.
    /// A/B runs are taken out of them (one grouped read of `ab_runs`: as many rows as
    /// experiments ran, never the history's size) and counted apart.
    pub fn stats(&self) -> Result<Stats> {
        let totals = self.status_totals(
            "SELECT status, tasks, cost_usd, costed, input_tokens, output_tokens, \
             duration_seconds, timed FROM task_totals",
        )?;
        let ab = self.status_totals(
            "SELECT t.status, COUNT(*), COALESCE(SUM(t.cost_usd), 0.0), COUNT(t.cost_usd), \
             CAST(COALESCE(SUM(t.input_tokens), 0) AS BIGINT), \
             CAST(COALESCE(SUM(t.output_tokens), 0) AS BIGINT), \
             COALESCE(SUM(t.duration_seconds), 0.0), COUNT(t.duration_seconds) \
             FROM ab_runs r JOIN tasks t ON t.id = r.task_id GROUP BY t.status",
        )?;
        let mut stats = Stats::default();
        let mut all = StatusTotals::default();
        for row in &totals {
            let mut row = row.clone();
            if let Some(a) = ab.iter().find(|a| a.status == row.status) {
                row.subtract(a);
            }
            if let Some(status) = TaskStatus::ALL.iter().find(|s| s.as_str() == row.status) {
                *stats.by_status.get_mut(*status) = row.tasks;
                stats.total += row.tasks;
            }
            all.add(&row);
        }
        let mut ab_all = StatusTotals::default();
        for a in &ab {
            ab_all.add(a);
        }
        // Additions and subtractions of floats drift by a few ulps; totals are shown in cents.
        let settle = |x: f64| (x * 1e9).round() / 1e9;
        stats.cost_usd.total = settle(all.cost_usd);
        stats.duration_seconds.total = settle(all.duration_seconds);
        stats.cost_usd.mean = (all.costed > 0).then(|| stats.cost_usd.total / all.costed as f64);
        stats.duration_seconds.mean =
            (all.timed > 0).then(|| stats.duration_seconds.total / all.timed as f64);
        stats.tokens.input = all.input_tokens;
        stats.tokens.output = all.output_tokens;
        stats.ab_runs = AbTotals {
            runs: ab_all.tasks,
            cost_usd: settle(ab_all.cost_usd),
            duration_seconds: settle(ab_all.duration_seconds),
        };
        Ok(stats)
    }

    /// Rows of `sql`, which selects a status and then [`StatusTotals`]' figures in order.
    fn status_totals(&self, sql: &str) -> Result<Vec<StatusTotals>> {
        self.db
            .query_map(sql, params![], |r| {
                Ok(StatusTotals {
                    status: r.get(0)?,
                    tasks: r.get(1)?,
                    cost_usd: r.get(2)?,
                    costed: r.get(3)?,
                    input_tokens: r.get(4)?,
                    output_tokens: r.get(5)?,
                    duration_seconds: r.get(6)?,
                    timed: r.get(7)?,
                })
            })
            .map_err(|e| self.err(e))
    }
}

/// One status's running totals (a row of `task_totals`, or the same sums over some tasks).
#[derive(Debug, Clone, Default)]
struct StatusTotals {
    status: String,
    tasks: i64,
    cost_usd: f64,
    costed: i64,
    input_tokens: i64,
    output_tokens: i64,
    duration_seconds: f64,
    timed: i64,
}

impl StatusTotals {
    fn add(&mut self, o: &StatusTotals) {
        self.tasks += o.tasks;
        self.cost_usd += o.cost_usd;
        self.costed += o.costed;
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.duration_seconds += o.duration_seconds;
        self.timed += o.timed;
    }

    fn subtract(&mut self, o: &StatusTotals) {
        self.tasks -= o.tasks;
        self.cost_usd -= o.cost_usd;
        self.costed -= o.costed;
        self.input_tokens -= o.input_tokens;
        self.output_tokens -= o.output_tokens;
        self.duration_seconds -= o.duration_seconds;
        self.timed -= o.timed;
    }
}
