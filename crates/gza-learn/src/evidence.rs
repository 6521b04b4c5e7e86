//! Evidence in the code (seed 002): the search terms a learning names, and the files of the
//! project tree that contain them.
//!
//! Terms are what a learning says that the code could show: backticked code, quoted strings,
//! identifiers, paths, flags and words that are not common English. "Use good names" has none,
//! so it is never promoted. A file is evidence when it contains enough of a learning's terms
//! (one of one or two, two of three or four, three of five or more); a path term also matches a
//! file's own path. The tree is walked with ripgrep's `ignore` (honouring .gitignore), filtered
//! with a `globset` of excluded names, and searched with `grep-searcher`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

use aho_corasick::AhoCorasick;
use globset::{Glob, GlobSet, GlobSetBuilder};
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder, Sink, SinkMatch};
use regex::Regex;

/// Files over this size are not read (generated or vendored blobs).
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// At most this many terms per learning: the most specific ones first.
const MAX_TERMS: usize = 8;

/// How many evidence files are kept with a learning.
pub const KEPT_FILES: usize = 10;

/// Whole words of common English (the all-MiniLM-L6-v2 WordPiece vocabulary's words of three
/// or more letters, Apache-2.0): a plain word in this list is never a search term.
static COMMON: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| include_str!("common_words.txt").lines().collect());

static QUOTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"`([^`]{2,80})`|"([^"]{2,60})"|'([^'\s][^']{1,58}[^'\s])'"#).expect("valid")
});

static FILE_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[\w-]{2,}\.[A-Za-z][A-Za-z0-9]{0,4}$").expect("valid"));

/// One thing to look for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Term {
    pub text: String,
    /// Code is matched exactly; plain words in any case.
    pub exact: bool,
    /// A path: also matches a file whose own path contains it.
    pub path: bool,
}

/// Whether a plain word is common English (or an inflection of a common word).
pub fn is_common(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    if w.len() < 4 || COMMON.contains(w.as_str()) {
        return true;
    }
    ["s", "es", "ed", "ing", "ly", "er", "ers", "ies"]
        .iter()
        .filter_map(|suffix| w.strip_suffix(suffix))
        .any(|stem| {
            stem.len() >= 3
                && (COMMON.contains(stem)
                    || COMMON.contains(format!("{stem}e").as_str())
                    || COMMON.contains(format!("{stem}y").as_str()))
        })
}

/// The term one token stands for, if any.
fn token_term(raw: &str, in_code: bool) -> Option<Term> {
    let t = raw.trim_matches(|c: char| {
        matches!(
            c,
            ',' | '.' | ';' | ':' | '!' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '"' | '\''
        )
    });
    let t = t.strip_suffix("()").unwrap_or(t);
    if t.len() < 2 || t.len() > 80 || !t.is_ascii() || t.chars().all(|c| !c.is_alphanumeric()) {
        return None;
    }
    let exact = |path: bool| {
        Some(Term {
            text: t.to_string(),
            exact: true,
            path,
        })
    };
    let has = |f: fn(char) -> bool| t.chars().any(f);
    // A path (src/api/, **/plugin.json) or a file name with an extension (Cargo.toml).
    if t.contains('/') || FILE_NAME.is_match(t) {
        let clean = t.trim_start_matches("**/").trim_start_matches("./");
        let clean = clean.trim_end_matches('/');
        if clean.len() >= 3 && !clean.contains('*') {
            return Some(Term {
                text: clean.to_string(),
                exact: true,
                path: true,
            });
        }
        return None;
    }
    // A flag, an identifier (snake_case, camelCase, Type::path, SCREAMING_CASE).
    if t.starts_with("--") && t.len() > 3 {
        return exact(false);
    }
    let camel = t
        .as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    if (t.contains('_') && has(|c| c.is_ascii_alphabetic()))
        || t.contains("::")
        || camel
        || (has(|c| c.is_ascii_digit()) && has(|c| c.is_ascii_alphabetic()) && t.len() >= 3)
    {
        return exact(false);
    }
    if !t.chars().all(|c| c.is_ascii_alphabetic() || c == '-') {
        return None;
    }
    // A plain word: only when it is not common English.
    if t.split('-').all(is_common) {
        return None;
    }
    Some(Term {
        text: t.to_string(),
        exact: in_code,
        path: false,
    })
}

/// The search terms a learning names (its text and keywords), most specific first.
pub fn derive_terms(text: &str, keywords: &[String]) -> Vec<Term> {
    let mut terms: Vec<Term> = Vec::new();
    let push = |t: Term, terms: &mut Vec<Term>| {
        if !terms.iter().any(|o| o.text.eq_ignore_ascii_case(&t.text)) {
            terms.push(t);
        }
    };
    for c in QUOTED.captures_iter(text) {
        let inner = c
            .get(1)
            .or_else(|| c.get(2))
            .or_else(|| c.get(3))
            .map_or("", |m| m.as_str())
            .trim();
        let code = c.get(1).is_some();
        if !inner.contains(char::is_whitespace) {
            if let Some(t) = token_term(inner, code) {
                push(t, &mut terms);
            } else if code && inner.len() >= 3 && inner.is_ascii() && !is_common(inner) {
                push(
                    Term {
                        text: inner.to_string(),
                        exact: true,
                        path: false,
                    },
                    &mut terms,
                );
            }
        } else {
            for tok in inner.split_whitespace() {
                if let Some(t) = token_term(tok, code) {
                    push(t, &mut terms);
                }
            }
        }
    }
    let rest = QUOTED.replace_all(text, " ");
    for tok in rest
        .split_whitespace()
        .chain(keywords.iter().flat_map(|k| k.split_whitespace()))
    {
        if let Some(t) = token_term(tok, false) {
            push(t, &mut terms);
        }
    }
    terms.truncate(MAX_TERMS);
    terms
}

/// How many of `n` terms a file must contain to count.
pub fn needed(n: usize) -> usize {
    match n {
        0 => usize::MAX,
        1 | 2 => 1,
        3 | 4 => 2,
        _ => 3,
    }
}

/// What to look for: each learning's terms.
pub struct Wanted {
    pub id: i64,
    pub terms: Vec<Term>,
}

/// What the tree showed for one learning.
#[derive(Debug, Clone, Default)]
pub struct Found {
    pub id: i64,
    pub count: usize,
    /// Up to [`KEPT_FILES`], sorted.
    pub files: Vec<String>,
}

/// A whole search: per learning, and what the walk met.
#[derive(Debug, Default)]
pub struct Scan {
    pub found: Vec<Found>,
    pub files_searched: usize,
    /// Entries that could not be read (permissions, vanished, symlink loops).
    pub unreadable: usize,
}

/// Why `learnings.evidence_exclude` cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExcludeError {
    #[error("{pattern:?} is not a glob: {reason}")]
    NotAGlob {
        pattern: String,
        reason: globset::Error,
    },
    /// The patterns are globs each, but together too large to match with.
    #[error("{0}")]
    TooLarge(globset::Error),
}

/// The glob set of names and paths to skip.
pub fn exclude_set(patterns: &[String]) -> Result<GlobSet, ExcludeError> {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(Glob::new(p).map_err(|reason| ExcludeError::NotAGlob {
            pattern: p.clone(),
            reason,
        })?);
    }
    b.build().map_err(ExcludeError::TooLarge)
}

/// Which terms a line holds: exact ones as written, words in any case, each on word boundaries.
struct TermFinder {
    exact: AhoCorasick,
    exact_ids: Vec<usize>,
    folded: AhoCorasick,
    folded_ids: Vec<usize>,
    word_edges: Vec<(bool, bool)>,
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl TermFinder {
    fn new(terms: &[Term]) -> TermFinder {
        let (mut exact, mut exact_ids, mut folded, mut folded_ids) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (i, t) in terms.iter().enumerate() {
            if t.exact {
                exact.push(t.text.as_str());
                exact_ids.push(i);
            } else {
                folded.push(t.text.as_str());
                folded_ids.push(i);
            }
        }
        let word_edges = terms
            .iter()
            .map(|t| {
                let b = t.text.as_bytes();
                (
                    !t.path && is_word_byte(b[0]),
                    !t.path && is_word_byte(b[b.len() - 1]),
                )
            })
            .collect();
        TermFinder {
            exact: AhoCorasick::new(&exact).expect("literal patterns"),
            exact_ids,
            folded: AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(&folded)
                .expect("literal patterns"),
            folded_ids,
            word_edges,
        }
    }

    fn find(&self, line: &[u8], into: &mut HashSet<usize>) {
        for (ac, ids) in [
            (&self.exact, &self.exact_ids),
            (&self.folded, &self.folded_ids),
        ] {
            for m in ac.find_overlapping_iter(line) {
                let id = ids[m.pattern().as_usize()];
                let (left, right) = self.word_edges[id];
                let ok_left = !left || m.start() == 0 || !is_word_byte(line[m.start() - 1]);
                let ok_right = !right || m.end() == line.len() || !is_word_byte(line[m.end()]);
                if ok_left && ok_right {
                    into.insert(id);
                }
            }
        }
    }
}

struct Collect<'a> {
    finder: &'a TermFinder,
    found: HashSet<usize>,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _searcher: &grep_searcher::Searcher,
        mat: &SinkMatch<'_>,
    ) -> Result<bool, std::io::Error> {
        self.finder.find(mat.bytes(), &mut self.found);
        Ok(true)
    }
}

/// Search the tree under `root` for every learning's terms, on `threads` threads.
pub fn scan(root: &Path, exclude: &GlobSet, wanted: &[Wanted], threads: usize) -> Scan {
    let mut all: Vec<Term> = wanted.iter().flat_map(|w| w.terms.clone()).collect();
    all.sort();
    all.dedup();
    if all.is_empty() {
        return Scan {
            found: wanted
                .iter()
                .map(|w| Found {
                    id: w.id,
                    ..Found::default()
                })
                .collect(),
            ..Scan::default()
        };
    }
    let index: HashMap<&Term, usize> = all.iter().enumerate().map(|(i, t)| (t, i)).collect();
    // For each term, the learnings that name it.
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); all.len()];
    for (w_i, w) in wanted.iter().enumerate() {
        for t in &w.terms {
            users[index[t]].push(w_i);
        }
    }
    let finder = TermFinder::new(&all);
    let path_terms: Vec<(usize, &str)> = all
        .iter()
        .enumerate()
        .filter(|(_, t)| t.path)
        .map(|(i, t)| (i, t.text.as_str()))
        .collect();
    let literals: Vec<&str> = all.iter().map(|t| t.text.as_str()).collect();
    let matcher = RegexMatcherBuilder::new()
        .fixed_strings(true)
        .case_insensitive(true)
        .build_literals(&literals)
        .expect("literals always compile");

    let per_file: Mutex<Vec<(String, Vec<usize>)>> = Mutex::new(Vec::new());
    let searched = std::sync::atomic::AtomicUsize::new(0);
    let unreadable = std::sync::atomic::AtomicUsize::new(0);
    let exclude = Arc::new(exclude.clone());
    let root_buf: PathBuf = root.to_path_buf();
    let walker = {
        let exclude = Arc::clone(&exclude);
        let root = root_buf.clone();
        ignore::WalkBuilder::new(root.clone())
            .hidden(false)
            .parents(false)
            .require_git(false)
            .follow_links(false)
            .max_filesize(Some(MAX_FILE_BYTES))
            .threads(threads.max(1))
            .filter_entry(move |e| {
                let rel = e.path().strip_prefix(&root).unwrap_or(e.path());
                !(exclude.is_match(e.file_name()) || exclude.is_match(rel))
            })
            .build_parallel()
    };
    walker.run(|| {
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(false)
            .build();
        let matcher = &matcher;
        let finder = &finder;
        let per_file = &per_file;
        let searched = &searched;
        let unreadable = &unreadable;
        let path_terms = &path_terms;
        let root = &root_buf;
        Box::new(move |entry| {
            let entry = match entry {
                Ok(e) => e,
                Err(_) => {
                    unreadable.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    return ignore::WalkState::Continue;
                }
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return ignore::WalkState::Continue;
            }
            searched.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let rel = entry
                .path()
                .strip_prefix(root)
                .unwrap_or(entry.path())
                .to_string_lossy()
                .into_owned();
            let mut sink = Collect {
                finder,
                found: HashSet::new(),
            };
            for (i, p) in path_terms {
                if rel.contains(p) {
                    sink.found.insert(*i);
                }
            }
            if searcher
                .search_path(matcher, entry.path(), &mut sink)
                .is_err()
            {
                unreadable.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            if !sink.found.is_empty() {
                let terms: Vec<usize> = sink.found.into_iter().collect();
                per_file
                    .lock()
                    .expect("no panics hold it")
                    .push((rel, terms));
            }
            ignore::WalkState::Continue
        })
    });

    let mut found: Vec<Found> = wanted
        .iter()
        .map(|w| Found {
            id: w.id,
            ..Found::default()
        })
        .collect();
    let mut files: Vec<Vec<String>> = vec![Vec::new(); wanted.len()];
    for (rel, terms) in per_file.into_inner().expect("no panics hold it") {
        let mut hits: HashMap<usize, usize> = HashMap::new();
        for t in terms {
            for &w in &users[t] {
                *hits.entry(w).or_default() += 1;
            }
        }
        for (w, n) in hits {
            if n >= needed(wanted[w].terms.len()) {
                found[w].count += 1;
                files[w].push(rel.clone());
            }
        }
    }
    for (f, mut list) in found.iter_mut().zip(files) {
        list.sort();
        list.truncate(KEPT_FILES);
        f.files = list;
    }
    Scan {
        found,
        files_searched: searched.into_inner(),
        unreadable: unreadable.into_inner(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exclude_pattern_that_is_not_a_glob_is_named() {
        assert!(exclude_set(&["target".into(), "*.lock".into()]).is_ok());
        let err = exclude_set(&["ok/**".into(), "src/[".into()]).unwrap_err();
        assert!(
            matches!(&err, ExcludeError::NotAGlob { pattern, .. } if pattern == "src/["),
            "{err:?}"
        );
        assert!(
            err.to_string().starts_with("\"src/[\" is not a glob: "),
            "{err}"
        );
    }

    fn texts(text: &str) -> Vec<String> {
        derive_terms(text, &[])
            .into_iter()
            .map(|t| t.text)
            .collect()
    }

    #[test]
    fn common_english_gives_no_terms() {
        assert!(texts("Use good names").is_empty());
        assert!(texts("Keep functions small and write clear tests").is_empty());
        assert!(texts("Always run the tests before finishing").is_empty());
    }

    #[test]
    fn code_paths_identifiers_and_rare_words_are_terms() {
        assert_eq!(
            texts("Use `cargo nextest run` and thiserror for errors"),
            ["nextest", "thiserror"]
        );
        assert_eq!(
            texts("Queries live in src/store/ and use BEGIN IMMEDIATE via Store::immediate"),
            ["src/store", "Store::immediate"]
        );
        assert_eq!(
            texts("Call open_for_reading() in read-only commands; check Cargo.toml"),
            ["open_for_reading", "Cargo.toml"]
        );
        assert_eq!(texts("Pass --no-verify never"), ["--no-verify"]);
    }

    #[test]
    fn enough_terms_must_match() {
        assert_eq!(needed(1), 1);
        assert_eq!(needed(3), 2);
        assert_eq!(needed(6), 3);
        assert_eq!(needed(0), usize::MAX);
    }
}
