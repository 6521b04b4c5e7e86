//! Queries for the learning lifecycle: review, promotion, tiers by evidence, outcomes.

use super::Store;
use super::learnings::{
    LEARNING_COLUMNS, insert_learning, learning_from_row, log_event, set_status,
};
use crate::db::ToParam;
use gza_core::error::Result;
use gza_core::learning::{Evidence, Learning, NewLearning, Status};
use gza_core::task::{FailureReason, TaskId, TaskStatus, now_timestamp};

/// What validation decided for one learning.
#[derive(Debug, Clone)]
pub struct TierChange {
    pub id: i64,
    pub tier: u8,
    pub level: Option<String>,
    pub evidence: Option<Evidence>,
    pub stale_reason: Option<String>,
    /// A line for the evolution log: (event, detail), e.g. ("tier 2", "high: 7 files").
    pub event: Option<(String, String)>,
}

/// One line of the evolution log of tier changes.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EvolutionEntry {
    pub at: String,
    pub id: i64,
    pub text: String,
    pub event: String,
    pub detail: Option<String>,
}

/// A task a learning was given to, and how it ended.
#[derive(Debug, Clone, serde::Serialize)]
pub struct InjectionOutcome {
    pub task: TaskId,
    pub status: TaskStatus,
    pub failure_reason: Option<FailureReason>,
}

/// How the finished tasks a learning was given to ended, counted (A/B runs aside).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct OutcomeCounts {
    pub completed: i64,
    pub failed: i64,
}

/// A learning given to three or more finished tasks that all failed the same way.
#[derive(Debug, Clone, PartialEq)]
pub struct FailingLearning {
    pub id: i64,
    pub text: String,
    /// The reason they all failed with; `None` when none was recorded.
    pub failure_reason: Option<FailureReason>,
    /// How many tasks.
    pub tasks: i64,
}

/// How many learnings in use are in each lifecycle state, for `gza learnings stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LifecycleCounts {
    pub tier2_high: i64,
    pub tier2_medium: i64,
    pub stale: i64,
    pub quarantined: i64,
}

impl Store {
    fn learning_list(&self, filter: &str, params: &[&dyn ToParam]) -> Result<Vec<Learning>> {
        let sql =
            format!("SELECT {LEARNING_COLUMNS} FROM learnings l WHERE {filter} ORDER BY l.id");
        self.db
            .query_map(&sql, params, learning_from_row)
            .map_err(|e| self.err(e))
    }

    /// Learnings awaiting a person: drafts, and quarantined learnings not archived.
    pub fn review_queue(&self) -> Result<Vec<Learning>> {
        self.learning_list(
            "l.status = 'draft' OR (l.quarantine_reason IS NOT NULL AND l.status <> 'archived')",
            params![],
        )
    }

    /// Validated learnings in use, strongest evidence first.
    pub fn tier2_learnings(&self) -> Result<Vec<Learning>> {
        let mut list = self.learning_list(
            "l.tier = 2 AND l.status = 'active' AND l.quarantine_reason IS NULL",
            params![],
        )?;
        list.sort_by_key(|l| {
            std::cmp::Reverse(l.lifecycle.evidence.as_ref().map_or(0, |e| e.count))
        });
        Ok(list)
    }

    /// Accept learnings: drafts become active and a quarantine is lifted. For each id, whether
    /// anything changed.
    pub fn promote_learnings(&self, ids: &[i64], reason: &str) -> Result<Vec<bool>> {
        self.immediate(|tx| {
            let now = now_timestamp();
            let mut changed = Vec::with_capacity(ids.len());
            for &id in ids {
                let mut any = set_status(tx, id, Status::Active, Some(reason), &now)?;
                let lifted = tx.execute(
                    "UPDATE learnings SET quarantine_reason = NULL WHERE id = ?1 AND quarantine_reason IS NOT NULL",
                    params![id],)?;
                if lifted > 0 {
                    log_event(tx, id, "accepted", Some("quarantine lifted by a person"), &now)?;
                    any = true;
                }
                changed.push(any);
            }
            Ok(changed)
        })
    }

    /// Record what validation found, in one transaction.
    pub fn record_validation(&self, changes: &[TierChange]) -> Result<()> {
        if changes.is_empty() {
            return Ok(());
        }
        // Every learning's new tier in one statement (a regeneration validates every active
        // learning: a round trip each was most of its statements on PostgreSQL). A learning
        // named twice gets its last change, as when they were applied one after another.
        let mut last: std::collections::HashMap<i64, usize> = std::collections::HashMap::new();
        for (i, c) in changes.iter().enumerate() {
            last.insert(c.id, i);
        }
        let rows: Vec<serde_json::Value> = changes
            .iter()
            .enumerate()
            .filter(|(i, c)| last.get(&c.id) == Some(i))
            .map(|(_, c)| {
                serde_json::json!({
                    "id": c.id,
                    "tier": c.tier,
                    "level": c.level,
                    "evidence": c.evidence.as_ref().and_then(|e| serde_json::to_string(e).ok()),
                    "stale": c.stale_reason,
                })
            })
            .collect();
        let json = serde_json::Value::Array(rows).to_string();
        let sql = match self.backend() {
            crate::Backend::Sqlite => {
                "UPDATE learnings SET tier = c.tier, tier_level = c.level, evidence = c.evidence, \
                 validated_at = ?2, stale_reason = c.stale \
                 FROM (SELECT value ->> '$.id' AS id, value ->> '$.tier' AS tier, \
                         value ->> '$.level' AS level, value ->> '$.evidence' AS evidence, \
                         value ->> '$.stale' AS stale FROM json_each(?1)) AS c \
                 WHERE learnings.id = c.id"
            }
            crate::Backend::Postgres => {
                "UPDATE learnings SET tier = c.tier, tier_level = c.level, evidence = c.evidence, \
                 validated_at = ?2, stale_reason = c.stale \
                 FROM json_to_recordset(CAST(?1 AS JSON)) \
                   AS c(id BIGINT, tier BIGINT, level TEXT, evidence TEXT, stale TEXT) \
                 WHERE learnings.id = c.id"
            }
        };
        self.immediate(|tx| {
            let now = now_timestamp();
            tx.execute(sql, params![json, now])?;
            for c in changes {
                if let Some((event, detail)) = &c.event {
                    log_event(tx, c.id, event, Some(detail), &now)?;
                }
            }
            Ok(())
        })
    }

    /// Every tier change, oldest first.
    pub fn evolution_log(&self) -> Result<Vec<EvolutionEntry>> {
        self.db
            .query_map(
                "SELECT e.at, e.learning_id, l.text, e.event, e.detail FROM learning_events e \
                 JOIN learnings l ON l.id = e.learning_id \
                 WHERE e.event IN ('tier 2', 'stale', 'imported') ORDER BY e.id",
                params![],
                |r| {
                    Ok(EvolutionEntry {
                        at: r.get(0)?,
                        id: r.get(1)?,
                        text: r.get(2)?,
                        event: r.get(3)?,
                        detail: r.get(4)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// Store a learning read from an expertise file unless one with its text exists; returns
    /// its id when it was added.
    pub fn import_learning(
        &self,
        learning: &NewLearning,
        change: Option<&TierChange>,
        source: &str,
    ) -> Result<Option<i64>> {
        self.immediate(|tx| {
            let known: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM learnings WHERE lower(text) = lower(?1))",
                params![&learning.text],
                |r| r.get(0),)?;
            if known {
                return Ok(None);
            }
            let now = now_timestamp();
            let id = insert_learning(tx, learning, &now)?;
            log_event(tx, id, "imported", Some(source), &now)?;
            if let Some(c) = change {
                tx.execute(
                    "UPDATE learnings SET tier = ?2, tier_level = ?3, evidence = ?4, validated_at = ?5 WHERE id = ?1",
                    params![
                        id,
                        c.tier,
                        c.level,
                        c.evidence.as_ref().and_then(|e| serde_json::to_string(e).ok()),
                        now
                    ],)?;
            }
            Ok(Some(id))
        })
    }

    /// Store rules a task's agent wrote as drafts taught by the task, skipping texts already
    /// known (in any status); returns the new ids.
    pub fn add_task_drafts(&self, task_id: TaskId, learnings: &[NewLearning]) -> Result<Vec<i64>> {
        self.add_unknown_learnings(
            learnings,
            "task_id",
            &task_id,
            &format!("task {task_id} (LEARNINGS.md)"),
        )
    }

    /// The finished tasks a learning was given to, newest first, at most `limit` (A/B runs,
    /// which are measurements, aside); only the failed ones with `failed_only`. Read from the
    /// newest end of the learning's injections (`(learning_id, task_id)` index) and stopped at
    /// `limit`, so it does not grow with the tasks it was given to; how many there are in all
    /// is [`Store::injection_outcome_counts`].
    pub fn injection_outcomes(
        &self,
        id: i64,
        failed_only: bool,
        limit: u32,
    ) -> Result<Vec<InjectionOutcome>> {
        let statuses = if failed_only {
            "('failed')"
        } else {
            "('completed', 'failed')"
        };
        self.db
            .query_map(
                &format!(
                    "SELECT i.task_id, MIN(t.status), MIN(t.failure_reason) FROM learning_injections i \
                     JOIN tasks t ON t.id = i.task_id \
                     WHERE i.learning_id = ?1 AND t.status IN {statuses} \
                       AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = t.id) \
                     GROUP BY i.task_id ORDER BY i.task_id DESC LIMIT ?2"
                ),
                params![id, limit],
                |r| {
                let status: String = r.get(1)?;
                Ok(InjectionOutcome {
                    task: r.get(0)?,
                    // The query selects completed and failed tasks only.
                    status: TaskStatus::parse(&status).unwrap_or(TaskStatus::Failed),
                    failure_reason: r.get(2)?,
                })
            },)
            .map_err(|e| self.err(e))
    }

    /// How many finished tasks a learning was given to, by how they ended (A/B runs aside):
    /// from the counters migration V52/V22 keeps, not its injections.
    pub fn injection_outcome_counts(&self, id: i64) -> Result<OutcomeCounts> {
        let rows: Vec<(String, i64)> = self
            .db
            .query_map(
                "SELECT status, tasks FROM learning_outcome_counts \
                 WHERE learning_id = ?1 AND tasks > 0 ORDER BY status, failure_reason",
                params![id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(|e| self.err(e))?;
        let mut counts = OutcomeCounts::default();
        for (status, n) in rows {
            if status == "completed" {
                counts.completed += n;
            } else {
                counts.failed += n;
            }
        }
        Ok(counts)
    }

    /// Learnings given to 3 or more finished tasks that all failed the same way (A/B runs,
    /// which are measurements, aside).
    pub fn failing_learnings(&self) -> Result<Vec<FailingLearning>> {
        self.db
            .query_map(
                // From the outcome counters (V52/V22): one row per learning and way of ending,
                // so the cost follows the learnings, not the injections of the history (1.9 s
                // of the server's at 100k tasks with ten injections each, as one aggregate over
                // all of them). Every row failed, one reason, 3 or more tasks.
                "SELECT l.id, l.text, MIN(c.failure_reason), CAST(SUM(c.tasks) AS BIGINT) \
                 FROM learning_outcome_counts c JOIN learnings l ON l.id = c.learning_id \
                 WHERE l.status <> 'archived' AND c.tasks > 0 \
                 GROUP BY l.id, l.text \
                 HAVING COUNT(CASE WHEN c.status = 'completed' THEN 1 END) = 0 \
                    AND SUM(c.tasks) >= 3 AND COUNT(*) = 1 \
                 ORDER BY l.id",
                params![],
                |r| {
                    let reason: String = r.get(2)?;
                    Ok(FailingLearning {
                        id: r.get(0)?,
                        text: r.get(1)?,
                        failure_reason: (!reason.is_empty()).then(|| FailureReason::parse(&reason)),
                        tasks: r.get(3)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// Counts for `stats`.
    pub fn lifecycle_counts(&self) -> Result<LifecycleCounts> {
        self.db
            .query_row(
                "SELECT COUNT(CASE WHEN tier = 2 AND tier_level = 'high' THEN 1 END), \
                        COUNT(CASE WHEN tier = 2 AND tier_level = 'medium' THEN 1 END), \
                        COUNT(stale_reason), \
                        COUNT(quarantine_reason) \
                 FROM learnings WHERE status <> 'archived'",
                params![],
                |r| {
                    Ok(LifecycleCounts {
                        tier2_high: r.get(0)?,
                        tier2_medium: r.get(1)?,
                        stale: r.get(2)?,
                        quarantined: r.get(3)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }
}
