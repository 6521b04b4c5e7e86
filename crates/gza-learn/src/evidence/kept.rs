//! What the last search of the tree found, kept so that the next one reads only what changed
//! (issue 20, "Scale"): each file's terms by the file's stamp, and each learning's terms by its
//! text and keywords.
//!
//! A regeneration validates every learning in use against the tree. Done whole, that reads and
//! stems every learning and matches all their terms against every file: at 10,000 learnings
//! half of a `gza work` task's CPU, growing with the history. With what was kept, a file whose
//! stamp (device, inode, size, modification and change times) is the one kept is not read
//! again, except for terms no earlier search looked for, and a learning whose text and
//! keywords are unchanged is not stemmed again. The outcome is the whole search's: a file's
//! terms depend on its path and content only, each term matched on its own.
//!
//! Written by hand (a few hundred lines) because no crate keeps grep results by file stamp.
//! The file lives in the person's cache folder (`$XDG_CACHE_HOME/gza/evidence-v1`, else
//! `~/.cache/gza/evidence-v1`), named by a hash of the project's root, beside the settings'
//! values ([`gza_core::settings`]): never in the project, so a repository cannot plant
//! evidence. A file changed within the last two seconds is not kept (its change time could be
//! that of a second write in the same clock tick, as git's racy index entries are). A damaged
//! or foreign file is ignored: the search is then whole, as before.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Term;

/// The largest kept file read (a tree of a million files keeps about 100 MB).
const MAX_BYTES: u64 = 256 * 1024 * 1024;

/// A file's identity as the walk sees it: device, inode, size, modification and change time
/// (nanoseconds). Any write changes the change time.
pub type Stamp = [i64; 5];

/// What was found: the terms looked for, per file its stamp and the terms it holds (indices
/// into `terms`), per learning the hash of its text and keywords and its terms.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Kept {
    gza: String,
    root: String,
    pub(super) terms: Vec<(String, bool, bool)>,
    pub(super) files: HashMap<String, (Stamp, Vec<u32>)>,
    learnings: HashMap<i64, (u64, Vec<u32>)>,
    /// Terms derived this run, by learning: saved with the terms looked for.
    #[serde(skip)]
    derived: HashMap<i64, (u64, Vec<Term>)>,
    /// A file changed this many seconds ago or less is not kept ([`SETTLE_SECONDS`]; tests
    /// keep every file).
    #[serde(skip, default = "settle")]
    pub(super) settle_seconds: i64,
}

/// A file changed within this many seconds is not kept: its change time could be shared by a
/// second write in the same clock tick (the kernel's file times are coarse), as git's racy
/// index entries are.
pub const SETTLE_SECONDS: i64 = 2;

fn settle() -> i64 {
    SETTLE_SECONDS
}

fn term_of(t: &(String, bool, bool)) -> Term {
    Term {
        text: t.0.clone(),
        exact: t.1,
        path: t.2,
    }
}

fn learning_key(text: &str, keywords: &[String]) -> u64 {
    let mut joined = String::with_capacity(text.len() + 64);
    joined.push_str(text);
    for k in keywords {
        joined.push('\0');
        joined.push_str(k);
    }
    xxhash_rust::xxh3::xxh3_64(joined.as_bytes())
}

fn canonical(root: &Path) -> PathBuf {
    std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf())
}

/// Where what was found in the tree under `root` is kept, or `None` without a home.
pub fn path_for(root: &Path) -> Option<PathBuf> {
    let dir = gza_core::fsutil::cache_dir()?;
    let digest = Sha256::digest(canonical(root).as_os_str().as_encoded_bytes());
    let name: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    Some(dir.join("evidence-v1").join(format!("{name}.json")))
}

impl Kept {
    /// Nothing kept yet, for the tree under `root`.
    pub fn fresh(root: &Path) -> Kept {
        Kept {
            gza: env!("CARGO_PKG_VERSION").to_string(),
            root: canonical(root).to_string_lossy().into_owned(),
            settle_seconds: SETTLE_SECONDS,
            ..Kept::default()
        }
    }

    /// What was kept at `path` for the tree under `root`; empty when there is none, or it is
    /// damaged, of another gza or another tree.
    pub fn load(path: &Path, root: &Path) -> Kept {
        let fresh = Kept::fresh(root);
        let Ok(bytes) = gza_core::fsutil::read_regular_file(path, MAX_BYTES) else {
            return fresh;
        };
        match serde_json::from_slice::<Kept>(&bytes) {
            Ok(kept) if kept.gza == fresh.gza && kept.root == fresh.root => kept,
            _ => fresh,
        }
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty() && self.files.is_empty() && self.learnings.is_empty()
    }

    /// `text`'s and `keywords`' terms: those kept for learning `id` when they are unchanged,
    /// else derived now ([`super::derive_terms`]).
    pub fn terms_of(&mut self, id: i64, text: &str, keywords: &[String]) -> Vec<Term> {
        let key = learning_key(text, keywords);
        let terms = match self.learnings.get(&id) {
            Some((k, idx)) if *k == key && idx.iter().all(|&i| (i as usize) < self.terms.len()) => {
                idx.iter()
                    .map(|&i| term_of(&self.terms[i as usize]))
                    .collect()
            }
            _ => super::derive_terms(text, keywords),
        };
        self.derived.insert(id, (key, terms.clone()));
        terms
    }

    /// Keep what a search over `all` (sorted, deduplicated) found: `files` (each file's path,
    /// stamp, and the indices into `all` of its terms; a file without a stamp is not kept) and
    /// the learnings' terms taken this run. What is not in `all` is forgotten.
    pub(super) fn replace(&mut self, all: &[Term], files: Vec<(String, Stamp, Vec<u32>)>) {
        self.terms = all
            .iter()
            .map(|t| (t.text.clone(), t.exact, t.path))
            .collect();
        self.files = files
            .into_iter()
            .map(|(rel, stamp, terms)| (rel, (stamp, terms)))
            .collect();
        let index: HashMap<&Term, u32> =
            all.iter().enumerate().map(|(i, t)| (t, i as u32)).collect();
        self.learnings = self
            .derived
            .drain()
            .filter_map(|(id, (key, terms))| {
                let idx: Option<Vec<u32>> = terms.iter().map(|t| index.get(t).copied()).collect();
                idx.map(|idx| (id, (key, idx)))
            })
            .collect();
    }

    /// Write it to `path` (through a temporary file and a rename; not synced: a damaged file
    /// is ignored and the next search is whole). Failing to is not an error: the next search
    /// is whole.
    pub fn save(&self, path: &Path) {
        let Some(dir) = path.parent() else { return };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        if let Ok(bytes) = serde_json::to_vec(self) {
            let _ = gza_core::fsutil::write_replacing(path, &bytes, false);
        }
    }
}

/// The stamp of a file whose metadata is `meta`, when it last changed over `settle_seconds`
/// ago.
pub fn stamp(meta: &std::fs::Metadata, settle_seconds: i64) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs() as i64;
    (meta.ctime() < now - settle_seconds).then(|| {
        [
            meta.dev() as i64,
            meta.ino() as i64,
            meta.size() as i64,
            meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
        ]
    })
}
