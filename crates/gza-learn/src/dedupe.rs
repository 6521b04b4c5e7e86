//! Telling a new learning from one already known: a learning that says the same as an existing
//! one, in the same or other words, re-confirms it instead of being added twice.

use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;

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
/// specific wording of the same) is not told apart here. Allocates nothing: settling asks it of
/// up to [`POSTINGS_WALKED`] learnings per draft.
fn name_different_things(a: &BTreeSet<String>, b: &BTreeSet<String>) -> bool {
    let a_in_b = names_in(a).all(|n| b.contains(n));
    let b_in_a = names_in(b).all(|n| a.contains(n));
    !a_in_b && !b_in_a
}

/// The `name:`-marked words of a set of stemmed words (contiguous in its order).
fn names_in(w: &BTreeSet<String>) -> impl Iterator<Item = &String> {
    w.range::<str, _>((Bound::Included(items::NAME_MARK), Bound::Unbounded))
        .take_while(|x| x.starts_with(items::NAME_MARK))
}

/// Known learnings compared by meaning with each extracted item: the best the ranker finds
/// for the item's text (by meaning and words, through the ranking index).
const CANDIDATES: usize = 8;
/// Known learnings a draft or an item is compared with by its words: those whose stemmed words
/// are most like its own (word similarity, best first), none that names other things.
pub const WORD_CANDIDATES: usize = 8;
/// Entries of the inverted index of stemmed words walked to find them, per draft or item, its
/// rarest words first: a word most learnings hold counts only for those already found.
pub const POSTINGS_WALKED: usize = 2048;

/// For each extracted item: the learning it re-confirms (active or archived: a learning a person
/// archived is confirmed, never brought back), or a new learning.
///
/// With a model, meaning is decided on the texts alone: the item's, embedded now, and each
/// candidate's (the best [`CANDIDATES`] the ranker finds for the item, and the
/// [`WORD_CANDIDATES`] sharing most of its words, [`Known::word_candidates`]). A candidate's
/// stored vector stands for its text only when it has no hints in words (then it is the text's
/// embedding, [`Known::stored_text_vectors`]); one with hints, or taught a moment ago and not
/// yet embedded by the background job, has its text embedded now: comparing stored vectors
/// with hints kept "Run cargo nextest before every commit" and "... before each commit" (0.988
/// by their texts) both. Linear in `known` once (their words, stemmed), then bounded per item.
pub fn decide(
    extracted: &[Item],
    origin: Origin,
    known: &[Learning],
    ranker: Option<&Ranker>,
    store: &Store,
) -> Vec<Taught> {
    Known::new(known.to_vec()).decide(extracted, origin, ranker, store)
}

/// Most learnings [`settle`] compares a draft with, found by the ranking index as those sharing
/// the most terms with it.
const INDEX_CANDIDATES: usize = 16;
/// Learnings [`Known::around`] takes in per text taught, found by the ranking index as those
/// sharing the largest part of their terms with it.
const AROUND_CANDIDATES: usize = 32;
/// Most learnings stored since the ranking index was built that [`settle`] reads in; more,
/// and it leaves the drafts to be settled where they are first embedded.
const UNINDEXED_MOST: usize = 256;

/// Fold each of the drafts `ids` that says what a known learning says into that learning
/// ([`Store::merge_draft`]: its task or session confirms the learning, and the draft goes), by
/// the one test extraction uses ([`decide`]), here by the same stemmed words. Drafts that
/// arrive by other ways than an extraction (a session's hook, an agent's LEARNINGS.md, the MCP
/// `add` tool, the spool) come through here where they are stored, and by meaning where they
/// are first embedded ([`crate::rank`]'s embedding of what lacks a vector, through a [`Known`]
/// it keeps). A person's own drafts are left as written. Between two drafts that say the same,
/// the older is kept. Returns the (draft, learning) pairs folded.
///
/// Within a hook's budget wherever it is called (a Stop hook, the spool a hook takes in, the
/// MCP tool, a task's end): no embedding, and no read or stemming of every learning (at
/// 10,000 learnings that alone was 0.6 s in a debug build, against the Stop hook's 50 ms, and
/// it grew every task's cost with the history). The drafts are compared with the
/// [`INDEX_CANDIDATES`] learnings the project's ranking index (this database's) finds sharing
/// the most terms with each, and with those stored since the index was built (at most
/// [`UNINDEXED_MOST`]: past that nothing is settled here, and the drafts are settled where
/// they are first embedded).
pub fn settle(
    project: &gza_core::project::Project,
    store: &Store,
    ids: &[i64],
) -> Result<Vec<(i64, i64)>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let drafts = store.learnings_by_ids(ids)?;
    let nonce = store.hook_version()?.1;
    let index = super::index::Index::load(&super::index::path(&project.state_dir()))
        .filter(|i| i.is_of(&nonce));
    let mut chosen: BTreeSet<i64> = BTreeSet::new();
    let mut indexed_up_to = 0;
    if let Some(index) = &index {
        let mut best: Vec<(usize, i64)> = Vec::new();
        for draft in drafts.values() {
            let terms: std::collections::HashSet<u64> = rank::terms(&draft.text)
                .iter()
                .map(|t| super::index::term_hash(t))
                .collect();
            best.clear();
            for e in index.entries(0) {
                indexed_up_to = indexed_up_to.max(e.id);
                if drafts.contains_key(&e.id) {
                    continue;
                }
                let shared = super::index::term_hashes(e.terms)
                    .filter(|h| terms.contains(h))
                    .count();
                if shared > 0 {
                    best.push((shared, e.id));
                }
            }
            best.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            chosen.extend(best.iter().take(INDEX_CANDIDATES).map(|&(_, id)| id));
        }
    }
    let recent = store.learnings_after_at_most(indexed_up_to, UNINDEXED_MOST + ids.len() + 1)?;
    if recent.len() > UNINDEXED_MOST + ids.len() {
        return Ok(Vec::new());
    }
    let chosen: Vec<i64> = chosen.into_iter().collect();
    let mut learnings: Vec<Learning> = store.learnings_by_ids(&chosen)?.into_values().collect();
    learnings.extend(recent);
    learnings.extend(drafts.into_values());
    learnings.retain(|l| l.status != Status::Archived);
    learnings.sort_by_key(|l| l.id);
    learnings.dedup_by_key(|l| l.id);
    Known::new(learnings).settle(store, None, ids)
}

/// The known learnings prepared for comparison, so that telling what a draft or an extracted
/// item says from what is known costs the same at ten learnings as at ten thousand: each
/// one's stemmed words (computed once), an inverted index from each word to the learnings that
/// hold it (oldest first), and the texts' vectors embedded so far (each embedded once while it
/// lives: the background job keeps one for all its batches).
///
/// The bound, per draft or item: at most [`POSTINGS_WALKED`] entries of the index walked, its
/// rarest words first; of the learnings found, the [`WORD_CANDIDATES`] with the most words in
/// common (by word similarity) compared, plus the ranker's best [`CANDIDATES`] in an
/// extraction; at most 1 + [`WORD_CANDIDATES`] texts embedded (fewer once cached). No draft is
/// compared with every learning, and no pair of drafts more than once; building it is linear
/// in the learnings, once. A learning with the same words whose every word is held by more
/// than [`POSTINGS_WALKED`] learnings may go unfound by words (by meaning, an extraction's
/// ranker still finds it).
pub struct Known {
    learnings: Vec<Learning>,
    words: Vec<BTreeSet<String>>,
    postings: HashMap<String, Vec<u32>>,
    by_id: HashMap<i64, usize>,
    /// Folded since it was built.
    gone: Vec<bool>,
    /// The highest id taken in: what was stored since is read by [`Known::catch_up`].
    newest: i64,
    text_vectors: HashMap<i64, Vec<f32>>,
}

impl Known {
    /// Prepare `learnings` (stemming each text once).
    pub fn new(learnings: Vec<Learning>) -> Known {
        let mut known = Known {
            learnings: Vec::with_capacity(learnings.len()),
            words: Vec::with_capacity(learnings.len()),
            postings: HashMap::new(),
            by_id: HashMap::with_capacity(learnings.len()),
            gone: Vec::with_capacity(learnings.len()),
            newest: 0,
            text_vectors: HashMap::new(),
        };
        for l in learnings {
            known.push(l);
        }
        known
    }

    /// Every learning stored (archived ones too), prepared.
    pub fn load(store: &Store) -> Result<Known> {
        // Only each one's text, status and origin are compared: the counts (support,
        // injected), a look-up in other tables per learning, are not read.
        Ok(Known::new(store.learnings_uncounted(true)?))
    }

    /// The known learnings a regeneration compares the `texts` it was taught with: for each
    /// text, the [`AROUND_CANDIDATES`] learnings the project's ranking index (this database's)
    /// finds sharing the largest part of their terms with it, those stored since the index was
    /// built, and every archived learning (ranking holds none of them); the ranker's best for
    /// each item are taken in as [`Known::decide`] asks for them. Reading and stemming every
    /// learning, once per regeneration, was a third of a `gza work` task's worker at 10,000
    /// learnings and grew with the history. Without a usable index, or with more than
    /// [`UNINDEXED_MOST`] learnings stored since it was built, every learning is read
    /// ([`Known::load`]), as before.
    pub fn around(
        project: &gza_core::project::Project,
        store: &Store,
        texts: &[&str],
    ) -> Result<Known> {
        let nonce = store.hook_version()?.1;
        let Some(index) = super::index::Index::load(&super::index::path(&project.state_dir()))
            .filter(|i| i.is_of(&nonce))
        else {
            return Known::load(store);
        };
        let wanted: Vec<std::collections::HashSet<u64>> = texts
            .iter()
            .map(|t| {
                rank::terms(t)
                    .iter()
                    .map(|t| super::index::term_hash(t))
                    .collect()
            })
            .collect();
        let mut best: Vec<Vec<(f64, i64)>> = vec![Vec::new(); texts.len()];
        let mut indexed_up_to = 0;
        let mut own: Vec<u64> = Vec::new();
        for e in index.entries(0) {
            indexed_up_to = indexed_up_to.max(e.id);
            own.clear();
            own.extend(super::index::term_hashes(e.terms));
            own.sort_unstable();
            own.dedup();
            for (terms, best) in wanted.iter().zip(best.iter_mut()) {
                let shared = own.iter().filter(|h| terms.contains(h)).count();
                if shared > 0 {
                    let union = own.len() + terms.len() - shared;
                    best.push((shared as f64 / union as f64, e.id));
                }
            }
        }
        let mut chosen: BTreeSet<i64> = BTreeSet::new();
        for mut b in best {
            b.sort_unstable_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
            chosen.extend(b.iter().take(AROUND_CANDIDATES).map(|&(_, id)| id));
        }
        let recent = store.learnings_after_at_most(indexed_up_to, UNINDEXED_MOST + 1)?;
        if recent.len() > UNINDEXED_MOST {
            return Known::load(store);
        }
        let chosen: Vec<i64> = chosen.into_iter().collect();
        let mut learnings: Vec<Learning> = store.learnings_by_ids(&chosen)?.into_values().collect();
        learnings.extend(recent);
        learnings.extend(store.archived_learnings()?);
        learnings.sort_by_key(|l| l.id);
        learnings.dedup_by_key(|l| l.id);
        Ok(Known::new(learnings))
    }

    /// Take in the learnings `ids` it does not hold yet (read by key).
    fn take_in_ids(&mut self, store: &Store, ids: &[i64]) {
        let missing: Vec<i64> = ids
            .iter()
            .copied()
            .filter(|id| !self.by_id.contains_key(id))
            .collect();
        if missing.is_empty() {
            return;
        }
        let mut read: Vec<Learning> = store
            .learnings_by_ids(&missing)
            .map(|m| m.into_values().collect())
            .unwrap_or_default();
        read.sort_by_key(|l| l.id);
        for l in read {
            self.push(l);
        }
    }

    /// Take in one learning stored since it was built (a no-op for one it holds), as
    /// [`Known::new`] would have: what a regeneration's extraction just taught is known to the
    /// next one's.
    pub fn take_in(&mut self, l: Learning) {
        self.push(l);
    }

    fn push(&mut self, l: Learning) {
        if self.by_id.contains_key(&l.id) {
            return;
        }
        let i = self.learnings.len();
        let words = items::stemmed_words(&l.text);
        for w in &words {
            self.postings.entry(w.clone()).or_default().push(i as u32);
        }
        self.newest = self.newest.max(l.id);
        self.by_id.insert(l.id, i);
        self.words.push(words);
        self.gone.push(false);
        self.learnings.push(l);
    }

    /// Take in the learnings stored since it was built or last caught up (by this process or
    /// another): one read of those rows alone.
    fn catch_up(&mut self, store: &Store) -> Result<()> {
        for l in store.learnings_after(self.newest)? {
            self.push(l);
        }
        Ok(())
    }

    /// The vector of learning `id`'s text, when it was embedded here (to compare it) and
    /// `text` is still its text: the background job stores a draft's from it rather than
    /// embedding the text twice.
    pub fn text_vector(&self, id: i64, text: &str) -> Option<&[f32]> {
        let &i = self.by_id.get(&id)?;
        (self.learnings[i].text == text)
            .then(|| self.text_vectors.get(&id).map(Vec::as_slice))
            .flatten()
    }

    /// The known learnings (by index) that share most of `words`, best first, with their word
    /// similarity: at most [`WORD_CANDIDATES`], none folded, none that `skip` refuses and none
    /// that names other things than `words` do ([`name_different_things`]: never the same).
    /// The index's lists are walked rarest word first, [`POSTINGS_WALKED`] entries in all; the
    /// words of lists not walked to their end count by lookup for the learnings found, so the
    /// similarity of each is exact. Also returns the entries walked.
    fn word_candidates(
        &self,
        words: &BTreeSet<String>,
        skip: impl Fn(&Learning) -> bool,
    ) -> (Vec<(usize, f64)>, usize) {
        let mut lists: Vec<(&String, &[u32])> = words
            .iter()
            .filter_map(|w| self.postings.get(w).map(|p| (w, p.as_slice())))
            .collect();
        lists.sort_by_key(|(_, p)| p.len());
        let mut shared: HashMap<u32, usize> = HashMap::new();
        let mut unwalked: Vec<&String> = Vec::new();
        let mut walked = 0;
        for (w, list) in lists {
            let room = POSTINGS_WALKED - walked;
            if list.len() <= room {
                for &i in list {
                    *shared.entry(i).or_default() += 1;
                }
                walked += list.len();
            } else {
                for &i in &list[..room] {
                    shared.entry(i).or_default();
                }
                walked += room;
                unwalked.push(w);
            }
        }
        let mut found: Vec<(usize, f64)> = shared
            .into_iter()
            .map(|(i, n)| (i as usize, n))
            .filter(|&(i, _)| !self.gone[i] && !skip(&self.learnings[i]))
            .map(|(i, n)| {
                let n = n + unwalked
                    .iter()
                    .filter(|w| self.words[i].contains(w.as_str()))
                    .count();
                let union = words.len() + self.words[i].len() - n;
                (
                    i,
                    if union == 0 {
                        0.0
                    } else {
                        n as f64 / union as f64
                    },
                )
            })
            .collect();
        found.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let best = found
            .into_iter()
            .filter(|&(i, _)| !name_different_things(words, &self.words[i]))
            .take(WORD_CANDIDATES)
            .collect();
        (best, walked)
    }

    /// The known learning that `text` (its stemmed `words`, its text's `vector`) says the
    /// same as, among its word candidates and `ranked` (ids the ranker found), active ones
    /// first, then the closest; none that `skip` refuses.
    fn find(
        &mut self,
        store: &Store,
        words: &BTreeSet<String>,
        vector: Option<&[f32]>,
        ranker: Option<&Ranker>,
        ranked: &[i64],
        skip: impl Fn(&Learning) -> bool,
    ) -> Option<i64> {
        let (mut candidates, _) = self.word_candidates(words, &skip);
        for id in ranked {
            if let Some(&i) = self.by_id.get(id)
                && !self.gone[i]
                && !skip(&self.learnings[i])
                && !candidates.iter().any(|&(c, _)| c == i)
            {
                candidates.push((i, items::word_similarity(words, &self.words[i])));
            }
        }
        let mut meanings: HashMap<usize, f64> = HashMap::new();
        if let (Some(r), Some(v)) = (ranker, vector) {
            self.stored_text_vectors(store, r, &candidates);
            for &(i, _) in &candidates {
                if name_different_things(words, &self.words[i]) {
                    continue;
                }
                let l = &self.learnings[i];
                let kv = self
                    .text_vectors
                    .entry(l.id)
                    .or_insert_with(|| r.embed(&l.text).unwrap_or_default());
                meanings.insert(i, rank::similarity(v, kv));
            }
        }
        candidates
            .iter()
            .filter(|&&(i, _)| same(words, &self.words[i], meanings.get(&i).copied()))
            .max_by(|&&(a, wa), &&(b, wb)| {
                let key = |i: usize, w: f64| {
                    (
                        self.learnings[i].status == Status::Active,
                        meanings.get(&i).copied().unwrap_or(0.0) + w,
                    )
                };
                let (ka, kb) = (key(a, wa), key(b, wb));
                ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
            })
            .map(|&(i, _)| self.learnings[i].id)
    }

    /// Take the stored vectors of those `candidates` whose stored vector is their text's (no
    /// hints in words: [`rank::embed_learning`] adds nothing to the text's embedding) as their
    /// text vectors, so that comparing an item with them embeds nothing. A stored vector is
    /// of the text as it is now (an edit of the text or hints drops it, and one made from older
    /// words is never stored: `Store::store_embeddings_if_current`). Embedding each candidate's
    /// text anew was most of a regeneration's cost (16 texts per item extracted, 1.2 G of a
    /// worker's 2.8 G instructions at 10,000 learnings). A failed read leaves them to be
    /// embedded, as before.
    fn stored_text_vectors(&mut self, store: &Store, ranker: &Ranker, candidates: &[(usize, f64)]) {
        let Some(model) = ranker.model() else {
            return;
        };
        let wanted: Vec<i64> = candidates
            .iter()
            .map(|&(i, _)| &self.learnings[i])
            .filter(|l| !self.text_vectors.contains_key(&l.id) && !rank::hinted(&l.applies_when))
            .map(|l| l.id)
            .collect();
        if wanted.is_empty() {
            return;
        }
        for (id, v) in store.embeddings_of(model, &wanted).unwrap_or_default() {
            if !v.is_empty() {
                self.text_vectors.insert(id, v);
            }
        }
    }

    /// [`decide`] against these learnings.
    pub fn decide(
        &mut self,
        extracted: &[Item],
        origin: Origin,
        ranker: Option<&Ranker>,
        store: &Store,
    ) -> Vec<Taught> {
        let ranker = ranker.filter(|r| r.model().is_some());
        let mut out: Vec<Taught> = Vec::new();
        let mut batch: Vec<(BTreeSet<String>, Option<Vec<f32>>)> = Vec::new();
        for item in extracted {
            let words = items::stemmed_words(&item.content);
            let vector = ranker.and_then(|r| r.embed(&item.content));
            let ranked: Vec<i64> = match (ranker, &vector) {
                (Some(r), Some(_)) => r
                    .rank_without_embedding(store, &item.content, true)
                    .map(|ranking| ranking.hits)
                    .unwrap_or_default()
                    .into_iter()
                    .take(CANDIDATES)
                    .map(|h| h.id)
                    .collect(),
                _ => Vec::new(),
            };
            self.take_in_ids(store, &ranked);
            if let Some(id) =
                self.find(store, &words, vector.as_deref(), ranker, &ranked, |_| false)
            {
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

    /// [`settle`] with these learnings (those stored since taken in first): each draft
    /// compared as [`Known`] bounds it, by meaning too when `ranker` has a model (its text
    /// embedded once, kept for [`Known::text_vector`]).
    pub fn settle(
        &mut self,
        store: &Store,
        ranker: Option<&Ranker>,
        ids: &[i64],
    ) -> Result<Vec<(i64, i64)>> {
        let pending: BTreeSet<i64> = ids.iter().copied().collect();
        if pending.is_empty() {
            return Ok(Vec::new());
        }
        if pending.iter().any(|id| !self.by_id.contains_key(id)) {
            self.catch_up(store)?;
        }
        let ranker = ranker.filter(|r| r.model().is_some());
        let mut merged = Vec::new();
        for id in pending {
            let Some(&i) = self.by_id.get(&id) else {
                continue;
            };
            let draft = &self.learnings[i];
            if self.gone[i] || draft.status != Status::Draft || draft.origin == Origin::User {
                continue;
            }
            let words = self.words[i].clone();
            let vector = match ranker {
                Some(r) => {
                    let text = &self.learnings[i].text;
                    let v = self
                        .text_vectors
                        .entry(id)
                        .or_insert_with(|| r.embed(text).unwrap_or_default());
                    Some(v.clone())
                }
                None => None,
            };
            // Never into a newer draft: that one is folded into this when its turn comes.
            let skip = |l: &Learning| l.id == id || (l.status == Status::Draft && l.id > id);
            if let Some(into) = self.find(store, &words, vector.as_deref(), ranker, &[], skip)
                && store.merge_draft(id, into)?
            {
                self.gone[i] = true;
                self.text_vectors.remove(&id);
                merged.push((id, into));
            }
        }
        Ok(merged)
    }
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

    fn learning(id: i64, text: &str, status: Status) -> Learning {
        let mut n = NewLearning::new("General", text, Origin::Agent);
        n.status = status;
        preview(&n, id)
    }

    /// Many learnings sharing the same common words ("draft", "rule", "module", as a busy
    /// day of Stop hooks leaves them): a draft is compared with a bounded few, whatever their
    /// number; comparing each with every one made the background job quadratic (1,500 drafts
    /// did not finish in five minutes). The one that says the same is still found, by its rare
    /// words, and learnings naming other things are not candidates at all.
    #[test]
    fn a_draft_is_compared_with_a_bounded_few_of_many_learnings_sharing_its_words() {
        let n = 6000;
        let known = Known::new(
            (1..=n)
                .map(|i| {
                    let text = format!("Draft rule number {i} about module m{i} and its fixtures");
                    learning(i, &text, Status::Draft)
                })
                .collect(),
        );
        let words = w("Draft rule number 5000 about module m5000 and fixtures");
        let (found, walked) = known.word_candidates(&words, |_| false);
        assert!(
            walked <= POSTINGS_WALKED && walked < n as usize,
            "{walked} index entries walked: not every learning's"
        );
        assert!(found.len() <= WORD_CANDIDATES, "{} compared", found.len());
        assert_eq!(
            found
                .iter()
                .map(|&(i, _)| known.learnings[i].id)
                .collect::<Vec<_>>(),
            [5000],
            "the one naming m5000 and 5000 alone: the rest name other things"
        );
        assert_eq!(found[0].1, 1.0, "its similarity is exact");
        // Without names, all share the words: the best by word similarity, a bounded few.
        let (found, walked) =
            known.word_candidates(&w("Draft rule about module fixtures"), |_| false);
        assert!(walked <= POSTINGS_WALKED && walked < n as usize, "{walked}");
        assert_eq!(found.len(), WORD_CANDIDATES);
        // Words past the walk still count, by lookup, for the learnings found.
        let exact = items::word_similarity(&w("Draft rule about module fixtures"), &known.words[0]);
        assert!(exact > 0.0);
        assert!(found.iter().all(|&(_, sim)| sim == exact), "{found:?}");
    }

    fn temp_store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::create(&dir.path().join("gza.db")).unwrap();
        (dir, store)
    }

    /// Settling by words: a draft in the same stemmed words as a known learning is folded
    /// into it (the session confirms it); between two drafts that say the same the older is
    /// kept, whichever is asked about first; one naming another thing stays; a person's own
    /// draft stays as written. A learning stored after the [`Known`] was built is compared too.
    #[test]
    fn settling_folds_a_draft_into_what_it_repeats_and_keeps_the_older_of_two_drafts() {
        let (_dir, store) = temp_store();
        let known = store
            .add_learning(&NewLearning::new(
                "General",
                "Run pytest -q tests/ before finishing the task",
                Origin::User,
            ))
            .unwrap();
        let mut prepared = Known::load(&store).unwrap();
        let draft = |text: &str| {
            let mut l = NewLearning::new("General", text, Origin::Agent);
            l.status = Status::Draft;
            l
        };
        let ids = store
            .add_session_learnings(
                "s1",
                &[
                    draft("Run pytest -q tests/ before finishing"),
                    draft("Regenerate the client after editing users.graphql"),
                    draft("Regenerate the client after editing orders.graphql"),
                    draft("Always regenerate the client after editing orders.graphql"),
                ],
            )
            .unwrap();
        let merged = prepared
            .settle(&store, None, &[ids[2], ids[0], ids[1]])
            .unwrap();
        assert_eq!(merged, [(ids[0], known)], "never the older into the newer");
        let merged = prepared.settle(&store, None, &[ids[3]]).unwrap();
        assert_eq!(
            merged,
            [(ids[3], ids[2])],
            "the newer folded into the older"
        );
        let left: Vec<i64> = store
            .learnings(true)
            .unwrap()
            .iter()
            .map(|l| l.id)
            .collect();
        assert_eq!(left, [known, ids[1], ids[2]]);
        let mut own = NewLearning::new(
            "General",
            "Run pytest -q tests/ before finishing up",
            Origin::User,
        );
        own.status = Status::Draft;
        let own = store.add_learning(&own).unwrap();
        assert!(
            Known::load(&store)
                .unwrap()
                .settle(&store, None, &[own])
                .unwrap()
                .is_empty(),
            "a person's draft stays"
        );
    }

    /// A candidate without hints in words is compared by its stored vector (its text's, as
    /// `rank::embed_learning` makes it), not by embedding its text again. Shown by a stored
    /// vector that is not its text's: the vector of "Run cargo nextest before every commit"
    /// stored for a learning about tagging releases makes "… before each commit" confirm it,
    /// which embedding its text would never do. Needs the model (`GZA_MODEL_DIR`, which
    /// `scripts/test` sets); fails without it rather than skipping.
    #[test]
    fn a_hintless_candidate_is_compared_by_its_stored_vector_without_embedding_its_text() {
        let dir = gza_embed::resolve_model_dir(None).expect("GZA_MODEL_DIR or HOME");
        let embedder = gza_embed::Embedder::load(&dir)
            .unwrap_or_else(|e| panic!("this test needs the model in {}: {e}", dir.display()));
        let model = embedder.fingerprint().to_string();
        let planted = embedder.embed("Run cargo nextest before every commit");
        let ranker = Ranker::with_embedder(embedder, std::time::Duration::from_secs(60));
        let (_dir, store) = temp_store();
        let id = store
            .add_learning(&NewLearning::new(
                "General",
                "Tag the release before deploying the staging cluster",
                Origin::User,
            ))
            .unwrap();
        let rows = store.rank_rows_of(&[id]).unwrap();
        store
            .store_embeddings_if_current(&model, &[&rows[0]], &[(id, planted)])
            .unwrap();
        let item = Item {
            section: "General".into(),
            content: "Run cargo nextest before each commit".into(),
            keywords: Vec::new(),
            applies_when: Vec::new(),
            priority: None,
            confidence: None,
            risk: None,
        };
        let taught = Known::load(&store).unwrap().decide(
            std::slice::from_ref(&item),
            Origin::Agent,
            Some(&ranker),
            &store,
        );
        assert!(
            matches!(taught.as_slice(), [Taught::Confirms(x)] if *x == id),
            "compared by its stored vector: {taught:?}"
        );
    }

    /// A regeneration's ranking of candidates embeds no learning that lacks a vector (the
    /// background job does, and embedding them here too did the same work twice): they are
    /// ranked by words and stay unembedded, even with budget to spare; a search's ranking
    /// embeds them.
    #[test]
    fn ranking_candidates_for_a_regeneration_embeds_nothing() {
        let dir = gza_embed::resolve_model_dir(None).expect("GZA_MODEL_DIR or HOME");
        let embedder = gza_embed::Embedder::load(&dir)
            .unwrap_or_else(|e| panic!("this test needs the model in {}: {e}", dir.display()));
        let model = embedder.fingerprint().to_string();
        let ranker = Ranker::with_embedder(embedder, std::time::Duration::from_secs(60));
        let (_dir, store) = temp_store();
        for text in [
            "Run cargo nextest before every commit",
            "Tag the release before deploying the staging cluster",
        ] {
            store
                .add_learning(&NewLearning::new("General", text, Origin::User))
                .unwrap();
        }
        let unembedded =
            |store: &Store| store.rows_without_vectors(true, &model, 10).unwrap().len();
        let ranking = ranker
            .rank_without_embedding(&store, "run nextest before committing", true)
            .unwrap();
        assert_eq!(ranking.hits.len(), 2, "both ranked, by words");
        assert_eq!(unembedded(&store), 2, "nothing embedded");
        ranker
            .rank_all(&store, "run nextest before committing", true)
            .unwrap();
        assert_eq!(unembedded(&store), 0, "a search embeds within its budget");
    }

    /// A regeneration prepares the learnings near what it was taught, not every one: among
    /// 1,200 learnings, those the ranking index finds sharing most terms with each text, one
    /// stored since the index was built, and the archived ones; the learning an item repeats
    /// is among them (it is confirmed), and so is an archived one (confirmed, not taught again).
    #[test]
    fn a_regeneration_prepares_the_learnings_near_what_it_was_taught() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("gza.yaml"), "").unwrap();
        let project = gza_core::project::Project::discover(dir.path()).unwrap();
        std::fs::create_dir_all(project.state_dir()).unwrap();
        let store = Store::create(&project.db_path()).unwrap();
        let add = |text: &str| {
            store
                .add_learning(&NewLearning::new("General", text, Origin::User))
                .unwrap()
        };
        for i in 0..1200 {
            add(&format!(
                "Keep the fixtures of module m{i} beside its tests t{i}"
            ));
        }
        let nextest = add("Run cargo nextest before every commit");
        let archived = add("Never push straight to the main branch");
        store
            .set_learning_status(archived, Status::Archived, None)
            .unwrap();
        rank::rebuild_index(&project, &store, None).unwrap();
        let recent = add("Regenerate the client after editing users.graphql");
        let taught = [
            "Run cargo nextest before every commit.",
            "Never push straight to the main branch",
            "Regenerate the client after editing users.graphql",
        ];
        let mut known = Known::around(&project, &store, &taught).unwrap();
        assert!(
            known.learnings.len() <= 3 * AROUND_CANDIDATES + 2,
            "{} of 1,203 prepared",
            known.learnings.len()
        );
        for id in [nextest, archived, recent] {
            assert!(known.by_id.contains_key(&id), "{id} prepared");
        }
        let item = |content: &str| Item {
            section: "General".into(),
            content: content.into(),
            keywords: Vec::new(),
            applies_when: Vec::new(),
            priority: None,
            confidence: None,
            risk: None,
        };
        let items: Vec<Item> = taught.iter().map(|t| item(t)).collect();
        let decided = known.decide(&items, Origin::Agent, None, &store);
        assert!(
            matches!(decided.as_slice(), [Taught::Confirms(a), Taught::Confirms(b), Taught::Confirms(c)]
                if [*a, *b, *c] == [nextest, archived, recent]),
            "{decided:?}"
        );
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
