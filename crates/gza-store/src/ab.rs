//! A/B runs (`gza ab`): experiments that run the same tasks from one base commit with learnings
//! and without. Each run is a real task in the group `ab-<experiment>` and a row of `ab_runs`
//! (SQLite V42, PostgreSQL V13), which keeps it out of the queue, the credit and extraction.

use super::Store;
use super::tasks::next_task_id;
use crate::db::{DbResult, Tx};
use gza_core::error::Result;
use gza_core::task::{TaskId, TaskType, now_timestamp};

/// Which arm of an experiment a run belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Arm {
    /// Learnings chosen and injected as `gza work` does.
    With,
    /// No learnings: not ranked, not in the prompt.
    Without,
}

impl Arm {
    pub const BOTH: [Arm; 2] = [Arm::With, Arm::Without];

    pub fn as_str(self) -> &'static str {
        match self {
            Arm::With => "with",
            Arm::Without => "without",
        }
    }

    fn parse(text: &str) -> Arm {
        if text == "without" {
            Arm::Without
        } else {
            Arm::With
        }
    }
}

/// How a run was judged by the verify command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verified {
    Passed,
    Failed,
    /// Nothing to verify (no branch), or the experiment was run with `--no-verify`.
    NotRun,
}

impl Verified {
    pub fn as_str(self) -> &'static str {
        match self {
            Verified::Passed => "passed",
            Verified::Failed => "failed",
            Verified::NotRun => "not_run",
        }
    }

    fn parse(text: &str) -> Option<Verified> {
        Some(match text {
            "passed" => Verified::Passed,
            "failed" => Verified::Failed,
            "not_run" => Verified::NotRun,
            _ => return None,
        })
    }
}

/// One task of an experiment's list: what each of its runs is created from.
#[derive(Debug, Clone)]
pub struct AbItem {
    pub prompt: String,
    pub spec: Option<String>,
    pub model: Option<String>,
    pub provider: Option<String>,
    /// The task it was copied from, when the list named tasks by id.
    pub source_task: Option<TaskId>,
}

/// An experiment as stored.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AbExperiment {
    pub id: i64,
    pub created_at: String,
    pub base_commit: String,
    /// What the person named as the base (`HEAD`, a branch, a commit).
    pub base_name: String,
    pub repeats: i64,
    /// Whether each run is judged by the verify command.
    pub verify: bool,
}

impl AbExperiment {
    /// The group its runs' tasks are in.
    pub fn group(&self) -> String {
        group_of(self.id)
    }
}

/// The group of experiment `id`'s tasks.
pub fn group_of(id: i64) -> String {
    format!("ab-{id}")
}

/// One run of an experiment: an item of its list, in one round, in one arm.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AbRun {
    /// 0-based position in the experiment's list.
    pub item: i64,
    /// 1-based round (`--repeat`).
    pub round: i64,
    pub arm: Arm,
    pub task: TaskId,
    pub source_task: Option<TaskId>,
    /// `None` until the run was judged.
    pub verified: Option<Verified>,
}

/// Insert one run's task, pending, in `group`.
fn insert_run_task(
    tx: &Tx,
    item: &AbItem,
    arm: Arm,
    group: &str,
    backend: crate::db::Backend,
) -> DbResult<TaskId> {
    tx.one(
        &format!(
            "INSERT INTO tasks (id, prompt, task_type, group_name, spec, model, provider, \
             skip_learnings, urgent, created_at) \
             VALUES ({}, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id",
            next_task_id(backend)
        ),
        params![
            item.prompt,
            TaskType::Implement.as_str(),
            group,
            item.spec,
            item.model,
            item.provider,
            arm == Arm::Without,
            false,
            now_timestamp(),
        ],
    )
}

impl Store {
    /// Create an experiment and every one of its runs' tasks (pending, out of the queue), in
    /// one transaction: item by item, round by round, "with" first in odd rounds and "without"
    /// first in even ones.
    pub fn create_ab_experiment(
        &self,
        base_commit: &str,
        base_name: &str,
        repeats: u32,
        verify: bool,
        items: &[AbItem],
    ) -> Result<AbExperiment> {
        let backend = self.backend();
        let created_at = now_timestamp();
        self.immediate(|tx| {
            let id: i64 = tx.one(
                "INSERT INTO ab_experiments (created_at, base_commit, base_name, repeats, verify) \
                 VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
                params![
                    created_at,
                    base_commit,
                    base_name,
                    i64::from(repeats),
                    i64::from(verify)
                ],
            )?;
            let group = group_of(id);
            for (index, item) in items.iter().enumerate() {
                for round in 1..=i64::from(repeats) {
                    // The runner takes tasks in id order: the arms alternate which goes first,
                    // round by round, so drift over time (a warming cache, a busier machine,
                    // a slower API) falls on both alike.
                    let arms = if round % 2 == 1 {
                        Arm::BOTH
                    } else {
                        [Arm::Without, Arm::With]
                    };
                    for arm in arms {
                        let task = insert_run_task(tx, item, arm, &group, backend)?;
                        tx.execute(
                            "INSERT INTO ab_runs (experiment, item, round, arm, task_id, source_task) \
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                            params![
                                id,
                                index as i64,
                                round,
                                arm.as_str(),
                                task,
                                item.source_task
                            ],
                        )?;
                    }
                }
            }
            Ok(AbExperiment {
                id,
                created_at: created_at.clone(),
                base_commit: base_commit.to_string(),
                base_name: base_name.to_string(),
                repeats: i64::from(repeats),
                verify,
            })
        })
    }

    /// Experiment `id`, or `None`.
    pub fn ab_experiment(&self, id: i64) -> Result<Option<AbExperiment>> {
        self.db
            .query_opt(
                "SELECT id, created_at, base_commit, base_name, repeats, verify \
                 FROM ab_experiments WHERE id = ?1",
                params![id],
                |r| {
                    Ok(AbExperiment {
                        id: r.get(0)?,
                        created_at: r.get(1)?,
                        base_commit: r.get(2)?,
                        base_name: r.get(3)?,
                        repeats: r.get(4)?,
                        verify: r.get::<i64>(5)? != 0,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// The newest experiment's id, if any.
    pub fn latest_ab_experiment(&self) -> Result<Option<i64>> {
        self.db
            .query_opt(
                "SELECT id FROM ab_experiments ORDER BY id DESC LIMIT 1",
                params![],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Experiment `id`'s runs, item by item, round by round, "with" first.
    pub fn ab_runs(&self, id: i64) -> Result<Vec<AbRun>> {
        self.db
            .query_map(
                "SELECT item, round, arm, task_id, source_task, verified FROM ab_runs \
                 WHERE experiment = ?1 ORDER BY item, round, arm",
                params![id],
                |r| {
                    let verified: Option<String> = r.get(5)?;
                    Ok(AbRun {
                        item: r.get(0)?,
                        round: r.get(1)?,
                        arm: Arm::parse(&r.get::<String>(2)?),
                        task: r.get(3)?,
                        source_task: r.get(4)?,
                        verified: verified.as_deref().and_then(Verified::parse),
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// The base commit of the experiment task `task` is a run of; `None` for any other task.
    /// The runner starts an A/B run's worktree there, whoever runs it.
    pub fn ab_base_commit(&self, task: TaskId) -> Result<Option<String>> {
        self.db
            .query_opt(
                "SELECT e.base_commit FROM ab_runs r JOIN ab_experiments e ON e.id = r.experiment \
                 WHERE r.task_id = ?1",
                params![task],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Record how task `task`'s run was judged by the verify command.
    pub fn set_ab_verified(&self, task: TaskId, verified: Verified) -> Result<()> {
        self.db
            .execute(
                "UPDATE ab_runs SET verified = ?2 WHERE task_id = ?1",
                params![task, verified.as_str()],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Replace the task of a run that must run again (it was interrupted, or its task was
    /// deleted) with a new pending one made from `item`, in the same transaction. Returns the
    /// new task.
    pub fn replace_ab_run(
        &self,
        experiment: &AbExperiment,
        run: &AbRun,
        item: &AbItem,
    ) -> Result<TaskId> {
        let backend = self.backend();
        let group = experiment.group();
        self.immediate(|tx| {
            let task = insert_run_task(tx, item, run.arm, &group, backend)?;
            tx.execute(
                "UPDATE ab_runs SET task_id = ?5, verified = NULL \
                 WHERE experiment = ?1 AND item = ?2 AND round = ?3 AND arm = ?4",
                params![experiment.id, run.item, run.round, run.arm.as_str(), task],
            )?;
            Ok(task)
        })
    }
}

/// Whether task `id` is a run of an A/B experiment (which is never credited or extracted).
pub fn is_ab_run(tx: &Tx, id: TaskId) -> DbResult<bool> {
    tx.one(
        "SELECT EXISTS (SELECT 1 FROM ab_runs WHERE task_id = ?1)",
        params![id],
    )
}

/// The condition that leaves A/B runs out of a query over tasks aliased `alias`.
pub(crate) fn not_ab_run(alias: &str) -> String {
    format!(" AND NOT EXISTS (SELECT 1 FROM ab_runs ab WHERE ab.task_id = {alias}.id)")
}
