//! The queries behind the dashboard (`gza serve`): a page of one column of the board, bounded
//! counts, the figures of the stats page, and a cheap marker that says whether anything changed.
//! Each reads only what it shows (the V21 indexes), so a page costs the same at 100 tasks and at
//! 100,000.

use rusqlite::params;

use super::Store;
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
    /// A value that changes whenever another connection (another gza process, or another
    /// connection of this one) has committed a change to the database since this connection last
    /// read it. One cheap call, no table read: the dashboard's poller asks it every tick and
    /// queries only when it moved.
    pub fn change_marker(&self) -> Result<i64> {
        self.conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))
            .map_err(|e| self.err(e))
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
            " AND ?3 IS NULL"
        });
        sql.push_str(if filter.task_type.is_some() {
            " AND t.task_type = ?4"
        } else {
            " AND ?4 IS NULL"
        });
        // Two statements rather than `(?5 IS NULL OR t.id < ?5)`, which no index can seek on.
        sql.push_str(if before.is_some() {
            " AND t.id < ?5"
        } else {
            " AND ?5 IS NULL"
        });
        sql.push_str(" ORDER BY t.id DESC LIMIT ?6");
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(
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
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>()
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
        // not the queue's, bounds the cost); the ready along the pickup order.
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
            " AND ?2 IS NULL"
        });
        sql.push_str(if filter.task_type.is_some() {
            " AND t.task_type = ?3"
        } else {
            " AND ?3 IS NULL"
        });
        sql.push_str(" ORDER BY t.urgent DESC, t.id LIMIT ?4");
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(
                params![
                    SUMMARY_PROMPT_CHARS,
                    filter.group,
                    filter.task_type.map(|t| t.as_str()),
                    limit
                ],
                |row| {
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
                },
            )
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>()
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
            " AND ?2 IS NULL"
        });
        sql.push_str(if filter.task_type.is_some() {
            " AND t.task_type = ?3"
        } else {
            " AND ?3 IS NULL"
        });
        sql.push_str(" LIMIT ?4)");
        self.conn
            .prepare_cached(&sql)
            .and_then(|mut stmt| {
                stmt.query_row(
                    params![
                        status.as_str(),
                        filter.group,
                        filter.task_type.map(|t| t.as_str()),
                        cap
                    ],
                    |r| r.get(0),
                )
            })
            .map_err(|e| self.err(e))
    }

    /// The groups in use, by name, at most `limit`: one index seek per group (a skip scan
    /// written out), so the cost is the number of groups, not of grouped tasks.
    pub fn groups_in_use(&self, limit: u32) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "WITH RECURSIVE g(name) AS ( \
                   SELECT MIN(group_name) FROM tasks WHERE group_name IS NOT NULL \
                   UNION ALL \
                   SELECT (SELECT MIN(group_name) FROM tasks WHERE group_name > g.name) \
                   FROM g WHERE g.name IS NOT NULL) \
                 SELECT name FROM g WHERE name IS NOT NULL LIMIT ?1",
            )
            .map_err(|e| self.err(e))?;
        let names = stmt
            .query_map([limit], |r| r.get(0))
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))?;
        Ok(names)
    }

    /// Tasks finished since `since` (`YYYY-MM-DD`), per day and outcome, with their cost and how
    /// many were given learnings. Reads only the window's rows (index on `completed_at`).
    pub fn finished_by_day(&self, since: &str) -> Result<Vec<DayTally>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT substr(t.completed_at, 1, 10), t.status, COUNT(*), \
                 COALESCE(SUM(t.cost_usd), 0), \
                 SUM(EXISTS (SELECT 1 FROM learning_injections i WHERE i.task_id = t.id)) \
                 FROM tasks t INDEXED BY tasks_finished_at \
                 WHERE t.completed_at >= ?1 AND t.completed_at IS NOT NULL \
                 GROUP BY 1, 2 ORDER BY 1, 2",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([since], |r| {
                let status: String = r.get(1)?;
                Ok((
                    r.get::<_, String>(0)?,
                    status,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (day, status, tasks, cost_usd, given_learnings) = row.map_err(|e| self.err(e))?;
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
        let week = |column: &str| format!("date(substr({column}, 1, 10), 'weekday 0', '-6 days')");
        let sql = format!(
            "SELECT week, SUM(added), SUM(archived) FROM ( \
               SELECT {} AS week, 1 AS added, 0 AS archived FROM learnings \
                 WHERE created_at >= ?1 \
               UNION ALL \
               SELECT {} AS week, 0, 1 FROM learning_events \
                 WHERE event = 'archived' AND at >= ?1 \
             ) GROUP BY week ORDER BY week",
            week("created_at"),
            week("at")
        );
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([since], |r| {
                Ok(WeekTally {
                    week: r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                    added: r.get(1)?,
                    archived: r.get(2)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))
    }
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
