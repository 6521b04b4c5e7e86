//! Queries of the review loop: a code task's base, its reviews and improvements, merges and
//! pull requests.

use super::Store;
use super::tasks::{TASK_COLUMNS, task_from_row};
use gza_core::error::Result;
use gza_core::task::{Base, Task, TaskId, now_timestamp};

/// The ids of a branch's tasks: the task that made the branch and every improve task that
/// continued it (an improve is based on the task whose branch it continues).
const BRANCH_FAMILY: &str = "WITH RECURSIVE family(id) AS ( \
       SELECT CAST(?1 AS BIGINT) \
       UNION SELECT t.id FROM tasks t INDEXED BY tasks_based_on JOIN family f ON t.based_on = f.id \
       WHERE t.task_type = 'improve' \
     )";

impl Store {
    /// Record where a code task's branch started.
    pub fn set_base(&self, id: TaskId, base: &Base) -> Result<()> {
        self.db
            .execute(
                "UPDATE tasks SET base_branch = ?2, base_commit = ?3 WHERE id = ?1",
                params![id, base.branch, base.commit],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// The reviews of the branch made by task `owner` (of it, or of an improve task that
    /// continued it, and the retries of those reviews), oldest first.
    pub fn reviews_of_branch(&self, owner: TaskId) -> Result<Vec<Task>> {
        let columns = TASK_COLUMNS.replace(", ", ", r.");
        self.db
            .query_map(
                &format!(
                    // Every step by the based_on index and the rows by id: without statistics,
                    // SQLite 3.50 planned the steps along the type index and the rows as a scan
                    // of every task (`gza show` read 95,000 pages at 100,000 tasks).
                    "{BRANCH_FAMILY}, reviews(id) AS ( \
                       SELECT r.id FROM tasks r INDEXED BY tasks_based_on \
                       WHERE r.based_on IN (SELECT id FROM family) AND r.task_type = 'review' \
                       UNION SELECT r.id FROM reviews p JOIN tasks r INDEXED BY tasks_based_on \
                       ON r.based_on = p.id WHERE r.task_type = 'review' \
                     ) SELECT r.{columns} FROM tasks r WHERE r.id IN (SELECT id FROM reviews) \
                     ORDER BY r.id"
                ),
                params![owner],
                task_from_row,
            )
            .map_err(|e| self.err(e))
    }

    /// The improve tasks that continued the branch made by task `owner`, oldest first.
    pub fn improves_of_branch(&self, owner: TaskId) -> Result<Vec<Task>> {
        let columns = TASK_COLUMNS.replace(", ", ", t.");
        self.db
            .query_map(
                &format!(
                    "{BRANCH_FAMILY} SELECT t.{columns} FROM family f \
                 JOIN tasks t ON t.id = f.id \
                 WHERE t.task_type = 'improve' AND t.id != ?1 ORDER BY t.id"
                ),
                params![owner],
                task_from_row,
            )
            .map_err(|e| self.err(e))
    }

    /// An improve task for review `review` that has not run yet (pending or running).
    pub fn unfinished_improve_for(&self, review: TaskId) -> Result<Option<TaskId>> {
        self.db
            .query_opt(
                "SELECT id FROM tasks WHERE depends_on = ?1 AND task_type = 'improve' \
                 AND status IN ('pending', 'in_progress') ORDER BY id LIMIT 1",
                params![review],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Record that the branch made by task `owner` was merged into `into`, on every task of the
    /// branch, and credit each again (a merge is part of how it ended).
    pub fn record_merge(&self, owner: TaskId, into: &str) -> Result<()> {
        self.immediate(|tx| {
            tx.execute(
                &format!(
                    "{BRANCH_FAMILY} UPDATE tasks SET merged_at = ?2, merged_into = ?3 \
                     WHERE id IN (SELECT id FROM family)"
                ),
                params![owner, now_timestamp(), into],
            )?;
            let family: Vec<TaskId> = tx.query_map(
                &format!("{BRANCH_FAMILY} SELECT id FROM family"),
                params![owner],
                |r| r.get(0),
            )?;
            for id in family {
                super::outcomes::credit_task(tx, id)?;
            }
            Ok(())
        })
    }

    /// The tasks of the branch made by task `owner`: it and every improve task that continued it.
    pub fn branch_tasks(&self, owner: TaskId) -> Result<Vec<TaskId>> {
        self.db
            .query_map(
                &format!("{BRANCH_FAMILY} SELECT id FROM family ORDER BY id"),
                params![owner],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// After the branch made by task `owner` was rebased onto `base_commit`, every task of the
    /// branch starts there.
    pub fn rebased_onto(&self, owner: TaskId, base_commit: &str) -> Result<()> {
        self.db
            .execute(
                &format!(
                    "{BRANCH_FAMILY} UPDATE tasks SET base_commit = ?2 \
                     WHERE id IN (SELECT id FROM family) AND branch IS NOT NULL"
                ),
                params![owner, base_commit],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Record the pull request opened for a task.
    pub fn set_pr_url(&self, id: TaskId, url: &str) -> Result<()> {
        self.db
            .execute(
                "UPDATE tasks SET pr_url = ?2 WHERE id = ?1",
                params![id, url],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Forget the worktrees recorded by tasks of the branch made by `owner` (they were removed).
    pub fn clear_branch_worktrees(&self, owner: TaskId) -> Result<()> {
        self.db
            .execute(
                &format!(
                    "{BRANCH_FAMILY} UPDATE tasks SET worktree = NULL WHERE id IN (SELECT id FROM family)"
                ),
                params![owner],)
            .map(|_| ())
            .map_err(|e| self.err(e))
    }
}
