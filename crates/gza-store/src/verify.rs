//! Queries of the verify gate (the runs of the project's check command) and of `gza watch` (the
//! open branches and failed tasks it acts on).

use std::collections::HashMap;

use super::Store;
use super::tasks::{TASK_COLUMNS, task_from_row, time_column};
use crate::db::{DbError, DbResult, Row};
use gza_core::error::Result;
use gza_core::task::{FailureReason, Task, TaskId, now_timestamp};
use gza_core::verify::{Verification, VerifyOutcome};

const VERIFICATION_COLUMNS: &str = "id, task_id, commit_sha, command, status, exit_code, \
     output_tail, duration_seconds, log_file, created_at";

/// A verify run to record.
#[derive(Debug, Clone)]
pub struct NewVerification<'a> {
    /// The task that made the branch.
    pub task_id: TaskId,
    pub commit: &'a str,
    pub command: &'a str,
    pub outcome: VerifyOutcome,
    /// Redacted by the caller.
    pub output_tail: &'a str,
    pub duration_seconds: f64,
    pub log_file: Option<&'a str>,
}

fn verification_from_row(row: &Row) -> DbResult<Verification> {
    let status: String = row.get(4)?;
    let exit_code: Option<i32> = row.get(5)?;
    let outcome = VerifyOutcome::from_stored(&status, exit_code).ok_or_else(|| {
        DbError::Bad(format!(
            "verify run {}: its status is {status:?}, not passed, failed or timed_out",
            row.get::<i64>(0).unwrap_or_default()
        ))
    })?;
    Ok(Verification {
        id: row.get(0)?,
        task_id: row.get(1)?,
        commit: row.get(2)?,
        command: row.get(3)?,
        outcome,
        output_tail: row.get(6)?,
        duration_seconds: row.get(7)?,
        log_file: row.get(8)?,
        at: time_column(row, 9)?.unwrap_or_default(),
    })
}

impl Store {
    /// Record a verify run; returns it as stored.
    pub fn record_verification(&self, new: &NewVerification) -> Result<Verification> {
        self.db
            .query_row(
                &format!(
                    "INSERT INTO verifications (task_id, commit_sha, command, status, exit_code, \
                     output_tail, duration_seconds, log_file, created_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING {VERIFICATION_COLUMNS}"
                ),
                params![
                    new.task_id,
                    new.commit,
                    new.command,
                    new.outcome.as_str(),
                    new.outcome.exit_code(),
                    new.output_tail,
                    new.duration_seconds,
                    new.log_file,
                    now_timestamp(),
                ],
                verification_from_row,
            )
            .map_err(|e| self.err(e))
    }

    /// The latest verify run of the branch made by task `owner`.
    pub fn latest_verification(&self, owner: TaskId) -> Result<Option<Verification>> {
        self.db
            .query_opt(
                &format!(
                    "SELECT {VERIFICATION_COLUMNS} FROM verifications WHERE task_id = ?1 \
                     ORDER BY id DESC LIMIT 1"
                ),
                params![owner],
                verification_from_row,
            )
            .map_err(|e| self.err(e))
    }

    /// The latest verify run of each of the branches made by `owners` that has one.
    pub fn latest_verifications(&self, owners: &[TaskId]) -> Result<HashMap<TaskId, Verification>> {
        let mut found = HashMap::new();
        for &owner in owners {
            if let Some(v) = self.latest_verification(owner)? {
                found.insert(owner, v);
            }
        }
        Ok(found)
    }

    /// The branches `gza watch` looks after: completed implement tasks not merged, without a
    /// pull request, oldest first (of the scope: a group, tags).
    pub fn open_branches<'a>(&self, scope: impl Into<crate::Scope<'a>>) -> Result<Vec<Task>> {
        let scope = scope.into();
        let columns = TASK_COLUMNS.replace(", ", ", t.");
        self.db
            .query_map(
                &format!(
                    "SELECT t.{columns} FROM tasks t \
                     WHERE t.task_type = 'implement' AND t.status = 'completed' \
                       AND t.merged_at IS NULL AND t.branch IS NOT NULL AND t.pr_url IS NULL{}{} \
                     ORDER BY t.id",
                    scope.condition(self.backend(), "t", 1, 2),
                    // An A/B run's branch is a measurement, never reviewed or merged by watch.
                    crate::ab::not_ab_run("t")
                ),
                params![scope.group, scope.tags_param()],
                task_from_row,
            )
            .map_err(|e| self.err(e))
    }

    /// Tasks that failed with `reason` and that nothing has followed up yet (no task of their
    /// type is based on them: no retry, no resumption), oldest first (of the scope: a group, tags).
    pub fn failed_without_follow_up<'a>(
        &self,
        scope: impl Into<crate::Scope<'a>>,
        reason: &FailureReason,
    ) -> Result<Vec<Task>> {
        let scope = scope.into();
        let columns = TASK_COLUMNS.replace(", ", ", t.");
        self.db
            .query_map(
                &format!(
                    "SELECT t.{columns} FROM tasks t \
                     WHERE t.status = 'failed' AND t.failure_reason = ?2{}{} \
                       AND NOT EXISTS (SELECT 1 FROM tasks f \
                                       WHERE f.based_on = t.id AND f.task_type = t.task_type) \
                     ORDER BY t.id",
                    scope.condition(self.backend(), "t", 1, 3),
                    // A failed A/B run is an outcome to count, not a task to retry.
                    crate::ab::not_ab_run("t")
                ),
                params![scope.group, reason, scope.tags_param()],
                task_from_row,
            )
            .map_err(|e| self.err(e))
    }

    /// Tasks of the same type based on `id` (its retries and resumptions), oldest first.
    pub fn follow_ups(&self, id: TaskId) -> Result<Vec<TaskId>> {
        self.db
            .query_map(
                "SELECT f.id FROM tasks f JOIN tasks t ON t.id = f.based_on \
                 WHERE f.based_on = ?1 AND f.task_type = t.task_type ORDER BY f.id",
                params![id],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }
}
