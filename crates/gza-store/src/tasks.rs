//! Queries on the `tasks` table.

use rusqlite::{OptionalExtension, Row, params};
use serde::Serialize;

use super::Store;
use gza_core::error::{Error, Result};
use gza_core::task::{ReviewVerdict, Task, TaskStatus, TaskType, now_timestamp};

pub(super) const TASK_COLUMNS: &str = "id, prompt, task_type, status, based_on, depends_on, group_name, spec, \
     model, provider, skip_learnings, urgent, created_at, started_at, completed_at, running_pid, \
     branch, log_file, output, failure_reason, cost_usd, input_tokens, output_tokens, num_turns, \
     duration_seconds, session_id, running_pid_start, agent_pid, agent_start, worktree, diff_stats, \
     report_file, resume_session_id, learnings_version, base_branch, base_commit, review_verdict, \
     merged_at, merged_into, pr_url";

/// Characters of a prompt kept in list views; full prompts can be megabytes.
const SUMMARY_PROMPT_CHARS: i64 = 200;

/// A task to insert.
#[derive(Debug, Clone, Default)]
pub struct NewTask {
    pub prompt: String,
    /// Continue this agent session (`gza resume`).
    pub resume_session_id: Option<String>,
    pub task_type: Option<TaskType>,
    pub based_on: Option<i64>,
    pub depends_on: Option<i64>,
    pub group: Option<String>,
    pub spec: Option<String>,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub skip_learnings: bool,
    pub urgent: bool,
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
        }
    }
}

/// Changes to a pending task; `None` leaves a field as it is, `Some(None)` clears it.
#[derive(Debug, Clone, Default)]
pub struct TaskEdit {
    pub prompt: Option<String>,
    pub task_type: Option<TaskType>,
    pub based_on: Option<Option<i64>>,
    pub depends_on: Option<Option<i64>>,
    pub group: Option<Option<String>>,
    pub spec: Option<Option<String>>,
    pub model: Option<Option<String>>,
    pub provider: Option<Option<String>>,
    pub skip_learnings: Option<bool>,
    pub urgent: Option<bool>,
}

/// The columns list views need, with the prompt cut short.
#[derive(Debug, Clone, Serialize)]
pub struct TaskSummary {
    pub id: i64,
    pub prompt: String,
    pub task_type: TaskType,
    pub status: TaskStatus,
    pub urgent: bool,
    pub depends_on: Option<i64>,
    pub group: Option<String>,
    pub created_at: String,
    pub completed_at: Option<String>,
    pub failure_reason: Option<String>,
    pub cost_usd: Option<f64>,
    pub duration_seconds: Option<f64>,
    pub review_verdict: Option<ReviewVerdict>,
}

/// A pending task in pickup order, and what (if anything) it waits for.
#[derive(Debug, Clone, Serialize)]
pub struct QueueEntry {
    #[serde(flatten)]
    pub task: TaskSummary,
    /// The unfinished task this one depends on, with that task's status.
    pub blocked_by: Option<(i64, TaskStatus)>,
}

/// Filters for `gza history`.
#[derive(Debug, Clone, Default)]
pub struct HistoryFilter {
    pub limit: Option<u32>,
    pub status: Option<TaskStatus>,
    pub task_type: Option<TaskType>,
    pub group: Option<String>,
}

/// Counts and totals for `gza stats`.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Stats {
    pub total: i64,
    pub by_status: Vec<(TaskStatus, i64)>,
    pub total_cost_usd: f64,
    pub mean_cost_usd: Option<f64>,
    pub total_input_tokens: i64,
    pub total_output_tokens: i64,
    pub mean_duration_seconds: Option<f64>,
    pub total_duration_seconds: f64,
}

fn parse_enum<T>(row: &Row, idx: usize, parse: fn(&str) -> Option<T>) -> rusqlite::Result<T> {
    let text: String = row.get(idx)?;
    parse(&text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            idx,
            rusqlite::types::Type::Text,
            format!("unexpected value {text:?}").into(),
        )
    })
}

fn optional_enum<T>(
    row: &Row,
    idx: usize,
    parse: fn(&str) -> Option<T>,
) -> rusqlite::Result<Option<T>> {
    match row.get_ref(idx)? {
        rusqlite::types::ValueRef::Null => Ok(None),
        _ => parse_enum(row, idx, parse).map(Some),
    }
}

pub(super) fn task_from_row(row: &Row) -> rusqlite::Result<Task> {
    Ok(Task {
        id: row.get(0)?,
        prompt: row.get(1)?,
        task_type: parse_enum(row, 2, TaskType::parse)?,
        status: parse_enum(row, 3, TaskStatus::parse)?,
        based_on: row.get(4)?,
        depends_on: row.get(5)?,
        group: row.get(6)?,
        spec: row.get(7)?,
        model: row.get(8)?,
        provider: row.get(9)?,
        skip_learnings: row.get(10)?,
        urgent: row.get(11)?,
        created_at: row.get(12)?,
        started_at: row.get(13)?,
        completed_at: row.get(14)?,
        running_pid: row.get(15)?,
        branch: row.get(16)?,
        log_file: row.get(17)?,
        output: row.get(18)?,
        failure_reason: row.get(19)?,
        cost_usd: row.get(20)?,
        input_tokens: row.get(21)?,
        output_tokens: row.get(22)?,
        num_turns: row.get(23)?,
        duration_seconds: row.get(24)?,
        session_id: row.get(25)?,
        running_pid_start: row.get(26)?,
        agent_pid: row.get(27)?,
        agent_start: row.get(28)?,
        worktree: row.get(29)?,
        diff_stats: row.get(30)?,
        report_file: row.get(31)?,
        resume_session_id: row.get(32)?,
        learnings_version: row.get(33)?,
        base_branch: row.get(34)?,
        base_commit: row.get(35)?,
        review_verdict: optional_enum(row, 36, ReviewVerdict::parse)?,
        merged_at: row.get(37)?,
        merged_into: row.get(38)?,
        pr_url: row.get(39)?,
    })
}

const SUMMARY_COLUMNS: &str = "t.id, substr(t.prompt, 1, ?1), t.task_type, t.status, t.urgent, \
     t.depends_on, t.group_name, t.created_at, t.completed_at, t.failure_reason, t.cost_usd, \
     t.duration_seconds, t.review_verdict";

fn summary_from_row(row: &Row) -> rusqlite::Result<TaskSummary> {
    Ok(TaskSummary {
        id: row.get(0)?,
        prompt: row.get(1)?,
        task_type: parse_enum(row, 2, TaskType::parse)?,
        status: parse_enum(row, 3, TaskStatus::parse)?,
        urgent: row.get(4)?,
        depends_on: row.get(5)?,
        group: row.get(6)?,
        created_at: row.get(7)?,
        completed_at: row.get(8)?,
        failure_reason: row.get(9)?,
        cost_usd: row.get(10)?,
        duration_seconds: row.get(11)?,
        review_verdict: optional_enum(row, 12, ReviewVerdict::parse)?,
    })
}

impl Store {
    /// Insert a task and return its id. References must name existing tasks.
    pub fn insert_task(&self, new: &NewTask) -> Result<i64> {
        for id in [new.based_on, new.depends_on].into_iter().flatten() {
            self.require_task(id)?;
        }
        self.conn
            .execute(
                "INSERT INTO tasks (prompt, task_type, based_on, depends_on, group_name, spec, model, \
                 provider, skip_learnings, urgent, created_at, resume_session_id) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
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
            )
            .map_err(|e| self.err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The task with `id`, or [`Error::TaskNotFound`].
    pub fn get_task(&self, id: i64) -> Result<Task> {
        self.conn
            .query_row(
                &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1"),
                [id],
                task_from_row,
            )
            .optional()
            .map_err(|e| self.err(e))?
            .ok_or(Error::TaskNotFound(id))
    }

    fn require_task(&self, id: i64) -> Result<()> {
        let exists: bool = self
            .conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM tasks WHERE id = ?1)",
                [id],
                |r| r.get(0),
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
        if filter.status.is_some() {
            sql.push_str(" AND t.status = ?2");
        }
        if filter.task_type.is_some() {
            sql.push_str(" AND t.task_type = ?3");
        }
        // The highest parameter must appear in the statement; an absent group binds NULL.
        if filter.group.is_some() {
            sql.push_str(" AND t.group_name = ?5");
        } else {
            sql.push_str(" AND ?5 IS NULL");
        }
        sql.push_str(" ORDER BY t.id DESC LIMIT ?4");
        let limit = filter.limit.map(i64::from).unwrap_or(-1);
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(
                params![
                    SUMMARY_PROMPT_CHARS,
                    filter.status.map(|s| s.as_str()),
                    filter.task_type.map(|t| t.as_str()),
                    limit,
                    filter.group
                ],
                summary_from_row,
            )
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))
    }

    /// Pending tasks in pickup order (urgent first, then oldest), of one group when `group` is
    /// given. With `include_blocked`, tasks whose dependency is not completed are listed too,
    /// marked with what blocks them. `limit` bounds the number of entries returned.
    pub fn pickup_queue(
        &self,
        include_blocked: bool,
        limit: Option<u32>,
        group: Option<&str>,
    ) -> Result<Vec<QueueEntry>> {
        let in_group = if group.is_some() {
            " AND t.group_name = ?4"
        } else {
            " AND ?4 IS NULL"
        };
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS}, d.status FROM tasks t \
             LEFT JOIN tasks d ON d.id = t.depends_on \
             WHERE t.status = 'pending'{in_group} \
               AND (?2 OR t.depends_on IS NULL OR d.status = 'completed') \
             ORDER BY t.urgent DESC, t.id LIMIT ?3"
        );
        let limit = limit.map(i64::from).unwrap_or(-1);
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(
                params![SUMMARY_PROMPT_CHARS, include_blocked, limit, group],
                |row| {
                    let task = summary_from_row(row)?;
                    let dep_status: Option<String> = row.get(13)?;
                    let blocked_by = match (task.depends_on, dep_status.as_deref()) {
                        (Some(_), Some("completed")) => None,
                        (Some(dep), status) => Some((
                            dep,
                            status
                                .and_then(TaskStatus::parse)
                                .unwrap_or(TaskStatus::Dropped),
                        )),
                        (None, _) => None,
                    };
                    Ok(QueueEntry { task, blocked_by })
                },
            )
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))
    }

    /// How many pending tasks (of `group`, when given) are ready to run, and how many wait on an
    /// unfinished dependency, each counted up to `cap` (so the cost is bounded however long the
    /// queue is): ready ones along the pickup index, blocked ones from the pending-dependency index.
    pub fn pending_counts_capped(&self, group: Option<&str>, cap: i64) -> Result<(i64, i64)> {
        let in_group = if group.is_some() {
            " AND t.group_name = ?1"
        } else {
            " AND ?1 IS NULL"
        };
        let ready = self
            .conn
            .query_row(
                &format!(
                    "SELECT COUNT(*) FROM (SELECT 1 FROM tasks t \
                     LEFT JOIN tasks d ON d.id = t.depends_on \
                     WHERE t.status = 'pending'{in_group} \
                       AND (t.depends_on IS NULL OR d.status = 'completed') LIMIT ?2)"
                ),
                params![group, cap],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))?;
        let blocked = self
            .conn
            .query_row(
                &format!(
                    "SELECT COUNT(*) FROM (SELECT 1 FROM tasks t INDEXED BY tasks_pending_deps \
                     LEFT JOIN tasks d ON d.id = t.depends_on \
                     WHERE t.status = 'pending' AND t.depends_on IS NOT NULL{in_group} \
                       AND (d.status IS NULL OR d.status != 'completed') LIMIT ?2)"
                ),
                params![group, cap],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))?;
        Ok((ready, blocked))
    }

    /// Whether any task is in `group`.
    pub fn group_exists(&self, group: &str) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM tasks WHERE group_name = ?1)",
                [group],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// The groups in use, by name, at most `limit` of them.
    pub fn group_names(&self, limit: u32) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT DISTINCT group_name FROM tasks WHERE group_name IS NOT NULL \
                 ORDER BY group_name LIMIT ?1",
            )
            .map_err(|e| self.err(e))?;
        let names = stmt
            .query_map([limit], |r| r.get(0))
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))?;
        Ok(names)
    }

    /// Apply `edit` to task `id`. References must exist and `depends_on` must not form a cycle.
    pub fn edit_task(&self, id: i64, edit: &TaskEdit) -> Result<()> {
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
        let tx = self.conn.unchecked_transaction().map_err(|e| self.err(e))?;
        let set = |column: &str, value: &dyn rusqlite::ToSql| -> Result<()> {
            tx.execute(
                &format!("UPDATE tasks SET {column} = ?1 WHERE id = ?2"),
                params![value, id],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
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
        tx.commit().map_err(|e| self.err(e))
    }

    /// The chain of `depends_on` links from `from` that reaches `target`, if any.
    fn dependency_path(&self, from: i64, target: i64) -> Result<Option<Vec<i64>>> {
        let mut path = vec![from];
        let mut current = from;
        // The chain is acyclic by construction, but bound the walk anyway.
        for _ in 0..100_000 {
            if current == target {
                return Ok(Some(path));
            }
            let next: Option<i64> = self
                .conn
                .query_row(
                    "SELECT depends_on FROM tasks WHERE id = ?1",
                    [current],
                    |r| r.get(0),
                )
                .optional()
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
    pub fn delete_task(&self, id: i64) -> Result<()> {
        let changed = self
            .conn
            .execute("DELETE FROM tasks WHERE id = ?1", [id])
            .map_err(|e| self.err(e))?;
        if changed == 0 {
            return Err(Error::TaskNotFound(id));
        }
        Ok(())
    }

    /// Pending tasks that depend on `id`.
    pub fn dependents(&self, id: i64) -> Result<Vec<i64>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id FROM tasks WHERE depends_on = ?1 AND status = 'pending' ORDER BY id",
            )
            .map_err(|e| self.err(e))?;
        let ids = stmt
            .query_map([id], |r| r.get(0))
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))?;
        Ok(ids)
    }

    /// Counts by status and cost, token and duration totals, from the running totals the
    /// database keeps per status (migration V8), so the cost does not grow with the task count.
    pub fn stats(&self) -> Result<Stats> {
        let mut stats = Stats::default();
        let mut stmt = self
            .conn
            .prepare(
                "SELECT status, tasks, cost_usd, costed, input_tokens, output_tokens, \
                 duration_seconds, timed FROM task_totals",
            )
            .map_err(|e| self.err(e))?;
        type Row = (String, i64, f64, i64, i64, i64, f64, i64);
        let rows: Vec<Row> = stmt
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                ))
            })
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))?;
        for status in TaskStatus::ALL {
            let n = rows
                .iter()
                .find(|row| row.0 == status.as_str())
                .map(|row| row.1)
                .unwrap_or(0);
            stats.by_status.push((*status, n));
            stats.total += n;
        }
        let (mut costed, mut timed) = (0, 0);
        for (_, _, cost, c, tin, tout, dur, t) in &rows {
            stats.total_cost_usd += cost;
            costed += c;
            stats.total_input_tokens += tin;
            stats.total_output_tokens += tout;
            stats.total_duration_seconds += dur;
            timed += t;
        }
        // Additions and subtractions of floats drift by a few ulps; totals are shown in cents.
        let settle = |x: f64| (x * 1e9).round() / 1e9;
        stats.total_cost_usd = settle(stats.total_cost_usd);
        stats.total_duration_seconds = settle(stats.total_duration_seconds);
        stats.mean_cost_usd = (costed > 0).then(|| stats.total_cost_usd / costed as f64);
        stats.mean_duration_seconds =
            (timed > 0).then(|| stats.total_duration_seconds / timed as f64);
        Ok(stats)
    }
}
