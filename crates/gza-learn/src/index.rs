//! The ranking index: what ranking needs of every learning in use and is costly to get per
//! call, in one file beside the database (`.gza/rank-index-v1.bin`), read in one go.
//!
//! For each learning text it holds the sentence embedding as int8 (one scale per vector: 384
//! bytes where the database keeps 1,536 bytes of f32 in a row of its own) and its BM25 terms
//! as 64-bit hashes (so ranking tokenises only the texts the index lacks). Entries are keyed by
//! a hash of what they were made from (text, keywords, "applies when" hints), never by a
//! learning's id: an entry is a pure function of that content and the model, so a stale entry
//! cannot be used for a learning whose text changed; it is simply not found. The index names
//! the model its vectors were made by, and carries an XXH3 checksum of itself; a damaged one, or
//! one for another model's vectors, is not used (its terms still are when only the model
//! differs).
//!
//! The database stays the truth: the index is rebuilt from it by the background job
//! (`gza hook embed`), whole, through a temporary file and a rename, and holds only the
//! learnings in use when it was built, so it does not grow with the history. A learning the
//! index lacks is ranked from the database as before (its stored vector looked up by key, its
//! text tokenised), and the job is started to bring the index up to date.

use std::path::{Path, PathBuf};

use gza_store::RankRow;
use xxhash_rust::xxh3::{Xxh3, xxh3_64, xxh3_64_with_seed};

const MAGIC: &[u8; 8] = b"GZARIX01";
/// Magic, model hash, dimension, entries, terms, vectors, checksum.
const HEADER: usize = 40;
const ENTRY: usize = 24;
/// No vector for this entry.
const NONE: u32 = u32::MAX;
/// A larger index is not read.
const MAX_BYTES: u64 = 1 << 30;

/// The index file of the project whose state folder is `state_dir`.
pub fn path(state_dir: &Path) -> PathBuf {
    state_dir.join("rank-index-v1.bin")
}

/// The hash of a model's fingerprint as the index records it (0: no model).
pub fn model_hash(fingerprint: Option<&str>) -> u64 {
    fingerprint.map_or(0, |f| xxh3_64(f.as_bytes()).max(1))
}

/// The key of a learning's ranking content: its text, keywords and hints.
pub fn key(row: &RankRow) -> u64 {
    let mut h = Xxh3::new();
    h.update(row.text.as_bytes());
    for (i, list) in [&row.keywords, &row.applies_when].into_iter().enumerate() {
        h.update(&[0, i as u8]);
        for item in list {
            h.update(item.as_bytes());
            h.update(&[0x1f]);
        }
    }
    h.digest()
}

/// The hash of one BM25 term.
pub fn term_hash(term: &str) -> u64 {
    xxh3_64(term.as_bytes())
}

/// One learning's entry: its BM25 terms (hashed, in text order, repeats kept: 8 bytes each,
/// little-endian) and its vector.
pub struct Entry<'a> {
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
        let dim = u32_at(&bytes, 16) as usize;
        let count = u32_at(&bytes, 20) as usize;
        let terms = u32_at(&bytes, 24) as usize;
        let vectors = u32_at(&bytes, 28) as usize;
        let terms_at = HEADER + count * ENTRY;
        let vectors_at = terms_at + terms * 8;
        let total = vectors_at + vectors * (4 + dim);
        if bytes.len() != total || u64_at(&bytes, 32) != checksum(&bytes) {
            return None;
        }
        let index = Index {
            bytes,
            model,
            dim,
            count,
            terms_at,
            vectors_at,
        };
        // Every entry's ranges lie within the file (checked once, so lookups cannot panic).
        let ok = (0..count).all(|i| {
            let (start, len, vector) = index.entry_fields(i);
            start.checked_add(len).is_some_and(|end| end <= terms)
                && (vector == NONE || (vector as usize) < vectors)
        });
        ok.then_some(index)
    }

    fn entry_fields(&self, i: usize) -> (usize, usize, u32) {
        let at = HEADER + i * ENTRY + 8;
        (
            u32_at(&self.bytes, at) as usize,
            u32_at(&self.bytes, at + 4) as usize,
            u32_at(&self.bytes, at + 8),
        )
    }

    /// How many learnings it holds.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The entry for content `key`; its vector only when the index was made with `model`.
    pub fn get(&self, key: u64, model: u64) -> Option<Entry<'_>> {
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match u64_at(&self.bytes, HEADER + mid * ENTRY).cmp(&key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let (start, len, vector) = self.entry_fields(mid);
                    let t = self.terms_at + start * 8;
                    let terms = &self.bytes[t..t + len * 8];
                    let vector = (vector != NONE && model != 0 && model == self.model).then(|| {
                        let at = self.vectors_at + vector as usize * (4 + self.dim);
                        let scale = f32::from_le_bytes(self.bytes[at..at + 4].try_into().unwrap());
                        (&self.bytes[at + 4..at + 4 + self.dim], scale)
                    });
                    return Some(Entry { terms, vector });
                }
            }
        }
        None
    }
}

/// What the index holds of one learning: its content key, hashed terms and vector.
pub type Source = (u64, Vec<u64>, Option<Vec<f32>>);

/// The bytes of an index of `entries`, made with `model`.
pub fn build(model: u64, dim: usize, entries: &mut [Source]) -> Vec<u8> {
    entries.sort_by_key(|e| e.0);
    let mut unique: Vec<&Source> = Vec::with_capacity(entries.len());
    for e in entries.iter() {
        if unique.last().is_none_or(|u| u.0 != e.0) {
            unique.push(e);
        }
    }
    let terms: usize = unique.iter().map(|e| e.1.len()).sum();
    let vectors = unique
        .iter()
        .filter(|e| e.2.as_ref().is_some_and(|v| v.len() == dim))
        .count();
    let mut out =
        Vec::with_capacity(HEADER + unique.len() * ENTRY + terms * 8 + vectors * (4 + dim));
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&model.to_le_bytes());
    for n in [dim, unique.len(), terms, vectors] {
        out.extend_from_slice(&(n as u32).to_le_bytes());
    }
    out.extend_from_slice(&[0; 8]);
    let (mut term_at, mut vector_at) = (0u32, 0u32);
    for (key, t, v) in &unique {
        out.extend_from_slice(&key.to_le_bytes());
        out.extend_from_slice(&term_at.to_le_bytes());
        out.extend_from_slice(&(t.len() as u32).to_le_bytes());
        let has = v.as_ref().is_some_and(|v| v.len() == dim);
        out.extend_from_slice(&(if has { vector_at } else { NONE }).to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        term_at += t.len() as u32;
        vector_at += u32::from(has);
    }
    for (_, t, _) in &unique {
        for h in t {
            out.extend_from_slice(&h.to_le_bytes());
        }
    }
    for (_, _, v) in &unique {
        if let Some(v) = v.as_ref().filter(|v| v.len() == dim) {
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
    out[32..40].copy_from_slice(&sum.to_le_bytes());
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

    #[test]
    fn round_trips_terms_and_near_exact_vectors_and_refuses_damage() {
        let dim = 384;
        let mut entries = vec![
            (30, vec![1, 2, 2], Some(unit(1, dim))),
            (10, vec![], None),
            (20, vec![7], Some(unit(2, dim))),
            (20, vec![7], Some(unit(2, dim))),
        ];
        let bytes = build(5, dim, &mut entries);
        let index = Index::parse(bytes.clone()).unwrap();
        assert_eq!(index.len(), 3, "duplicate content kept once");
        let q = unit(1, dim);
        let e = index.get(30, 5).unwrap();
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
        for at in [9, 45, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[at] ^= 1;
            assert!(Index::parse(bad).is_none(), "byte {at}");
        }
        assert!(Index::parse(bytes[..bytes.len() - 1].to_vec()).is_none());
    }
}
