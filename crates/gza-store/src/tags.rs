//! Tags on tasks, and the scope a command looks at (a group, tags).

use super::Store;
use crate::db::{Backend, Db, DbResult, FromVal, Param, ToParam, Val};
use gza_core::error::Result;
use gza_core::task::{Tag, TaskId};

/// Which tasks a command looks at: those of one group (when given) that carry any of `tags` (or
/// all of them, with `all_tags`; no tags: every task).
///
/// Commands that scoped by group alone pass `Option<&str>`, which converts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Scope<'a> {
    pub group: Option<&'a str>,
    pub tags: &'a [Tag],
    pub all_tags: bool,
}

impl<'a> From<Option<&'a str>> for Scope<'a> {
    fn from(group: Option<&'a str>) -> Self {
        Scope {
            group,
            ..Scope::default()
        }
    }
}

impl<'a> From<&Scope<'a>> for Scope<'a> {
    fn from(scope: &Scope<'a>) -> Self {
        *scope
    }
}

impl Scope<'_> {
    /// The SQL condition (` AND …`) on tasks aliased `alias`, binding the group to `?{group}` and
    /// the tags (a JSON array, [`Scope::tags_param`]) to `?{tags}`. Both parameters always
    /// appear, so statements can number the parameters after them as they like.
    pub(crate) fn condition(
        &self,
        backend: Backend,
        alias: &str,
        group: usize,
        tags: usize,
    ) -> String {
        let mut sql = if self.group.is_some() {
            format!(" AND {alias}.group_name = ?{group}")
        } else {
            format!(" AND CAST(?{group} AS TEXT) IS NULL")
        };
        let param = format!("?{tags}");
        if self.tags.is_empty() {
            sql.push_str(&format!(" AND CAST({param} AS TEXT) IS NULL"));
        } else if self.all_tags && self.tags.len() > 1 {
            sql.push_str(&format!(
                " AND (SELECT COUNT(*) FROM task_tags tg WHERE tg.task_id = {alias}.id \
                   AND tg.tag IN ({})) = {}",
                backend.json_texts(&param),
                backend.json_len(&param)
            ));
        } else {
            sql.push_str(&format!(
                " AND EXISTS (SELECT 1 FROM task_tags tg WHERE tg.task_id = {alias}.id \
                   AND tg.tag IN ({}))",
                backend.json_texts(&param)
            ));
        }
        sql
    }

    /// The tags as the JSON array [`Scope::condition`] binds; `None` without tags.
    pub(crate) fn tags_param(&self) -> Option<String> {
        if self.tags.is_empty() {
            return None;
        }
        let mut tags: Vec<&str> = self.tags.iter().map(Tag::as_str).collect();
        tags.sort_unstable();
        tags.dedup();
        Some(serde_json::to_string(&tags).expect("strings serialize"))
    }
}

impl ToParam for Tag {
    fn param(&self) -> Param<'_> {
        Param::Text(self.as_str())
    }
}

impl FromVal for Tag {
    fn from_val(v: Val<'_>) -> std::result::Result<Self, String> {
        Tag::parse(&String::from_val(v)?)
    }
}

/// Give task `to` the tags of task `from` (a task queued from another carries its labels).
pub(crate) fn inherit(db: &Db, from: TaskId, to: TaskId) -> DbResult<()> {
    db.execute(
        "INSERT INTO task_tags (task_id, tag) SELECT ?2, tag FROM task_tags WHERE task_id = ?1 \
         ON CONFLICT DO NOTHING",
        params![from, to],
    )?;
    Ok(())
}

/// Put `tags` on task `id` (those it has already stay once).
pub(crate) fn add(db: &Db, id: TaskId, tags: &[Tag]) -> DbResult<()> {
    for tag in tags {
        db.execute(
            "INSERT INTO task_tags (task_id, tag) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
            params![id, tag],
        )?;
    }
    Ok(())
}

impl Store {
    /// Task `id`'s tags, in order.
    pub fn tags_of(&self, id: TaskId) -> Result<Vec<Tag>> {
        self.db
            .query_map(
                "SELECT tag FROM task_tags WHERE task_id = ?1 ORDER BY tag",
                params![id],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Put `add` on task `id` and take `remove` off it, in one transaction.
    pub fn retag(&self, id: TaskId, add: &[Tag], remove: &[Tag]) -> Result<()> {
        self.immediate(|tx| {
            for tag in remove {
                tx.execute(
                    "DELETE FROM task_tags WHERE task_id = ?1 AND tag = ?2",
                    params![id, tag],
                )?;
            }
            self::add(tx, id, add)
        })
    }

    /// Whether any task carries `tag`.
    pub fn tag_exists(&self, tag: &Tag) -> Result<bool> {
        self.db
            .one(
                "SELECT EXISTS (SELECT 1 FROM task_tags WHERE tag = ?1)",
                params![tag],
            )
            .map_err(|e| self.err(e))
    }

    /// The tags in use, by name, at most `limit` of them.
    pub fn tag_names(&self, limit: u32) -> Result<Vec<Tag>> {
        self.db
            .query_map(
                "SELECT DISTINCT tag FROM task_tags ORDER BY tag LIMIT ?1",
                params![limit],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }
}
