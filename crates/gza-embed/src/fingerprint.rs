//! The model's fingerprint: a hash of the weights file's whole content, so everything derived
//! from the weights (the int8 copy, the learnings' stored embeddings, the vector index) follows
//! the model that is actually there. A fine-tuned model or a new release with the same shapes
//! has another fingerprint, and nothing made from the old weights is used with it.
//!
//! Hashing 90 MB takes tens of milliseconds, so it is done once per file and cached, keyed by
//! what the file system says of the file (device, inode, size, modification and change times):
//! while those hold, the content is the one hashed. A file replaced (new inode), rewritten
//! (new times) or touched is hashed again, once. The cache is a one-line text file beside the
//! model (`.gza-fingerprint`), or in gza's cache folder when the model folder is read-only; it
//! carries a checksum of itself, so a damaged one is recomputed, never believed.

use std::fs::{File, Metadata};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::checksum::{Xxh3, xxh3};

const MAGIC: &str = "gza-fingerprint-1";

/// What the file system says of a file: while it is unchanged, so is the content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp(pub(crate) [i64; 7]);

impl Stamp {
    pub(crate) fn of(meta: &Metadata) -> Stamp {
        Stamp([
            meta.dev() as i64,
            meta.ino() as i64,
            meta.size() as i64,
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ctime(),
            meta.ctime_nsec(),
        ])
    }

    fn line(&self, hash: u64) -> String {
        let fields: Vec<String> = self.0.iter().map(i64::to_string).collect();
        let body = format!("{MAGIC} {} {hash:016x}", fields.join(" "));
        format!("{body} {:016x}\n", xxh3(body.as_bytes(), 0))
    }
}

/// Where the fingerprint of the weights file `weights` in folder `dir` may be cached: beside
/// it, then in gza's cache folder (named after the file's device and inode).
fn places(dir: &Path, weights: &Metadata) -> Vec<PathBuf> {
    let mut paths = vec![dir.join(".gza-fingerprint")];
    if let Some(cache) = super::cache_dir() {
        paths.push(cache.join(format!(
            "{:x}-{:x}.fingerprint",
            weights.dev(),
            weights.ino()
        )));
    }
    paths
}

/// The cached hash at `path`, when the cache is intact (its own checksum holds) and was made
/// for a file with this `stamp`.
fn cached(path: &Path, stamp: Stamp) -> Option<u64> {
    let text = super::mapped::read_text(path, 4096).ok()?;
    let mut fields = text.split_whitespace().rev();
    let _check = fields.next()?;
    let hash = u64::from_str_radix(fields.next()?, 16).ok()?;
    (text == stamp.line(hash)).then_some(hash)
}

/// The content hash of the weights file (`file`, whose whole content is `bytes`), from the cache
/// when the file is unchanged since it was hashed; otherwise computed when `compute` allows it
/// (and cached in the first place that accepts it), else `None`.
pub fn of_weights(dir: &Path, file: &File, bytes: &[u8], compute: bool) -> Option<u64> {
    let meta = file.metadata().ok()?;
    let stamp = Stamp::of(&meta);
    let places = places(dir, &meta);
    if let Some(hash) = places.iter().find_map(|p| cached(p, stamp)) {
        return Some(hash);
    }
    if !compute {
        return None;
    }
    let hash = content_hash(bytes);
    let line = stamp.line(hash);
    for p in &places {
        if write(p, line.as_bytes()).is_ok() {
            break;
        }
    }
    Some(hash)
}

/// The hash of a file's whole content.
pub fn content_hash(bytes: &[u8]) -> u64 {
    let mut h = Xxh3::new();
    // In slices, so a fresh mapping is faulted in and hashed as it streams past.
    for chunk in bytes.chunks(1 << 20) {
        h.update(chunk);
    }
    h.digest()
}

/// Replace `path` with `bytes` through a temporary file and a rename.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map(|_| ()).map_err(|e| e.error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fingerprint(dir: &Path, compute: bool) -> Option<u64> {
        let path = dir.join("model.safetensors");
        let file = File::open(&path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        of_weights(dir, &file, &bytes, compute)
    }

    #[test]
    fn hashed_once_cached_by_stamp_and_recomputed_when_the_content_changes() {
        let dir = tempfile::tempdir().unwrap();
        let weights = dir.path().join("model.safetensors");
        std::fs::write(&weights, vec![7u8; 100_000]).unwrap();
        assert_eq!(fingerprint(dir.path(), false), None, "nothing cached yet");
        let first = fingerprint(dir.path(), true).unwrap();
        assert_eq!(first, content_hash(&[7u8; 100_000]));
        assert_eq!(
            fingerprint(dir.path(), false),
            Some(first),
            "cached beside the model"
        );
        // Other content of the same size, written as a new file: another fingerprint.
        let mut other = vec![7u8; 100_000];
        other[99_999] = 8;
        let tmp = dir.path().join("new");
        std::fs::write(&tmp, &other).unwrap();
        std::fs::rename(&tmp, &weights).unwrap();
        assert_eq!(fingerprint(dir.path(), false), None, "the stamp changed");
        let second = fingerprint(dir.path(), true).unwrap();
        assert_ne!(first, second);
        // A damaged cache is not believed.
        let cache = dir.path().join(".gza-fingerprint");
        let text = std::fs::read_to_string(&cache).unwrap();
        let tampered = text.replacen(&format!("{second:016x}"), &format!("{first:016x}"), 1);
        assert_ne!(text, tampered);
        std::fs::write(&cache, tampered).unwrap();
        assert_eq!(fingerprint(dir.path(), false), None);
        assert_eq!(fingerprint(dir.path(), true), Some(second));
    }
}
