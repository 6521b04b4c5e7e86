//! Inserting many tasks at once, each at most once (`gza import`).

use std::collections::HashMap;

use super::Store;
use super::tasks::NewTask;
use gza_core::error::{Error, Result};
use gza_core::task::{TaskId, TaskType, now_timestamp};

/// A reference from one task of a batch to another task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskRef {
    /// The task at this position in the batch.
    Batch(usize),
    /// A task already in the database.
    Stored(TaskId),
}

/// One task of a batch.
#[derive(Debug, Clone)]
pub struct BatchTask {
    /// Its prompt and options; `based_on` and `depends_on` are taken from the fields below.
    pub task: NewTask,
    /// What identifies it across imports: a task whose key is stored already is not inserted.
    pub key: String,
    pub based_on: Option<TaskRef>,
    pub depends_on: Option<TaskRef>,
    /// `{id}` in the prompt stands for this task's id (known only once it is inserted).
    pub prompt_names: Option<TaskRef>,
}

/// What became of one task of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchOutcome {
    Inserted(TaskId),
    /// Its key was stored already, on this task.
    AlreadyThere(TaskId),
}

impl BatchOutcome {
    pub fn id(self) -> TaskId {
        match self {
            BatchOutcome::Inserted(id) | BatchOutcome::AlreadyThere(id) => id,
        }
    }
}

impl Store {
    /// Insert every task of `batch` whose key is not stored yet, in order, in one transaction
    /// (all or nothing). References within the batch may point forwards; they are set once every
    /// task has its id. References to stored tasks must exist.
    pub fn insert_batch(&self, batch: &[BatchTask]) -> Result<Vec<BatchOutcome>> {
        for (n, task) in batch.iter().enumerate() {
            for r in [task.based_on, task.depends_on, task.prompt_names]
                .into_iter()
                .flatten()
            {
                match r {
                    TaskRef::Stored(id) => self.get_task(id).map(|_| ())?,
                    TaskRef::Batch(i) if i >= batch.len() => {
                        return Err(Error::Usage(format!(
                            "task {} of {} refers to task {}, which is not there",
                            n + 1,
                            batch.len(),
                            i + 1
                        )));
                    }
                    TaskRef::Batch(_) => {}
                }
            }
        }
        let insert = format!(
            "INSERT INTO tasks (id, prompt, task_type, group_name, spec, model, provider, \
             skip_learnings, urgent, created_at, import_key) \
             VALUES ({}, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) RETURNING id",
            crate::tasks::next_task_id(self.backend())
        );
        self.immediate(|tx| {
            let now = now_timestamp();
            let mut outcomes: Vec<BatchOutcome> = Vec::with_capacity(batch.len());
            let mut seen: HashMap<&str, usize> = HashMap::new();
            for task in batch {
                if let Some(&first) = seen.get(task.key.as_str()) {
                    // Two entries with one key are one task (the caller should not send them).
                    let id = outcomes[first].id();
                    outcomes.push(BatchOutcome::AlreadyThere(id));
                    continue;
                }
                seen.insert(&task.key, outcomes.len());
                let stored: Option<TaskId> = tx.query_opt(
                    "SELECT id FROM tasks WHERE import_key = ?1",
                    params![task.key],
                    |r| r.get(0),
                )?;
                if let Some(id) = stored {
                    outcomes.push(BatchOutcome::AlreadyThere(id));
                    continue;
                }
                let t = &task.task;
                let id: TaskId = tx.one(
                    &insert,
                    params![
                        t.prompt,
                        t.task_type.unwrap_or(TaskType::Implement).as_str(),
                        t.group,
                        t.spec,
                        t.model,
                        t.provider,
                        t.skip_learnings,
                        t.urgent,
                        now,
                        task.key,
                    ],
                )?;
                outcomes.push(BatchOutcome::Inserted(id));
            }
            for (task, outcome) in batch.iter().zip(&outcomes) {
                let BatchOutcome::Inserted(id) = *outcome else {
                    continue;
                };
                let resolve = |r: Option<TaskRef>| match r {
                    Some(TaskRef::Batch(i)) => Some(outcomes[i].id()),
                    Some(TaskRef::Stored(id)) => Some(id),
                    None => None,
                };
                let (based_on, depends_on) = (resolve(task.based_on), resolve(task.depends_on));
                if based_on.is_some() || depends_on.is_some() {
                    tx.execute(
                        "UPDATE tasks SET based_on = ?2, depends_on = ?3 WHERE id = ?1",
                        params![id, based_on, depends_on],
                    )?;
                }
                if let Some(named) = resolve(task.prompt_names) {
                    let prompt = task.task.prompt.replace("{id}", &named.to_string());
                    tx.execute(
                        "UPDATE tasks SET prompt = ?2 WHERE id = ?1",
                        params![id, prompt],
                    )?;
                }
            }
            Ok(outcomes)
        })
    }
}
