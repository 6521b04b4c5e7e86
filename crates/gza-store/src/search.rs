//! `gza search`: tasks whose prompt or output holds every term of a query, through the
//! full-text index of migration V40 (SQLite FTS5) or PostgreSQL's V10 (a `tsvector` per task
//! under a GIN index). What is particular to each is the query's translation ([`fts5_match`],
//! [`pg_tsquery`]) and the condition and order that use it ([`Store::search_sql`]); the rest
//! is one text for both.

use super::Store;
use super::tasks::{SUMMARY_COLUMNS, TaskSummary, summary_from_row};
use crate::db::{Backend, DbError};
use gza_core::error::Result;
use gza_core::search::SearchQuery;
use gza_core::task::TaskId;

/// Characters of a prompt kept in the summary a hit carries.
const SUMMARY_PROMPT_CHARS: i64 = 200;

/// The order of hits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SearchOrder {
    /// Newest task first.
    #[default]
    Newest,
    /// Best match first, a match in the prompt weighing twice one in the output (SQLite: BM25;
    /// PostgreSQL: `ts_rank` divided by the log of the text's length, so short texts that are
    /// about the words come first there too).
    Relevance,
}

/// Which tasks a search looks at (the same filter as `history`: status, type, group, tags and
/// how many), and in what order.
#[derive(Debug, Clone, Default)]
pub struct SearchFilter {
    pub tasks: crate::HistoryFilter,
    pub order: SearchOrder,
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

/// The PostgreSQL `tsquery` for `query`: each term its words in a row (`<->`), a word beginning
/// marked `:*`; terms joined by `&`, all required. Words are quoted lexemes, taken as they are
/// (gza has folded them as the index's trigger folds the text: V7's `task_search_words`).
fn pg_tsquery(query: &SearchQuery) -> String {
    query
        .terms()
        .iter()
        .map(|term| {
            let last = term.words.len() - 1;
            let words: Vec<String> = term
                .words
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    let quoted = format!("'{}'", w.replace('\\', "\\\\").replace('\'', "''"));
                    if i == last && term.prefix {
                        format!("{quoted}:*")
                    } else {
                        quoted
                    }
                })
                .collect();
            let phrase = words.join(" <-> ");
            if words.len() > 1 {
                format!("({phrase})")
            } else {
                phrase
            }
        })
        .collect::<Vec<_>>()
        .join(" & ")
}

/// The query as the backend's index reads it: the text bound to `?2`.
fn match_text(backend: Backend, query: &SearchQuery) -> String {
    match backend {
        Backend::Sqlite => fts5_match(query),
        Backend::Postgres => pg_tsquery(query),
    }
}

/// Hits fetched from PostgreSQL at a time (its client reads a statement's rows whole).
const PG_PAGE: usize = 64;

impl Store {
    /// The tasks that match `query` within `filter`, handed to `each` one at a time (so a search
    /// for everything does not hold every output at once). Returns how many were handed over.
    pub fn search_tasks(
        &self,
        query: &SearchQuery,
        filter: &SearchFilter,
        mut each: impl FnMut(SearchHit) -> Result<()>,
    ) -> Result<usize> {
        let backend = self.backend();
        let order = match (backend, filter.order) {
            (Backend::Sqlite, SearchOrder::Newest) => "s.rowid DESC",
            (Backend::Sqlite, SearchOrder::Relevance) => {
                "bm25(task_search, 2.0, 1.0), s.rowid DESC"
            }
            (Backend::Postgres, SearchOrder::Newest) => "t.id DESC",
            (Backend::Postgres, SearchOrder::Relevance) => {
                "ts_rank(CAST('{0, 0, 0.5, 1}' AS REAL[]), s.doc, CAST(CAST(?2 AS TEXT) AS tsquery), 1) \
                 DESC, t.id DESC"
            }
        };
        let matched = match_text(backend, query);
        let status = filter.tasks.status.map(|s| s.as_str());
        let task_type = filter.tasks.task_type.map(|t| t.as_str());
        let scope = filter.tasks.scope();
        let tags = scope.tags_param();
        let limit = filter.tasks.limit.map_or(i64::MAX, i64::from);
        let hit = |row: &crate::db::Row| -> crate::db::DbResult<SearchHit> {
            let at = super::tasks::AFTER_SUMMARY;
            Ok(SearchHit {
                task: summary_from_row(row)?,
                prompt: row.get(at)?,
                output: row.get(at + 1)?,
            })
        };
        let columns = format!("{SUMMARY_COLUMNS}, t.prompt, t.output");
        if backend == Backend::Sqlite {
            // SQLite hands rows over as it steps: each is given to `each` and let go.
            let sql = format!(
                "{} ORDER BY {order} LIMIT ?7",
                self.search_sql(filter, &columns)
            );
            let mut failed: Option<gza_core::error::Error> = None;
            let mut n = 0;
            let stepped = self.db.query_map(
                &sql,
                params![
                    SUMMARY_PROMPT_CHARS,
                    matched,
                    status,
                    task_type,
                    scope.group,
                    tags,
                    limit
                ],
                |row| {
                    if let Err(e) = each(hit(row)?) {
                        failed = Some(e);
                        return Err(DbError::Other("stopped".into()));
                    }
                    n += 1;
                    Ok(())
                },
            );
            if let Some(e) = failed {
                return Err(e);
            }
            stepped.map_err(|e| self.err(e))?;
            return Ok(n);
        }
        // PostgreSQL's client reads a statement's rows whole: the matching ids first, in order,
        // then their texts a page at a time.
        let sql = format!(
            "{} ORDER BY {order} LIMIT ?7",
            self.search_sql(filter, "t.id")
        );
        let ids: Vec<TaskId> = self
            .db
            .query_map(
                &sql,
                params![
                    SUMMARY_PROMPT_CHARS,
                    matched,
                    status,
                    task_type,
                    scope.group,
                    tags,
                    limit
                ],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))?;
        let page_sql = format!(
            "SELECT {columns} FROM tasks t WHERE t.id IN ({}) ORDER BY t.id",
            self.backend().json_ids("?2")
        );
        let mut n = 0;
        for page in ids.chunks(PG_PAGE) {
            let wanted = serde_json::to_string(&page.iter().map(|id| id.0).collect::<Vec<_>>())
                .expect("integers serialize");
            let mut hits = self
                .db
                .query_map(&page_sql, params![SUMMARY_PROMPT_CHARS, wanted], hit)
                .map_err(|e| self.err(e))?;
            // Back into the search's order (a task deleted meanwhile is left out).
            for id in page {
                if let Some(at) = hits.iter().position(|h| h.task.id == *id) {
                    each(hits.swap_remove(at))?;
                    n += 1;
                }
            }
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
        let matched = match_text(self.backend(), query);
        let unfiltered = filter.tasks.status.is_none()
            && filter.tasks.task_type.is_none()
            && filter.tasks.group.is_none()
            && filter.tasks.tags.is_empty();
        if unfiltered {
            // Every row of the index is a task (the triggers see to it): counted without a
            // look-up of each task, ten times cheaper for a common word.
            let sql = match self.backend() {
                Backend::Sqlite => {
                    "SELECT COUNT(*) FROM (SELECT 1 FROM task_search WHERE task_search MATCH ?1 \
                     LIMIT ?2) AS hits"
                }
                Backend::Postgres => {
                    "SELECT COUNT(*) FROM (SELECT 1 FROM task_search \
                     WHERE doc @@ CAST(CAST(?1 AS TEXT) AS tsquery) LIMIT ?2) AS hits"
                }
            };
            return self
                .db
                .one(sql, params![matched, cap])
                .map_err(|e| self.err(e));
        }
        let scope = filter.tasks.scope();
        let sql = self.search_sql(filter, "1");
        self.db
            .one(
                &format!("SELECT COUNT(*) FROM ({sql} LIMIT ?7) AS hits"),
                params![
                    SUMMARY_PROMPT_CHARS,
                    matched,
                    filter.tasks.status.map(|s| s.as_str()),
                    filter.tasks.task_type.map(|t| t.as_str()),
                    scope.group,
                    scope.tags_param(),
                    cap,
                ],
            )
            .map_err(|e| self.err(e))
    }

    /// The statement selecting `columns` of the matching tasks. Its parameters: ?1 prompt
    /// characters (for the summary's columns; named in the condition so a statement that
    /// selects none binds the same list), ?2 the match, ?3 status, ?4 type, ?5 group, ?6 tags.
    fn search_sql(&self, filter: &SearchFilter, columns: &str) -> String {
        let backend = self.backend();
        let mut sql = match backend {
            Backend::Sqlite => format!(
                "SELECT {columns} FROM task_search s JOIN tasks t ON t.id = s.rowid \
                 WHERE task_search MATCH ?2"
            ),
            Backend::Postgres => format!(
                "SELECT {columns} FROM task_search s JOIN tasks t ON t.id = s.task_id \
                 WHERE s.doc @@ CAST(CAST(?2 AS TEXT) AS tsquery)"
            ),
        };
        sql.push_str(" AND CAST(?1 AS BIGINT) IS NOT NULL");
        sql.push_str(if filter.tasks.status.is_some() {
            " AND t.status = ?3"
        } else {
            " AND CAST(?3 AS TEXT) IS NULL"
        });
        sql.push_str(if filter.tasks.task_type.is_some() {
            " AND t.task_type = ?4"
        } else {
            " AND CAST(?4 AS TEXT) IS NULL"
        });
        sql.push_str(&filter.tasks.scope().condition(backend, "t", 5, 6));
        sql
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

    #[test]
    fn postgres_terms_are_quoted_lexemes_in_a_row() {
        let q = SearchQuery::parse(r#"auth "login page" src/main.rs it's a"#).unwrap();
        assert_eq!(
            pg_tsquery(&q),
            "'auth':* & ('login' <-> 'page') & ('src' <-> 'main' <-> 'rs':*) & ('it' <-> 's') & 'a'"
        );
    }
}
