//! The ranker: which learnings matter for a text, by meaning and by words, offline.
//!
//! Each active learning is scored by the cosine similarity of its sentence embedding (computed
//! once and stored) with the query's, plus a bounded BM25 term over its text, keywords and
//! "applies when" hints. Only learnings above an absolute floor and within a fraction of the best
//! score are returned (or a clear winner well ahead of the rest), so an unrelated query gets
//! nothing rather than the three least bad items. The constants were tuned on eval/.
//! Without a model the lexical part ranks alone, with its own floor.

use std::collections::{HashMap, HashSet};

use super::embed::{Embedder, resolve_model_dir};
use crate::error::Result;
use crate::learning::Learning;
use crate::project::Project;
use crate::store::{RankRow, Store};

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
/// When nothing reaches the floor, a best item above this that leads the second by
/// [`CLEAR_LEAD`] is still returned: a clear winner, where a negative's best items are bunched.
const CLEAR_WINNER: f64 = 0.33;
const CLEAR_LEAD: f64 = 0.2;
/// Tokens of a long query that take part in BM25 (the rest adds noise, not signal).
const MAX_QUERY_TERMS: usize = 256;
/// Tokens of a query that are embedded: its start, where a task says what it is about (time
/// grows with tokens; 96 keep a task's start under 50 ms).
const QUERY_TOKENS: usize = 96;

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
    pub priority: crate::learning::Priority,
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

/// The ranker, with its embedding model when one could be loaded.
pub struct Ranker {
    embedder: Option<Embedder>,
    /// Why there is no model, in one line.
    pub model_problem: Option<String>,
}

impl Ranker {
    /// Load the project's embedding model (`learnings.model_dir`, else the default location).
    /// A missing or broken model is no error: the ranker works by words and says why.
    pub fn load(project: &Project) -> Ranker {
        let configured = match project.config.learnings.model_dir.as_ref() {
            Some(dir) => match project.setting_path("learnings.model_dir", dir) {
                Ok(dir) => Some(dir),
                Err(e) => {
                    return Ranker {
                        embedder: None,
                        model_problem: Some(e.to_string()),
                    };
                }
            },
            None => None,
        };
        let Some(dir) = resolve_model_dir(configured.as_deref()) else {
            return Ranker {
                embedder: None,
                model_problem: Some(
                    "no embedding model folder is configured and HOME is not set; set learnings.model_dir"
                        .into(),
                ),
            };
        };
        match Embedder::load(&dir) {
            Ok(e) => Ranker {
                embedder: Some(e),
                model_problem: None,
            },
            Err(e) => Ranker {
                embedder: None,
                model_problem: Some(e.to_string()),
            },
        }
    }

    /// A ranker that uses words only.
    pub fn lexical_only() -> Ranker {
        Ranker {
            embedder: None,
            model_problem: None,
        }
    }

    /// The model's fingerprint, when one is loaded.
    pub fn model(&self) -> Option<&str> {
        self.embedder.as_ref().map(Embedder::fingerprint)
    }

    /// Embed one text with the model, if there is one.
    pub fn embed(&self, text: &str) -> Option<Vec<f32>> {
        self.embedder.as_ref().map(|e| e.embed(text))
    }

    /// Compute and store the embeddings active learnings lack; returns them all by id.
    pub fn embed_missing(&self, store: &Store) -> Result<HashMap<i64, Vec<f32>>> {
        let Some(embedder) = &self.embedder else {
            return Ok(HashMap::new());
        };
        let rows = store.rank_rows(true)?;
        self.vectors_for(store, embedder, &rows, true)
    }

    fn vectors_for(
        &self,
        store: &Store,
        embedder: &Embedder,
        rows: &[RankRow],
        persist: bool,
    ) -> Result<HashMap<i64, Vec<f32>>> {
        let mut vectors: HashMap<i64, Vec<f32>> = store
            .learning_embeddings(embedder.fingerprint())?
            .into_iter()
            .filter(|(_, v)| v.len() == embedder.dim())
            .collect();
        let fresh: Vec<(i64, Vec<f32>)> = rows
            .iter()
            .filter(|r| !vectors.contains_key(&r.id))
            .map(|r| (r.id, embedder.embed(&embedding_text(r))))
            .collect();
        // A read-only store still ranks; it just embeds again next time.
        if persist && !fresh.is_empty() {
            let _ = store.store_embeddings(embedder.fingerprint(), &fresh);
        }
        vectors.extend(fresh);
        Ok(vectors)
    }

    /// Rank the active learnings for `query`, best first.
    pub fn search(&self, store: &Store, query: Query) -> Result<Vec<Hit>> {
        let mut hits = self.rank_all(store, query.text, query.drafts)?;
        if query.calibrated {
            hits = calibrate(hits);
        }
        hits.truncate(query.k);
        Ok(hits)
    }

    /// Every learning in use scored for `text`, best first, with no cut (the query is embedded
    /// once; [`calibrate`] makes the cut).
    pub fn rank_all(&self, store: &Store, text: &str, drafts: bool) -> Result<Vec<Hit>> {
        let rows = store.rank_rows(drafts)?;
        if rows.is_empty() || text.trim().is_empty() {
            return Ok(Vec::new());
        }
        let lexical = Bm25::new(&rows).scores(text);
        let semantic = match &self.embedder {
            Some(embedder) => {
                let vectors = self.vectors_for(store, embedder, &rows, true)?;
                let q = embedder.embed_prefix(text, QUERY_TOKENS);
                Some(
                    rows.iter()
                        .map(|r| vectors.get(&r.id).map_or(0.0, |v| cosine(&q, v)))
                        .collect::<Vec<f64>>(),
                )
            }
            None => None,
        };
        let mut hits: Vec<Hit> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let (bm25, matched) = &lexical[i];
                let lex = (bm25 / BM25_SCALE).min(1.0);
                let sem = semantic.as_ref().map(|s| s[i]);
                let score = match sem {
                    Some(s) => s + LEXICAL_WEIGHT * lex,
                    None => lex,
                };
                Hit {
                    id: r.id,
                    score,
                    semantic: sem,
                    lexical: lex,
                    matched: matched.clone(),
                    priority: r.priority,
                }
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        Ok(hits)
    }
}

/// Keep the hits that matter from a full ranking: those above the floor (semantic or, without
/// a model, lexical) and within [`RELATIVE_CUT`] of the best; or a clear winner alone.
pub fn calibrate(mut hits: Vec<Hit>) -> Vec<Hit> {
    let semantic = hits.first().is_some_and(|h| h.semantic.is_some());
    let floor = if semantic {
        SEMANTIC_FLOOR
    } else {
        LEXICAL_FLOOR
    };
    let top = hits.first().map_or(0.0, |h| h.score);
    let second = hits.get(1).map_or(0.0, |h| h.score);
    let clear_winner = semantic && top < floor && top >= CLEAR_WINNER && top - second >= CLEAR_LEAD;
    if clear_winner {
        hits.truncate(1);
    } else {
        hits.retain(|h| h.score >= floor && h.score >= RELATIVE_CUT * top);
    }
    hits
}

/// What is embedded for a learning: its text and when it applies.
pub fn embedding_text(row: &RankRow) -> String {
    if row.applies_when.is_empty() {
        row.text.clone()
    } else {
        format!(
            "{} (applies when: {})",
            row.text,
            row.applies_when.join("; ")
        )
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
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    f64::from(dot / (na.sqrt() * nb.sqrt()))
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
    for raw in text.split(|c: char| !(c.is_alphanumeric() || "_-./".contains(c))) {
        let raw = raw.trim_matches(|c: char| "_-./".contains(c));
        if raw.is_empty() {
            continue;
        }
        let parts = split_identifier(raw);
        if parts.len() > 1 {
            let whole = raw.to_lowercase();
            if whole.len() > 2 {
                out.push(whole);
            }
        }
        for p in parts {
            let p = p.to_lowercase();
            if p.len() < 2 || STOPWORDS.contains(&p.as_str()) {
                continue;
            }
            out.push(stem(&p));
        }
    }
    out
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
fn stem(word: &str) -> String {
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

/// Okapi BM25 over the learnings' text, keywords and hints.
struct Bm25 {
    docs: Vec<HashMap<String, u32>>,
    lengths: Vec<f64>,
    df: HashMap<String, u32>,
    avg_len: f64,
}

impl Bm25 {
    const K1: f64 = 1.2;
    const B: f64 = 0.75;

    fn new(rows: &[RankRow]) -> Bm25 {
        let mut docs = Vec::with_capacity(rows.len());
        let mut lengths = Vec::with_capacity(rows.len());
        let mut df: HashMap<String, u32> = HashMap::new();
        for r in rows {
            let mut text = r.text.clone();
            for extra in r.keywords.iter().chain(&r.applies_when) {
                text.push(' ');
                text.push_str(extra);
            }
            let mut tf: HashMap<String, u32> = HashMap::new();
            let ts = terms(&text);
            lengths.push(ts.len() as f64);
            for t in ts {
                *tf.entry(t).or_default() += 1;
            }
            for t in tf.keys() {
                *df.entry(t.clone()).or_default() += 1;
            }
            docs.push(tf);
        }
        let avg_len = (lengths.iter().sum::<f64>() / lengths.len().max(1) as f64).max(1.0);
        Bm25 {
            docs,
            lengths,
            df,
            avg_len,
        }
    }

    /// Each document's score for the query, with the query terms it matched.
    fn scores(&self, query: &str) -> Vec<(f64, Vec<String>)> {
        let mut seen = HashSet::new();
        let q: Vec<String> = terms(query)
            .into_iter()
            .filter(|t| seen.insert(t.clone()))
            .take(MAX_QUERY_TERMS)
            .collect();
        let n = self.docs.len() as f64;
        self.docs
            .iter()
            .zip(&self.lengths)
            .map(|(tf, len)| {
                let mut score = 0.0;
                let mut matched = Vec::new();
                for t in &q {
                    let Some(&f) = tf.get(t) else { continue };
                    let df = f64::from(*self.df.get(t).unwrap_or(&1));
                    let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                    let f = f64::from(f);
                    score += idf * f * (Self::K1 + 1.0)
                        / (f + Self::K1 * (1.0 - Self::B + Self::B * len / self.avg_len));
                    matched.push(t.clone());
                }
                (score, matched)
            })
            .collect()
    }
}

/// Learnings by id, for showing hits.
pub fn hits_with_records(store: &Store, hits: &[Hit]) -> Result<Vec<(Hit, Learning)>> {
    let mut out = Vec::with_capacity(hits.len());
    for h in hits {
        if let Some(l) = store.learning(h.id)? {
            out.push((h.clone(), l));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            priority: crate::learning::Priority::Medium,
            confidence: 0.7,
        };
        let rows = vec![
            row(1, "Run the tests with make test"),
            row(2, "Run sqlx prepare after changing queries"),
            row(3, "Run the linter before pushing"),
        ];
        let s = Bm25::new(&rows).scores("update the sqlx offline cache");
        assert!(s[1].0 > s[0].0 && s[1].0 > s[2].0);
        assert_eq!(s[1].1, vec!["sqlx"]);
        assert_eq!(s[0].0, 0.0);
    }
}
