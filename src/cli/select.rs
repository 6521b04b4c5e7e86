//! `--status`, `--type`, `--group`, `--tag` and `--all-tags`: which tasks a listing looks at, one
//! set of flags shared by `gza history` and `gza search` (flattened into each).

use clap::Args;

use crate::store::{HistoryFilter, Store};
use crate::task::{TaskStatus, TaskType};

#[derive(Debug, Args, Default, Clone)]
pub struct TaskSelection {
    /// Only tasks with this status: pending, in_progress, completed, failed or dropped.
    #[arg(long, value_parser = super::parse_status)]
    pub status: Option<TaskStatus>,
    /// Only tasks of this type.
    #[arg(long = "type", short = 't', value_parser = super::parse_type)]
    pub task_type: Option<TaskType>,
    /// Only tasks in this group.
    #[arg(long, short = 'g', value_name = "GROUP")]
    pub group: Option<String>,
    #[command(flatten)]
    pub tags: super::tags::TagFilter,
}

impl TaskSelection {
    /// The store's filter for this selection and `limit` (0: all), once the group and tags are
    /// known to exist: a typo is refused in one line naming the ones there are, rather than
    /// shown as an empty list.
    pub fn filter(&self, store: &Store, limit: u32) -> anyhow::Result<HistoryFilter> {
        if let Some(group) = &self.group {
            super::require_group(store, group)?;
        }
        self.tags.require_known(store)?;
        Ok(HistoryFilter {
            limit: (limit > 0).then_some(limit),
            status: self.status,
            task_type: self.task_type,
            group: self.group.clone(),
            tags: self.tags.tags.clone(),
            all_tags: self.tags.all_tags,
        })
    }

    /// " in group G with tag T", or nothing: what an empty result was scoped to.
    pub fn describe(&self) -> String {
        let group = match &self.group {
            Some(group) => format!(" in group {group}"),
            None => String::new(),
        };
        group + &super::tags::describe(&self.tags)
    }
}
