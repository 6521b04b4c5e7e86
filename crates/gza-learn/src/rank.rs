//! The ranker: which learnings matter for a text, by meaning and by words, offline.
//!
//! Each active learning is scored by the cosine similarity of its sentence embedding (computed
//! once and stored) with the query's, plus a bounded BM25 term over its text, keywords and
//! "applies when" hints. Only learnings above an absolute floor and within a fraction of the best
//! score are returned (or a clear winner well ahead of the rest), so an unrelated query gets
//! nothing rather than the three least bad items. The constants were tuned on eval/.
//! Without a model the lexical part ranks alone, with its own floor.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use gza_core::error::Result;
use gza_core::learning::Learning;
use gza_core::project::Project;
use gza_embed::{Embedder, ModelError, resolve_model_dir};
use gza_store::{RankRow, Store};

use crate::index;

/// Weight of the lexical (BM25) term next to the semantic one.
const LEXICAL_WEIGHT: f64 = 0.3;
/// BM25 is divided by this and capped at 1, so one long exact match cannot dominate.
const BM25_SCALE: f64 = 12.0;
/// With a model: the lowest blended score worth returning.
const SEMANTIC_FLOOR: f64 = 0.56;
/// Without a model: the lowest lexical score worth returning.
const LEXICAL_FLOOR: f64 = 0.2;
/// Items scoring below this fraction of the best one are left out.
const RELATIVE_CUT: f64 = 0.85;
/// The size of store [`SEMANTIC_FLOOR`] was chosen for (the labelled sets hold 131 and 160).
const FLOOR_STORE: usize = 150;
/// The spread (standard deviation) of blended scores between prompts and learnings, measured
/// on both labelled sets (0.13 and 0.12).
const SCORE_SPREAD: f64 = 0.13;
/// The floor never goes below this, however small the store.
const MIN_FLOOR: f64 = 0.36;
/// Hits kept whole from a ranking, beside exact matches and CRITICAL learnings: far more than
/// any cut keeps.
const CANDIDATES: usize = 64;
/// When nothing reaches the floor, a best item above this that leads the second by
/// [`CLEAR_LEAD`] is still returned: a clear winner, where a negative's best items are bunched.
const CLEAR_WINNER: f64 = 0.33;
const CLEAR_LEAD: f64 = 0.2;
/// Taken off the meaning score of a learning with "applies when" hints in words. Its vector
/// includes its hints, phrased as tasks are ([`embed_learning`]), so it resembles any task
/// more than a bare learning does: on the labelled sets with hints written as the extraction
/// prompt asks, the floor chosen on either set for the other was 0.66, 0.10 above the one for
/// bare learnings (`eval/loso.py --when`, docs/benchmarks.md). Measured against the same
/// floor, a hinted and a bare learning are held to the same standard.
const HINT_LIFT: f64 = 0.10;
/// Tokens of a long query that take part in BM25 (the rest adds noise, not signal).
const MAX_QUERY_TERMS: usize = 256;

/// A query of at most this many terms is a keyword search: a learning holding all of them is an
/// exact match (see [`Hit::exact`]).
const KEYWORD_QUERY_TERMS: usize = 2;
/// Tokens of a query that are embedded: its start, where a task says what it is about (time
/// grows with tokens; 96 keep a task's start under 50 ms).
const QUERY_TOKENS: usize = 96;
/// Tokens of a long query's sentences embedded each ([`QueryVector`]), in all: the first
/// sentences up to this, so a pasted log of thousands of lines costs a bounded time (about
/// five times the start's embedding).
const QUERY_PART_TOKENS: usize = 384;
/// Learnings the index lacks whose stored vectors a hook looks up (primary-key reads); past
/// that they are ranked by words until the job has rebuilt the index.
const HOOK_LOOKUPS: usize = 256;
/// The best hits scored again from their exact stored vectors.
const RESCORED: usize = 32;

/// One learning found for a query.
#[derive(Debug, Clone)]
pub struct Hit {
    pub id: i64,
    pub score: f64,
    /// Cosine similarity with the query, when a model is loaded.
    pub semantic: Option<f64>,
    /// Normalised BM25 (0-1).
    pub lexical: f64,
    /// Query terms the learning shares.
    pub matched: Vec<String>,
    /// An exact match: the learning holds every term of a keyword query (at most
    /// [`KEYWORD_QUERY_TERMS`] terms) or an identifier the query names whole (`conftest.py`,
    /// `MAX_RETRIES`, `useEffect`). Kept by [`calibrate`] whatever its score, so a search for a
    /// word the learning carries always finds it, with or without the model.
    pub exact: bool,
    pub priority: gza_core::learning::Priority,
    /// It has "applies when" hints in words: [`HINT_LIFT`] is taken off its meaning score.
    pub hinted: bool,
}

impl Hit {
    /// Why it ranked where it did, as `learnings search --explain` and the dashboard show it:
    /// `meaning 0.612 · words 0.250 (matched: pytest, fixture)`.
    pub fn explanation(&self) -> String {
        let semantic = self
            .semantic
            .map_or("no model".to_string(), |s| format!("{s:.3}"));
        let matched = if self.matched.is_empty() {
            "none".to_string()
        } else {
            self.matched.join(", ")
        };
        let hinted = if self.hinted && self.semantic.is_some() {
            format!(" · hints −{HINT_LIFT:.2}")
        } else {
            String::new()
        };
        format!(
            "meaning {semantic}{hinted} · words {:.3} (matched: {matched})",
            self.lexical
        )
    }
}

/// How to rank.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    pub text: &'a str,
    pub k: usize,
    /// Rank drafts too (they are usable at once unless `learnings.inject_drafts` is off).
    pub drafts: bool,
    /// Keep the floors and the relative cut (false: always the best `k`, for `--explain`).
    pub calibrated: bool,
}

/// The ranker, with its embedding model when one could be loaded. The model is loaded when
/// first needed ([`Ranker::deferred`]) or at once.
pub struct Ranker {
    model: std::cell::OnceCell<Model>,
    /// Where to load the model from when it is first needed, and whether for a hook.
    source: Option<(Project, bool)>,
    /// How long this process may spend embedding learnings that lack a vector; what is left
    /// over is ranked by words meanwhile and embedded by the background job.
    embed_budget: Duration,
    spent: Cell<Duration>,
    /// The project whose background job is started when work is left (`gza hook embed`).
    project_root: Option<PathBuf>,
    started_job: Cell<bool>,
    /// How many stored vectors the index lacks this process may look up.
    lookups: usize,
    /// A query longer than [`QUERY_TOKENS`] is read by its sentences too ([`QueryVector`]):
    /// not in a hook, whose budget has no room for it.
    whole_queries: bool,
    /// The known learnings drafts are settled against ([`Ranker::settle_drafts`]), prepared
    /// once for the life of this ranker (a round of the background job, a command): each
    /// draft is then compared with a bounded few, and each text embedded once.
    settler: RefCell<Option<crate::dedupe::Known>>,
}

/// The embedding model as loaded, or why there is none.
#[derive(Default)]
struct Model {
    embedder: Option<Embedder>,
    /// Why there is no model, in one line.
    problem: Option<String>,
    /// What was wrong with the model's derived files and what was done (one line, to show once).
    notice: Option<String>,
    /// Why the background job is needed even though nothing was left to embed (the int8 copy).
    needs_job: bool,
}

/// Load the project's embedding model (`learnings.model_dir`, else the default location); for
/// a hook, only a prepared one (its int8 copy derived).
fn load_model(project: &Project, hook: bool) -> Model {
    let mut model = Model::default();
    let configured = match project.config.learnings.model_dir.as_ref() {
        Some(dir) => match project.setting_path("learnings.model_dir", dir) {
            Ok(dir) => Some(dir),
            Err(e) => {
                model.problem = Some(e.to_string());
                return model;
            }
        },
        None => None,
    };
    let Some(dir) = resolve_model_dir(configured.as_deref()) else {
        model.problem = Some(
            "no embedding model folder is configured and HOME is not set; set learnings.model_dir"
                .into(),
        );
        return model;
    };
    let loaded = if hook {
        Embedder::load_prepared(&dir)
    } else {
        Embedder::load(&dir)
    };
    match loaded {
        Ok(e) => {
            model.notice = e.notice().map(str::to_string);
            model.embedder = Some(e);
        }
        Err(ModelError::NotDerived(notice)) => {
            // The job derives the copy; words rank meanwhile.
            model.problem = Some(
                "the embedding model's int8 copy is not ready; ranking by words until the background job builds it".into(),
            );
            model.notice = notice;
            model.needs_job = true;
        }
        Err(e) => model.problem = Some(e.to_string()),
    }
    if let Some(notice) = &model.notice {
        super::log(project, notice);
    }
    model
}

/// How long a command (or a task's selection) may spend embedding learnings that lack a vector
/// before it ranks the rest by words and leaves them to the background job.
pub const COMMAND_EMBED_BUDGET: Duration = Duration::from_secs(2);
/// Learnings the background job embeds per transaction (the write lock is held that briefly).
const JOB_BATCH: usize = 32;

impl Ranker {
    /// Load the project's embedding model (`learnings.model_dir`, else the default location),
    /// for a command: it may derive the model's int8 copy and embed for up to
    /// [`COMMAND_EMBED_BUDGET`]. A missing or broken model is no error: the ranker works by
    /// words and says why.
    pub fn load(project: &Project) -> Ranker {
        Self::load_with(project, COMMAND_EMBED_BUDGET, false)
    }

    /// Load for a Claude Code hook: no model work beyond embedding the query. The int8 copy is
    /// never derived and no learning is embedded here; learnings without a vector are ranked by
    /// words, and the background job is started to embed them (and derive the copy).
    pub fn for_hook(project: &Project) -> Ranker {
        Self::load_with(project, Duration::ZERO, true)
    }

    /// Load with no bound on embedding (the background job).
    pub fn unbounded(project: &Project) -> Ranker {
        Self::load_with(project, Duration::MAX, false)
    }

    /// A command's ranker ([`Ranker::load`]) whose model is loaded only when something needs
    /// it: a regeneration with nothing to teach never pays for loading it.
    pub fn deferred(project: &Project) -> Ranker {
        let mut ranker = Self::empty(COMMAND_EMBED_BUDGET, false);
        ranker.project_root = Some(project.root.clone());
        ranker.source = Some((project.clone(), false));
        ranker
    }

    fn empty(embed_budget: Duration, hook: bool) -> Ranker {
        Ranker {
            model: std::cell::OnceCell::new(),
            source: None,
            embed_budget,
            spent: Cell::new(Duration::ZERO),
            project_root: None,
            started_job: Cell::new(false),
            lookups: if hook { HOOK_LOOKUPS } else { usize::MAX },
            whole_queries: !hook,
            settler: RefCell::new(None),
        }
    }

    fn load_with(project: &Project, embed_budget: Duration, hook: bool) -> Ranker {
        let mut ranker = Self::empty(embed_budget, hook);
        ranker.project_root = Some(project.root.clone());
        let _ = ranker.model.set(load_model(project, hook));
        ranker
    }

    /// A ranker with `embedder`, `budget` to embed with and no project (no index, no
    /// background job): for tests.
    #[cfg(test)]
    pub(crate) fn with_embedder(embedder: Embedder, budget: Duration) -> Ranker {
        let ranker = Self::empty(budget, false);
        let _ = ranker.model.set(Model {
            embedder: Some(embedder),
            ..Model::default()
        });
        ranker
    }

    /// A ranker that uses words only.
    pub fn lexical_only() -> Ranker {
        let ranker = Self::empty(Duration::ZERO, false);
        let _ = ranker.model.set(Model::default());
        ranker
    }

    fn m(&self) -> &Model {
        self.model.get_or_init(|| match &self.source {
            Some((project, hook)) => load_model(project, *hook),
            None => Model::default(),
        })
    }

    fn embedder(&self) -> Option<&Embedder> {
        self.m().embedder.as_ref()
    }

    /// Why there is no model, in one line.
    pub fn model_problem(&self) -> Option<&str> {
        self.m().problem.as_deref()
    }

    /// What was wrong with the model's derived files and what was done (one line, to show once).
    pub fn model_notice(&self) -> Option<&str> {
        self.m().notice.as_deref()
    }

    /// The model's fingerprint, when one is loaded.
    pub fn model(&self) -> Option<&str> {
        self.embedder().map(Embedder::fingerprint)
    }

    /// Embed one text with the model, if there is one.
    pub fn embed(&self, text: &str) -> Option<Vec<f32>> {
        self.embedder().map(|e| e.embed(text))
    }

    /// Whether this process may still spend time embedding learnings.
    fn budget_left(&self) -> bool {
        self.spent.get() < self.embed_budget
    }

    /// Embed `rows` while the budget lasts; returns the vectors made (stored, unless the store
    /// is read-only: then they are computed again next time). A draft that says what a known
    /// learning says is folded into it first ([`Ranker::settle_drafts`]), and not embedded;
    /// settling counts against the budget, one draft at a time.
    fn embed_within_budget(&self, store: &Store, rows: &[&RankRow]) -> Vec<(i64, Vec<f32>)> {
        let Some(embedder) = self.embedder() else {
            return Vec::new();
        };
        let mut fresh = Vec::new();
        for r in rows {
            if !self.budget_left() {
                break;
            }
            let started = Instant::now();
            if !(r.draft && self.settle_drafts(store, &[r.id]).contains(&r.id)) {
                fresh.push((r.id, self.learning_vector(embedder, r)));
            }
            self.spent.set(self.spent.get() + started.elapsed());
        }
        if !fresh.is_empty() {
            let _ = store.store_embeddings_if_current(embedder.fingerprint(), rows, &fresh);
        }
        fresh
    }

    /// Of the drafts `ids` (about to be embedded for the first time by this model), those that
    /// say what a known learning says, by meaning as well as words, folded into it
    /// ([`crate::dedupe::Known::settle`], against the learnings this ranker prepared once):
    /// the ids folded, which are not to be embedded.
    fn settle_drafts(&self, store: &Store, ids: &[i64]) -> HashSet<i64> {
        if ids.is_empty() {
            return HashSet::new();
        }
        let Ok(mut settler) = self.settler.try_borrow_mut() else {
            return HashSet::new();
        };
        if settler.is_none() {
            *settler = crate::dedupe::Known::load(store).ok();
        }
        let Some(known) = settler.as_mut() else {
            return HashSet::new();
        };
        known
            .settle(store, Some(self), ids)
            .unwrap_or_default()
            .into_iter()
            .map(|(draft, _)| draft)
            .collect()
    }

    /// The vector to store for `r` ([`embed_learning`]), from its text's vector when settling
    /// made it already rather than embedding the text again.
    fn learning_vector(&self, embedder: &Embedder, r: &RankRow) -> Vec<f32> {
        let made = self
            .settler
            .try_borrow()
            .ok()
            .and_then(|s| s.as_ref()?.text_vector(r.id, &r.text).map(<[f32]>::to_vec));
        match made {
            Some(v) if !v.is_empty() => embed_learning_from(embedder, r, v),
            _ => embed_learning(embedder, r),
        }
    }

    /// Compute and store the embeddings learnings in use lack, within this ranker's budget;
    /// what is left is handed to the background job. Returns how many are left.
    pub fn embed_missing(&self, store: &Store) -> Result<usize> {
        let Some(embedder) = self.embedder() else {
            if self.m().needs_job {
                self.start_job();
            }
            return Ok(0);
        };
        let mut left = 0;
        loop {
            let rows = store.rows_without_vectors(true, embedder.fingerprint(), JOB_BATCH)?;
            if rows.is_empty() {
                break;
            }
            let refs: Vec<&RankRow> = rows.iter().collect();
            let done = self.embed_within_budget(store, &refs).len();
            if done < rows.len() {
                left = rows.len() - done;
                break;
            }
        }
        if left > 0 {
            self.start_job();
        }
        Ok(left)
    }

    /// Leave every learning that lacks a vector to the background job (started when there is
    /// one): no model work here. Returns whether any was left.
    pub fn hand_off(&self, store: &Store) -> Result<bool> {
        let left = match self.embedder() {
            Some(e) => !store
                .rows_without_vectors(true, e.fingerprint(), 1)?
                .is_empty(),
            None => self.m().needs_job,
        };
        if left {
            self.start_job();
        }
        Ok(left)
    }

    /// Start `gza hook embed` for this project, detached, once per process (it takes a lock, so
    /// a second one started elsewhere exits at once).
    pub fn start_job(&self) {
        if self.started_job.replace(true) {
            return;
        }
        if let Some(root) = &self.project_root {
            start_embed_job(root);
        }
    }

    /// Rank the active learnings for `query`, best first: with `calibrated`, those that pass
    /// the cut ([`calibrate`]), near-duplicates of a better hit left out ([`diversify`]).
    pub fn search(&self, store: &Store, query: Query) -> Result<Vec<Hit>> {
        let ranking = self.rank_all(store, query.text, query.drafts)?;
        let mut hits = if query.calibrated {
            let vectors = ranking.vectors.clone();
            diversify(store, calibrate(ranking), &vectors, query.k, Some(self))?
        } else {
            ranking.hits
        };
        hits.truncate(query.k);
        Ok(hits)
    }

    /// The query as ranked (task ids and boilerplate cleaned out, unless nothing would be
    /// left) and its embedding, when the model is here; without one, the background job is
    /// asked for if it is needed.
    fn query_vector(&self, text: &str) -> (String, Option<QueryVector>) {
        let cleaned = clean_query(text);
        let text = if cleaned.trim().is_empty() {
            text.to_string()
        } else {
            cleaned
        };
        let q = self
            .embedder()
            .map(|e| QueryVector::of(e, &text, self.whole_queries));
        if q.is_none() && self.m().needs_job {
            self.start_job();
        }
        (text, q)
    }

    /// The best `query.k` (past the cut and [`diversify`] when `calibrated`, as
    /// [`Ranker::search`]) and the next at most `query.k` that the cut or `k` left out, from one
    /// scoring pass (one embedding of the query): what `learnings search --explain` and the
    /// dashboard show below the cut.
    pub fn search_with_rest(&self, store: &Store, query: Query) -> Result<(Vec<Hit>, Vec<Hit>)> {
        let ranking = self.rank_all(store, query.text, query.drafts)?;
        let all = ranking.hits.clone();
        let mut kept = if query.calibrated {
            let vectors = ranking.vectors.clone();
            diversify(store, calibrate(ranking), &vectors, query.k, Some(self))?
        } else {
            ranking.hits
        };
        kept.truncate(query.k);
        let rest = all
            .into_iter()
            .filter(|h| !kept.iter().any(|f| f.id == h.id))
            .take(query.k)
            .collect();
        Ok((kept, rest))
    }

    /// The learnings in use scored for `text`, best first, with no cut (the query is embedded
    /// once; [`calibrate`] makes the cut): the best [`CANDIDATES`], every exact match and every
    /// CRITICAL one, of `total` ranked.
    ///
    /// Vectors, BM25 terms and kinds come from the ranking index (`index.rs`): when it is of
    /// the database's generation, no row is read; when it is behind, the rows changed since
    /// take the place of their entries, each with its stored vector looked up by key (at most
    /// [`HOOK_LOOKUPS`] in a hook) and its text tokenised, and the background job is started to
    /// bring the index up to date. Without an index every row is read that way. A learning
    /// without a stored vector for the model loaded now (one the index holds too: its row is
    /// then read by key) is embedded while the budget lasts; past it, it is scored by
    /// words alone (`semantic: None`) and left to the background job. The best [`RESCORED`]
    /// are scored again from their exact stored vectors, so what is shown is what the f32
    /// vectors give.
    pub fn rank_all(&self, store: &Store, text: &str, drafts: bool) -> Result<Ranking> {
        self.rank_all_with(store, text, drafts, true)
    }

    /// [`Ranker::rank_all`] that embeds no learning: those without a stored vector are scored
    /// by words and left to the background job (started). For a regeneration's candidates
    /// ([`crate::dedupe`], which compares each candidate's text by meaning itself): with a
    /// backlog of learnings not yet embedded, each task's regeneration spent its whole
    /// embedding budget (and read every learning to settle drafts) on what the background job,
    /// started at once, embeds too: the same work twice on the same cores (2,000 drafts not
    /// yet embedded: 10 s per `gza work` task under load, docs/benchmarks.md).
    pub fn rank_without_embedding(
        &self,
        store: &Store,
        text: &str,
        drafts: bool,
    ) -> Result<Ranking> {
        self.rank_all_with(store, text, drafts, false)
    }

    fn rank_all_with(
        &self,
        store: &Store,
        text: &str,
        drafts: bool,
        embed: bool,
    ) -> Result<Ranking> {
        if text.trim().is_empty() {
            return Ok(Ranking::default());
        }
        let (text, q) = self.query_vector(text);
        let text = text.as_str();
        let model_hash = index::model_hash(self.model());
        let mut loaded = self.index_path().and_then(|p| index::Index::load(&p));
        let changes = match &loaded {
            Some(ix) => Some(store.rank_changes_since(ix.generation())?),
            None => None,
        };
        // An index this database did not build (a file a repository brought in `.gza/`, or a
        // project copied from another) is not used: ranking reads the rows, and the background
        // job builds this database's own.
        if let (Some(ix), Some(c)) = (&loaded, &changes)
            && !ix.is_of(&c.nonce)
        {
            loaded = None;
        }
        // The rows the index does not answer for: all of them without an index, else those
        // changed since it was built.
        let (rows, stale, current) = match (&loaded, changes) {
            (Some(ix), Some(changes)) => {
                let current = changes.generation == ix.generation();
                let mut rows = changes.rows;
                rows.retain(|r| drafts || !r.draft);
                (rows, changes.stale, current)
            }
            _ => (store.rank_rows(drafts)?, HashSet::new(), false),
        };
        let mut docs: Vec<Doc> =
            Vec::with_capacity(rows.len() + loaded.as_ref().map_or(0, |ix| ix.len()));
        let mut vectorless_in_index = false;
        if let Some(ix) = &loaded {
            for e in ix.entries(model_hash) {
                if (!drafts && e.draft) || stale.contains(&e.id) {
                    continue;
                }
                vectorless_in_index |= q.is_some() && !e.has_vector();
                let semantic = q.as_ref().and_then(|q| q.indexed(&e));
                docs.push(Doc {
                    id: e.id,
                    priority: e.priority,
                    hinted: e.hinted,
                    semantic,
                    approximate: semantic.is_some(),
                    terms: Terms::Indexed(e.terms),
                });
            }
        }
        let indexed = docs.len();
        for r in &rows {
            docs.push(Doc {
                id: r.id,
                priority: r.priority,
                hinted: hinted(&r.applies_when),
                semantic: None,
                approximate: false,
                terms: Terms::Owned(doc_terms(r)),
            });
        }
        if docs.is_empty() {
            return Ok(Ranking::default());
        }
        let mut behind = loaded.is_none() || !current || vectorless_in_index;
        if let (Some(e), Some(q)) = (self.embedder(), &q) {
            // Learnings the index does not answer for, or holds without a vector: their stored
            // vectors, looked up by key (a hook looks up a bounded number).
            let missing: Vec<usize> = (0..docs.len())
                .filter(|&i| docs[i].semantic.is_none())
                .collect();
            if !missing.is_empty() {
                let ids: Vec<i64> = missing
                    .iter()
                    .take(self.lookups)
                    .map(|&i| docs[i].id)
                    .collect();
                let found: HashMap<i64, Vec<f32>> = store
                    .embeddings_of(e.fingerprint(), &ids)?
                    .into_iter()
                    .collect();
                behind |= missing.iter().any(|&i| i < indexed) || missing.len() > ids.len();
                let mut lacking = Vec::new();
                for (n, &i) in missing.iter().enumerate() {
                    match found.get(&docs[i].id) {
                        Some(v) => docs[i].semantic = Some(q.cosine(v)),
                        // Looked up and not stored: embed it (within the budget).
                        None if n < ids.len() && embed => lacking.push(docs[i].id),
                        // Not embedded here: the background job embeds it.
                        None => behind |= !embed,
                    }
                }
                if !lacking.is_empty() {
                    let want: HashSet<i64> = lacking.iter().copied().collect();
                    let mut lacking_rows: Vec<&RankRow> =
                        rows.iter().filter(|r| want.contains(&r.id)).collect();
                    // Those the index answers for have no row read above: read them by key
                    // (while there is budget to embed them). The index holds them without a
                    // vector for this model when the model changed since it was built (other
                    // weights), and leaving them to the job ranked them by words alone.
                    let read: HashSet<i64> = lacking_rows.iter().map(|r| r.id).collect();
                    let held: Vec<i64> = lacking
                        .iter()
                        .copied()
                        .filter(|id| !read.contains(id))
                        .collect();
                    let held_rows = if held.is_empty() || !self.budget_left() {
                        Vec::new()
                    } else {
                        store.rank_rows_of(&held)?
                    };
                    lacking_rows.extend(held_rows.iter().filter(|r| drafts || !r.draft));
                    let fresh: HashMap<i64, Vec<f32>> = self
                        .embed_within_budget(store, &lacking_rows)
                        .into_iter()
                        .collect();
                    if fresh.len() < lacking.len() {
                        self.start_job();
                    }
                    for d in docs.iter_mut().filter(|d| d.semantic.is_none()) {
                        if let Some(v) = fresh.get(&d.id) {
                            d.semantic = Some(q.cosine(v));
                        }
                    }
                }
            }
        }
        if behind {
            self.start_job();
        }
        let total = docs.len();
        let mut hits = score(&docs, text);
        let order = |a: &Hit, b: &Hit| relative(b).total_cmp(&relative(a)).then(a.id.cmp(&b.id));
        // The best ones again from their exact vectors (an int8 similarity is within about
        // 0.002 of the f32 one: far less than the distance from the top to the RESCORED-th).
        let mut vectors = HashMap::new();
        if let (Some(e), Some(q)) = (self.embedder(), &q) {
            let ids: Vec<i64> = hits.iter().take(RESCORED).map(|(h, _)| h.id).collect();
            vectors = store
                .embeddings_of(e.fingerprint(), &ids)?
                .into_iter()
                .collect();
            for (h, approx) in hits.iter_mut().take(RESCORED) {
                if let Some(v) = vectors.get(&h.id).filter(|_| *approx) {
                    let s = q.cosine(v);
                    h.score = s - lift(h.hinted) + LEXICAL_WEIGHT * h.lexical;
                    h.semantic = Some(s);
                }
            }
        }
        let mut hits: Vec<Hit> = hits.into_iter().map(|(h, _)| h).collect();
        hits.sort_by(order);
        // How the tasks it was given ended, and people's ratings, weigh each of the best.
        crate::credit::weigh(store, &mut hits);
        hits.sort_by(order);
        Ok(Ranking {
            hits,
            total,
            vectors,
        })
    }

    /// Rank the learnings in use a far hook's snapshot lists (`entries`, ascending by id) for
    /// `query` with no database: the ranking index answers for the learnings it holds when it
    /// was built from the database whose nonce hashes to `nonce_hash` (any other index is not
    /// used); the rest, and the entries marked fresh, are ranked by words (and by their stored
    /// vector when the snapshot carries one) from the rows `rows_of` reads, called once with
    /// their ids: with the index in place only those few rows are read, not every learning's.
    /// Nothing is looked up or rescored from stored vectors and no outcome credit weighs the
    /// hits (both are reads of the database): the index's int8 similarity ranks. `text_of`
    /// gives a hit's text for [`diversify_by`].
    pub fn search_local(
        &self,
        entries: &[LocalEntry],
        nonce_hash: u64,
        vectors_model: Option<&str>,
        query: Query,
        rows_of: impl FnOnce(&[i64]) -> Result<Vec<LocalRow>>,
        text_of: impl FnMut(i64) -> Result<Option<String>>,
    ) -> Result<Vec<Hit>> {
        if query.text.trim().is_empty() || entries.is_empty() {
            return Ok(Vec::new());
        }
        let (text, q) = self.query_vector(query.text);
        let text = text.as_str();
        let model_hash = index::model_hash(self.model());
        let loaded = self
            .index_path()
            .and_then(|p| index::Index::load(&p))
            .filter(|ix| nonce_hash != 0 && ix.nonce_hash() == nonce_hash);
        let mut wanted: Vec<&LocalEntry> = entries
            .iter()
            .filter(|e| query.drafts || !e.draft)
            .collect();
        // The merge below walks both lists in id order (the snapshot's reader checks its
        // entries ascend; sorted here too, so no caller can make it skip one).
        if !wanted.windows(2).all(|w| w[0].id < w[1].id) {
            wanted.sort_by_key(|e| e.id);
            wanted.dedup_by_key(|e| e.id);
        }
        let own_vectors = vectors_model.is_some() && vectors_model == self.model();
        let mut docs: Vec<Doc> = Vec::with_capacity(wanted.len());
        // The index answers for the entries it holds that did not change since it was built;
        // the others' rows are read.
        let mut unanswered: Vec<i64> = Vec::new();
        match &loaded {
            Some(ix) => {
                let mut held = ix.entries(model_hash).peekable();
                for w in &wanted {
                    if w.fresh {
                        unanswered.push(w.id);
                        continue;
                    }
                    while held.next_if(|e| e.id < w.id).is_some() {}
                    match held.next_if(|e| e.id == w.id) {
                        Some(e) => {
                            let semantic = q.as_ref().and_then(|q| q.indexed(&e));
                            docs.push(Doc {
                                id: e.id,
                                priority: e.priority,
                                semantic,
                                approximate: semantic.is_some(),
                                hinted: e.hinted,
                                terms: Terms::Indexed(e.terms),
                            });
                        }
                        None => unanswered.push(w.id),
                    }
                }
            }
            None => unanswered.extend(wanted.iter().map(|w| w.id)),
        }
        let rows = if unanswered.is_empty() {
            Vec::new()
        } else {
            rows_of(&unanswered)?
        };
        for r in &rows {
            let semantic = match (&q, &r.vector) {
                (Some(q), Some(v)) if own_vectors => Some(q.cosine(v)),
                _ => None,
            };
            docs.push(Doc {
                id: r.row.id,
                priority: r.row.priority,
                semantic,
                approximate: false,
                hinted: hinted(&r.row.applies_when),
                terms: Terms::Owned(doc_terms(&r.row)),
            });
        }
        if !unanswered.is_empty() || loaded.is_none() {
            // The background job builds the index of what the snapshot holds.
            self.start_job();
        }
        let hits: Vec<Hit> = score(&docs, text).into_iter().map(|(h, _)| h).collect();
        let total = docs.len();
        let ranking = Ranking {
            hits,
            total,
            vectors: HashMap::new(),
        };
        let mut hits = if query.calibrated {
            diversify_by(calibrate(ranking), &HashMap::new(), query.k, None, text_of)?
        } else {
            ranking.hits
        };
        hits.truncate(query.k);
        Ok(hits)
    }

    /// Where the project's ranking index is.
    fn index_path(&self) -> Option<PathBuf> {
        self.project_root
            .as_ref()
            .map(|root| index::path(&root.join(gza_core::project::STATE_DIR)))
    }
}

/// Every doc scored for `text` by meaning (as the docs hold it) and words, and the hits worth
/// keeping, best first: the best [`CANDIDATES`], every exact match and every CRITICAL one. Each
/// hit says whether its similarity is the index's approximation.
fn score(docs: &[Doc], text: &str) -> Vec<(Hit, bool)> {
    let query_terms = distinct_terms(text);
    let terms: Vec<&Terms> = docs.iter().map(|d| &d.terms).collect();
    let lexical = bm25_scores(&terms, &query_terms);
    let identifiers = identifiers(text);
    // Which of the query's terms are identifiers, by their place in the query.
    let is_identifier: Vec<bool> = query_terms
        .iter()
        .map(|t| identifiers.contains(t))
        .collect();
    let total = docs.len();
    // Every learning's score, then the hits worth keeping made whole: the best, the exact
    // matches and the CRITICAL ones (task selection gives every CRITICAL one that matches
    // at all).
    let scored: Vec<(f64, bool)> = docs
        .iter()
        .zip(&lexical)
        .map(|(d, (bm25, matched))| {
            let lex = (bm25 / BM25_SCALE).min(1.0);
            let score = match d.semantic {
                Some(s) => s - lift(d.hinted) + LEXICAL_WEIGHT * lex,
                None => lex,
            };
            let exact = (!query_terms.is_empty()
                && query_terms.len() <= KEYWORD_QUERY_TERMS
                && matched.len() == query_terms.len())
                || matched.iter().any(|&(k, _)| is_identifier[k]);
            (score, exact)
        })
        .collect();
    let key = |i: usize| {
        let (score, _) = scored[i];
        if docs[i].semantic.is_some() {
            score / SEMANTIC_FLOOR
        } else {
            score / LEXICAL_FLOOR
        }
    };
    let mut order: Vec<usize> = (0..total).collect();
    let best = CANDIDATES.min(total);
    if best < total {
        order.select_nth_unstable_by(best - 1, |&a, &b| {
            key(b).total_cmp(&key(a)).then(docs[a].id.cmp(&docs[b].id))
        });
    }
    let mut keep: Vec<usize> = order[..best].to_vec();
    keep.extend(
        order[best..]
            .iter()
            .copied()
            .filter(|&i| scored[i].1 || docs[i].priority == gza_core::learning::Priority::Critical),
    );
    let mut hits: Vec<(Hit, bool)> = keep
        .into_iter()
        .map(|i| {
            let d = &docs[i];
            let (bm25, matched) = &lexical[i];
            let hit = Hit {
                id: d.id,
                score: scored[i].0,
                semantic: d.semantic,
                lexical: (bm25 / BM25_SCALE).min(1.0),
                matched: matched
                    .iter()
                    .map(|&(k, _)| query_terms[k].clone())
                    .collect(),
                exact: scored[i].1,
                priority: d.priority,
                hinted: d.hinted,
            };
            (hit, d.approximate)
        })
        .collect();
    let order = |a: &Hit, b: &Hit| relative(b).total_cmp(&relative(a)).then(a.id.cmp(&b.id));
    hits.sort_by(|(a, _), (b, _)| order(a, b));
    hits
}

/// A learning in use as a far hook's snapshot lists it, for [`Ranker::search_local`]: its id,
/// whether it is a draft, and whether it changed since the ranking index was built (then its
/// row is read and the index's entry, if any, is not used).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalEntry {
    pub id: i64,
    pub draft: bool,
    pub fresh: bool,
}

/// A learning in use as a far hook's snapshot keeps it: its row; whether it changed since the
/// ranking index was built (the index's entry, if any, is not used); its stored vector when the
/// index lacks it.
#[derive(Debug, Clone)]
pub struct LocalRow {
    pub row: RankRow,
    pub fresh: bool,
    pub vector: Option<Vec<f32>>,
}

/// What a far hook's snapshot needs beside the rows for [`Ranker::search_local`]: which
/// learnings the project's ranking index does not answer for (changed since it was built, or
/// all of them without an index of this database), and the stored vectors of at most
/// [`HOOK_LOOKUPS`] of them for the hooks' model (by its fingerprint).
pub fn local_freshness(project: &Project, store: &Store, in_use: &[i64]) -> Result<LocalFreshness> {
    let ranker = Ranker::for_hook(project);
    let loaded = index::Index::load(&index::path(&project.state_dir()));
    let fresh: HashSet<i64> = match loaded {
        Some(ix) => {
            let changes = store.rank_changes_since(ix.generation())?;
            // (An index of another model still answers for words; its vectors are not used.)
            if ix.is_of(&changes.nonce) {
                let mut fresh = changes.stale;
                fresh.extend(changes.rows.iter().map(|r| r.id));
                fresh
            } else {
                in_use.iter().copied().collect()
            }
        }
        None => in_use.iter().copied().collect(),
    };
    let Some(model) = ranker.model().map(str::to_string) else {
        return Ok(LocalFreshness {
            model: None,
            fresh,
            vectors: HashMap::new(),
        });
    };
    let mut ids: Vec<i64> = in_use
        .iter()
        .copied()
        .filter(|i| fresh.contains(i))
        .collect();
    ids.truncate(HOOK_LOOKUPS);
    let vectors = store.embeddings_of(&model, &ids)?.into_iter().collect();
    Ok(LocalFreshness {
        model: Some(model),
        fresh,
        vectors,
    })
}

/// What [`local_freshness`] found.
pub struct LocalFreshness {
    /// The fingerprint of the hooks' model (the vectors' model).
    pub model: Option<String>,
    /// The learnings the ranking index does not answer for.
    pub fresh: HashSet<i64>,
    /// Stored vectors of at most [`HOOK_LOOKUPS`] of them.
    pub vectors: HashMap<i64, Vec<f32>>,
}

/// What ranking a query found: the hits worth keeping, best first (the best [`CANDIDATES`],
/// every exact match and every CRITICAL learning), how many learnings were ranked, and the
/// exact vectors of the best hits (for [`diversify`]).
#[derive(Debug, Clone, Default)]
pub struct Ranking {
    pub hits: Vec<Hit>,
    pub total: usize,
    pub vectors: HashMap<i64, Vec<f32>>,
}

/// One learning as ranking sees it.
struct Doc<'a> {
    id: i64,
    priority: gza_core::learning::Priority,
    /// It has "applies when" hints in words ([`hinted`]).
    hinted: bool,
    semantic: Option<f64>,
    /// The similarity is the index's int8 approximation.
    approximate: bool,
    terms: Terms<'a>,
}

/// Rebuild the project's ranking index from the database: every learning in use (drafts
/// included), with the vector stored for `embedder`'s model when there is one, as of one
/// ranking generation (read in one transaction).
pub fn rebuild_index(project: &Project, store: &Store, embedder: Option<&Embedder>) -> Result<()> {
    let model = embedder.map(Embedder::fingerprint);
    let mut snapshot = store.rank_snapshot(model)?;
    let mut entries: Vec<index::Source> = snapshot
        .rows
        .iter()
        .map(|r| index::Source {
            id: r.id,
            draft: r.draft,
            hinted: hinted(&r.applies_when),
            priority: r.priority,
            terms: doc_terms(r),
            vector: snapshot.vectors.remove(&r.id),
        })
        .collect();
    let dim = embedder.map_or(0, Embedder::dim);
    let bytes = index::build(
        index::model_hash(model),
        snapshot.generation,
        &snapshot.nonce,
        dim,
        &mut entries,
    );
    let state = project.state_dir();
    let path = index::path(&state);
    index::write(&path, &bytes).map_err(|e| gza_core::error::Error::io(&path, "write", e))?;
    for old in index::old_paths(&state) {
        let _ = std::fs::remove_file(old);
    }
    // Deletions the index has seen need not be kept.
    let _ = store.forget_removed(snapshot.generation);
    Ok(())
}

/// Start `gza -C ROOT hook embed` detached (its own process group, no terminal, hooks off), so
/// learnings are embedded off every hook's and command's path. Failing to start it is no error:
/// the next command embeds within its budget.
pub fn start_embed_job(root: &std::path::Path) {
    use std::os::unix::process::CommandExt;
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    // Asked for now: a job already running goes round once more, so what changed after it
    // looked (a damaged int8 copy, new learnings) is not left until the next call.
    ask_for_job(root);
    if job_running(root) {
        return;
    }
    let _ = std::process::Command::new(exe)
        .arg("-C")
        .arg(root)
        .args(["hook", "embed"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .env("GZA_HOOKS", "off")
        .process_group(0)
        .spawn();
}

/// The file whose modification time says when the job was last asked for.
fn job_wanted_path(root: &std::path::Path) -> PathBuf {
    root.join(gza_core::project::STATE_DIR).join("embed.wanted")
}

fn ask_for_job(root: &std::path::Path) {
    if let Ok(file) = gza_core::fsutil::open_regular_here(
        &job_wanted_path(root),
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true),
    ) {
        let _ = file.set_modified(std::time::SystemTime::now());
    }
}

/// Whether the job was asked for after `since`.
fn job_asked_since(root: &std::path::Path, since: std::time::SystemTime) -> bool {
    std::fs::metadata(job_wanted_path(root))
        .and_then(|m| m.modified())
        .is_ok_and(|at| at > since)
}

/// The background job's lock file.
fn job_lock_path(root: &std::path::Path) -> PathBuf {
    root.join(gza_core::project::STATE_DIR).join("embed.lock")
}

/// The background job's lock, or `None` when another job holds it.
pub fn take_job_lock(root: &std::path::Path) -> Option<std::fs::File> {
    gza_core::fsutil::try_lock_file(&job_lock_path(root))
        .ok()
        .flatten()
}

/// Whether a background job holds its lock now.
fn job_running(root: &std::path::Path) -> bool {
    gza_core::fsutil::is_locked(&job_lock_path(root))
}

/// The background job (`gza hook embed`): derive the model's int8 copy if needed, then embed
/// every learning in use that lacks a vector, a batch per transaction, at the lowest CPU
/// priority. Exits at once when another job holds the lock. Returns how many it embedded.
pub fn run_embed_job(project: &Project) -> Result<usize> {
    run_embed_job_with(project, &|_| {})
}

/// [`run_embed_job`], calling `each_round` with the open store at the start of every round,
/// after the spool is taken in (team mode refreshes the far hooks' snapshot there).
pub fn run_embed_job_with(project: &Project, each_round: &dyn Fn(&Store)) -> Result<usize> {
    let Some(first) = take_job_lock(&project.root) else {
        return Ok(0);
    };
    // SAFETY: setpriority on this process only.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
    }
    // Started by a hook, it shares the person's session (and its scheduling group): the
    // session's own processes, its next hooks first, preempt it at once. `work_priority:
    // normal` lowers nothing of gza's but the niceness: on a machine kept busy by other work,
    // SCHED_IDLE could hold the job back for minutes.
    if project.config.work_priority != gza_core::config::WorkPriority::Normal {
        gza_core::priority::idle_policy();
    }
    let mut done = 0;
    let mut lock = Some(first);
    loop {
        let started = std::time::SystemTime::now();
        done += embed_job_round(project, each_round)?;
        if job_asked_since(&project.root, started) {
            continue;
        }
        // A caller that asked between that look and the lock's release saw the lock held and
        // started no job of its own: look again once the lock is free, and go round if it
        // was asked for (unless another job took the lock meanwhile; that one does it).
        drop(lock.take());
        if !job_asked_since(&project.root, started) {
            return Ok(done);
        }
        match take_job_lock(&project.root) {
            Some(again) => lock = Some(again),
            None => return Ok(done),
        }
    }
}

/// One round of the job: load the model afresh (deriving its int8 copy when it is missing or
/// damaged), rebuild the index, embed what lacks a vector, folding the drafts that say what a
/// known learning says into it first ([`Ranker::settle_drafts`]: the known learnings prepared
/// once per round, each draft compared with a bounded few of them, so the round stays linear
/// in the drafts, not quadratic).
fn embed_job_round(project: &Project, each_round: &dyn Fn(&Store)) -> Result<usize> {
    let store = Store::open_project(project)?;
    super::take_in_spooled(project, &store);
    each_round(&store);
    let ranker = Ranker::unbounded(project);
    // The index first, so hooks rank from what is stored now while the rest is embedded.
    let rebuild = |embedder: Option<&Embedder>| {
        if let Err(e) = rebuild_index(project, &store, embedder) {
            super::log(project, &format!("the ranking index was not rebuilt: {e}"));
        }
    };
    rebuild(ranker.embedder());
    let Some(embedder) = ranker.embedder() else {
        return Ok(0);
    };
    let mut done = 0;
    let mut rebuilt = Instant::now();
    loop {
        let rows = store.rows_without_vectors(true, embedder.fingerprint(), JOB_BATCH)?;
        if rows.is_empty() {
            if done > 0 {
                rebuild(Some(embedder));
            }
            return Ok(done);
        }
        let drafts: Vec<i64> = rows.iter().filter(|r| r.draft).map(|r| r.id).collect();
        let folded = ranker.settle_drafts(&store, &drafts);
        let fresh: Vec<(i64, Vec<f32>)> = rows
            .iter()
            .filter(|r| !folded.contains(&r.id))
            .map(|r| (r.id, ranker.learning_vector(embedder, r)))
            .collect();
        let refs: Vec<&RankRow> = rows.iter().collect();
        store.store_embeddings_if_current(embedder.fingerprint(), &refs, &fresh)?;
        done += fresh.len();
        if rebuilt.elapsed() > INDEX_EVERY {
            rebuild(Some(embedder));
            rebuilt = Instant::now();
        }
    }
}

/// While the job embeds a long backlog, the index is rebuilt this often, so what it has
/// embedded is ranked by meaning without waiting for the rest.
const INDEX_EVERY: Duration = Duration::from_secs(10);

/// A hit's score relative to the floor of its kind: a learning scored by meaning and words is
/// measured against [`SEMANTIC_FLOOR`], one scored by words alone (no model, or no vector yet)
/// against [`LEXICAL_FLOOR`], so the two can be ordered together.
fn relative(h: &Hit) -> f64 {
    if h.semantic.is_some() {
        h.score / SEMANTIC_FLOOR
    } else {
        h.score / LEXICAL_FLOOR
    }
}

/// The floor of blended scores for a store of `n` learnings. The best of `n` unrelated
/// learnings scores higher the more there are (the largest of `n` draws from the scores'
/// spread grows like `√(2 ln n)`), so the floor chosen on the labelled sets ([`SEMANTIC_FLOOR`],
/// about [`FLOOR_STORE`] learnings each) is lowered for a smaller store by that much of the
/// spread [`SCORE_SPREAD`] measured on them, never below [`MIN_FLOOR`]: with six learnings the
/// right one at 0.43 is no longer dropped, while a store of thousands keeps the tuned floor.
pub fn semantic_floor(n: usize) -> f64 {
    if n >= FLOOR_STORE {
        return SEMANTIC_FLOOR;
    }
    let spread = |n: usize| (2.0 * (n.max(2) as f64).ln()).sqrt();
    (SEMANTIC_FLOOR - SCORE_SPREAD * (spread(FLOOR_STORE) - spread(n))).max(MIN_FLOOR)
}

/// Keep the hits that matter from a ranking: those above the floor for the store's size
/// ([`semantic_floor`]; without a model, the lexical floor) and within [`RELATIVE_CUT`] of the
/// best; or a clear winner alone. Hits scored by words alone (learnings not embedded yet) are
/// cut by the lexical rule among themselves and merged by [`relative`] score.
pub fn calibrate(ranking: Ranking) -> Vec<Hit> {
    let floor = semantic_floor(ranking.total);
    let (semantic, lexical): (Vec<Hit>, Vec<Hit>) =
        ranking.hits.into_iter().partition(|h| h.semantic.is_some());
    let (exact_semantic, semantic): (Vec<Hit>, Vec<Hit>) =
        semantic.into_iter().partition(|h| h.exact);
    let mut kept = calibrate_semantic(semantic, floor);
    kept.extend(exact_semantic);
    let top = lexical.first().map_or(0.0, |h| h.score);
    kept.extend(
        lexical
            .into_iter()
            .filter(|h| h.exact || (h.score >= LEXICAL_FLOOR && h.score >= RELATIVE_CUT * top)),
    );
    kept.sort_by(|a, b| relative(b).total_cmp(&relative(a)).then(a.id.cmp(&b.id)));
    kept
}

fn calibrate_semantic(mut hits: Vec<Hit>, floor: f64) -> Vec<Hit> {
    let top = hits.first().map_or(0.0, |h| h.score);
    let second = hits.get(1).map_or(0.0, |h| h.score);
    let clear_winner = (CLEAR_WINNER..floor).contains(&top) && top - second >= CLEAR_LEAD;
    if clear_winner {
        hits.truncate(1);
    } else {
        hits.retain(|h| h.score >= floor && h.score >= RELATIVE_CUT * top);
    }
    hits
}

/// The first `limit` of `hits` (best first) that say different things: a hit that says what a
/// better one kept already says ([`crate::dedupe::same`]: by what their texts mean, and their
/// words) is left out, so two slots are not spent on one idea and the next different hit takes
/// its place. A learning's stored vector blends its "applies when" hints in ([`embed_learning`]),
/// so two learnings saying the same, one with hints, were 0.73 alike by those vectors (0.95 by
/// their texts) and came back side by side: a hinted hit's text is embedded alone here (by
/// `ranker`, when it has the model), as [`crate::dedupe::decide`] compares texts; an unhinted
/// hit's stored vector is its text's already.
pub fn diversify(
    store: &Store,
    hits: Vec<Hit>,
    vectors: &HashMap<i64, Vec<f32>>,
    limit: usize,
    ranker: Option<&Ranker>,
) -> Result<Vec<Hit>> {
    diversify_by(hits, vectors, limit, ranker, |id| {
        Ok(store.learning(id)?.map(|l| l.text))
    })
}

/// [`diversify`], with each hit's text from `text_of` (None: the hit is left out).
pub fn diversify_by(
    hits: Vec<Hit>,
    vectors: &HashMap<i64, Vec<f32>>,
    limit: usize,
    ranker: Option<&Ranker>,
    mut text_of: impl FnMut(i64) -> Result<Option<String>>,
) -> Result<Vec<Hit>> {
    type Kept = (Hit, std::collections::BTreeSet<String>, Option<Vec<f32>>);
    let mut kept: Vec<Kept> = Vec::new();
    for h in hits {
        if kept.len() >= limit {
            break;
        }
        let Some(text) = text_of(h.id)? else {
            continue;
        };
        let words = crate::items::stemmed_words(&text);
        // What the text alone means, when the model ranked the hit (it has a stored vector).
        let meaning = match vectors.get(&h.id) {
            Some(v) if !h.hinted => Some(v.clone()),
            Some(_) => ranker.and_then(|r| r.embed(&text)),
            None => None,
        };
        let repeats = kept.iter().any(|(_, w, v)| {
            let similarity = v.as_ref().zip(meaning.as_ref()).map(|(a, b)| cosine(a, b));
            crate::dedupe::same(w, &words, similarity)
        });
        if !repeats {
            kept.push((h, words, meaning));
        }
    }
    Ok(kept.into_iter().map(|(h, _, _)| h).collect())
}

/// A query without what says nothing about the work: ticket and issue references (`WR-482`,
/// `#1234`), which match no learning's words and blur the query's meaning.
///
/// The pattern is compiled only for a text that may hold one (a `-` after a capital or a digit
/// and before a digit, or a `#` before a digit): compiling it was 4.3 M instructions of the
/// prompt hook's 163 M, for prompts that mostly hold no reference.
pub fn clean_query(text: &str) -> String {
    static REFERENCE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?:\b(?:for |in |of |on |see |re |ticket |issue )?(?:[A-Z][A-Z0-9]{1,9}-\d{1,7}\b|#\d{1,7}\b))")
            .expect("valid pattern")
    });
    if !may_hold_reference(text) {
        return text.to_string();
    }
    REFERENCE.replace_all(text, "").into_owned()
}

/// What every match of [`clean_query`]'s pattern holds: `R-d` (R a run of capitals and ASCII
/// digits with a capital in it, d a digit of any script: `char::is_numeric` holds for every
/// `\d`) or `#d`.
fn may_hold_reference(text: &str) -> bool {
    let mut chars = text.chars().peekable();
    // Whether the run of capitals and ASCII digits that ends just before holds a capital.
    let mut run_has_capital = false;
    while let Some(c) = chars.next() {
        let next_is_digit = chars.peek().is_some_and(|n| n.is_numeric());
        if next_is_digit && (c == '#' || (c == '-' && run_has_capital)) {
            return true;
        }
        run_has_capital = match c {
            'A'..='Z' => true,
            '0'..='9' => run_has_capital,
            _ => false,
        };
    }
    false
}

/// A learning's "applies when" hints in words: phrasings of tasks, not file globs or paths
/// (`migrations/*.sql` says nothing a sentence model can use; its terms still count in BM25).
pub fn word_hints(applies_when: &[String]) -> impl Iterator<Item = &str> {
    applies_when
        .iter()
        .map(|h| h.trim())
        .filter(|h| h.split_whitespace().count() >= 2 && !h.contains(['*', '/']))
}

/// Whether a learning has hints in words ([`word_hints`]).
pub fn hinted(applies_when: &[String]) -> bool {
    word_hints(applies_when).next().is_some()
}

/// What is taken off a learning's meaning score: [`HINT_LIFT`] when it has hints in words.
fn lift(hinted: bool) -> f64 {
    if hinted { HINT_LIFT } else { 0.0 }
}

/// A learning's vector: the normalised sum of its text's embedding and each of its hints' in
/// words ([`word_hints`]), the text and every hint counting alike. Embedding the text and the
/// hints as one passage (what gza did before) averages a hint's few words into the text's, so a
/// hint that names the very task ("adding a field or column to a model") moved the learning
/// little; as sentences of their own, on the labelled sets with hints, the must-have learning
/// was in the best three for 0.82 (Ledgerly) and 0.67 (Wrenchly) of prompts, against 0.78 and
/// 0.59 (docs/benchmarks.md).
pub fn embed_learning(embedder: &Embedder, row: &RankRow) -> Vec<f32> {
    embed_learning_from(embedder, row, embedder.embed(&row.text))
}

/// [`embed_learning`] from `v`, the vector of `row`'s text already made.
fn embed_learning_from(embedder: &Embedder, row: &RankRow, mut v: Vec<f32>) -> Vec<f32> {
    for hint in word_hints(&row.applies_when) {
        for (a, b) in v.iter_mut().zip(embedder.embed(hint)) {
            *a += b;
        }
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// A query's embedding. A query longer than the [`QUERY_TOKENS`] embedded of its start (a
/// pasted issue, a log, a list of acceptance criteria) is read by its sentences too: a
/// learning's meaning score is then half its cosine with the start and half its best cosine
/// with any one sentence, so a clue the start never reaches (the file in a stack trace, the
/// last criterion) counts. On the blind long-prompt set (`eval/frostline/`, prompts of 61-566
/// words) this raised mustR@3 from 0.48 to 0.65 and P@3 from 0.52 to 0.61 through the binary,
/// with as many unrelated prompts given nothing (eval/README.md); a query that fits is scored
/// as before. Not in hooks: the sentences cost about 150 ms of CPU for a 250-token prompt.
pub struct QueryVector {
    start: Vec<f32>,
    /// The embeddings of its first sentences, [`QUERY_PART_TOKENS`] in all; empty when the
    /// query fits.
    parts: Vec<Vec<f32>>,
}

impl QueryVector {
    /// Embed `text`'s start, and with `whole` its sentences when the start is not all of it.
    pub fn of(e: &Embedder, text: &str, whole: bool) -> QueryVector {
        let start = e.embed_prefix(text, QUERY_TOKENS);
        let parts = if whole && !e.fits(text, QUERY_TOKENS) {
            let sentences = sentences(text);
            if sentences.len() < 2 {
                Vec::new()
            } else {
                let mut left = QUERY_PART_TOKENS;
                sentences
                    .into_iter()
                    .map_while(|s| {
                        left = left.checked_sub(e.tokens(s, QUERY_TOKENS))?;
                        Some(e.embed_prefix(s, QUERY_TOKENS))
                    })
                    .collect()
            }
        } else {
            Vec::new()
        };
        QueryVector { start, parts }
    }

    /// The embeddings a long query's sentences were given (empty when it fits).
    pub fn parts(&self) -> &[Vec<f32>] {
        &self.parts
    }

    /// The embedding of the query's start.
    pub fn start(&self) -> &[f32] {
        &self.start
    }

    /// The meaning score of a learning whose vector is `v`.
    fn cosine(&self, v: &[f32]) -> f64 {
        self.combine(cosine(&self.start, v), |p| Some(cosine(p, v)))
            .unwrap_or(0.0)
    }

    /// The same from the ranking index's int8 vector.
    fn indexed(&self, e: &index::Entry<'_>) -> Option<f64> {
        let start = e.similarity(&self.start)?;
        self.combine(start, |p| e.similarity(p))
    }

    fn combine(&self, start: f64, part: impl Fn(&[f32]) -> Option<f64>) -> Option<f64> {
        if self.parts.is_empty() {
            return Some(start);
        }
        let best = self
            .parts
            .iter()
            .filter_map(|p| part(p))
            .fold(f64::NEG_INFINITY, f64::max);
        Some(if best.is_finite() {
            0.5 * start + 0.5 * best
        } else {
            start
        })
    }
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    let c = f64::from(dot / (na.sqrt() * nb.sqrt()));
    // A damaged vector (NaN, infinities) matches nothing rather than poisoning the ranking.
    if na == 0.0 || nb == 0.0 || !c.is_finite() {
        return 0.0;
    }
    c
}

/// Cosine similarity of two stored or fresh embeddings.
pub fn similarity(a: &[f32], b: &[f32]) -> f64 {
    cosine(a, b)
}

/// Words too common to say what a text is about.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "always", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "but", "by", "can", "could", "do", "does", "each", "every", "for", "from",
    "get", "has", "have", "how", "if", "in", "into", "is", "it", "its", "just", "make", "may",
    "more", "must", "need", "never", "new", "no", "not", "now", "of", "on", "one", "only", "or",
    "other", "our", "out", "over", "please", "should", "so", "some", "than", "that", "the",
    "their", "them", "then", "there", "these", "they", "this", "those", "to", "up", "use", "used",
    "using", "via", "was", "we", "when", "where", "which", "while", "will", "with", "without",
    "would", "you", "your",
];

/// Lowercased terms of a text: words, identifiers split at `_`, `-`, `.`, `/` and camelCase
/// (the whole identifier kept too), stop words dropped, light suffix stemming.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |t| out.push(t.to_string()));
    out
}

/// A text's sentences: split after `.`, `!` or `?` followed by white space, and at line breaks
/// and semicolons (a path's or a version's dots do not split), blank pieces left out.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = match c {
            '\n' | ';' => Some(i),
            '.' | '!' | '?' => chars
                .peek()
                .is_none_or(|(_, n)| n.is_whitespace())
                .then_some(i + 1),
            _ => None,
        };
        if let Some(end) = end {
            let s = text[start..end].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = i + c.len_utf8();
        }
    }
    let s = text[start..].trim();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

/// A query's terms, each once, in order, at most [`MAX_QUERY_TERMS`].
fn distinct_terms(query: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    terms(query)
        .into_iter()
        .filter(|t| seen.insert(t.clone()))
        .take(MAX_QUERY_TERMS)
        .collect()
}

/// The identifiers a text names whole (`conftest.py`, `max_retries`, `useeffect`: made of
/// parts joined by `_`, `-`, `.`, `/` or camelCase), lowercased as [`terms`] keeps them.
fn identifiers(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for raw in text.split(|c: char| !(c.is_alphanumeric() || "_-./".contains(c))) {
        let raw = raw.trim_matches(|c: char| "_-./".contains(c));
        if split_identifier(raw).len() > 1 && raw.len() > 3 {
            out.insert(raw.to_lowercase());
        }
    }
    out
}

/// Call `f` with each of [`terms`] in turn, without collecting them.
fn for_each_term(text: &str, mut f: impl FnMut(&str)) {
    let mut lower = String::new();
    for raw in text.split(|c: char| !(c.is_alphanumeric() || "_-./".contains(c))) {
        let raw = raw.trim_matches(|c: char| "_-./".contains(c));
        if raw.is_empty() {
            continue;
        }
        let parts = split_identifier(raw);
        if parts.len() > 1 {
            lower.clear();
            lower.extend(raw.chars().flat_map(char::to_lowercase));
            if lower.len() > 2 {
                f(&lower);
            }
        }
        for p in parts {
            lower.clear();
            lower.extend(p.chars().flat_map(char::to_lowercase));
            // STOPWORDS is sorted.
            if lower.len() < 2 || STOPWORDS.binary_search(&lower.as_str()).is_ok() {
                continue;
            }
            f(&stem(&lower));
        }
    }
}

fn split_identifier(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for piece in word.split(['_', '-', '.', '/']) {
        let bytes = piece.as_bytes();
        let mut start = 0;
        for i in 1..bytes.len() {
            if bytes[i].is_ascii_uppercase() && bytes[i - 1].is_ascii_lowercase() {
                parts.push(&piece[start..i]);
                start = i;
            }
        }
        if start < piece.len() {
            parts.push(&piece[start..]);
        }
    }
    parts.retain(|p| !p.is_empty());
    parts
}

/// A light English stemmer: enough to meet "migrations"/"migration", "queries"/"query",
/// "changing"/"change"; never below four letters.
pub(crate) fn stem(word: &str) -> String {
    if !word.is_ascii() || word.len() <= 4 {
        return word.to_string();
    }
    for (suffix, replacement) in [
        ("ies", "y"),
        ("sses", "ss"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ] {
        if let Some(base) = word.strip_suffix(suffix)
            && base.len() + replacement.len() >= 4
            && !word.ends_with("ss")
        {
            let mut s = format!("{base}{replacement}");
            // "changing" → "chang" and "change" → "chang" meet; so do "added"/"add".
            if s.ends_with('e') && s.len() > 4 {
                s.pop();
            }
            return s;
        }
    }
    let mut s = word.to_string();
    if s.ends_with('e') {
        s.pop();
    }
    s
}

/// A learning's BM25 terms (text, keywords and hints), hashed, in order.
fn doc_terms(r: &RankRow) -> Vec<u64> {
    let mut out = Vec::new();
    let mut each = |t: &str| out.push(index::term_hash(t));
    for_each_term(&r.text, &mut each);
    for extra in r.keywords.iter().chain(&r.applies_when) {
        for_each_term(extra, &mut each);
    }
    out
}

/// A learning's hashed BM25 terms: from the index (8 little-endian bytes each), or made now.
enum Terms<'a> {
    Indexed(&'a [u8]),
    Owned(Vec<u64>),
}

impl Terms<'_> {
    fn len(&self) -> usize {
        match self {
            Terms::Indexed(b) => b.len() / 8,
            Terms::Owned(v) => v.len(),
        }
    }

    fn for_each(&self, mut f: impl FnMut(u64)) {
        match self {
            Terms::Indexed(b) => index::term_hashes(b).for_each(f),
            Terms::Owned(v) => v.iter().for_each(|h| f(*h)),
        }
    }
}

/// Okapi BM25 of each learning for the query's distinct terms `q` ([`distinct_terms`]), from each learning's hashed terms
/// ([`doc_terms`]), with the query terms it matched. Only the query's terms are counted. The
/// matched terms are their places in `q`, in query order, with how often each occurs (no
/// strings: every learning is scored on every prompt, and only the kept hits' terms are named).
fn bm25_scores(docs: &[&Terms], q: &[String]) -> Vec<(f64, Vec<(usize, u32)>)> {
    const K1: f64 = 1.2;
    const B: f64 = 0.75;
    // The query's term hashes, sorted, with their place in the query: a binary search per term.
    let mut index: Vec<(u64, usize)> = q
        .iter()
        .enumerate()
        .map(|(i, t)| (index::term_hash(t), i))
        .collect();
    index.sort_unstable();
    let mut df = vec![0u32; q.len()];
    let mut tfs: Vec<Vec<(usize, u32)>> = Vec::with_capacity(docs.len());
    for doc in docs {
        let mut tf: Vec<(usize, u32)> = Vec::new();
        doc.for_each(|h| {
            if let Ok(at) = index.binary_search_by(|(s, _)| s.cmp(&h)) {
                let k = index[at].1;
                match tf.iter_mut().find(|(i, _)| *i == k) {
                    Some((_, n)) => *n += 1,
                    None => tf.push((k, 1)),
                }
            }
        });
        for (k, _) in &tf {
            df[*k] += 1;
        }
        tfs.push(tf);
    }
    let n = docs.len() as f64;
    let avg_len =
        (docs.iter().map(|d| d.len() as f64).sum::<f64>() / docs.len().max(1) as f64).max(1.0);
    docs.iter()
        .zip(tfs)
        .map(|(doc, mut tf)| {
            let len = doc.len() as f64;
            let mut score = 0.0;
            // In query order, as the terms were asked.
            tf.sort_by_key(|(k, _)| *k);
            for &(k, f) in &tf {
                let df = f64::from(df[k].max(1));
                let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                let f = f64::from(f);
                score += idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len / avg_len));
            }
            (score, tf)
        })
        .collect()
}

/// Learnings by id, for showing hits.
pub fn hits_with_records(store: &Store, hits: &[Hit]) -> Result<Vec<(Hit, Learning)>> {
    let records = store.learnings_by_ids(&hits.iter().map(|h| h.id).collect::<Vec<_>>())?;
    let mut out = Vec::with_capacity(hits.len());
    for h in hits {
        // Only learnings in use, whatever ranked them: an archived or quarantined learning is
        // never given, even were an index to name it.
        if let Some(l) = records.get(&h.id)
            && l.is_in_use()
        {
            out.push((h.clone(), l.clone()));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long task prompt whose clue comes after the tokens embedded of its start: read by its
    /// sentences too, the learning the clue calls for scores far higher than from the start
    /// alone; a prompt that fits is embedded as before (no sentences). Needs the model
    /// (`GZA_MODEL_DIR`, which `scripts/test` sets); fails without it rather than skipping.
    #[test]
    fn a_long_prompts_buried_clue_counts_and_a_short_prompt_is_read_as_before() {
        let dir = resolve_model_dir(None).expect("GZA_MODEL_DIR or HOME");
        let e = Embedder::load(&dir)
            .unwrap_or_else(|err| panic!("this test needs the model in {}: {err}", dir.display()));
        let background = "Hi team, following up on Tuesday's planning meeting. \
            The customer success group has been collecting feedback from the pilot accounts for \
            the last quarter and several of them mentioned the weekly summary email arrives on \
            the wrong day for their region. Product agreed to look at this after the billing \
            work lands, and design already shared mockups for the settings page in Figma. \
            Marketing would like the change announced in the next newsletter, so please keep \
            the copy short. Nothing here needs a database change as far as we know. \
            Thanks to everyone who joined the call and shared notes afterwards.";
        let clue = "Also the nightly job crashed with a segfault inside the PDF renderer after the \
            font package upgrade.";
        let prompt = format!("{background}\n{clue}");
        let learning = e.embed("The invoice PDF renderer crashes with newer system fonts: pin the fonts package version in the Dockerfile");
        let whole = QueryVector::of(&e, &prompt, true);
        let start = QueryVector::of(&e, &prompt, false);
        assert!(!e.fits(&prompt, QUERY_TOKENS));
        assert!(!whole.parts().is_empty() && start.parts().is_empty());
        let (w, s) = (whole.cosine(&learning), start.cosine(&learning));
        assert!(w > s + 0.1, "whole {w:.3} against start {s:.3}");
        let short = QueryVector::of(&e, clue, true);
        assert!(short.parts().is_empty());
        assert!(
            (short.cosine(&learning) - cosine(&e.embed_prefix(clue, QUERY_TOKENS), &learning))
                .abs()
                < 1e-9
        );
    }

    /// The check that spares most prompts the pattern's compilation holds for every text the
    /// pattern matches (references in any script's digits, at the start, after words), and
    /// not for plain prompts.
    #[test]
    fn every_reference_clean_query_removes_passes_the_check_that_skips_it() {
        let pattern = regex::Regex::new(
            r"(?:\b(?:for |in |of |on |see |re |ticket |issue )?(?:[A-Z][A-Z0-9]{1,9}-\d{1,7}\b|#\d{1,7}\b))",
        )
        .unwrap();
        for text in [
            "WR-482 add a status filter",
            "fix the export (see #1234)",
            "for ticket AB9-7 only",
            "issue X1-\u{0663}\u{0664} in Arabic-Indic digits",
            "see #\u{0967}\u{0968} in Devanagari",
            "UTF-8 everywhere",
        ] {
            assert!(pattern.is_match(text), "{text}");
            assert!(may_hold_reference(text), "{text}");
            assert_ne!(clean_query(text), text, "{text}");
        }
        for text in [
            "add a status filter to the invoices list endpoint and update the offline query cache",
            "dates before 2020-01-01 in lower-case keys",
            "a - 3, x#y, #tag",
            "",
        ] {
            assert!(!may_hold_reference(text), "{text}");
            assert_eq!(clean_query(text), text);
        }
    }

    #[test]
    fn terms_split_identifiers_and_stem() {
        let t = terms("Run `cargo sqlx prepare` after changing queries in src/db/invoiceRepo.rs");
        for want in [
            "cargo",
            "sqlx",
            "prepar",
            "chang",
            "query",
            "src/db/invoicerepo.rs",
            "invoic",
            "repo",
        ] {
            assert!(t.contains(&want.to_string()), "{want} not in {t:?}");
        }
        assert!(!t.contains(&"after".to_string()));
        assert_eq!(stem("migrations"), stem("migration"));
        assert_eq!(stem("changing"), stem("change"));
        assert_eq!(stem("queries"), stem("query"));
        assert_eq!(stem("class"), "class");
    }

    #[test]
    fn bm25_prefers_the_rarer_shared_term() {
        let row = |id: i64, text: &str| RankRow {
            id,
            section: "General".into(),
            text: text.into(),
            keywords: vec![],
            applies_when: vec![],
            priority: gza_core::learning::Priority::Medium,
            confidence: 0.7,
            draft: false,
        };
        let rows = [
            row(1, "Run the tests with make test"),
            row(2, "Run sqlx prepare after changing queries"),
            row(3, "Run the linter before pushing"),
        ];
        let docs: Vec<Terms> = rows.iter().map(|r| Terms::Owned(doc_terms(r))).collect();
        let docs: Vec<&Terms> = docs.iter().collect();
        let q = distinct_terms("update the sqlx offline cache");
        let s = bm25_scores(&docs, &q);
        assert!(s[1].0 > s[0].0 && s[1].0 > s[2].0);
        let matched: Vec<&str> = s[1].1.iter().map(|&(k, _)| q[k].as_str()).collect();
        assert_eq!(matched, ["sqlx"]);
        assert_eq!(s[0].0, 0.0);
    }
}
