//! Team mode (issue 21): how the last push of each task branch to `origin` went (SQLite V43,
//! PostgreSQL V14), so another clone that cannot fetch the branch can say which machine has it
//! and why, and `gza show` shows a push that failed.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::Store;
use super::runs::WorkerId;
use super::tasks::time_column;
use crate::db::{DbResult, Row};
use gza_core::error::Result;
use gza_core::task::{TaskId, now_timestamp};

/// The last push of a branch: by which task, from which host, of which tip; `error` when it
/// failed (one line, what git said).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BranchPush {
    pub branch: String,
    pub task_id: Option<TaskId>,
    pub host: String,
    pub tip: String,
    pub error: Option<String>,
    #[serde(serialize_with = "gza_core::time::serialize")]
    pub at: DateTime<Utc>,
}

fn push_from_row(row: &Row) -> DbResult<BranchPush> {
    Ok(BranchPush {
        branch: row.get(0)?,
        task_id: row.get(1)?,
        host: row.get(2)?,
        tip: row.get(3)?,
        error: row.get(4)?,
        at: time_column(row, 5)?.unwrap_or_default(),
    })
}

impl Store {
    /// Record how pushing `branch` (at `tip`, for task `task`, from `host`) went: `error` is
    /// `None` when it is on `origin`. Replaces the branch's earlier record. A worker's push
    /// (`under` its id) is recorded only while the task still names the lease it was claimed
    /// under: a worker whose task was reaped while it was away does not replace what others
    /// recorded since. A person's command (`under` `None`) always records. True when recorded.
    pub fn record_push(
        &self,
        branch: &str,
        task: TaskId,
        host: &str,
        tip: &str,
        error: Option<&str>,
        under: Option<WorkerId>,
    ) -> Result<bool> {
        let (fenced, lease) = match under {
            Some(worker) => (true, worker.lease),
            None => (false, None),
        };
        self.db
            .execute(
                "INSERT INTO branch_pushes (branch, task_id, host, pushed_tip, error, at) \
                 SELECT ?1, ?2, ?3, ?4, ?5, ?6 \
                 WHERE NOT ?7 OR EXISTS (SELECT 1 FROM tasks \
                   WHERE id = ?2 AND lease_id IS NOT DISTINCT FROM ?8) \
                 ON CONFLICT (branch) DO UPDATE SET task_id = excluded.task_id, \
                   host = excluded.host, pushed_tip = excluded.pushed_tip, \
                   error = excluded.error, at = excluded.at",
                params![
                    branch,
                    task,
                    host,
                    tip,
                    error,
                    now_timestamp(),
                    fenced,
                    lease
                ],
            )
            .map(|n| n == 1)
            .map_err(|e| self.err(e))
    }

    /// How the last push of `branch` went, if gza ever pushed it.
    pub fn branch_push(&self, branch: &str) -> Result<Option<BranchPush>> {
        self.db
            .query_opt(
                "SELECT branch, task_id, host, pushed_tip, error, at FROM branch_pushes \
                 WHERE branch = ?1",
                params![branch],
                push_from_row,
            )
            .map_err(|e| self.err(e))
    }
}
