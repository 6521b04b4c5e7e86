//! `gza search`: tasks whose prompt or output holds every term of a query, through the
//! full-text index of migration V15 (SQLite FTS5). What is particular to FTS5 is in
//! [`fts5_match`] and the one statement that uses it; another backend answers the same
//! [`SearchQuery`] with its own index.

use rusqlite::params;

use super::Store;
use super::tags::Scope;
use super::tasks::{SUMMARY_COLUMNS, TaskSummary, summary_from_row};
use gza_core::error::Result;
use gza_core::search::SearchQuery;
use gza_core::task::{Tag, TaskStatus, TaskType};

/// Characters of a prompt kept in the summary a hit carries.
const SUMMARY_PROMPT_CHARS: i64 = 200;

/// The order of hits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SearchOrder {
    /// Newest task first.
    #[default]
    Newest,
    /// Best match first (BM25; a match in the prompt weighs twice one in the output).
    Relevance,
}

/// Which tasks a search looks at, how many it returns and in what order.
#[derive(Debug, Clone, Default)]
pub struct SearchFilter {
    pub status: Option<TaskStatus>,
    pub task_type: Option<TaskType>,
    pub group: Option<String>,
    pub tags: Vec<Tag>,
    pub all_tags: bool,
    /// Most hits returned; `None` for all.
    pub limit: Option<u32>,
    pub order: SearchOrder,
}

impl SearchFilter {
    fn scope(&self) -> Scope<'_> {
        Scope {
            group: self.group.as_deref(),
            tags: &self.tags,
            all_tags: self.all_tags,
        }
    }
}

/// A task that matched, with the whole of its prompt and output to cut a snippet from.
#[derive(Debug, Clone)]
pub struct SearchHit {
    pub task: TaskSummary,
    pub prompt: String,
    pub output: Option<String>,
}

/// The FTS5 query for `query`: each term a quoted phrase of its words (so no word is read as
/// FTS5 syntax), a word beginning marked `*`; terms side by side, all required.
fn fts5_match(query: &SearchQuery) -> String {
    query
        .terms()
        .iter()
        .map(|term| {
            // Folded words hold only letters, digits and marks: nothing to escape in quotes.
            let phrase = format!("\"{}\"", term.words.join(" "));
            if term.prefix {
                format!("{phrase} *")
            } else {
                phrase
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl Store {
    /// The tasks that match `query` within `filter`, handed to `each` one at a time (so a search
    /// for everything does not hold every output at once). Returns how many were handed over.
    pub fn search_tasks(
        &self,
        query: &SearchQuery,
        filter: &SearchFilter,
        mut each: impl FnMut(SearchHit) -> Result<()>,
    ) -> Result<usize> {
        let order = match filter.order {
            SearchOrder::Newest => "s.rowid DESC",
            SearchOrder::Relevance => "bm25(task_search, 2.0, 1.0), s.rowid DESC",
        };
        let (sql, scope) =
            self.search_sql(filter, &format!("{SUMMARY_COLUMNS}, t.prompt, t.output"));
        let sql = format!("{sql} ORDER BY {order} LIMIT ?7");
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let mut rows = stmt
            .query(params![
                SUMMARY_PROMPT_CHARS,
                fts5_match(query),
                filter.status.map(|s| s.as_str()),
                filter.task_type.map(|t| t.as_str()),
                scope.group,
                scope.tags_param(),
                filter.limit.map_or(-1, i64::from),
            ])
            .map_err(|e| self.err(e))?;
        let mut n = 0;
        while let Some(row) = rows.next().map_err(|e| self.err(e))? {
            let task = summary_from_row(row).map_err(|e| self.err(e))?;
            let at = super::tasks::AFTER_SUMMARY;
            let hit = SearchHit {
                task,
                prompt: row.get(at).map_err(|e| self.err(e))?,
                output: row.get(at + 1).map_err(|e| self.err(e))?,
            };
            each(hit)?;
            n += 1;
        }
        Ok(n)
    }

    /// How many tasks match `query` within `filter` (its limit and order aside), counted up to
    /// `cap`.
    pub fn count_search(
        &self,
        query: &SearchQuery,
        filter: &SearchFilter,
        cap: i64,
    ) -> Result<i64> {
        let unfiltered = filter.status.is_none()
            && filter.task_type.is_none()
            && filter.group.is_none()
            && filter.tags.is_empty();
        if unfiltered {
            // Every row of the index is a task (the triggers see to it): counted without a
            // look-up of each task, ten times cheaper for a common word.
            return self
                .conn
                .query_row(
                    "SELECT COUNT(*) FROM (SELECT 1 FROM task_search WHERE task_search MATCH ?1 LIMIT ?2)",
                    params![fts5_match(query), cap],
                    |r| r.get(0),
                )
                .map_err(|e| self.err(e));
        }
        let (sql, scope) = self.search_sql(filter, "1");
        self.conn
            .query_row(
                &format!("SELECT COUNT(*) FROM ({sql} LIMIT ?7)"),
                params![
                    SUMMARY_PROMPT_CHARS,
                    fts5_match(query),
                    filter.status.map(|s| s.as_str()),
                    filter.task_type.map(|t| t.as_str()),
                    scope.group,
                    scope.tags_param(),
                    cap,
                ],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// The statement selecting `columns` of the matching tasks, and the scope it binds. Its
    /// parameters: ?1 prompt characters (for the summary's columns; named in the condition so the
    /// count, which selects none, binds the same list), ?2 the match, ?3 status, ?4 type, ?5
    /// group, ?6 tags.
    fn search_sql<'f>(&self, filter: &'f SearchFilter, columns: &str) -> (String, Scope<'f>) {
        let scope = filter.scope();
        let mut sql = format!(
            "SELECT {columns} FROM task_search s JOIN tasks t ON t.id = s.rowid \
             WHERE task_search MATCH ?2 AND ?1 IS NOT NULL"
        );
        sql.push_str(if filter.status.is_some() {
            " AND t.status = ?3"
        } else {
            " AND ?3 IS NULL"
        });
        sql.push_str(if filter.task_type.is_some() {
            " AND t.task_type = ?4"
        } else {
            " AND ?4 IS NULL"
        });
        sql.push_str(&scope.condition("t", 5, 6));
        (sql, scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_term_is_a_quoted_phrase() {
        let q = SearchQuery::parse(r#"auth "login page" src/main.rs NEAR(a b) a"#).unwrap();
        assert_eq!(
            fts5_match(&q),
            r#""auth" * "login page" "src main rs" * "near a" "b" "a""#
        );
    }
}
