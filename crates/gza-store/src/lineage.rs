//! Finding a task's relatives and the work not merged yet: `gza lineage` and `gza unmerged`.

use chrono::{DateTime, Utc};

use super::Store;
use super::tags::Scope;
use super::tasks::{AFTER_SUMMARY, SUMMARY_COLUMNS, TaskSummary, summary_from_row, time_column};
use crate::db::{DbResult, Row};
use gza_core::error::Result;
use gza_core::task::{Merge, ReviewVerdict, TaskId, TaskStatus};

/// Characters of a prompt kept in a lineage node.
const NODE_PROMPT_CHARS: i64 = 200;
/// Most steps walked up `based_on` to the root; chains are short, the bound guards a corrupt
/// database (a cycle a person wrote by hand).
const MAX_DEPTH: i64 = 10_000;

/// A task in a lineage tree: its summary, and what ties it to the others.
#[derive(Debug, Clone)]
pub struct LineageNode {
    pub task: TaskSummary,
    pub based_on: Option<TaskId>,
    pub branch: Option<String>,
    pub merged: Option<Merge>,
    pub pr_url: Option<String>,
}

/// A finished code task whose branch gza has not merged.
#[derive(Debug, Clone)]
pub struct UnmergedTask {
    pub task: TaskSummary,
    pub branch: String,
    pub base_branch: Option<String>,
    pub base_commit: Option<String>,
    pub pr_url: Option<String>,
    /// The latest review of the branch (of it or of an improve task on it): its id, status and
    /// verdict.
    pub review: Option<(TaskId, TaskStatus, Option<ReviewVerdict>)>,
}

fn node_from_row(row: &Row) -> DbResult<LineageNode> {
    let at = AFTER_SUMMARY;
    let merged_at: Option<DateTime<Utc>> = time_column(row, at + 2)?;
    let merged_into: Option<String> = row.get(at + 3)?;
    Ok(LineageNode {
        task: summary_from_row(row)?,
        based_on: row.get(at)?,
        branch: row.get(at + 1)?,
        merged: merged_at
            .zip(merged_into)
            .map(|(at, into)| Merge { at, into }),
        pr_url: row.get(at + 4)?,
    })
}

impl Store {
    /// The task `id` descends from through `based_on` (itself when it is based on none).
    pub fn lineage_root(&self, id: TaskId) -> Result<TaskId> {
        self.require_task(id)?;
        self.db
            .one(
                "WITH RECURSIVE up(id, based_on, depth) AS ( \
                   SELECT id, based_on, 0 FROM tasks WHERE id = ?1 \
                   UNION ALL SELECT t.id, t.based_on, up.depth + 1 FROM tasks t \
                     JOIN up ON t.id = up.based_on WHERE up.depth < ?2 \
                 ) SELECT id FROM up ORDER BY depth DESC LIMIT 1",
                params![id, MAX_DEPTH],
            )
            .map_err(|e| self.err(e))
    }

    /// Task `root` and every task based on it, directly or not, in id order, at most `limit`.
    pub fn lineage(&self, root: TaskId, limit: u32) -> Result<Vec<LineageNode>> {
        self.db
            .query_map(
                &format!(
                    "WITH RECURSIVE down(id, depth) AS ( \
                   SELECT CAST(?2 AS BIGINT), 0 \
                   UNION SELECT t.id, d.depth + 1 FROM tasks t JOIN down d ON t.based_on = d.id \
                     WHERE d.depth < ?4 \
                 ) SELECT {SUMMARY_COLUMNS}, t.based_on, t.branch, t.merged_at, t.merged_into, \
                   t.pr_url FROM tasks t WHERE t.id IN (SELECT id FROM down) \
                 ORDER BY t.id LIMIT ?3"
                ),
                params![NODE_PROMPT_CHARS, root, limit, MAX_DEPTH],
                node_from_row,
            )
            .map_err(|e| self.err(e))
    }

    /// Completed implement tasks with a branch that gza has not merged, newest first, within
    /// `scope`, at most `limit` (`None`: all). Whether git holds the branch, and whether it was
    /// merged by hand, is for the caller to ask git.
    pub fn unmerged<'a>(
        &self,
        scope: impl Into<Scope<'a>>,
        limit: Option<u32>,
    ) -> Result<Vec<UnmergedTask>> {
        let scope = scope.into();
        self.db
            .query_map(
                &format!(
                    "SELECT {SUMMARY_COLUMNS}, t.branch, t.base_branch, t.base_commit, t.pr_url, \
                   r.id, r.status, r.review_verdict \
                 FROM tasks t INDEXED BY tasks_open_branches \
                 LEFT JOIN tasks r ON r.id = ( \
                   WITH RECURSIVE family(id) AS ( \
                     SELECT t.id UNION SELECT i.id FROM tasks i INDEXED BY tasks_based_on \
                       JOIN family f ON i.based_on = f.id WHERE i.task_type = 'improve') \
                   SELECT MAX(v.id) FROM tasks v INDEXED BY tasks_based_on \
                   JOIN family f ON v.based_on = f.id \
                   WHERE v.task_type = 'review') \
                 WHERE t.task_type = 'implement' AND t.status = 'completed' \
                   AND t.merged_at IS NULL AND t.branch IS NOT NULL{}{} \
                 ORDER BY t.id DESC LIMIT ?2",
                    scope.condition(self.backend(), "t", 3, 4),
                    // A/B runs' branches are measurements, not work waiting to be merged.
                    crate::ab::not_ab_run("t")
                ),
                params![
                    NODE_PROMPT_CHARS,
                    limit.map_or(i64::MAX, i64::from),
                    scope.group,
                    scope.tags_param()
                ],
                |row| {
                    let at = AFTER_SUMMARY;
                    let review_id: Option<TaskId> = row.get(at + 4)?;
                    let status: Option<String> = row.get(at + 5)?;
                    let verdict: Option<String> = row.get(at + 6)?;
                    Ok(UnmergedTask {
                        task: summary_from_row(row)?,
                        branch: row.get(at)?,
                        base_branch: row.get(at + 1)?,
                        base_commit: row.get(at + 2)?,
                        pr_url: row.get(at + 3)?,
                        review: review_id.map(|id| {
                            (
                                id,
                                status
                                    .as_deref()
                                    .and_then(TaskStatus::parse)
                                    .unwrap_or(TaskStatus::Pending),
                                verdict.as_deref().and_then(ReviewVerdict::parse),
                            )
                        }),
                    })
                },
            )
            .map_err(|e| self.err(e))
    }
}
