//! Queries for learnings: extractions, pinned and suppressed lines, versions, metadata.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::Store;
use crate::error::Result;
use crate::task::now_timestamp;

/// A completed task in the learnings window.
#[derive(Debug, Clone)]
pub struct WindowTask {
    pub id: i64,
    pub prompt: String,
    pub task_type: String,
    pub output: Option<String>,
    pub extracted: bool,
}

/// A stored learning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredLearning {
    pub task_id: Option<i64>,
    pub section: String,
    pub content: String,
}

/// What one regeneration did, as recorded.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VersionRecord {
    pub from_task_id: Option<i64>,
    pub window_tasks: i64,
    pub items: i64,
    pub added: i64,
    pub removed: i64,
    pub kept: i64,
    pub llm_calls: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub duration_ms: i64,
}

/// The single learnings_metadata row.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LearningsMetadata {
    pub last_regenerated_at: Option<String>,
    pub last_regenerated_from_task_id: Option<i64>,
    pub tasks_since_regen: i64,
}

/// Totals for `gza learnings stats`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LearningsTotals {
    pub stored: i64,
    pub pinned: i64,
    pub suppressed: i64,
    pub tasks_extracted: i64,
    pub regenerations: i64,
    pub llm_calls: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub last: Option<VersionRecord>,
}

impl Store {
    /// The last `limit` completed tasks that do not skip learnings, newest first.
    pub fn learnings_window(&self, limit: u32) -> Result<Vec<WindowTask>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT t.id, t.prompt, t.task_type, t.output, e.task_id IS NOT NULL FROM tasks t \
                 LEFT JOIN learning_extractions e ON e.task_id = t.id \
                 WHERE t.status = 'completed' AND t.skip_learnings = 0 \
                 ORDER BY t.completed_at DESC, t.id DESC LIMIT ?1",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([limit], |r| {
                Ok(WindowTask {
                    id: r.get(0)?,
                    prompt: r.get(1)?,
                    task_type: r.get(2)?,
                    output: r.get(3)?,
                    extracted: r.get(4)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))
    }

    /// Store what was learned from a task (replacing anything stored before) and mark it extracted.
    pub fn record_extraction(
        &self,
        task_id: i64,
        provider: &str,
        model: Option<&str>,
        items: &[(String, String, &str)],
        tokens: (i64, i64),
    ) -> Result<()> {
        self.immediate(|tx| {
            tx.execute("DELETE FROM learnings WHERE task_id = ?1", [task_id])?;
            for (section, content, origin) in items {
                tx.execute(
                    "INSERT INTO learnings (task_id, section, content, origin, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![task_id, section, content, origin, now_timestamp()],
                )?;
            }
            tx.execute(
                "INSERT OR REPLACE INTO learning_extractions (task_id, provider, model, extracted_at, input_tokens, output_tokens) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![task_id, provider, model, now_timestamp(), tokens.0, tokens.1],
            )?;
            Ok(())
        })
    }

    /// Learnings of the given tasks (in the order given) followed by pinned user lines.
    pub fn learnings_of(&self, task_ids: &[i64]) -> Result<Vec<StoredLearning>> {
        let mut out = Vec::new();
        let mut stmt = self
            .conn
            .prepare("SELECT section, content FROM learnings WHERE task_id = ?1 ORDER BY id")
            .map_err(|e| self.err(e))?;
        for &id in task_ids {
            let rows = stmt
                .query_map([id], |r| {
                    Ok(StoredLearning {
                        task_id: Some(id),
                        section: r.get(0)?,
                        content: r.get(1)?,
                    })
                })
                .map_err(|e| self.err(e))?;
            for row in rows {
                out.push(row.map_err(|e| self.err(e))?);
            }
        }
        out.extend(self.pinned_learnings()?);
        Ok(out)
    }

    /// Lines the user pinned.
    pub fn pinned_learnings(&self) -> Result<Vec<StoredLearning>> {
        let mut stmt = self
            .conn
            .prepare("SELECT section, content FROM learnings WHERE task_id IS NULL ORDER BY id")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(StoredLearning {
                    task_id: None,
                    section: r.get(0)?,
                    content: r.get(1)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))
    }

    /// Pin a line (kept in every regeneration until deleted from the file).
    pub fn pin_learning(&self, section: &str, content: &str) -> Result<()> {
        self.immediate(|tx| {
            tx.execute("DELETE FROM learnings_suppressed WHERE content = ?1", [content])?;
            let exists: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM learnings WHERE task_id IS NULL AND content = ?1)",
                [content],
                |r| r.get(0),
            )?;
            if !exists {
                tx.execute(
                    "INSERT INTO learnings (task_id, section, content, origin, created_at) VALUES (NULL, ?1, ?2, 'user', ?3)",
                    params![section, content, now_timestamp()],
                )?;
            }
            Ok(())
        })
    }

    /// Keep a line the user deleted out of later regenerations (and unpin it).
    pub fn suppress_learning(&self, content: &str) -> Result<()> {
        self.immediate(|tx| {
            tx.execute("DELETE FROM learnings WHERE task_id IS NULL AND content = ?1", [content])?;
            tx.execute(
                "INSERT OR IGNORE INTO learnings_suppressed (content, suppressed_at) VALUES (?1, ?2)",
                params![content, now_timestamp()],
            )?;
            Ok(())
        })
    }

    /// Lines the user deleted.
    pub fn suppressed_learnings(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT content FROM learnings_suppressed ORDER BY content")
            .map_err(|e| self.err(e))?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))
    }

    /// The newest version gza wrote: its id and content.
    pub fn last_learnings_version(&self) -> Result<Option<(i64, String)>> {
        self.conn
            .query_row(
                "SELECT id, content FROM learnings_versions ORDER BY id DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// The id of the newest version gza wrote.
    pub fn last_learnings_version_id(&self) -> Result<Option<i64>> {
        self.conn
            .query_row("SELECT MAX(id) FROM learnings_versions", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    /// Record a new version and reset the regeneration counter, in one transaction.
    pub fn record_learnings_version(&self, record: &VersionRecord, content: &str) -> Result<i64> {
        self.immediate(|tx| {
            let now = now_timestamp();
            tx.execute(
                "INSERT INTO learnings_versions (created_at, from_task_id, window_tasks, items, added, removed, kept, \
                 llm_calls, input_tokens, output_tokens, duration_ms, content) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    now,
                    record.from_task_id,
                    record.window_tasks,
                    record.items,
                    record.added,
                    record.removed,
                    record.kept,
                    record.llm_calls,
                    record.input_tokens,
                    record.output_tokens,
                    record.duration_ms,
                    content
                ],
            )?;
            let id = tx.last_insert_rowid();
            tx.execute(
                "UPDATE learnings_metadata SET last_regenerated_at = ?1, last_regenerated_from_task_id = ?2, \
                 tasks_since_regen = 0 WHERE id = 1",
                params![now, record.from_task_id],
            )?;
            Ok(id)
        })
    }

    /// Remember which learnings version a task was given.
    pub fn set_learnings_version(&self, task_id: i64, version: Option<i64>) -> Result<()> {
        self.conn
            .execute(
                "UPDATE tasks SET learnings_version = ?2 WHERE id = ?1",
                params![task_id, version],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// The learnings_metadata row.
    pub fn learnings_metadata(&self) -> Result<LearningsMetadata> {
        self.conn
            .query_row(
                "SELECT last_regenerated_at, last_regenerated_from_task_id, COALESCE(tasks_since_regen, 0) \
                 FROM learnings_metadata WHERE id = 1",
                [],
                |r| {
                    Ok(LearningsMetadata {
                        last_regenerated_at: r.get(0)?,
                        last_regenerated_from_task_id: r.get(1)?,
                        tasks_since_regen: r.get(2)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
            .map(Option::unwrap_or_default)
    }

    /// Forget every stored learning, extraction, suppression and version; reset the metadata.
    pub fn clear_learnings(&self) -> Result<()> {
        self.immediate(|tx| {
            tx.execute_batch(
                "DELETE FROM learnings; DELETE FROM learning_extractions; DELETE FROM learnings_suppressed; \
                 DELETE FROM learnings_versions; UPDATE tasks SET learnings_version = NULL WHERE learnings_version IS NOT NULL; \
                 UPDATE learnings_metadata SET last_regenerated_at = NULL, last_regenerated_from_task_id = NULL, \
                 tasks_since_regen = 0 WHERE id = 1;",
            )
        })
    }

    /// Counts and spending for `gza learnings stats`.
    pub fn learnings_totals(&self) -> Result<LearningsTotals> {
        let q = |sql: &str| -> Result<i64> {
            self.conn
                .query_row(sql, [], |r| r.get(0))
                .map_err(|e| self.err(e))
        };
        let mut t = LearningsTotals {
            stored: q("SELECT COUNT(*) FROM learnings WHERE task_id IS NOT NULL")?,
            pinned: q("SELECT COUNT(*) FROM learnings WHERE task_id IS NULL")?,
            suppressed: q("SELECT COUNT(*) FROM learnings_suppressed")?,
            tasks_extracted: q("SELECT COUNT(*) FROM learning_extractions")?,
            regenerations: q("SELECT COUNT(*) FROM learnings_versions")?,
            llm_calls: q("SELECT COALESCE(SUM(llm_calls), 0) FROM learnings_versions")?,
            input_tokens: q("SELECT COALESCE(SUM(input_tokens), 0) FROM learnings_versions")?,
            output_tokens: q("SELECT COALESCE(SUM(output_tokens), 0) FROM learnings_versions")?,
            last: None,
        };
        t.last = self
            .conn
            .query_row(
                "SELECT from_task_id, window_tasks, items, added, removed, kept, llm_calls, input_tokens, \
                 output_tokens, duration_ms FROM learnings_versions ORDER BY id DESC LIMIT 1",
                [],
                |r| {
                    Ok(VersionRecord {
                        from_task_id: r.get(0)?,
                        window_tasks: r.get(1)?,
                        items: r.get(2)?,
                        added: r.get(3)?,
                        removed: r.get(4)?,
                        kept: r.get(5)?,
                        llm_calls: r.get(6)?,
                        input_tokens: r.get(7)?,
                        output_tokens: r.get(8)?,
                        duration_ms: r.get(9)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))?;
        Ok(t)
    }
}
