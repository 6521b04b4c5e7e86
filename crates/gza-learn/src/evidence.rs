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

pub mod kept;

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
    /// Files whose text was read: all of them but those [`kept`] holds unchanged.
    pub files_read: usize,
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
    scan_with(root, exclude, wanted, threads, None)
}

/// The matchers for a set of terms: lines holding any of them, then which ones.
struct Matchers {
    finder: TermFinder,
    matcher: grep_regex::RegexMatcher,
    /// The path terms, with their indices into the terms matched.
    path_terms: Vec<(usize, String)>,
}

impl Matchers {
    fn new(terms: &[Term]) -> Matchers {
        let literals: Vec<&str> = terms.iter().map(|t| t.text.as_str()).collect();
        Matchers {
            finder: TermFinder::new(terms),
            matcher: RegexMatcherBuilder::new()
                .fixed_strings(true)
                .case_insensitive(true)
                .build_literals(&literals)
                .expect("literals always compile"),
            path_terms: terms
                .iter()
                .enumerate()
                .filter(|(_, t)| t.path)
                .map(|(i, t)| (i, t.text.clone()))
                .collect(),
        }
    }

    /// The indices of the terms the file at `path` (`rel` under the root) holds; `None` when
    /// it could not be read.
    fn search(
        &self,
        searcher: &mut grep_searcher::Searcher,
        path: &Path,
        rel: &str,
    ) -> Option<HashSet<usize>> {
        let mut sink = Collect {
            finder: &self.finder,
            found: HashSet::new(),
        };
        for (i, p) in &self.path_terms {
            if rel.contains(p.as_str()) {
                sink.found.insert(*i);
            }
        }
        searcher
            .search_path(&self.matcher, path, &mut sink)
            .ok()
            .map(|()| sink.found)
    }
}

/// [`scan`], reading only what changed since what `kept` holds (the last search's files by
/// stamp, see [`kept`]) and keeping what this one found in it: a file whose stamp is kept is
/// searched only for the terms no kept search looked for. The outcome is [`scan`]'s.
pub fn scan_with(
    root: &Path,
    exclude: &GlobSet,
    wanted: &[Wanted],
    threads: usize,
    kept: Option<&mut kept::Kept>,
) -> Scan {
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
    // What was kept: each kept term's index here (none when no learning names it now), and
    // the terms no kept search looked for.
    let (remap, fresh): (Vec<Option<usize>>, Vec<usize>) = match kept.as_deref() {
        Some(k) => {
            // By reference: the kept terms are not copied.
            let here: HashMap<(&str, bool, bool), usize> = all
                .iter()
                .enumerate()
                .map(|(i, t)| ((t.text.as_str(), t.exact, t.path), i))
                .collect();
            let remap: Vec<Option<usize>> = k
                .terms
                .iter()
                .map(|(text, exact, path)| here.get(&(text.as_str(), *exact, *path)).copied())
                .collect();
            let mut known = vec![false; all.len()];
            for i in remap.iter().flatten() {
                known[*i] = true;
            }
            (remap, (0..all.len()).filter(|i| !known[*i]).collect())
        }
        None => (Vec::new(), Vec::new()),
    };
    let fresh_terms: Vec<Term> = fresh.iter().map(|&i| all[i].clone()).collect();
    // Built when first needed: with nothing changed, no file is searched for every term.
    let every = std::sync::OnceLock::new();
    let only_fresh = (!fresh_terms.is_empty()).then(|| Matchers::new(&fresh_terms));

    // Each file searched: its path, its stamp (when it is kept), its terms.
    type Searched = (String, Option<kept::Stamp>, Vec<usize>);
    let per_file: Mutex<Vec<Searched>> = Mutex::new(Vec::new());
    let searched = std::sync::atomic::AtomicUsize::new(0);
    let read = std::sync::atomic::AtomicUsize::new(0);
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
    let view = kept.as_deref();
    walker.run(|| {
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(false)
            .build();
        let every = &every;
        let all = &all;
        let only_fresh = &only_fresh;
        let fresh = &fresh;
        let remap = &remap;
        let per_file = &per_file;
        let searched = &searched;
        let read = &read;
        let unreadable = &unreadable;
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
            // Stamped before it is read: a write after this changes the stamp kept.
            let stamp = view.and_then(|k| {
                entry
                    .metadata()
                    .ok()
                    .and_then(|m| kept::stamp(&m, k.settle_seconds))
            });
            let known = view
                .and_then(|k| k.files.get(&rel))
                .filter(|(s, _)| stamp.as_ref() == Some(s));
            let found: Option<Vec<usize>> = match known {
                Some((_, terms)) if only_fresh.is_none() => Some(
                    terms
                        .iter()
                        .filter_map(|&i| remap.get(i as usize).copied().flatten())
                        .collect(),
                ),
                Some((_, terms)) => {
                    let mut found: Vec<usize> = terms
                        .iter()
                        .filter_map(|&i| remap.get(i as usize).copied().flatten())
                        .collect();
                    let m = only_fresh.as_ref().expect("fresh terms to look for");
                    read.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    m.search(&mut searcher, entry.path(), &rel).map(|more| {
                        found.extend(more.into_iter().map(|i| fresh[i]));
                        found
                    })
                }
                None => {
                    read.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    every
                        .get_or_init(|| Matchers::new(all))
                        .search(&mut searcher, entry.path(), &rel)
                        .map(|f| f.into_iter().collect())
                }
            };
            match found {
                None => {
                    unreadable.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                Some(terms) if !terms.is_empty() || view.is_some() => {
                    per_file
                        .lock()
                        .expect("no panics hold it")
                        .push((rel, stamp, terms));
                }
                Some(_) => {}
            }
            ignore::WalkState::Continue
        })
    });

    let per_file = per_file.into_inner().expect("no panics hold it");
    let mut found: Vec<Found> = wanted
        .iter()
        .map(|w| Found {
            id: w.id,
            ..Found::default()
        })
        .collect();
    let mut files: Vec<Vec<String>> = vec![Vec::new(); wanted.len()];
    // Per file, how many of each learning's terms it holds: counted in one array for every
    // file (only the learnings a file touched are reset), not a map per file.
    let mut hits: Vec<u32> = vec![0; wanted.len()];
    let mut touched: Vec<usize> = Vec::new();
    for (rel, _, terms) in &per_file {
        for t in terms {
            for &w in &users[*t] {
                if hits[w] == 0 {
                    touched.push(w);
                }
                hits[w] += 1;
            }
        }
        for w in touched.drain(..) {
            if hits[w] as usize >= needed(wanted[w].terms.len()) {
                found[w].count += 1;
                files[w].push(rel.clone());
            }
            hits[w] = 0;
        }
    }
    for (f, mut list) in found.iter_mut().zip(files) {
        list.sort();
        list.truncate(KEPT_FILES);
        f.files = list;
    }
    if let Some(k) = kept {
        let files = per_file
            .into_iter()
            .filter_map(|(rel, stamp, terms)| {
                stamp.map(|s| (rel, s, terms.into_iter().map(|t| t as u32).collect()))
            })
            .collect();
        k.replace(&all, files);
    }
    Scan {
        found,
        files_searched: searched.into_inner(),
        files_read: read.into_inner(),
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

    /// What a search finds per learning: its count and files.
    fn outcome(scan: &Scan) -> Vec<(i64, usize, Vec<String>)> {
        scan.found
            .iter()
            .map(|f| (f.id, f.count, f.files.clone()))
            .collect()
    }

    fn wanted(learnings: &[(i64, &str)]) -> Vec<Wanted> {
        learnings
            .iter()
            .map(|(id, text)| Wanted {
                id: *id,
                terms: derive_terms(text, &[]),
            })
            .collect()
    }

    /// Searching with what the last search kept finds what a whole search finds, through every
    /// kind of change to the tree and to the learnings, and reads only the files that changed
    /// (all of them, but for the new terms only, when a learning names terms not looked for).
    #[test]
    fn a_search_with_what_was_kept_finds_what_a_whole_one_finds_and_reads_only_what_changed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "src/store.rs",
            "fn open_for_reading() {}\nuse thiserror::Error;\n",
        );
        write("src/cli.rs", "// open_for_reading here too\n");
        write("docs/testing.md", "Run cargo nextest before a commit.\n");
        write(
            "src/migrations/V1__init.sql",
            "-- read with sqlx::query_as\n",
        );
        write("notes.txt", "nothing to find\n");
        let exclude = exclude_set(&[]).unwrap();
        let mut learnings = vec![
            (1, "Call open_for_reading() in read-only commands"),
            (2, "Errors use thiserror and run nextest"),
            (3, "Migrations live in src/migrations"),
        ];
        let mut kept = kept::Kept::fresh(root);
        kept.settle_seconds = -10; // every file kept at once
        let mut step = |learnings: &[(i64, &str)], reads: usize, what: &str| {
            let w = wanted(learnings);
            let whole = scan(root, &exclude, &w, 2);
            let with = scan_with(root, &exclude, &w, 2, Some(&mut kept));
            assert_eq!(outcome(&with), outcome(&whole), "{what}");
            assert_eq!(with.files_searched, whole.files_searched, "{what}");
            assert_eq!(with.files_read, reads, "{what}: files read");
        };
        step(&learnings, 5, "the first search reads every file");
        step(&learnings, 0, "nothing changed");
        learnings.push((4, "Queries go through sqlx::query_as in the store"));
        step(
            &learnings,
            5,
            "a learning with new terms: every file, for those",
        );
        step(&learnings, 0, "nothing changed again");
        write("notes.txt", "now it mentions nextest and thiserror\n");
        step(&learnings, 1, "a file edited");
        std::fs::remove_file(root.join("src/cli.rs")).unwrap();
        step(&learnings, 0, "a file deleted");
        write("src/extra/more.rs", "open_for_reading(); thiserror\n");
        step(&learnings, 1, "a file added");
        std::fs::create_dir(root.join("db")).unwrap();
        std::fs::rename(
            root.join("src/migrations/V1__init.sql"),
            root.join("db/V1__init.sql"),
        )
        .unwrap();
        step(&learnings, 1, "a file moved out of a path term");
        learnings.retain(|(id, _)| *id != 2);
        step(&learnings, 0, "a learning removed");
        learnings.push((2, "Errors use thiserror"));
        step(
            &learnings,
            5,
            "a term no learning named last time: every file, for it",
        );
        step(&learnings, 0, "nothing changed at the end");
        // What was kept, written and read back, serves the next search as well.
        let at = root.join("kept.json");
        kept.save(&at);
        let mut back = kept::Kept::load(&at, root);
        back.settle_seconds = -10;
        let w = wanted(&learnings);
        let again = scan_with(root, &exclude, &w, 2, Some(&mut back));
        assert_eq!(outcome(&again), outcome(&scan(root, &exclude, &w, 2)));
        assert_eq!(
            again.files_read, 1,
            "only kept.json, written since, is read"
        );
        // Kept for another tree, or by a file that is not JSON: nothing is used.
        assert!(kept::Kept::load(&at, &root.join("src")).is_empty());
        std::fs::write(&at, "{not json").unwrap();
        assert!(kept::Kept::load(&at, root).is_empty());
    }

    /// A file changed within the last seconds is searched again, even with its stamp kept: a
    /// second write in the same clock tick would leave the same stamp.
    #[test]
    fn a_file_changed_just_now_is_never_taken_from_what_was_kept() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.rs"), "open_for_reading()\n").unwrap();
        let exclude = exclude_set(&[]).unwrap();
        let w = wanted(&[(1, "Call open_for_reading() in read-only commands")]);
        let mut kept = kept::Kept::fresh(root);
        assert_eq!(kept.settle_seconds, kept::SETTLE_SECONDS);
        for _ in 0..2 {
            let s = scan_with(root, &exclude, &w, 1, Some(&mut kept));
            assert_eq!(s.files_read, 1);
            assert_eq!(s.found[0].count, 1);
        }
    }

    #[test]
    fn enough_terms_must_match() {
        assert_eq!(needed(1), 1);
        assert_eq!(needed(3), 2);
        assert_eq!(needed(6), 3);
        assert_eq!(needed(0), usize::MAX);
    }
}
