//! The queries behind the dashboard (`gza serve`): a page of one column of the board, bounded
//! counts, the figures of the stats page, and a cheap marker that says whether anything changed.
//! Each reads only what it shows (the V28 indexes; PostgreSQL V5), so a page costs the same at 100 tasks and at
//! 100,000.

use super::Store;
use super::db::{Backend, DbResult, Row};
use super::tasks::{
    AFTER_SUMMARY, LinkedTask, SUMMARY_COLUMNS, SUMMARY_PROMPT_CHARS, TaskSummary, summary_from_row,
};
use gza_core::error::Result;
use gza_core::task::{TaskId, TaskStatus, TaskType};

/// Which tasks a board column or list shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskFilter<'a> {
    pub group: Option<&'a str>,
    pub task_type: Option<TaskType>,
}

/// A pending task on the board, with the unfinished task it waits for when it is blocked.
#[derive(Debug, Clone)]
pub struct PendingTask {
    pub task: TaskSummary,
    pub blocked_by: Option<LinkedTask>,
}

/// Tasks finished on one day with one outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct DayTally {
    /// `YYYY-MM-DD` (UTC).
    pub day: String,
    pub status: TaskStatus,
    pub tasks: i64,
    pub cost_usd: f64,
    /// How many of them were given at least one learning.
    pub given_learnings: i64,
}

/// Learnings added and archived in one week.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeekTally {
    /// The week's Monday, `YYYY-MM-DD`.
    pub week: String,
    pub added: i64,
    pub archived: i64,
}

impl Store {
    /// A value that changes whenever a change has been committed to the database since this
    /// connection last asked. One cheap call, no table read: the dashboard's poller asks it every
    /// tick and queries only when it moved.
    ///
    /// SQLite: `PRAGMA data_version`, which moves for every other connection's commit (this
    /// connection's own writes do not move it; the poller's connection only reads). PostgreSQL:
    /// a hash of the server's current snapshot (`pg_current_snapshot()`: the next transaction id
    /// and those still in progress), which moves whenever a writing transaction starts or ends
    /// anywhere in the cluster. It can move without a change to this project (another project's
    /// or database's write); it never stays put across one, which is what the poller needs.
    pub fn change_marker(&self) -> Result<i64> {
        let sql = match self.db.backend() {
            Backend::Sqlite => "PRAGMA data_version",
            Backend::Postgres => "SELECT hashtextextended(CAST(pg_current_snapshot() AS TEXT), 0)",
        };
        self.db.one(sql, params![]).map_err(|e| self.err(e))
    }

    /// Newest first, at most `limit` tasks with `status` (and the filter), older than `before`.
    pub fn tasks_with_status(
        &self,
        status: TaskStatus,
        filter: TaskFilter,
        before: Option<TaskId>,
        limit: u32,
    ) -> Result<Vec<TaskSummary>> {
        let mut sql = format!("SELECT {SUMMARY_COLUMNS} FROM tasks t WHERE t.status = ?2");
        sql.push_str(if filter.group.is_some() {
            " AND t.group_name = ?3"
        } else {
            " AND CAST(?3 AS TEXT) IS NULL"
        });
        sql.push_str(if filter.task_type.is_some() {
            " AND t.task_type = ?4"
        } else {
            " AND CAST(?4 AS TEXT) IS NULL"
        });
        // Two statements rather than `(?5 IS NULL OR t.id < ?5)`, which no index can seek on.
        sql.push_str(if before.is_some() {
            " AND t.id < ?5"
        } else {
            " AND CAST(?5 AS BIGINT) IS NULL"
        });
        sql.push_str(" ORDER BY t.id DESC LIMIT ?6");
        self.db
            .query_map(
                &sql,
                params![
                    SUMMARY_PROMPT_CHARS,
                    status.as_str(),
                    filter.group,
                    filter.task_type.map(|t| t.as_str()),
                    before,
                    limit
                ],
                summary_from_row,
            )
            .map_err(|e| self.err(e))
    }

    /// Pending tasks in pickup order (urgent first, then oldest), at most `limit`; `blocked`
    /// chooses those whose dependency has not completed (each with it) or those ready to run.
    pub fn pending_tasks(
        &self,
        blocked: bool,
        filter: TaskFilter,
        limit: u32,
    ) -> Result<Vec<PendingTask>> {
        // The blocked are read from the index of pending tasks with a dependency (their number,
        // not the queue's, bounds the cost); the ready along the pickup order. (PostgreSQL
        // plans without the hint, which the query layer drops.)
        let index = if blocked {
            " INDEXED BY tasks_pending_deps"
        } else {
            ""
        };
        let mut sql = format!(
            "SELECT {SUMMARY_COLUMNS}, d.status FROM tasks t{index} \
             LEFT JOIN tasks d ON d.id = t.depends_on WHERE t.status = 'pending'"
        );
        sql.push_str(if blocked {
            " AND t.depends_on IS NOT NULL AND (d.status IS NULL OR d.status != 'completed')"
        } else {
            " AND (t.depends_on IS NULL OR d.status = 'completed')"
        });
        sql.push_str(if filter.group.is_some() {
            " AND t.group_name = ?2"
        } else {
            " AND CAST(?2 AS TEXT) IS NULL"
        });
        sql.push_str(if filter.task_type.is_some() {
            " AND t.task_type = ?3"
        } else {
            " AND CAST(?3 AS TEXT) IS NULL"
        });
        sql.push_str(" ORDER BY t.urgent DESC, t.id LIMIT ?4");
        self.db
            .query_map(
                &sql,
                params![
                    SUMMARY_PROMPT_CHARS,
                    filter.group,
                    filter.task_type.map(|t| t.as_str()),
                    limit
                ],
                pending_from_row,
            )
            .map_err(|e| self.err(e))
    }

    /// How many tasks have `status` (and the filter), counted up to `cap`, so the cost is
    /// bounded however many there are.
    pub fn count_with_status_capped(
        &self,
        status: TaskStatus,
        filter: TaskFilter,
        cap: i64,
    ) -> Result<i64> {
        let mut sql = "SELECT COUNT(*) FROM (SELECT 1 FROM tasks t WHERE t.status = ?1".to_string();
        sql.push_str(if filter.group.is_some() {
            " AND t.group_name = ?2"
        } else {
            " AND CAST(?2 AS TEXT) IS NULL"
        });
        sql.push_str(if filter.task_type.is_some() {
            " AND t.task_type = ?3"
        } else {
            " AND CAST(?3 AS TEXT) IS NULL"
        });
        sql.push_str(" LIMIT ?4) AS capped");
        self.db
            .one(
                &sql,
                params![
                    status.as_str(),
                    filter.group,
                    filter.task_type.map(|t| t.as_str()),
                    cap
                ],
            )
            .map_err(|e| self.err(e))
    }

    /// The groups in use, by name, at most `limit`: one index seek per group (a skip scan
    /// written out), so the cost is the number of groups, not of grouped tasks.
    pub fn groups_in_use(&self, limit: u32) -> Result<Vec<String>> {
        self.db
            .query_map(
                "WITH RECURSIVE g(name) AS ( \
                   SELECT MIN(group_name) FROM tasks WHERE group_name IS NOT NULL \
                   UNION ALL \
                   SELECT (SELECT MIN(group_name) FROM tasks WHERE group_name > g.name) \
                   FROM g WHERE g.name IS NOT NULL) \
                 SELECT name FROM g WHERE name IS NOT NULL LIMIT ?1",
                params![limit],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Tasks finished since `since` (`YYYY-MM-DD`), per day and outcome, with their cost and how
    /// many were given learnings. Reads only the window's rows (index on `completed_at`).
    pub fn finished_by_day(&self, since: &str) -> Result<Vec<DayTally>> {
        let rows = self
            .db
            .query_map(
                "SELECT substr(t.completed_at, 1, 10), t.status, COUNT(*), \
                 CAST(COALESCE(SUM(t.cost_usd), 0) AS DOUBLE PRECISION), \
                 COUNT(CASE WHEN EXISTS \
                   (SELECT 1 FROM learning_injections i WHERE i.task_id = t.id) THEN 1 END) \
                 FROM tasks t INDEXED BY tasks_finished_at \
                 WHERE t.completed_at >= ?1 AND t.completed_at IS NOT NULL \
                 GROUP BY 1, 2 ORDER BY 1, 2",
                params![since],
                |r| {
                    Ok((
                        r.get::<String>(0)?,
                        r.get::<String>(1)?,
                        r.get::<i64>(2)?,
                        r.get::<f64>(3)?,
                        r.get::<i64>(4)?,
                    ))
                },
            )
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for (day, status, tasks, cost_usd, given_learnings) in rows {
            // A status a newer gza wrote is left out of the figures rather than miscounted.
            if let Some(status) = TaskStatus::parse(&status) {
                out.push(DayTally {
                    day,
                    status,
                    tasks,
                    cost_usd,
                    given_learnings,
                });
            }
        }
        Ok(out)
    }

    /// Learnings added and archived per week since `since` (`YYYY-MM-DD`), oldest week first.
    pub fn learnings_by_week(&self, since: &str) -> Result<Vec<WeekTally>> {
        let backend = self.db.backend();
        let sql = format!(
            "SELECT week, CAST(SUM(added) AS BIGINT), CAST(SUM(archived) AS BIGINT) FROM ( \
               SELECT {} AS week, 1 AS added, 0 AS archived FROM learnings \
                 WHERE created_at >= ?1 \
               UNION ALL \
               SELECT {} AS week, 0, 1 FROM learning_events \
                 WHERE event = 'archived' AND at >= ?1 \
             ) AS changes GROUP BY week ORDER BY week",
            week_of(backend, "created_at"),
            week_of(backend, "at")
        );
        self.db
            .query_map(&sql, params![since], |r| {
                Ok(WeekTally {
                    week: r.get::<Option<String>>(0)?.unwrap_or_default(),
                    added: r.get(1)?,
                    archived: r.get(2)?,
                })
            })
            .map_err(|e| self.err(e))
    }
}

/// The Monday (`YYYY-MM-DD`) of the week of a time column in gza's format, in the backend's
/// words: SQLite moves to the week's Sunday and back six days; PostgreSQL truncates to the ISO
/// week, which starts on Monday.
fn week_of(backend: Backend, column: &str) -> String {
    match backend {
        Backend::Sqlite => format!("date(substr({column}, 1, 10), 'weekday 0', '-6 days')"),
        Backend::Postgres => format!(
            "to_char(date_trunc('week', CAST(substr({column}, 1, 10) AS DATE)), 'YYYY-MM-DD')"
        ),
    }
}

/// A pending task and, when it is blocked, the task it waits for.
fn pending_from_row(row: &Row) -> DbResult<PendingTask> {
    let task = summary_from_row(row)?;
    let dep_status: Option<String> = row.get(AFTER_SUMMARY)?;
    let blocked_by = match (task.depends_on, dep_status.as_deref()) {
        (Some(_), Some("completed")) | (None, _) => None,
        (Some(dep), status) => Some(LinkedTask {
            id: dep,
            status: status
                .and_then(TaskStatus::parse)
                .unwrap_or(TaskStatus::Dropped),
        }),
    };
    Ok(PendingTask { task, blocked_by })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewTask;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::create(&dir.path().join("gza.db")).unwrap();
        (dir, store)
    }

    fn add(store: &Store, group: Option<&str>, depends_on: Option<TaskId>) -> TaskId {
        store
            .insert_task(&NewTask {
                prompt: "p".into(),
                group: group.map(str::to_string),
                depends_on,
                ..Default::default()
            })
            .unwrap()
    }

    #[test]
    fn groups_are_listed_once_each_in_order() {
        let (_dir, store) = store();
        for g in ["b", "a", "b", "c", "a"] {
            add(&store, Some(g), None);
        }
        add(&store, None, None);
        assert_eq!(store.groups_in_use(10).unwrap(), ["a", "b", "c"]);
        assert_eq!(store.groups_in_use(2).unwrap(), ["a", "b"]);
    }

    #[test]
    fn pages_are_newest_first_before_an_id_and_pending_splits_ready_from_blocked() {
        let (_dir, store) = store();
        let ids: Vec<TaskId> = (0..5).map(|_| add(&store, Some("g"), None)).collect();
        let blocked = add(&store, None, Some(ids[0]));
        let all = TaskFilter::default();
        let page = store
            .tasks_with_status(TaskStatus::Pending, all, Some(ids[4]), 2)
            .unwrap();
        assert_eq!(
            page.iter().map(|t| t.id).collect::<Vec<_>>(),
            [ids[3], ids[2]]
        );
        let ready = store.pending_tasks(false, all, 10).unwrap();
        assert_eq!(ready.len(), 5);
        let waiting = store.pending_tasks(true, all, 10).unwrap();
        assert_eq!(waiting.len(), 1);
        assert_eq!(waiting[0].task.id, blocked);
        assert_eq!(waiting[0].blocked_by.as_ref().unwrap().id, ids[0]);
        let group = TaskFilter {
            group: Some("g"),
            task_type: None,
        };
        assert_eq!(store.pending_tasks(true, group, 10).unwrap().len(), 0);
        assert_eq!(
            store
                .count_with_status_capped(TaskStatus::Pending, all, 3)
                .unwrap(),
            3
        );
    }

    #[test]
    fn the_marker_moves_when_another_connection_writes() {
        let (dir, store) = store();
        let before = store.change_marker().unwrap();
        assert_eq!(store.change_marker().unwrap(), before, "nothing changed");
        let other = Store::open(&dir.path().join("gza.db")).unwrap();
        add(&other, None, None);
        assert_ne!(store.change_marker().unwrap(), before);
    }
}
