//! Telling a new learning from one already known: a learning that says the same as an existing
//! one, in the same or other words, re-confirms it instead of being added twice.

use std::collections::{BTreeSet, HashMap};

use super::items::{self, Item};
use super::rank::{self, Ranker};
use gza_core::Result;
use gza_core::learning::{DEFAULT_CONFIDENCE, Learning, NewLearning, Origin, Status};
use gza_store::{Store, Taught};

/// Word similarity (Jaccard, symmetric) at which two learnings say the same: high, since
/// "Run make test before pushing" and "Run make lint before pushing" share 60 %.
pub const SAME_WORDS: f64 = 0.7;
/// Embedding similarity at which two learnings say the same in other words.
pub const SAME_MEANING: f64 = 0.86;
/// Embedding similarity that, with some shared words, also counts as the same.
const CLOSE_MEANING: f64 = 0.78;
const SOME_WORDS: f64 = 0.35;

/// Whether two learnings say the same, from their words and (when both are known) embeddings.
pub fn same(a_words: &BTreeSet<String>, b_words: &BTreeSet<String>, meaning: Option<f64>) -> bool {
    if name_different_things(a_words, b_words) {
        return false;
    }
    let words = items::word_similarity(a_words, b_words);
    words >= SAME_WORDS
        || meaning.is_some_and(|m| m >= SAME_MEANING || (m >= CLOSE_MEANING && words >= SOME_WORDS))
}

/// Whether each of two learnings names something the other does not ("after editing
/// users.graphql" and "after editing orders.graphql"; "widget1" and "widget2"): different
/// learnings, though a model finds them 0.96 alike. One naming more than the other (a more
/// specific wording of the same) is not told apart here.
fn name_different_things(a: &BTreeSet<String>, b: &BTreeSet<String>) -> bool {
    let names = |w: &BTreeSet<String>| -> BTreeSet<String> {
        w.iter()
            .filter(|x| x.starts_with(items::NAME_MARK))
            .cloned()
            .collect()
    };
    let (na, nb) = (names(a), names(b));
    !na.is_subset(&nb) && !nb.is_subset(&na)
}

/// Known learnings compared by meaning with each extracted item: the best the ranker finds
/// for the item's text (by meaning and words, through the ranking index).
const CANDIDATES: usize = 8;

/// For each extracted item: the learning it re-confirms (active or archived: a learning a person
/// archived is confirmed, never brought back), or a new learning.
///
/// With a model, meaning is decided on the texts alone, embedded now: the item's, and each
/// candidate's (the best [`CANDIDATES`] the ranker finds for the item, and any known learning
/// sharing some of its words). Stored vectors are not compared directly: they embed a
/// learning's "applies when" hints too, and a learning taught a moment ago has none yet (the
/// background job embeds it later), so "Run cargo nextest before every commit" and "... before
/// each commit" (0.988 by their texts) were both kept.
pub fn decide(
    extracted: &[Item],
    origin: Origin,
    known: &[Learning],
    ranker: Option<&Ranker>,
    store: &Store,
) -> Vec<Taught> {
    let ranker = ranker.filter(|r| r.model().is_some());
    let known_words: Vec<BTreeSet<String>> = known
        .iter()
        .map(|l| items::stemmed_words(&l.text))
        .collect();
    let by_id: HashMap<i64, usize> = known.iter().enumerate().map(|(i, l)| (l.id, i)).collect();
    // Text-only vectors of known learnings, embedded at most once per call.
    let mut text_vectors: HashMap<i64, Vec<f32>> = HashMap::new();
    let mut out: Vec<Taught> = Vec::new();
    let mut batch: Vec<(BTreeSet<String>, Option<Vec<f32>>)> = Vec::new();
    for item in extracted {
        let words = items::stemmed_words(&item.content);
        let vector = ranker.and_then(|r| r.embed(&item.content));
        let mut meanings: HashMap<i64, f64> = HashMap::new();
        if let (Some(r), Some(v)) = (ranker, vector.as_ref()) {
            let mut candidates: Vec<i64> = r
                .rank_all(store, &item.content, true)
                .map(|ranking| ranking.hits)
                .unwrap_or_default()
                .into_iter()
                .take(CANDIDATES)
                .map(|h| h.id)
                .collect();
            candidates.extend(
                known
                    .iter()
                    .zip(&known_words)
                    .filter(|(_, w)| items::word_similarity(&words, w) >= SOME_WORDS)
                    .map(|(l, _)| l.id),
            );
            for id in candidates {
                let Some(&i) = by_id.get(&id) else { continue };
                let kv = text_vectors
                    .entry(id)
                    .or_insert_with(|| r.embed(&known[i].text).unwrap_or_default());
                meanings.insert(id, rank::similarity(v, kv));
            }
        }
        let meaning = |id: i64| meanings.get(&id).copied();
        // The closest known learning that says the same, active ones first.
        let found = known
            .iter()
            .zip(&known_words)
            .filter(|(l, w)| same(&words, w, meaning(l.id)))
            .max_by(|(a, aw), (b, bw)| {
                let key = |l: &Learning, w: &BTreeSet<String>| {
                    (
                        l.status == Status::Active,
                        meaning(l.id).unwrap_or(0.0) + items::word_similarity(&words, w),
                    )
                };
                let (ka, kb) = (key(a, aw), key(b, bw));
                ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
            })
            .map(|(l, _)| l.id);
        if let Some(id) = found {
            if !out
                .iter()
                .any(|t| matches!(t, Taught::Confirms(x) if *x == id))
            {
                out.push(Taught::Confirms(id));
            }
            continue;
        }
        let repeats_batch = batch.iter().any(|(w, v)| {
            let m = vector
                .as_ref()
                .zip(v.as_ref())
                .map(|(a, b)| rank::similarity(a, b));
            same(&words, w, m)
        });
        if repeats_batch {
            continue;
        }
        batch.push((words, vector));
        out.push(Taught::New(Box::new(new_learning(item, origin))));
    }
    out
}

/// Fold each of the drafts `ids` that says what a known learning says into that learning
/// ([`Store::merge_draft`]: its task or session confirms the learning, and the draft goes), by
/// the one test extraction uses ([`decide`]): the same stemmed words, and the same meaning
/// when `ranker` has a model. Drafts that arrive by other ways than an extraction (a session's
/// hook, an agent's LEARNINGS.md, the MCP `add` tool, the spool) come through here twice: by
/// words where they are stored (a hook computes no embedding), and by meaning where they are
/// first embedded ([`crate::rank`]'s embedding of what lacks a vector). A person's own drafts
/// are left as written. Between two new drafts that say the same, the older is kept. Returns
/// the (draft, learning) pairs folded.
pub fn settle(store: &Store, ranker: Option<&Ranker>, ids: &[i64]) -> Result<Vec<(i64, i64)>> {
    let pending: BTreeSet<i64> = ids.iter().copied().collect();
    if pending.is_empty() {
        return Ok(Vec::new());
    }
    let mut known = store.learnings(true)?;
    let mut merged = Vec::new();
    for &id in &pending {
        let Some(draft) = known.iter().find(|l| l.id == id) else {
            continue;
        };
        if draft.status != Status::Draft || draft.origin == Origin::User {
            continue;
        }
        let item = Item {
            section: draft.section.clone(),
            content: draft.text.clone(),
            keywords: draft.keywords.clone(),
            applies_when: draft.applies_when.clone(),
            priority: Some(draft.priority),
            confidence: Some(draft.confidence),
            risk: None,
        };
        let origin = draft.origin;
        let others: Vec<Learning> = known
            .iter()
            .filter(|l| l.id != id && !(pending.contains(&l.id) && l.id > id))
            .cloned()
            .collect();
        let taught = decide(std::slice::from_ref(&item), origin, &others, ranker, store);
        if let Some(Taught::Confirms(into)) = taught.first()
            && store.merge_draft(id, *into)?
        {
            known.retain(|l| l.id != id);
            merged.push((id, *into));
        }
    }
    Ok(merged)
}

/// The record for an extracted item.
pub fn new_learning(item: &Item, origin: Origin) -> NewLearning {
    NewLearning {
        keywords: item.keywords.clone(),
        applies_when: item.applies_when.clone(),
        confidence: item.confidence.unwrap_or(DEFAULT_CONFIDENCE),
        priority: item.priority.unwrap_or_default(),
        model_risk: item.risk.clone(),
        ..NewLearning::new(&item.section, &item.content, origin)
    }
}

/// A learning not yet stored, as a dry run shows it (`id` is a placeholder).
pub fn preview(l: &NewLearning, id: i64) -> Learning {
    Learning {
        id,
        section: l.section.clone(),
        text: l.text.clone(),
        insight: l.insight.clone(),
        example: l.example.clone(),
        keywords: l.keywords.clone(),
        applies_when: l.applies_when.clone(),
        kind: l.kind.clone(),
        triggers: l.triggers.clone(),
        checklist: l.checklist.clone(),
        confidence: l.confidence,
        priority: l.priority,
        status: l.status,
        status_reason: None,
        status_changed_at: None,
        origin: l.origin,
        created_at: String::new(),
        updated_at: String::new(),
        confirmed_at: String::new(),
        support: 1,
        injected: 0,
        lifecycle: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(text: &str) -> BTreeSet<String> {
        items::stemmed_words(text)
    }

    /// Paraphrases that differ in inflections share their stems: with a meaning close enough
    /// (0.81 and 0.78 by MiniLM's texts, as a probe measured them), they are one learning;
    /// unstemmed, their words were 0.33 alike, under SOME_WORDS.
    #[test]
    fn inflections_do_not_tell_learnings_apart() {
        let a = w("Regenerate the sqlx offline query cache after changing SQL queries");
        let b = w("Refresh the sqlx offline data whenever a SQL query changes");
        let c = w("After editing SQL queries run cargo sqlx prepare to refresh the offline cache");
        assert!(same(&a, &b, Some(0.808)), "{a:?} {b:?}");
        assert!(same(&a, &c, Some(0.808)), "{a:?} {c:?}");
        assert!(!same(
            &w("Run cargo clippy before every commit"),
            &w("Run cargo nextest before every commit"),
            Some(0.70)
        ));
    }

    #[test]
    fn same_words_or_same_meaning_but_not_a_shared_word() {
        assert!(same(
            &w("Run pytest -q tests/ before finishing the task"),
            &w("Run pytest -q tests/ before finishing"),
            None
        ));
        assert!(!same(
            &w("Always use uv"),
            &w("Use uv to install dependencies in CI"),
            None
        ));
        assert!(!same(
            &w("Run make test before pushing"),
            &w("Run make lint before pushing"),
            None
        ));
        assert!(same(&w("a b c"), &w("x y z"), Some(0.9)));
        assert!(!same(&w("a b c"), &w("x y z"), Some(0.8)));
    }

    /// Learnings that name different files, identifiers or numbers are kept apart however
    /// alike the rest (a probe saw "… users.graphql" swallow "… orders.graphql" at 0.96, and
    /// twenty "… widgetN" learnings collapse into one); naming more of the same is a rewording.
    #[test]
    fn learnings_naming_different_things_are_not_the_same() {
        for (a, b) in [
            (
                "Regenerate the GraphQL types after editing users.graphql",
                "Regenerate the GraphQL types after editing orders.graphql",
            ),
            (
                "Add every new widget1 to the registry",
                "Add every new widget2 to the registry",
            ),
            (
                "Retry jobs on PAYMENTS_QUEUE twice",
                "Retry jobs on EMAILS_QUEUE twice",
            ),
            ("Pin Node 18 in CI", "Pin Node 20 in CI"),
            (
                "Build widgets through frobnicateWidgetFactory",
                "Build widgets through makeWidgetFactory",
            ),
        ] {
            assert!(!same(&w(a), &w(b), Some(0.99)), "{a} / {b}");
        }
        assert!(same(
            &w("Run `cargo sqlx prepare` after changing queries in src/db.rs"),
            &w("After changing queries in src/db.rs, run cargo sqlx prepare"),
            Some(0.95)
        ));
        assert!(same(
            &w("Regenerate the GraphQL types after editing a schema"),
            &w("Regenerate the GraphQL types after editing users.graphql"),
            Some(0.9)
        ));
        assert_eq!(
            items::names("See e.g. `src/db.rs`, Foo::bar, v2 and HTTP."),
            ["foo::bar", "http", "src/db.rs", "v2"]
                .iter()
                .map(|s| s.to_string())
                .collect()
        );
    }
}
