//! Comments: notes a person writes on a task (`gza comment`), and which improve task was given
//! them.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::Store;
use super::tasks::time_column;
use crate::db::{DbResult, Row};
use gza_core::error::Result;
use gza_core::task::{TaskId, TaskStatus, now_timestamp};

/// Longest comment accepted, in bytes: a note, not a document (a spec file is for those).
pub const MAX_COMMENT_BYTES: usize = 64 * 1024;

/// A comment on a task.
#[derive(Debug, Clone, Serialize)]
pub struct Comment {
    pub id: i64,
    pub task_id: TaskId,
    pub text: String,
    pub author: Option<String>,
    #[serde(serialize_with = "gza_core::time::serialize")]
    pub created_at: DateTime<Utc>,
    /// The improve task last given the comment, and how it stands.
    pub addressed_by: Option<Addressed>,
}

/// The improve task a comment was given to.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Addressed {
    pub task: TaskId,
    pub status: TaskStatus,
}

impl Comment {
    /// Open until an improve task that was given it completes.
    pub fn is_open(&self) -> bool {
        self.addressed_by
            .is_none_or(|a| a.status != TaskStatus::Completed)
    }
}

const COMMENT_COLUMNS: &str =
    "c.id, c.task_id, c.text, c.author, c.created_at, c.addressed_by, a.status";

fn comment_from_row(row: &Row) -> DbResult<Comment> {
    let by: Option<TaskId> = row.get(5)?;
    let status: Option<String> = row.get(6)?;
    Ok(Comment {
        id: row.get(0)?,
        task_id: row.get(1)?,
        text: row.get(2)?,
        author: row.get(3)?,
        created_at: time_column(row, 4)?.unwrap_or_default(),
        addressed_by: by.map(|task| Addressed {
            task,
            // A status this gza cannot read counts as unfinished: the comment stays open.
            status: status
                .as_deref()
                .and_then(TaskStatus::parse)
                .unwrap_or(TaskStatus::Pending),
        }),
    })
}

/// The tasks of the branch made by `?1`: it, the improve tasks that continued it, and the
/// reviews of either (with their retries).
const BRANCH_TASKS: &str = "WITH RECURSIVE family(id) AS ( \
       SELECT CAST(?1 AS BIGINT) \
       UNION SELECT t.id FROM tasks t JOIN family f ON t.based_on = f.id \
         WHERE t.task_type IN ('improve', 'review') \
     )";

impl Store {
    /// Add a comment to task `id` and return the comment's id.
    pub fn add_comment(&self, id: TaskId, text: &str, author: Option<&str>) -> Result<i64> {
        self.require_task(id)?;
        self.db
            .one(
                "INSERT INTO task_comments (task_id, text, author, created_at) \
                 VALUES (?1, ?2, ?3, ?4) RETURNING id",
                params![id, text, author, now_timestamp()],
            )
            .map_err(|e| self.err(e))
    }

    /// The comments on task `id`, oldest first.
    pub fn comments_on(&self, id: TaskId) -> Result<Vec<Comment>> {
        self.db
            .query_map(
                &format!(
                    "SELECT {COMMENT_COLUMNS} FROM task_comments c \
                     LEFT JOIN tasks a ON a.id = c.addressed_by \
                     WHERE c.task_id = ?1 ORDER BY c.id"
                ),
                params![id],
                comment_from_row,
            )
            .map_err(|e| self.err(e))
    }

    /// The comments an improve task `improve` of the branch made by `owner` is given: those on
    /// any task of the branch that are still open (never given to an improve task that
    /// completed), and those already given to `improve` itself. Oldest first.
    pub fn comments_for_improve(&self, owner: TaskId, improve: TaskId) -> Result<Vec<Comment>> {
        self.db
            .query_map(
                &format!(
                    "{BRANCH_TASKS} SELECT {COMMENT_COLUMNS} FROM task_comments c \
                     JOIN family f ON f.id = c.task_id \
                     LEFT JOIN tasks a ON a.id = c.addressed_by \
                     WHERE c.addressed_by IS NULL OR c.addressed_by = ?2 \
                        OR a.status IS DISTINCT FROM 'completed' \
                     ORDER BY c.id"
                ),
                params![owner, improve],
                comment_from_row,
            )
            .map_err(|e| self.err(e))
    }

    /// Record that improve task `improve` was given `comments`: they close when it completes.
    pub fn comments_given_to(&self, improve: TaskId, comments: &[i64]) -> Result<()> {
        self.immediate(|tx| {
            for id in comments {
                tx.execute(
                    "UPDATE task_comments SET addressed_by = ?1 WHERE id = ?2",
                    params![improve, id],
                )?;
            }
            Ok(())
        })
    }
}
