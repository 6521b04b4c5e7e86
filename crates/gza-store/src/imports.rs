//! Inserting many tasks at once, each at most once (`gza import`).

use std::collections::HashMap;

use super::Store;
use crate::db::ToParam;

/// Keys looked up per query, and tasks inserted per statement (13 values each), within both
/// backends' limits on a statement's parameters.
const KEYS_PER_QUERY: usize = 500;
const ROWS_PER_INSERT: usize = 400;
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
        let next_id = format!("SELECT {}", crate::tasks::next_task_id(self.backend()));
        self.immediate(|tx| {
            let now = now_timestamp();
            // The keys already stored, a chunk of keys per query.
            let mut stored: HashMap<String, TaskId> = HashMap::new();
            let keys: Vec<&String> = batch.iter().map(|t| &t.key).collect();
            for chunk in keys.chunks(KEYS_PER_QUERY) {
                let marks = (1..=chunk.len())
                    .map(|i| format!("?{i}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let values: Vec<&dyn ToParam> = chunk.iter().map(|k| *k as &dyn ToParam).collect();
                for (key, id) in tx.query_map(
                    &format!("SELECT import_key, id FROM tasks WHERE import_key IN ({marks})"),
                    &values,
                    |r| Ok((r.get::<String>(0)?, r.get::<TaskId>(1)?)),
                )? {
                    stored.insert(key, id);
                }
            }
            // Ids are handed out here, one after another from the next free one (the write lock
            // is held), so references within the batch are known before anything is inserted.
            let mut next: i64 = tx.one(&next_id, params![])?;
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
                match stored.get(&task.key) {
                    Some(id) => outcomes.push(BatchOutcome::AlreadyThere(*id)),
                    None => {
                        outcomes.push(BatchOutcome::Inserted(TaskId(next)));
                        next += 1;
                    }
                }
            }
            let resolve = |r: Option<TaskRef>| match r {
                Some(TaskRef::Batch(i)) => Some(outcomes[i].id()),
                Some(TaskRef::Stored(id)) => Some(id),
                None => None,
            };
            struct Row<'a> {
                id: TaskId,
                task: &'a BatchTask,
                prompt: String,
                kind: &'static str,
                based_on: Option<TaskId>,
                depends_on: Option<TaskId>,
            }
            let rows: Vec<Row> = batch
                .iter()
                .zip(&outcomes)
                .filter_map(|(task, outcome)| match *outcome {
                    BatchOutcome::Inserted(id) => Some(Row {
                        id,
                        task,
                        prompt: match resolve(task.prompt_names) {
                            Some(named) => task.task.prompt.replace("{id}", &named.to_string()),
                            None => task.task.prompt.clone(),
                        },
                        kind: task.task.task_type.unwrap_or(TaskType::Implement).as_str(),
                        based_on: resolve(task.based_on),
                        depends_on: resolve(task.depends_on),
                    }),
                    BatchOutcome::AlreadyThere(_) => None,
                })
                .collect();
            // Many rows per statement (a round trip each on a network). A reference to a task
            // of a later statement is set once that one is in.
            let mut later = Vec::new();
            for chunk in rows.chunks(ROWS_PER_INSERT) {
                let last = chunk.last().map_or(TaskId(0), |r| r.id);
                let mut sql = String::from(
                    "INSERT INTO tasks (id, prompt, task_type, group_name, spec, model, provider, \
                     skip_learnings, urgent, created_at, import_key, based_on, depends_on) VALUES ",
                );
                let mut values: Vec<&dyn ToParam> = Vec::with_capacity(chunk.len() * 13);
                let mut deferred: Vec<(TaskId, Option<TaskId>, Option<TaskId>)> = Vec::new();
                let now_ref: &dyn ToParam = &now;
                for (n, row) in chunk.iter().enumerate() {
                    if n > 0 {
                        sql.push_str(", ");
                    }
                    let marks = (1..=13)
                        .map(|k| format!("?{}", n * 13 + k))
                        .collect::<Vec<_>>()
                        .join(", ");
                    sql.push_str(&format!("({marks})"));
                    let forward = |r: &Option<TaskId>| r.is_some_and(|id| id > last);
                    if forward(&row.based_on) || forward(&row.depends_on) {
                        deferred.push((row.id, row.based_on, row.depends_on));
                    }
                    let t = &row.task.task;
                    values.extend_from_slice(&[
                        &row.id as &dyn ToParam,
                        &row.prompt,
                        &row.kind,
                        &t.group,
                        &t.spec,
                        &t.model,
                        &t.provider,
                        &t.skip_learnings,
                        &t.urgent,
                        now_ref,
                        &row.task.key,
                    ]);
                    if forward(&row.based_on) || forward(&row.depends_on) {
                        values.extend_from_slice(&[&None::<i64> as &dyn ToParam, &None::<i64>]);
                    } else {
                        values.extend_from_slice(&[&row.based_on as &dyn ToParam, &row.depends_on]);
                    }
                }
                tx.execute(&sql, &values)?;
                later.extend(deferred);
            }
            for (id, based_on, depends_on) in later {
                tx.execute(
                    "UPDATE tasks SET based_on = ?2, depends_on = ?3 WHERE id = ?1",
                    params![id, based_on, depends_on],
                )?;
            }
            Ok(outcomes)
        })
    }
}
