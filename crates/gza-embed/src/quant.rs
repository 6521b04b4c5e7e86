//! An int8 copy of the model's big matrices, made once and kept beside the model.
//!
//! Every embedding reads each layer matrix in full. As f32 they are 42 MB, and a fresh process
//! pays for mapping them in (page faults) more than for the arithmetic; as int8 with one scale
//! per row they are a quarter of that, and the sentence embeddings stay within 0.2 % cosine of
//! the f32 ones (tested).
//!
//! The copy is checked every time it is loaded. Its header names the weights it was derived
//! from by their content fingerprint (see `fingerprint.rs`: a hash of the weights file's whole
//! content) and carries an XXH3 checksum of the copy itself (a flipped byte would give NaN
//! scores and silently no results). A copy for other weights is rebuilt; a damaged one too, or,
//! where rebuilding is not allowed (a Claude Code hook, which must stay within its time
//! budget), it is not used, with a one-line notice saying why.
//!
//! Hashing the whole copy at every load was a fifteenth of a hook's CPU, so a copy is hashed in
//! full once and remembered by what the file system says of the file it was read from (device,
//! inode, size, modification and change times to the nanosecond: `fingerprint::Stamp`), in a
//! small stamp file beside it (`<copy>.verified`, or in gza's cache folder) that carries its own
//! checksum. While the file has that identity its content is the one hashed: any write to it
//! sets its change time to the clock's present, and replacing it gives another inode. A stamp
//! is written only for a file whose times are at least [`SETTLE`] in the past, so a write in
//! the same clock tick as the last one (timestamps are coarse) cannot leave them unchanged. A
//! stamp for another identity, or a damaged one, is ignored and the copy is hashed again.
//! docs/architecture.md ("Hooks within budget, always: the hooks' own CPU") says what this
//! keeps and what it does not.

use std::path::{Path, PathBuf};

use memmap2::Mmap;

use super::checksum::xxh3;
use super::fingerprint::Stamp;

/// A copy's times must lie this far in the past before its verification is remembered.
pub const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);
const VERIFIED: &str = "gza-int8-verified-1";

const MAGIC: &[u8; 8] = b"GZAQ8v03";
const ALIGN: usize = 64;
/// Magic, the weights' content fingerprint, matrix count (+4 spare), the copy's own checksum;
/// the shapes follow.
const HEADER: usize = 32;
const SELF_SUM: usize = 24;

/// Where one matrix lies in the copy.
#[derive(Debug, Clone, Copy)]
pub struct QMatrix {
    pub rows: usize,
    pub cols: usize,
    scales: usize,
    data: usize,
}

enum Storage {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

/// The int8 matrices.
pub struct Quantized {
    storage: Storage,
    pub matrices: Vec<QMatrix>,
}

/// The weights a copy is for: their content fingerprint.
#[derive(Debug, Clone, Copy)]
pub struct Weights {
    pub fingerprint: u64,
}

/// What loading found: the copy (when one could be had) and, when a copy on disk was damaged or
/// derived from other weights, one line saying so and what was done.
pub struct Loaded {
    pub quantized: Option<Quantized>,
    pub notice: Option<String>,
}

/// Why a copy on disk was not used.
enum Reject {
    /// Not there, or for other weights' shapes or another format: built anew without a word.
    Absent,
    /// Its own checksum does not match: damaged.
    Damaged,
    /// Derived from other weights than these (the model file was replaced).
    OtherWeights,
}

impl Quantized {
    fn bytes(&self) -> &[u8] {
        match &self.storage {
            Storage::Mapped(m) => m,
            Storage::Owned(v) => v,
        }
    }

    pub fn scales(&self, m: &QMatrix) -> &[f32] {
        // 64-aligned within a 64-aligned buffer (a page-aligned map, or a Vec aligned when
        // made); cast_slice checks it.
        bytemuck::cast_slice(&self.bytes()[m.scales..m.scales + m.rows * 4])
    }

    pub fn data(&self, m: &QMatrix) -> &[i8] {
        bytemuck::cast_slice(&self.bytes()[m.data..m.data + m.rows * m.cols])
    }

    /// The copy for `weights`: read from the first of `paths` that holds a valid one, else,
    /// when `build` allows, built from `sources` (each an f32 `[rows × cols]` matrix) and written
    /// to the first of `paths` that accepts it (or kept in memory when none does).
    pub fn load_or_build(
        paths: &[PathBuf],
        weights: Weights,
        sources: &[(&[f32], usize, usize)],
        build: bool,
    ) -> Loaded {
        let shapes: Vec<(usize, usize)> = sources.iter().map(|(_, r, c)| (*r, *c)).collect();
        let mut notice = None;
        for p in paths {
            match Self::read(p, weights, &shapes) {
                Ok(q) => {
                    return Loaded {
                        quantized: Some(q),
                        notice,
                    };
                }
                Err(Reject::Absent) => {}
                Err(why @ (Reject::Damaged | Reject::OtherWeights)) => {
                    let what = match why {
                        Reject::Damaged => "is damaged (its checksum does not match)",
                        _ => "was derived from other weights",
                    };
                    let done = if build {
                        "rebuilt it"
                    } else {
                        "not used; ranking by words until it is rebuilt"
                    };
                    notice.get_or_insert(format!(
                        "the embedding model's int8 copy {} {what}; {done}",
                        p.display()
                    ));
                }
            }
        }
        if !build {
            return Loaded {
                quantized: None,
                notice,
            };
        }
        let bytes = build_copy(weights, sources);
        for p in paths {
            if write(p, &bytes).is_ok()
                && let Ok(q) = Self::read(p, weights, &shapes)
            {
                return Loaded {
                    quantized: Some(q),
                    notice,
                };
            }
        }
        let matrices = layout(&shapes).1;
        let mut owned: Vec<u8> = Vec::with_capacity(bytes.len() + ALIGN);
        // Align the owned copy's start like a mapping's.
        let pad = owned.as_ptr().align_offset(ALIGN);
        owned.resize(pad, 0);
        owned.extend_from_slice(&bytes);
        let matrices = matrices
            .into_iter()
            .map(|m| QMatrix {
                scales: m.scales + pad,
                data: m.data + pad,
                ..m
            })
            .collect();
        Loaded {
            quantized: Some(Quantized {
                storage: Storage::Owned(owned),
                matrices,
            }),
            notice,
        }
    }

    /// The copy at `path` if it is for these weights and shapes and passes its checks.
    fn read(path: &Path, weights: Weights, shapes: &[(usize, usize)]) -> Result<Quantized, Reject> {
        let file = super::mapped::open_regular(path).map_err(|_| Reject::Absent)?;
        // The open file's own metadata: the stamp speaks of the file mapped below.
        let meta = file.metadata().map_err(|_| Reject::Absent)?;
        let len = meta.len() as usize;
        let (total, matrices) = layout(shapes);
        if len != total || len < HEADER {
            return Err(Reject::Absent);
        }
        // SAFETY: a private read-only mapping of a regular file. What gza guarantees: it never
        // writes a copy in place (a new copy is written to a temporary file and renamed over
        // the old one, which leaves this mapping on the old file), and the copy's length and
        // checksum are checked below before any of it is used. What gza cannot guarantee: that
        // no other process truncates or rewrites the file while it is mapped (a truncation
        // makes a later read raise SIGBUS; a rewrite gives wrong embeddings, not wrong memory
        // accesses: every read goes through a bounds-checked slice).
        let map = unsafe { Mmap::map(&file) }.map_err(|_| Reject::Absent)?;
        let b: &[u8] = &map;
        if b.len() != total {
            return Err(Reject::Absent);
        }
        let format_ok = &b[..8] == MAGIC && b[16..20] == (shapes.len() as u32).to_le_bytes();
        let shapes_ok = shapes.iter().enumerate().all(|(i, (r, c))| {
            let at = HEADER + i * 8;
            b[at..at + 4] == (*r as u32).to_le_bytes()
                && b[at + 4..at + 8] == (*c as u32).to_le_bytes()
        });
        // A copy in another format or for other shapes is not damaged, only someone else's;
        // past that, a checksum that does not match is damage.
        if !format_ok {
            return Err(Reject::Absent);
        }
        let stored = u64::from_le_bytes(b[SELF_SUM..HEADER].try_into().unwrap());
        let stamp = verified_line(Stamp::of(&meta), stored);
        let places = verified_places(path, &meta);
        let known = places
            .iter()
            .any(|p| super::mapped::read_text(p, 4096).is_ok_and(|text| text == stamp));
        if !known && stored != self_checksum(b) {
            return Err(Reject::Damaged);
        }
        if !shapes_ok {
            return Err(Reject::Absent);
        }
        if b[8..16] != weights.fingerprint.to_le_bytes() {
            return Err(Reject::OtherWeights);
        }
        if !known && settled(&meta) {
            for p in &places {
                if super::fingerprint::write(p, stamp.as_bytes()).is_ok() {
                    break;
                }
            }
        }
        Ok(Quantized {
            storage: Storage::Mapped(map),
            matrices,
        })
    }
}

/// The stamp that says the copy with this identity and stored checksum was hashed in full and
/// matched; it ends in a checksum of its own.
fn verified_line(stamp: Stamp, sum: u64) -> String {
    let fields: Vec<String> = stamp.0.iter().map(i64::to_string).collect();
    let body = format!("{VERIFIED} {} {sum:016x}", fields.join(" "));
    format!("{body} {:016x}\n", xxh3(body.as_bytes(), 0))
}

/// Where the stamp of the copy at `path` may be: beside it, then in gza's cache folder (named
/// after the copy's device and inode), for a copy in a folder gza cannot write.
fn verified_places(path: &Path, meta: &std::fs::Metadata) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".verified");
    let mut places = vec![path.with_file_name(name)];
    if let Some(cache) = super::cache_dir() {
        places.push(cache.join(format!("{:x}-{:x}.int8-verified", meta.dev(), meta.ino())));
    }
    places
}

/// Whether the file's times lie [`SETTLE`] or more in the past: any later write gives it
/// another change time.
fn settled(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) else {
        return false;
    };
    let at = |s: i64, ns: i64| {
        u64::try_from(s)
            .ok()
            .map(|s| std::time::Duration::new(s, ns.clamp(0, 999_999_999) as u32))
    };
    [
        at(meta.mtime(), meta.mtime_nsec()),
        at(meta.ctime(), meta.ctime_nsec()),
    ]
    .iter()
    .all(|t| t.is_some_and(|t| t + SETTLE <= now))
}

/// The copy's own checksum: everything but the field that holds it.
fn self_checksum(b: &[u8]) -> u64 {
    xxh3(&b[HEADER..], xxh3(&b[..SELF_SUM], 0))
}

/// The file's size and each matrix's place in it.
fn layout(shapes: &[(usize, usize)]) -> (usize, Vec<QMatrix>) {
    let mut at = (HEADER + shapes.len() * 8).next_multiple_of(ALIGN);
    let mut matrices = Vec::with_capacity(shapes.len());
    for &(rows, cols) in shapes {
        let scales = at;
        let data = (scales + rows * 4).next_multiple_of(ALIGN);
        at = (data + rows * cols).next_multiple_of(ALIGN);
        matrices.push(QMatrix {
            rows,
            cols,
            scales,
            data,
        });
    }
    (at, matrices)
}

/// Quantize each row symmetrically: scale = max |w| / 127, w ≈ scale · q; then the checksums.
fn build_copy(weights: Weights, sources: &[(&[f32], usize, usize)]) -> Vec<u8> {
    let shapes: Vec<(usize, usize)> = sources.iter().map(|(_, r, c)| (*r, *c)).collect();
    let (total, matrices) = layout(&shapes);
    let mut out = vec![0u8; total];
    out[..8].copy_from_slice(MAGIC);
    out[8..16].copy_from_slice(&weights.fingerprint.to_le_bytes());
    out[16..20].copy_from_slice(&(shapes.len() as u32).to_le_bytes());
    for (i, (r, c)) in shapes.iter().enumerate() {
        let at = HEADER + i * 8;
        out[at..at + 4].copy_from_slice(&(*r as u32).to_le_bytes());
        out[at + 4..at + 8].copy_from_slice(&(*c as u32).to_le_bytes());
    }
    for ((w, rows, cols), m) in sources.iter().zip(&matrices) {
        for r in 0..*rows {
            let row = &w[r * cols..(r + 1) * cols];
            let max = row.iter().fold(0f32, |a, v| a.max(v.abs()));
            let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
            out[m.scales + r * 4..m.scales + r * 4 + 4].copy_from_slice(&scale.to_le_bytes());
            for (j, v) in row.iter().enumerate() {
                out[m.data + r * cols + j] = (v / scale).round().clamp(-127.0, 127.0) as i8 as u8;
            }
        }
    }
    let sum = self_checksum(&out);
    out[SELF_SUM..HEADER].copy_from_slice(&sum.to_le_bytes());
    out
}

/// Write through a temporary file in the same directory and a rename, so a reader never sees
/// half a copy. The temporary file's name is fresh (`O_EXCL`, never whatever was planted there)
/// and random, so two processes deriving the copy at once never rename each other's file away:
/// `gza_core::fsutil::write_replacing`'s rules (this crate depends on none of gza's others).
fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut partial = tempfile::Builder::new()
        .prefix(".int8.")
        .suffix(".partial")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    partial.write_all(bytes)?;
    partial.persist(path).map(drop).map_err(|e| e.error)
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Weights = Weights { fingerprint: 7 };

    fn load(path: &Path, weights: Weights, w: &[f32], build: bool) -> Loaded {
        Quantized::load_or_build(
            std::slice::from_ref(&path.to_path_buf()),
            weights,
            &[(w, 2, 3)],
            build,
        )
    }

    #[test]
    fn round_trips_through_a_file_and_rebuilds_for_other_weights() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.bin");
        let w: Vec<f32> = (0..6).map(|i| i as f32 - 2.5).collect();
        let loaded = load(&path, W, &w, true);
        assert!(loaded.notice.is_none());
        let q = loaded.quantized.unwrap();
        let m = q.matrices[0];
        let first: Vec<i8> = q.data(&m).to_vec();
        let back: Vec<f32> = (0..6)
            .map(|i| q.scales(&m)[i / 3] * f32::from(q.data(&m)[i]))
            .collect();
        for (a, b) in w.iter().zip(&back) {
            assert!((a - b).abs() < 0.02, "{a} {b}");
        }
        assert!(path.exists());
        assert!(Quantized::read(&path, W, &[(2, 3)]).is_ok());
        let other = Weights { fingerprint: 8 };
        assert!(
            Quantized::read(&path, other, &[(2, 3)]).is_err(),
            "other weights"
        );
        assert!(
            Quantized::read(&path, W, &[(3, 2)]).is_err(),
            "other shapes"
        );
        drop(q);
        std::fs::write(&path, b"garbage").unwrap();
        let again = load(&path, W, &w, true).quantized.unwrap();
        assert_eq!(again.data(&again.matrices[0]), first);
        // Nowhere to write: kept in memory.
        let nowhere = Quantized::load_or_build(
            &[PathBuf::from("/proc/no/such/dir/q.bin")],
            W,
            &[(&w, 2, 3)],
            true,
        );
        let nowhere = nowhere.quantized.unwrap();
        assert_eq!(nowhere.data(&nowhere.matrices[0]), first);
    }

    #[test]
    fn a_damaged_copy_is_rebuilt_with_one_notice_or_not_used_where_building_is_not_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.bin");
        let w: Vec<f32> = (0..6).map(|i| i as f32 - 2.5).collect();
        let good = std::fs::read({
            load(&path, W, &w, true);
            &path
        })
        .unwrap();
        // One flipped byte in a scale: NaN-prone arithmetic, caught by the checksum.
        let mut bad = good.clone();
        let at = layout(&[(2, 3)]).1[0].scales + 3;
        bad[at] ^= 0xff;
        std::fs::write(&path, &bad).unwrap();
        let hook = load(&path, W, &w, false);
        assert!(hook.quantized.is_none());
        let notice = hook.notice.unwrap();
        assert!(
            notice.contains("is damaged") && notice.contains("not used"),
            "{notice}"
        );
        let cli = load(&path, W, &w, true);
        assert!(cli.notice.unwrap().contains("rebuilt it"));
        assert_eq!(std::fs::read(&path).unwrap(), good, "rebuilt as it was");
        assert!(
            load(&path, W, &w, true).notice.is_none(),
            "one notice, then none"
        );
    }

    #[test]
    fn a_verified_copy_is_remembered_by_its_identity_and_any_change_is_hashed_again() {
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.bin");
        let stamp_path = dir.path().join("q.bin.verified");
        let w: Vec<f32> = (0..6).map(|i| i as f32 - 2.5).collect();
        load(&path, W, &w, true);
        assert!(!stamp_path.exists(), "no stamp for a copy written just now");
        std::thread::sleep(SETTLE + std::time::Duration::from_millis(200));
        assert!(load(&path, W, &w, false).quantized.is_some());
        let good = std::fs::read(&path).unwrap();
        let stored = u64::from_le_bytes(good[SELF_SUM..HEADER].try_into().unwrap());
        let stamp_of =
            |path: &Path| verified_line(Stamp::of(&std::fs::metadata(path).unwrap()), stored);
        assert_eq!(
            std::fs::read_to_string(&stamp_path).unwrap(),
            stamp_of(&path),
            "hashed in full once, then remembered"
        );
        // Damaged in place after the stamp was written (same inode, same size): the change
        // time moved, the stamp no longer matches, the copy is hashed again and refused.
        let at = (layout(&[(2, 3)]).1[0].scales + 3) as u64;
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.write_all_at(&[good[at as usize] ^ 0xff], at).unwrap();
        drop(file);
        let hook = load(&path, W, &w, false);
        assert!(hook.quantized.is_none(), "a damaged copy after its stamp");
        assert!(hook.notice.unwrap().contains("is damaged"));
        // What a stamp for the file as it is vouches for is believed (the hash is skipped)...
        std::fs::write(&stamp_path, stamp_of(&path)).unwrap();
        assert!(
            load(&path, W, &w, false).quantized.is_some(),
            "the stamp is used"
        );
        // ...but not a stamp that fails its own checksum.
        let forged = stamp_of(&path).replacen("gza-int8-verified-1 ", "gza-int8-verified-1 1", 1);
        std::fs::write(&stamp_path, forged).unwrap();
        assert!(
            load(&path, W, &w, false).quantized.is_none(),
            "a damaged stamp"
        );
        // Replaced by a good copy (another inode): the stale stamp is ignored and the new copy
        // hashed and used.
        std::fs::write(&stamp_path, stamp_of(&path)).unwrap();
        let tmp = dir.path().join("new");
        std::fs::write(&tmp, &good).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        assert_ne!(
            std::fs::read_to_string(&stamp_path).unwrap(),
            stamp_of(&path)
        );
        assert!(load(&path, W, &w, false).quantized.is_some());
        let mut bad = good.clone();
        bad[at as usize] ^= 0xff;
        std::fs::write(&tmp, &bad).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        assert!(
            load(&path, W, &w, false).quantized.is_none(),
            "stale stamp ignored"
        );
    }

    #[test]
    fn a_copy_of_other_weights_is_rebuilt_with_a_notice_or_not_used_by_a_hook() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.bin");
        let w: Vec<f32> = (0..6).map(|i| i as f32 - 2.5).collect();
        load(&path, W, &w, true);
        // Same shapes, other values (a fine-tuned model): another content fingerprint.
        let tuned: Vec<f32> = w.iter().map(|v| v * 2.0).collect();
        let changed = Weights { fingerprint: 9 };
        let hook = load(&path, changed, &tuned, false);
        assert!(hook.quantized.is_none());
        assert!(hook.notice.unwrap().contains("other weights"));
        let rebuilt = load(&path, changed, &tuned, true);
        assert!(rebuilt.notice.unwrap().contains("other weights"));
        let q = rebuilt.quantized.unwrap();
        let m = q.matrices[0];
        assert!((q.scales(&m)[0] * f32::from(q.data(&m)[0]) - tuned[0]).abs() < 0.05);
        assert!(load(&path, changed, &tuned, false).notice.is_none());
    }
}
