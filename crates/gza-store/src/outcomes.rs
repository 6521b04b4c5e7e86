//! Learning from outcomes: how each finished task ended, credited to the learnings it was given,
//! and people's ratings of learnings (`task_credits`, `learning_credit`, `learning_ratings`,
//! `credit_totals`; SQLite migration V37, PostgreSQL V8).
//!
//! A task is credited when it finishes (in the completion hook's transaction), again when a
//! review of it finishes with a verdict, when its branch is merged and when a commit reverting
//! its work is found. Each time the task's row in `task_credits` is rewritten and, when its credit
//! changed, each learning it was given moves by the difference: a task counts once per learning,
//! whatever happened to it and however many ways the learning reached it.

use serde::Serialize;

use super::Store;
use crate::db::{DbResult, Row, Tx};
use gza_core::error::Result;
use gza_core::task::{FailureReason, ReviewVerdict, TaskId, TaskStatus, TaskType, now_timestamp};

/// What the learnings a task was given earn from how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Credit {
    Helpful,
    Harmful,
    /// A person or the machine stopped it; it says nothing about what it was told.
    Neutral,
}

impl Credit {
    pub fn as_str(self) -> &'static str {
        match self {
            Credit::Helpful => "helpful",
            Credit::Harmful => "harmful",
            Credit::Neutral => "neutral",
        }
    }

    fn parse(text: &str) -> Credit {
        match text {
            "helpful" => Credit::Helpful,
            "harmful" => Credit::Harmful,
            _ => Credit::Neutral,
        }
    }
}

/// How a task ended, with every fact that bears on its credit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ending {
    pub task: TaskId,
    #[serde(skip)]
    pub task_type: TaskType,
    #[serde(skip)]
    pub status: TaskStatus,
    /// `completed`, or the failure reason (`failed` when none was recorded).
    pub ending: String,
    /// The verdict of the latest finished review of this task (code tasks only).
    pub verdict: Option<ReviewVerdict>,
    /// The review that gave it.
    pub review_task: Option<TaskId>,
    pub merged: bool,
    /// The commit that reverted the task's work, when one was found.
    pub reverted: Option<String>,
}

/// Failure reasons that are the agent's doing: what it was told may have led it there (it ran
/// out of time or turns, stopped without an answer, or broke its worktree). The others say
/// nothing about the learnings it was given: a person or the machine stopped it (KILLED,
/// WORKER_DIED), gza could not set it up (PROMPT_ERROR, GIT_ERROR), or its provider failed
/// (AGENT_START, SANDBOX_ERROR, AGENT_EXIT, AGENT_ERROR: an expired key or an outage fails every
/// task alike, and with `inject: file` would debit every learning in the file with the same
/// evidence); nor does a reason this gza does not know. (The migrations back-filled with a list
/// that also counted AGENT_EXIT and AGENT_ERROR; a task credited so is put right when it is
/// credited again.)
fn agent_owned(reason: &FailureReason) -> bool {
    matches!(
        reason,
        FailureReason::Timeout
            | FailureReason::MaxTurns
            | FailureReason::NoResult
            | FailureReason::UnsafeWorktree
    )
}

impl Ending {
    /// The credit: reverted work, a failure the agent owns, or a latest review that requested
    /// changes is harmful; any other completed task helpful; the rest neutral. A review task is
    /// neutral however it ended: its verdict is credited to the task it reviewed, and crediting
    /// the review's own completion as helpful cancelled the debit of every CHANGES_REQUESTED
    /// (with `inject: file` the review is given the same learnings), so a learning whose tasks
    /// all had changes requested was never flagged.
    pub fn credit(&self) -> Credit {
        if self.task_type == TaskType::Review {
            return Credit::Neutral;
        }
        if self.reverted.is_some() {
            return Credit::Harmful;
        }
        match self.status {
            TaskStatus::Completed if self.verdict == Some(ReviewVerdict::ChangesRequested) => {
                Credit::Harmful
            }
            TaskStatus::Completed => Credit::Helpful,
            TaskStatus::Failed if agent_owned(&FailureReason::parse(&self.ending)) => {
                Credit::Harmful
            }
            _ => Credit::Neutral,
        }
    }

    /// One line for people: "completed, review CHANGES_REQUESTED (task 7), merged".
    pub fn describe(&self) -> String {
        let mut parts = vec![self.ending.clone()];
        if let Some(v) = self.verdict {
            match self.review_task {
                Some(r) => parts.push(format!("review {v} (task {r})")),
                None => parts.push(format!("review {v}")),
            }
        }
        if self.merged {
            parts.push("merged".into());
        }
        if let Some(c) = &self.reverted {
            parts.push(format!("reverted by {}", short(c)));
        }
        parts.join(", ")
    }
}

fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}

/// A learning's record: tasks it was given that were helpful or harmful, and people's ratings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CreditCounts {
    pub helpful: i64,
    pub harmful: i64,
    pub rated_up: i64,
    pub rated_down: i64,
}

/// Every credited task's outcome: the project's base rate, the prior of every learning.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BaseRate {
    pub helpful: i64,
    pub harmful: i64,
}

/// A finished task a learning was given, and how it ended.
#[derive(Debug, Clone, Serialize)]
pub struct CreditedTask {
    pub credit: Credit,
    #[serde(flatten)]
    pub ending: Ending,
}

/// A learning that earned harm or a down rating: a candidate for the flag.
#[derive(Debug, Clone)]
pub struct Debited {
    pub id: i64,
    pub text: String,
    pub counts: CreditCounts,
}

/// A person's standing rating of a learning.
#[derive(Debug, Clone, Serialize)]
pub struct Rating {
    #[serde(skip)]
    pub learning: i64,
    pub rating: String,
    /// Who: their git identity or OS user ("" for a rating made before gza recorded it).
    pub by: String,
    pub why: Option<String>,
    pub at: String,
}

/// The measures seed 000 names, over the newest finished tasks (see [`Store::outcome_measures`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Measures {
    /// Finished tasks looked at.
    pub tasks: i64,
    /// Of them, tasks given at least one learning.
    pub given: i64,
    pub given_helpful: i64,
    pub given_harmful: i64,
    pub not_given_helpful: i64,
    pub not_given_harmful: i64,
}

/// The task `id`'s ending as the database has it now (the revert found earlier is kept), or
/// `None` when there is no such task.
/// Task `id`'s ending and its credit so far (`None`: never credited), or `None` for a task that
/// does not exist or is an A/B run (`gza ab`: an experiment must not train the ranker it
/// measures): the task's row, its run and its credit in one statement (a round trip each were
/// a third of what crediting a finished task cost on PostgreSQL), its latest review in a second
/// for a task that changes code.
fn read_ending(tx: &Tx, id: TaskId) -> DbResult<Option<(Ending, Option<Credit>)>> {
    let Some((status, task_type, reason, merged, ab, credit, reverted)) = tx.query_opt(
        "SELECT t.status, t.task_type, t.failure_reason, t.merged_at IS NOT NULL, \
                EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = t.id), c.credit, c.reverted \
         FROM tasks t LEFT JOIN task_credits c ON c.task_id = t.id WHERE t.id = ?1",
        params![id],
        |r| {
            Ok((
                r.get::<String>(0)?,
                r.get::<String>(1)?,
                r.get::<Option<String>>(2)?,
                r.get::<bool>(3)?,
                r.get::<bool>(4)?,
                r.get::<Option<String>>(5)?,
                r.get::<Option<String>>(6)?,
            ))
        },
    )?
    else {
        return Ok(None);
    };
    if ab {
        return Ok(None);
    }
    let credit = credit.map(|c| Credit::parse(&c));
    let status = TaskStatus::parse(&status).unwrap_or(TaskStatus::Pending);
    let task_type = TaskType::parse(&task_type).unwrap_or(TaskType::Implement);
    let (verdict, review_task) = if task_type.changes_code() {
        tx.query_opt(
            "SELECT review_verdict, id FROM tasks WHERE based_on = ?1 AND task_type = 'review' \
             AND status = 'completed' AND review_verdict IS NOT NULL ORDER BY id DESC LIMIT 1",
            params![id],
            |r| {
                Ok((
                    ReviewVerdict::parse(&r.get::<String>(0)?),
                    Some(r.get::<TaskId>(1)?),
                ))
            },
        )?
        .unwrap_or((None, None))
    } else {
        (None, None)
    };
    let ending = match status {
        TaskStatus::Completed => "completed".to_string(),
        TaskStatus::Failed => reason.unwrap_or_else(|| "failed".into()),
        other => other.as_str().to_string(),
    };
    Ok(Some((
        Ending {
            task: id,
            task_type,
            status,
            ending,
            verdict,
            review_task,
            merged,
            reverted,
        },
        credit,
    )))
}

/// Add `helpful` and `harmful` to the counts of every learning `learnings` (a query whose rows
/// are distinct learning ids; its parameters are `?1`..) selects, in one statement; learnings
/// deleted meanwhile are skipped. The parameters of the move are the query's two after its own.
fn move_learnings(
    tx: &Tx,
    learnings: &str,
    params: &[&dyn crate::db::ToParam],
    (helpful, harmful): (i64, i64),
) -> DbResult<()> {
    if helpful == 0 && harmful == 0 {
        return Ok(());
    }
    let b = tx.backend();
    let (h, x) = (params.len() + 1, params.len() + 2);
    // A learning without a row yet starts at the move, never below zero (as a row's counts
    // never go below it).
    let sql = format!(
        "INSERT INTO learning_credit (learning_id, helpful, harmful) \
         SELECT m.learning_id, {}, {} FROM ({learnings}) AS m \
         WHERE EXISTS (SELECT 1 FROM learnings WHERE id = m.learning_id) \
         ON CONFLICT (learning_id) DO UPDATE SET helpful = {}, harmful = {}",
        b.greatest("0", &format!("CAST(?{h} AS BIGINT)")),
        b.greatest("0", &format!("CAST(?{x} AS BIGINT)")),
        b.greatest("0", &format!("learning_credit.helpful + ?{h}")),
        b.greatest("0", &format!("learning_credit.harmful + ?{x}")),
    );
    let mut all: Vec<&dyn crate::db::ToParam> = params.to_vec();
    all.push(&helpful);
    all.push(&harmful);
    tx.execute(&sql, &all)?;
    Ok(())
}

fn read_credit(tx: &Tx, task: TaskId) -> DbResult<Option<Credit>> {
    Ok(tx
        .query_opt(
            "SELECT credit FROM task_credits WHERE task_id = ?1",
            params![task],
            |r| r.get::<String>(0),
        )?
        .map(|c| Credit::parse(&c)))
}

/// Credit task `id` as it stands now, in `tx`: rewrite its `task_credits` row and, when its
/// credit changed, move every learning it was given (each once) and the base rate by the
/// difference. Returns its credit, or `None` for a task that does not exist or is an A/B run
/// (never credited). Cheap: the task's
/// row, its latest review and its injections, all by index.
pub fn credit_task(tx: &Tx, id: TaskId) -> DbResult<Option<Credit>> {
    let Some((ending, before)) = read_ending(tx, id)? else {
        return Ok(None);
    };
    let credit = ending.credit();
    if before.is_none() && !matches!(ending.status, TaskStatus::Completed | TaskStatus::Failed) {
        // Not finished and never credited: nothing to record yet.
        return Ok(Some(credit));
    }
    tx.execute(
        "INSERT INTO task_credits (task_id, credit, ending, verdict, review_task, merged, reverted, credited_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
         ON CONFLICT (task_id) DO UPDATE SET credit = excluded.credit, ending = excluded.ending, \
            verdict = excluded.verdict, review_task = excluded.review_task, merged = excluded.merged, \
            reverted = excluded.reverted, credited_at = excluded.credited_at",
        params![
            id,
            credit.as_str(),
            ending.ending,
            ending.verdict.map(ReviewVerdict::as_str),
            ending.review_task,
            i64::from(ending.merged),
            ending.reverted,
            now_timestamp()
        ],
    )?;
    let before = before.unwrap_or(Credit::Neutral);
    if before == credit {
        return Ok(Some(credit));
    }
    let total = |c: Credit| match c {
        Credit::Helpful => (1i64, 0i64),
        Credit::Harmful => (0, 1),
        Credit::Neutral => (0, 0),
    };
    let (h0, x0) = total(before);
    let (h1, x1) = total(credit);
    // Every learning it was given (each once) moves by the difference, in one statement (a
    // round trip per learning was most of a finished task's cost on PostgreSQL). The old
    // credit and the new one differ, so each count moves one way only, as taking the old one
    // back and adding the new one in two steps did.
    move_learnings(
        tx,
        "SELECT DISTINCT learning_id FROM learning_injections WHERE task_id = ?1",
        params![id],
        (h1 - h0, x1 - x0),
    )?;
    let b = tx.backend();
    tx.execute(
        &format!(
            "UPDATE credit_totals SET helpful = {}, harmful = {} WHERE id = 1",
            b.greatest("0", "helpful + ?1"),
            b.greatest("0", "harmful + ?2"),
        ),
        params![h1 - h0, x1 - x0],
    )?;
    Ok(Some(credit))
}

/// After a task finished, in its completion transaction: credit it, and, for a review with a
/// verdict, the task it reviewed.
pub fn credit_finished(tx: &Tx, id: TaskId, reviewed: Option<TaskId>) -> DbResult<()> {
    credit_task(tx, id)?;
    if let Some(reviewed) = reviewed {
        credit_task(tx, reviewed)?;
    }
    Ok(())
}

/// Whether task `task` was credited (helpful or harmful): only then do injections given to it
/// late move credit.
pub(crate) fn is_credited(tx: &Tx, task: TaskId) -> DbResult<bool> {
    Ok(read_credit(tx, task)?.is_some_and(|c| c != Credit::Neutral))
}

/// Learnings given to task `task` after it was credited (a hook's injection taken in from the
/// spool later): each learning given to it for the first time earns the task's credit now.
pub(crate) fn credit_late_injections(tx: &Tx, task: TaskId, learnings: &[i64]) -> DbResult<()> {
    let Some(credit) = read_credit(tx, task)?.filter(|c| *c != Credit::Neutral) else {
        return Ok(());
    };
    let (helpful, harmful) = match credit {
        Credit::Helpful => (1, 0),
        Credit::Harmful => (0, 1),
        Credit::Neutral => return Ok(()),
    };
    // Those given to it once (now) among `learnings`, in one statement.
    let json = serde_json::to_string(learnings).unwrap_or_else(|_| "[]".into());
    move_learnings(
        tx,
        &format!(
            "SELECT learning_id FROM learning_injections \
             WHERE task_id = ?1 AND learning_id IN ({}) \
             GROUP BY learning_id HAVING COUNT(*) = 1",
            tx.backend().json_ids("?2")
        ),
        params![task, json],
        (helpful, harmful),
    )
}

const CREDIT_COLUMNS: &str = "helpful, harmful, rated_up, rated_down";

fn counts_from(r: &Row, at: usize) -> DbResult<CreditCounts> {
    Ok(CreditCounts {
        helpful: r.get(at)?,
        harmful: r.get(at + 1)?,
        rated_up: r.get(at + 2)?,
        rated_down: r.get(at + 3)?,
    })
}

impl Store {
    /// Credit tasks as they stand now (after a merge, say), in one transaction.
    pub fn credit_tasks(&self, ids: &[TaskId]) -> Result<()> {
        self.immediate(|tx| {
            for &id in ids {
                credit_task(tx, id)?;
            }
            Ok(())
        })
    }

    /// Record that commit `by` reverted the work of each of `tasks`, and credit them again.
    /// Returns the tasks that were not known to be reverted before.
    pub fn record_reverts(&self, tasks: &[TaskId], by: &str) -> Result<Vec<TaskId>> {
        self.immediate(|tx| {
            let mut fresh = Vec::new();
            for &id in tasks {
                let finished = tx
                    .query_opt("SELECT status FROM tasks WHERE id = ?1", params![id], |r| {
                        r.get::<String>(0)
                    })?
                    .is_some_and(|s| s == "completed" || s == "failed");
                if !finished {
                    continue;
                }
                credit_task(tx, id)?;
                let changed = tx.execute(
                    "UPDATE task_credits SET reverted = ?2 WHERE task_id = ?1 AND reverted IS NULL",
                    params![id, by],
                )?;
                if changed > 0 {
                    // Credited again, the revert read from its row moves its learnings.
                    credit_task(tx, id)?;
                    fresh.push(id);
                }
            }
            Ok(fresh)
        })
    }

    /// The commit of HEAD the last scan for reverts read up to.
    pub fn reverts_scanned_to(&self) -> Result<Option<String>> {
        self.db
            .query_opt(
                "SELECT reverts_from FROM credit_totals WHERE id = 1",
                params![],
                |r| r.get::<Option<String>>(0),
            )
            .map(Option::flatten)
            .map_err(|e| self.err(e))
    }

    /// Remember how far the scan for reverts read.
    pub fn set_reverts_scanned_to(&self, commit: &str) -> Result<()> {
        self.db
            .execute(
                "UPDATE credit_totals SET reverts_from = ?1 WHERE id = 1",
                params![commit],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Record person `by`'s rating of learning `id` (`Some(true)` up, `Some(false)` down), which
    /// replaces their earlier one, or clear theirs (`None`); returns its counts after it. Each
    /// person has one standing rating per learning: rating again does not stack, and a mistaken
    /// rating can be taken back. Every rating is kept in the learning's history.
    pub fn rate_learning(
        &self,
        id: i64,
        by: &str,
        rating: Option<bool>,
        why: Option<&str>,
    ) -> Result<CreditCounts> {
        self.immediate(|tx| {
            let now = now_timestamp();
            tx.execute(
                "DELETE FROM learning_ratings WHERE learning_id = ?1 AND rated_by = ?2",
                params![id, by],
            )?;
            let detail = match rating {
                Some(up) => {
                    let word = if up { "up" } else { "down" };
                    tx.execute(
                        "INSERT INTO learning_ratings (learning_id, rating, why, rated_at, rated_by) \
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                        params![id, word, why, now, by],
                    )?;
                    match why {
                        Some(w) => format!("rated {word}: {w}"),
                        None => format!("rated {word}"),
                    }
                }
                None => match why {
                    Some(w) => format!("rating cleared: {w}"),
                    None => "rating cleared".to_string(),
                },
            };
            // The counts are the standing ratings, counted again (a learning has a handful).
            tx.execute(
                "INSERT INTO learning_credit (learning_id, rated_up, rated_down) \
                 SELECT ?1, \
                    (SELECT COUNT(*) FROM learning_ratings WHERE learning_id = ?1 AND rating = 'up'), \
                    (SELECT COUNT(*) FROM learning_ratings WHERE learning_id = ?1 AND rating = 'down') \
                 ON CONFLICT (learning_id) DO UPDATE SET rated_up = excluded.rated_up, \
                    rated_down = excluded.rated_down",
                params![id],
            )?;
            super::learnings::log_event(tx, id, "rated", Some(&detail), &now)?;
            tx.query_row(
                &format!("SELECT {CREDIT_COLUMNS} FROM learning_credit WHERE learning_id = ?1"),
                params![id],
                |r| counts_from(r, 0),
            )
        })
    }

    /// The project's base rate.
    pub fn base_rate(&self) -> Result<BaseRate> {
        self.db
            .query_opt(
                "SELECT helpful, harmful FROM credit_totals WHERE id = 1",
                params![],
                |r| {
                    Ok(BaseRate {
                        helpful: r.get(0)?,
                        harmful: r.get(1)?,
                    })
                },
            )
            .map(Option::unwrap_or_default)
            .map_err(|e| self.err(e))
    }

    /// The records of `ids` that have one (a learning with no history has none), by key.
    /// In the order of `ids`; one statement for all of them (a round trip per learning was
    /// most of a search's time on a database across a network).
    pub fn credit_counts(&self, ids: &[i64]) -> Result<Vec<(i64, CreditCounts)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let json = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
        let sql = format!(
            "SELECT learning_id, {CREDIT_COLUMNS} FROM learning_credit WHERE learning_id IN ({})",
            self.backend().json_ids("?1")
        );
        let found: std::collections::HashMap<i64, CreditCounts> = self
            .db
            .query_map(&sql, params![json], |r| Ok((r.get(0)?, counts_from(r, 1)?)))
            .map_err(|e| self.err(e))?
            .into_iter()
            .collect();
        Ok(ids
            .iter()
            .filter_map(|id| found.get(id).map(|c| (*id, *c)))
            .collect())
    }

    /// Learnings not archived that earned harm or a down rating, by id.
    pub fn debited_learnings(&self) -> Result<Vec<Debited>> {
        self.db
            .query_map(
                "SELECT l.id, l.text, c.helpful, c.harmful, c.rated_up, c.rated_down \
                 FROM learning_credit c JOIN learnings l ON l.id = c.learning_id \
                 WHERE (c.harmful > 0 OR c.rated_down > 0) AND l.status <> 'archived' ORDER BY l.id",
                params![],
                |r| {
                    Ok(Debited {
                        id: r.get(0)?,
                        text: r.get(1)?,
                        counts: counts_from(r, 2)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// The credited tasks learning `id` was given, newest first, at most `limit`; harmful
    /// ones only when `harmful_only`.
    pub fn credited_tasks(
        &self,
        id: i64,
        harmful_only: bool,
        limit: usize,
    ) -> Result<Vec<CreditedTask>> {
        self.db
            .query_map(
                "SELECT c.task_id, c.credit, c.ending, c.verdict, c.review_task, c.merged, c.reverted, \
                        COALESCE(t.task_type, 'implement'), COALESCE(t.status, 'completed') \
                 FROM task_credits c LEFT JOIN tasks t ON t.id = c.task_id \
                 WHERE c.task_id IN (SELECT task_id FROM learning_injections WHERE learning_id = ?1 AND task_id IS NOT NULL) \
                   AND (CAST(?2 AS BIGINT) = 0 OR c.credit = 'harmful') \
                 ORDER BY c.task_id DESC LIMIT ?3",
                params![id, i64::from(harmful_only), limit as i64],
                |r| {
                    let credit = Credit::parse(&r.get::<String>(1)?);
                    Ok(CreditedTask {
                        credit,
                        ending: Ending {
                            task: r.get(0)?,
                            ending: r.get(2)?,
                            verdict: r
                                .get::<Option<String>>(3)?
                                .and_then(|v| ReviewVerdict::parse(&v)),
                            review_task: r.get(4)?,
                            merged: r.get(5)?,
                            reverted: r.get(6)?,
                            task_type: TaskType::parse(&r.get::<String>(7)?)
                                .unwrap_or(TaskType::Implement),
                            status: TaskStatus::parse(&r.get::<String>(8)?)
                                .unwrap_or(TaskStatus::Completed),
                        },
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// The standing ratings of learning `id` (of every learning when `None`), newest first, at
    /// most `limit`.
    pub fn ratings(&self, id: Option<i64>, limit: usize) -> Result<Vec<Rating>> {
        self.db
            .query_map(
                "SELECT learning_id, rating, why, rated_at, rated_by FROM learning_ratings \
                 WHERE CAST(?1 AS BIGINT) IS NULL OR learning_id = ?1 ORDER BY id DESC LIMIT ?2",
                params![id, limit as i64],
                |r| {
                    Ok(Rating {
                        learning: r.get(0)?,
                        rating: r.get(1)?,
                        why: r.get(2)?,
                        at: r.get(3)?,
                        by: r.get(4)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// How many ratings there are: (up, down).
    pub fn rating_totals(&self) -> Result<(i64, i64)> {
        self.db
            .query_row(
                "SELECT CAST(COALESCE(SUM(CASE WHEN rating = 'up' THEN 1 ELSE 0 END), 0) AS BIGINT), \
                        CAST(COALESCE(SUM(CASE WHEN rating = 'down' THEN 1 ELSE 0 END), 0) AS BIGINT) \
                 FROM learning_ratings",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(|e| self.err(e))
    }

    /// Injection rate and usage over the newest `window` finished tasks (found by id, so the
    /// work is bounded by the window, not the history): how many were given learnings, and how
    /// the credited ones with and without learnings ended.
    pub fn outcome_measures(&self, window: u32) -> Result<Measures> {
        let sum = |cond: &str| {
            format!("CAST(COALESCE(SUM(CASE WHEN {cond} THEN 1 ELSE 0 END), 0) AS BIGINT)")
        };
        let sql = format!(
            "WITH recent AS ( \
               SELECT t.id FROM tasks t \
               WHERE t.id > (SELECT COALESCE(MAX(id), 0) FROM tasks) - ?1 * 4 \
                 AND t.status IN ('completed', 'failed'){} \
               ORDER BY t.id DESC LIMIT ?1 \
             ), marked AS ( \
               SELECT r.id, \
                      CASE WHEN EXISTS (SELECT 1 FROM learning_injections i WHERE i.task_id = r.id) THEN 1 ELSE 0 END AS given, \
                      COALESCE(c.credit, 'neutral') AS credit \
               FROM recent r LEFT JOIN task_credits c ON c.task_id = r.id \
             ) SELECT COUNT(*), {}, {}, {}, {}, {} FROM marked",
            // A/B runs (`gza ab`) are measured by their experiment, not observed here.
            crate::ab::not_ab_run("t"),
            sum("given = 1"),
            sum("given = 1 AND credit = 'helpful'"),
            sum("given = 1 AND credit = 'harmful'"),
            sum("given = 0 AND credit = 'helpful'"),
            sum("given = 0 AND credit = 'harmful'"),
        );
        self.db
            .query_row(&sql, params![i64::from(window)], |r| {
                Ok(Measures {
                    tasks: r.get(0)?,
                    given: r.get(1)?,
                    given_helpful: r.get(2)?,
                    given_harmful: r.get(3)?,
                    not_given_helpful: r.get(4)?,
                    not_given_harmful: r.get(5)?,
                })
            })
            .map_err(|e| self.err(e))
    }

    /// Learnings created in each of the last `weeks` weeks before `now`, oldest first. Creation
    /// times are stored as RFC 3339 text in UTC (`time::to_db`), so each week is a range of text,
    /// compared the same way on both backends.
    pub fn learnings_per_week(
        &self,
        now: chrono::DateTime<chrono::Utc>,
        weeks: u32,
    ) -> Result<Vec<i64>> {
        use chrono::SubsecRound;
        // Stored times are to the second: a bound with fractions would sort after its own second.
        let now = now.trunc_subsecs(0);
        if weeks == 0 {
            return Ok(Vec::new());
        }
        // Week k (oldest first) is (bounds[k], bounds[k + 1]]; all of them in one statement.
        let bounds: Vec<String> = (0..=i64::from(weeks))
            .rev()
            .map(|ago| gza_core::time::to_db(&(now - chrono::Duration::weeks(ago))))
            .collect();
        let counts: Vec<String> = (1..=weeks as usize)
            .map(|k| {
                format!(
                    "COUNT(CASE WHEN created_at > ?{k} AND created_at <= ?{} THEN 1 END)",
                    k + 1
                )
            })
            .collect();
        let sql = format!(
            "SELECT {} FROM learnings WHERE created_at > ?1 AND created_at <= ?{}",
            counts.join(", "),
            weeks + 1
        );
        let values: Vec<&dyn crate::db::ToParam> = bounds
            .iter()
            .map(|b| b as &dyn crate::db::ToParam)
            .collect();
        let out = self
            .db
            .query_row(&sql, &values, |r| {
                (0..weeks as usize)
                    .map(|k| r.get(k))
                    .collect::<DbResult<Vec<i64>>>()
            })
            .map_err(|e| self.err(e))?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ending(status: TaskStatus, ending: &str) -> Ending {
        Ending {
            task: TaskId(1),
            task_type: TaskType::Implement,
            status,
            ending: ending.into(),
            verdict: None,
            review_task: None,
            merged: false,
            reverted: None,
        }
    }

    #[test]
    fn credit_follows_the_facts() {
        let done = ending(TaskStatus::Completed, "completed");
        assert_eq!(done.credit(), Credit::Helpful);
        let mut changes = done.clone();
        changes.verdict = Some(ReviewVerdict::ChangesRequested);
        changes.review_task = Some(TaskId(4));
        assert_eq!(changes.credit(), Credit::Harmful);
        assert_eq!(
            changes.describe(),
            "completed, review CHANGES_REQUESTED (task 4)"
        );
        let mut reverted = done.clone();
        reverted.merged = true;
        reverted.reverted = Some("0123456789abcdef".into());
        assert_eq!(reverted.credit(), Credit::Harmful);
        assert_eq!(
            reverted.describe(),
            "completed, merged, reverted by 0123456789"
        );
        assert_eq!(
            ending(TaskStatus::Failed, "TIMEOUT").credit(),
            Credit::Harmful
        );
        for neutral in [
            "KILLED",
            "WORKER_DIED",
            "SANDBOX_ERROR",
            "GIT_ERROR",
            "SOMETHING_NEW",
        ] {
            assert_eq!(
                ending(TaskStatus::Failed, neutral).credit(),
                Credit::Neutral,
                "{neutral}"
            );
        }
        assert_eq!(
            ending(TaskStatus::Dropped, "dropped").credit(),
            Credit::Neutral
        );
    }

    #[test]
    fn what_says_nothing_about_the_learnings_is_neutral() {
        // The provider failed: an expired key, an outage, an API error.
        for provider in ["AGENT_EXIT", "AGENT_ERROR", "AGENT_START", "PROMPT_ERROR"] {
            assert_eq!(
                ending(TaskStatus::Failed, provider).credit(),
                Credit::Neutral,
                "{provider}"
            );
        }
        for owned in ["TIMEOUT", "MAX_TURNS", "NO_RESULT", "UNSAFE_WORKTREE"] {
            assert_eq!(
                ending(TaskStatus::Failed, owned).credit(),
                Credit::Harmful,
                "{owned}"
            );
        }
        // A review, whichever way it went: its verdict is its reviewed task's credit.
        let mut review = ending(TaskStatus::Completed, "completed");
        review.task_type = TaskType::Review;
        assert_eq!(review.credit(), Credit::Neutral);
        review.status = TaskStatus::Failed;
        review.ending = "TIMEOUT".into();
        assert_eq!(review.credit(), Credit::Neutral);
        // Explore and plan tasks are the agent's own answers: credited.
        let mut explore = ending(TaskStatus::Completed, "completed");
        explore.task_type = TaskType::Explore;
        assert_eq!(explore.credit(), Credit::Helpful);
    }
}
