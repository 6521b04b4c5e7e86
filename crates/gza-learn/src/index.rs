//! The ranking index: what ranking needs of every learning in use, in one file beside the
//! database (`.gza/rank-index-v2.bin`), read in one go, kept in step with the records by the
//! database's ranking generation (migration V38).
//!
//! For each learning in use it holds its id, whether it is a draft, its priority, its BM25
//! terms as 64-bit hashes (so ranking tokenises no text it has) and its sentence embedding as
//! int8 (one scale per vector: 384 bytes where the database keeps 1,536 bytes of f32 in a row
//! of its own), sorted by id. The index names the generation of the records it was built from:
//! when that is the database's generation now, a search ranks from the index alone and reads no
//! row; when the database has moved on, the rows changed since (and the learnings deleted since)
//! are read from the database and take the place of what the index holds of them, so a stale
//! entry is never used. The index names the model its vectors were made by, and carries an XXH3
//! checksum of itself; a damaged one, or one for another model's vectors, is not used (its terms
//! still are when only the model differs). It also names the database it was built from (a hash
//! of the database's random nonce, `hook_state`): the file lives in `.gza/`, where a cloned
//! repository can put one of its own, and an index of another database is never used (its ids,
//! kinds and priorities would otherwise decide what this project's agents are given).
//!
//! The database stays the truth: the index is rebuilt from it by the background job
//! (`gza hook embed`), whole, through a temporary file and a rename, from one read transaction,
//! and holds only the learnings in use when it was built, so it does not grow with the history.

use std::path::{Path, PathBuf};

use gza_core::learning::Priority;
use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

const MAGIC: &[u8; 8] = b"GZARIX02";
/// Magic, model hash, generation, dimension, entries, terms, vectors, the database's nonce
/// (hashed), reserved, checksum.
const HEADER: usize = 56;
/// Id, term start, term count, vector, flags.
const ENTRY: usize = 24;
/// No vector for this entry.
const NONE: u32 = u32::MAX;
/// A larger index is not read.
const MAX_BYTES: u64 = 1 << 31;
const DRAFT: u32 = 1;
/// The learning has "applies when" hints in words (its vector includes them: see
/// `rank::embed_learning`). An index written before this flag existed has it unset for every
/// entry; migration V48 (PostgreSQL V19) dropped the vectors of hinted learnings, so their rows
/// were read as changed until the index was rebuilt with the flag.
const HINTED: u32 = 2;

/// The index file of the project whose state folder is `state_dir`.
pub fn path(state_dir: &Path) -> PathBuf {
    state_dir.join("rank-index-v2.bin")
}

/// Index files of earlier formats, removed when a new one is written.
pub fn old_paths(state_dir: &Path) -> [PathBuf; 1] {
    [state_dir.join("rank-index-v1.bin")]
}

/// The hash of a database's nonce as the index records it (0: none).
pub fn nonce_hash(nonce: &str) -> u64 {
    if nonce.is_empty() {
        0
    } else {
        xxh3_64(nonce.as_bytes()).max(1)
    }
}

/// The hash of a model's fingerprint as the index records it (0: no model).
pub fn model_hash(fingerprint: Option<&str>) -> u64 {
    fingerprint.map_or(0, |f| xxh3_64(f.as_bytes()).max(1))
}

/// The hash of one BM25 term.
pub fn term_hash(term: &str) -> u64 {
    xxh3_64(term.as_bytes())
}

fn priority_code(p: Priority) -> u32 {
    match p {
        Priority::Critical => 0,
        Priority::High => 1,
        Priority::Medium => 2,
        Priority::Low => 3,
    }
}

fn priority_of(code: u32) -> Priority {
    match code {
        0 => Priority::Critical,
        1 => Priority::High,
        3 => Priority::Low,
        _ => Priority::Medium,
    }
}

/// One learning's entry: its id, kind, BM25 terms (hashed, in text order, repeats kept: 8
/// bytes each, little-endian) and its vector.
pub struct Entry<'a> {
    pub id: i64,
    pub draft: bool,
    pub hinted: bool,
    pub priority: Priority,
    pub terms: &'a [u8],
    vector: Option<(&'a [u8], f32)>,
}

/// The term hashes of an entry's `terms`.
pub fn term_hashes(terms: &[u8]) -> impl Iterator<Item = u64> + '_ {
    terms
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
}

impl Entry<'_> {
    /// Whether the entry has a vector (of the model it was asked for).
    pub fn has_vector(&self) -> bool {
        self.vector.is_some()
    }

    /// Cosine similarity of the unit query `q` with this entry's vector (approximate: int8),
    /// when it has one of `q`'s length.
    pub fn similarity(&self, q: &[f32]) -> Option<f64> {
        let (v, scale) = self.vector?;
        if v.len() != q.len() {
            return None;
        }
        // Sixteen independent sums, so the compiler can use SIMD lanes.
        let mut acc = [0f32; 16];
        let (qc, vc) = (q.chunks_exact(16), v.chunks_exact(16));
        let tail: f32 = qc
            .remainder()
            .iter()
            .zip(vc.remainder())
            .map(|(x, b)| x * f32::from(*b as i8))
            .sum();
        for (qs, vs) in qc.zip(vc) {
            for j in 0..16 {
                acc[j] += qs[j] * f32::from(vs[j] as i8);
            }
        }
        let dot = acc.iter().sum::<f32>() + tail;
        let c = f64::from(dot * scale);
        c.is_finite().then_some(c)
    }
}

/// A loaded index.
pub struct Index {
    bytes: Vec<u8>,
    model: u64,
    generation: i64,
    /// [`nonce_hash`] of the database it was built from.
    nonce: u64,
    dim: usize,
    count: usize,
    terms_at: usize,
    vectors_at: usize,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn checksum(b: &[u8]) -> u64 {
    xxh3_64_with_seed(&b[HEADER..], xxh3_64(&b[..HEADER - 8]))
}

impl Index {
    /// The index at `path`, if it is there, whole and intact.
    pub fn load(path: &Path) -> Option<Index> {
        let bytes = gza_core::fsutil::read_regular_file(path, MAX_BYTES).ok()?;
        Self::parse(bytes)
    }

    fn parse(bytes: Vec<u8>) -> Option<Index> {
        if bytes.len() < HEADER || &bytes[..8] != MAGIC {
            return None;
        }
        let model = u64_at(&bytes, 8);
        let generation = u64_at(&bytes, 16) as i64;
        let nonce = u64_at(&bytes, 40);
        let dim = u32_at(&bytes, 24) as usize;
        let count = u32_at(&bytes, 28) as usize;
        let terms = u32_at(&bytes, 32) as usize;
        let vectors = u32_at(&bytes, 36) as usize;
        let terms_at = HEADER.checked_add(count.checked_mul(ENTRY)?)?;
        let vectors_at = terms_at.checked_add(terms.checked_mul(8)?)?;
        let total = vectors_at.checked_add(vectors.checked_mul(4 + dim)?)?;
        if bytes.len() != total || u64_at(&bytes, 48) != checksum(&bytes) {
            return None;
        }
        let index = Index {
            bytes,
            model,
            generation,
            nonce,
            dim,
            count,
            terms_at,
            vectors_at,
        };
        // Every entry's ranges lie within the file, and ids ascend (checked once, so scans and
        // lookups cannot panic).
        let mut last = i64::MIN;
        let ok = (0..count).all(|i| {
            let (id, start, len, vector, _) = index.fields(i);
            let ascending = i == 0 || id > last;
            last = id;
            ascending
                && start.checked_add(len).is_some_and(|end| end <= terms)
                && (vector == NONE || (vector as usize) < vectors)
        });
        ok.then_some(index)
    }

    fn fields(&self, i: usize) -> (i64, usize, usize, u32, u32) {
        let at = HEADER + i * ENTRY;
        (
            u64_at(&self.bytes, at) as i64,
            u32_at(&self.bytes, at + 8) as usize,
            u32_at(&self.bytes, at + 12) as usize,
            u32_at(&self.bytes, at + 16),
            u32_at(&self.bytes, at + 20),
        )
    }

    fn entry(&self, i: usize, model: u64) -> Entry<'_> {
        let (id, start, len, vector, flags) = self.fields(i);
        let t = self.terms_at + start * 8;
        let vector = (vector != NONE && model != 0 && model == self.model).then(|| {
            let at = self.vectors_at + vector as usize * (4 + self.dim);
            let scale = f32::from_le_bytes(self.bytes[at..at + 4].try_into().unwrap());
            (&self.bytes[at + 4..at + 4 + self.dim], scale)
        });
        Entry {
            id,
            draft: flags & DRAFT != 0,
            hinted: flags & HINTED != 0,
            priority: priority_of((flags >> 8) & 0xff),
            terms: &self.bytes[t..t + len * 8],
            vector,
        }
    }

    /// How many learnings it holds.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The ranking generation of the records it was built from.
    pub fn generation(&self) -> i64 {
        self.generation
    }

    /// Whether it was built from the database whose nonce is `nonce` (never, for a database
    /// without one).
    pub fn is_of(&self, nonce: &str) -> bool {
        let h = nonce_hash(nonce);
        h != 0 && h == self.nonce
    }

    /// Whether its vectors were made by `model` (a [`model_hash`]).
    pub fn has_model(&self, model: u64) -> bool {
        model != 0 && model == self.model
    }

    /// Every entry in id order; vectors only when the index was made with `model`.
    pub fn entries(&self, model: u64) -> impl Iterator<Item = Entry<'_>> {
        (0..self.count).map(move |i| self.entry(i, model))
    }

    /// The entry of learning `id`; its vector only when the index was made with `model`.
    pub fn get(&self, id: i64, model: u64) -> Option<Entry<'_>> {
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match (u64_at(&self.bytes, HEADER + mid * ENTRY) as i64).cmp(&id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(self.entry(mid, model)),
            }
        }
        None
    }
}

/// What the index holds of one learning.
pub struct Source {
    pub id: i64,
    pub draft: bool,
    pub hinted: bool,
    pub priority: Priority,
    pub terms: Vec<u64>,
    pub vector: Option<Vec<f32>>,
}

/// The bytes of an index of `entries` (learnings of generation `generation` of the database
/// whose nonce is `nonce`), made with `model`.
pub fn build(
    model: u64,
    generation: i64,
    nonce: &str,
    dim: usize,
    entries: &mut [Source],
) -> Vec<u8> {
    entries.sort_by_key(|e| e.id);
    let mut unique: Vec<&Source> = Vec::with_capacity(entries.len());
    for e in entries.iter() {
        if unique.last().is_none_or(|u| u.id != e.id) {
            unique.push(e);
        }
    }
    let has = |e: &Source| e.vector.as_ref().is_some_and(|v| v.len() == dim && dim > 0);
    let terms: usize = unique.iter().map(|e| e.terms.len()).sum();
    let vectors = unique.iter().filter(|e| has(e)).count();
    let mut out =
        Vec::with_capacity(HEADER + unique.len() * ENTRY + terms * 8 + vectors * (4 + dim));
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&model.to_le_bytes());
    out.extend_from_slice(&(generation as u64).to_le_bytes());
    for n in [dim, unique.len(), terms, vectors] {
        out.extend_from_slice(&(n as u32).to_le_bytes());
    }
    out.extend_from_slice(&nonce_hash(nonce).to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    let (mut term_at, mut vector_at) = (0u32, 0u32);
    for e in &unique {
        out.extend_from_slice(&e.id.to_le_bytes());
        out.extend_from_slice(&term_at.to_le_bytes());
        out.extend_from_slice(&(e.terms.len() as u32).to_le_bytes());
        out.extend_from_slice(&(if has(e) { vector_at } else { NONE }).to_le_bytes());
        let flags = (u32::from(e.draft) * DRAFT)
            | (u32::from(e.hinted) * HINTED)
            | (priority_code(e.priority) << 8);
        out.extend_from_slice(&flags.to_le_bytes());
        term_at += e.terms.len() as u32;
        vector_at += u32::from(has(e));
    }
    for e in &unique {
        for h in &e.terms {
            out.extend_from_slice(&h.to_le_bytes());
        }
    }
    for e in &unique {
        if let Some(v) = e.vector.as_ref().filter(|_| has(e)) {
            // Symmetric int8 with one scale per vector: v ≈ scale · q.
            let max = v.iter().fold(0f32, |a, x| a.max(x.abs()));
            let scale = if max > 0.0 && max.is_finite() {
                max / 127.0
            } else {
                1.0
            };
            out.extend_from_slice(&scale.to_le_bytes());
            out.extend(
                v.iter()
                    .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8 as u8),
            );
        }
    }
    let sum = checksum(&out);
    out[48..56].copy_from_slice(&sum.to_le_bytes());
    out
}

/// Replace the index at `path` with `bytes`, through a temporary file and a rename (a reader
/// has the old file or the new one, never half of one). A cache: not synced to disk; a file
/// cut short by a crash fails its checksum and is rebuilt.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map(|_| ()).map_err(|e| e.error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u32, dim: usize) -> Vec<f32> {
        let v: Vec<f32> = (0..dim)
            .map(|i| (((i as u32).wrapping_mul(2_654_435_761) ^ seed) % 1000) as f32 / 500.0 - 1.0)
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }

    fn source(id: i64, terms: Vec<u64>, vector: Option<Vec<f32>>) -> Source {
        Source {
            id,
            draft: id == 20,
            hinted: id == 10,
            priority: if id == 30 {
                Priority::Critical
            } else {
                Priority::Medium
            },
            terms,
            vector,
        }
    }

    #[test]
    fn round_trips_entries_and_near_exact_vectors_and_refuses_damage() {
        let dim = 384;
        let mut entries = vec![
            source(30, vec![1, 2, 2], Some(unit(1, dim))),
            source(10, vec![], None),
            source(20, vec![7], Some(unit(2, dim))),
            source(20, vec![7], Some(unit(2, dim))),
        ];
        let bytes = build(5, 42, "a-database", dim, &mut entries);
        let index = Index::parse(bytes.clone()).unwrap();
        assert_eq!(index.len(), 3, "duplicate ids kept once");
        assert_eq!(index.generation(), 42);
        assert_eq!(
            index.entries(5).map(|e| e.id).collect::<Vec<_>>(),
            vec![10, 20, 30],
            "in id order"
        );
        let q = unit(1, dim);
        let e = index.get(30, 5).unwrap();
        assert_eq!(e.priority, Priority::Critical);
        assert!(!e.draft && index.get(20, 5).unwrap().draft);
        assert!(!e.hinted && index.get(10, 5).unwrap().hinted);
        assert_eq!(index.get(10, 5).unwrap().priority, Priority::Medium);
        assert_eq!(term_hashes(e.terms).collect::<Vec<_>>(), vec![1, 2, 2]);
        let exact: f32 = q.iter().zip(&unit(1, dim)).map(|(a, b)| a * b).sum();
        assert!((e.similarity(&q).unwrap() - f64::from(exact)).abs() < 0.01);
        let other: f32 = q.iter().zip(&unit(2, dim)).map(|(a, b)| a * b).sum();
        let got = index.get(20, 5).unwrap().similarity(&q).unwrap();
        assert!((got - f64::from(other)).abs() < 0.01, "{got} {other}");
        assert!(index.get(10, 5).unwrap().similarity(&q).is_none());
        assert!(index.get(11, 5).is_none());
        // Another model's vectors are not used; its terms are.
        let e = index.get(30, 6).unwrap();
        assert!(e.similarity(&q).is_none());
        assert_eq!(term_hashes(e.terms).collect::<Vec<_>>(), vec![1, 2, 2]);
        // Any flipped byte, or a file cut short, is refused whole.
        for at in [9, 17, 60, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[at] ^= 1;
            assert!(Index::parse(bad).is_none(), "byte {at}");
        }
        assert!(Index::parse(bytes[..bytes.len() - 1].to_vec()).is_none());
    }
}
