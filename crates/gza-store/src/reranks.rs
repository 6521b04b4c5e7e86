//! What the rerank (`learnings.rerank: extraction`) did for each `gza work` task (migration V50):
//! which of the ranker's candidates the model chose, that it chose none, or that gza fell back to
//! the ranker's own choice and why.

use serde::Serialize;

use super::Store;
use gza_core::error::Result;
use gza_core::task::TaskId;

/// How a task's rerank ended: what was chosen, or why nothing the model said was used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RerankOutcome {
    /// The model chose these candidates, in its order; they were given.
    Chosen(Vec<i64>),
    /// The model chose none; nothing the ranker found was given.
    None,
    /// The call failed, timed out, or answered what cannot be used (why): the ranker's choice
    /// was given.
    Fallback(String),
}

impl RerankOutcome {
    /// The outcome's name as stored (`task_reranks.outcome`).
    pub fn as_str(&self) -> &'static str {
        match self {
            RerankOutcome::Chosen(_) => "chosen",
            RerankOutcome::None => "none",
            RerankOutcome::Fallback(_) => "fallback",
        }
    }

    /// The outcome from its stored columns: its name, the chosen ids (JSON) and the reason.
    fn from_row(outcome: &str, chosen: &str, reason: Option<String>) -> RerankOutcome {
        match outcome {
            "chosen" => RerankOutcome::Chosen(serde_json::from_str(chosen).unwrap_or_default()),
            "none" => RerankOutcome::None,
            _ => RerankOutcome::Fallback(reason.unwrap_or_default()),
        }
    }
}

/// One task's rerank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rerank {
    pub outcome: RerankOutcome,
    /// Candidates the model was shown.
    pub candidates: i64,
    /// How long the call took, in milliseconds.
    pub ms: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
}

/// The reranks of the newest tasks that had one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RerankSummary {
    pub tasks: i64,
    pub chosen: i64,
    pub none: i64,
    pub fallback: i64,
    /// Mean time per call, in milliseconds.
    pub mean_ms: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// The newest fallback's reason.
    pub last_fallback: Option<String>,
}

impl Store {
    /// Record what the rerank did for `task` (a task run again replaces its row).
    pub fn record_rerank(&self, task: TaskId, rerank: &Rerank) -> Result<()> {
        let (chosen, reason) = match &rerank.outcome {
            RerankOutcome::Chosen(ids) => (
                serde_json::to_string(ids).unwrap_or_else(|_| "[]".into()),
                None,
            ),
            RerankOutcome::None => ("[]".to_string(), None),
            RerankOutcome::Fallback(why) => ("[]".to_string(), Some(why.as_str())),
        };
        self.db
            .execute(
                "INSERT INTO task_reranks (task_id, outcome, candidates, chosen, reason, ms, \
                 input_tokens, output_tokens, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
                 ON CONFLICT (task_id) DO UPDATE SET outcome = excluded.outcome, \
                 candidates = excluded.candidates, chosen = excluded.chosen, \
                 reason = excluded.reason, ms = excluded.ms, \
                 input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, \
                 at = excluded.at",
                params![
                    task,
                    rerank.outcome.as_str(),
                    rerank.candidates,
                    chosen,
                    reason,
                    rerank.ms,
                    rerank.input_tokens,
                    rerank.output_tokens,
                    gza_core::task::now_timestamp()
                ],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// What the rerank did for `task`, if it ran.
    pub fn task_rerank(&self, task: TaskId) -> Result<Option<Rerank>> {
        self.db
            .query_opt(
                "SELECT outcome, candidates, chosen, reason, ms, input_tokens, output_tokens \
                 FROM task_reranks WHERE task_id = ?1",
                params![task],
                |r| {
                    let outcome: String = r.get(0)?;
                    let chosen: String = r.get(2)?;
                    Ok(Rerank {
                        outcome: RerankOutcome::from_row(&outcome, &chosen, r.get(3)?),
                        candidates: r.get(1)?,
                        ms: r.get(4)?,
                        input_tokens: r.get(5)?,
                        output_tokens: r.get(6)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// The reranks of the newest `window` tasks that had one (read by key, newest first: its
    /// cost does not grow with the history).
    pub fn rerank_summary(&self, window: u32) -> Result<RerankSummary> {
        let rows: Vec<(String, i64, Option<String>, i64, i64)> = self
            .db
            .query_map(
                "SELECT outcome, ms, reason, input_tokens, output_tokens FROM task_reranks \
                 ORDER BY task_id DESC LIMIT ?1",
                params![i64::from(window)],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .map_err(|e| self.err(e))?;
        let mut s = RerankSummary::default();
        let mut total_ms = 0;
        for (outcome, ms, reason, input, output) in rows {
            s.tasks += 1;
            total_ms += ms;
            s.input_tokens += input;
            s.output_tokens += output;
            match outcome.as_str() {
                "chosen" => s.chosen += 1,
                "none" => s.none += 1,
                _ => {
                    s.fallback += 1;
                    if s.last_fallback.is_none() {
                        s.last_fallback = reason;
                    }
                }
            }
        }
        if s.tasks > 0 {
            s.mean_ms = total_ms / s.tasks;
        }
        Ok(s)
    }
}
