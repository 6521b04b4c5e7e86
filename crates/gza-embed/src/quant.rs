//! An int8 copy of the model's big matrices, made once and kept beside the model.
//!
//! Every embedding reads each layer matrix in full. As f32 they are 42 MB, and a fresh process
//! pays for mapping them in (page faults) more than for the arithmetic; as int8 with one scale
//! per row they are a quarter of that, and the sentence embeddings stay within 0.2 % cosine of
//! the f32 ones (tested).
//!
//! The copy is checked every time it is loaded. Its header carries an XXH64 checksum of the
//! copy itself (a flipped byte would give NaN scores and silently no results) and one of the
//! f32 weights it was derived from, with the weights file's stamp (device, inode, size and
//! times) when that was computed: while the stamp holds, the weights are the ones checksummed;
//! when it changed, the weights are checksummed again (once) before the copy is trusted. A copy
//! that fails either check is rebuilt, or, where rebuilding is not allowed (a Claude Code hook,
//! which must stay within its time budget), not used, with a one-line notice saying why.

use std::path::{Path, PathBuf};

use super::checksum::xxh64;
use super::mapped::Map;

const MAGIC: &[u8; 8] = b"GZAQ8v02";
const ALIGN: usize = 64;
/// Magic, weights fingerprint, matrix count (+4 spare), weights checksum, weights stamp, the
/// copy's own checksum; the shapes follow.
const HEADER: usize = 48;
const WEIGHTS_SUM: usize = 24;
const STAMP: usize = 32;
const SELF_SUM: usize = 40;

/// Where one matrix lies in the copy.
#[derive(Debug, Clone, Copy)]
pub struct QMatrix {
    pub rows: usize,
    pub cols: usize,
    scales: usize,
    data: usize,
}

enum Storage {
    Mapped(Map),
    Owned(Vec<u8>),
}

/// The int8 matrices.
pub struct Quantized {
    storage: Storage,
    pub matrices: Vec<QMatrix>,
}

/// The weights a copy is for: their fingerprint (header and size) and their file's stamp.
#[derive(Debug, Clone, Copy)]
pub struct Weights {
    pub fingerprint: u64,
    pub stamp: u64,
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
    /// Derived from other weights than these (same header and size, other values).
    OtherWeights,
    /// The weights file changed and checking it again is not allowed here.
    Unverified,
}

impl Quantized {
    fn bytes(&self) -> &[u8] {
        match &self.storage {
            Storage::Mapped(m) => m.bytes(),
            Storage::Owned(v) => v,
        }
    }

    pub fn scales(&self, m: &QMatrix) -> &[f32] {
        let b = &self.bytes()[m.scales..m.scales + m.rows * 4];
        // SAFETY: 64-aligned within a 64-aligned buffer (page-aligned map or checked Vec),
        // and any bit pattern is an f32.
        unsafe { std::slice::from_raw_parts(b.as_ptr() as *const f32, m.rows) }
    }

    pub fn data(&self, m: &QMatrix) -> &[i8] {
        let b = &self.bytes()[m.data..m.data + m.rows * m.cols];
        // SAFETY: i8 and u8 have the same layout.
        unsafe { std::slice::from_raw_parts(b.as_ptr() as *const i8, b.len()) }
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
            match Self::read(p, weights, &shapes, build.then_some(sources)) {
                Ok(q) => {
                    return Loaded {
                        quantized: Some(q),
                        notice,
                    };
                }
                Err(Reject::Absent | Reject::Unverified) => {}
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
                && let Ok(q) = Self::read(p, weights, &shapes, None)
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

    /// The copy at `path` if it is for these weights and shapes and passes its checks. With
    /// `sources`, a copy whose weights file changed since it was checked is checked again
    /// against them (and its stamp renewed); without, it is not trusted.
    fn read(
        path: &Path,
        weights: Weights,
        shapes: &[(usize, usize)],
        sources: Option<&[(&[f32], usize, usize)]>,
    ) -> Result<Quantized, Reject> {
        let file = super::mapped::open_regular(path).map_err(|_| Reject::Absent)?;
        let len = file.metadata().map_err(|_| Reject::Absent)?.len() as usize;
        let (total, matrices) = layout(shapes);
        if len != total {
            return Err(Reject::Absent);
        }
        let map = Map::file(&file, len).map_err(|_| Reject::Absent)?;
        let b = map.bytes();
        let header_ok = &b[..8] == MAGIC
            && b[8..16] == weights.fingerprint.to_le_bytes()
            && b[16..20] == (shapes.len() as u32).to_le_bytes();
        let shapes_ok = shapes.iter().enumerate().all(|(i, (r, c))| {
            let at = HEADER + i * 8;
            b[at..at + 4] == (*r as u32).to_le_bytes()
                && b[at + 4..at + 8] == (*c as u32).to_le_bytes()
        });
        // A copy in another format or for other weights is not damaged, only someone else's;
        // past that, any difference (the shapes included) is damage.
        if !header_ok {
            return Err(Reject::Absent);
        }
        if b[SELF_SUM..HEADER] != self_checksum(b).to_le_bytes() {
            return Err(Reject::Damaged);
        }
        if !shapes_ok {
            return Err(Reject::Absent);
        }
        if b[STAMP..SELF_SUM] != weights.stamp.to_le_bytes() {
            let Some(sources) = sources else {
                return Err(Reject::Unverified);
            };
            if b[WEIGHTS_SUM..STAMP] != weights_checksum(sources).to_le_bytes() {
                return Err(Reject::OtherWeights);
            }
            // The same weights, in a file that was copied or touched: renew the stamp, so the
            // next load needs no checksum of the weights.
            let mut renewed = b.to_vec();
            renewed[STAMP..SELF_SUM].copy_from_slice(&weights.stamp.to_le_bytes());
            let sum = self_checksum(&renewed);
            renewed[SELF_SUM..HEADER].copy_from_slice(&sum.to_le_bytes());
            let _ = write(path, &renewed);
        }
        Ok(Quantized {
            storage: Storage::Mapped(map),
            matrices,
        })
    }
}

/// The copy's own checksum: everything but the field that holds it.
fn self_checksum(b: &[u8]) -> u64 {
    xxh64(&b[HEADER..], xxh64(&b[..SELF_SUM], 0))
}

/// The checksum of the f32 weights a copy is derived from.
fn weights_checksum(sources: &[(&[f32], usize, usize)]) -> u64 {
    sources.iter().fold(0, |seed, (values, _, _)| {
        // SAFETY: any f32 slice is a valid byte slice of four times its length.
        let bytes =
            unsafe { std::slice::from_raw_parts(values.as_ptr() as *const u8, values.len() * 4) };
        xxh64(bytes, seed)
    })
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
    out[WEIGHTS_SUM..STAMP].copy_from_slice(&weights_checksum(sources).to_le_bytes());
    out[STAMP..SELF_SUM].copy_from_slice(&weights.stamp.to_le_bytes());
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

    const W: Weights = Weights {
        fingerprint: 7,
        stamp: 1,
    };

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
        assert!(Quantized::read(&path, W, &[(2, 3)], None).is_ok());
        let other = Weights {
            fingerprint: 8,
            ..W
        };
        assert!(
            Quantized::read(&path, other, &[(2, 3)], None).is_err(),
            "other weights"
        );
        assert!(
            Quantized::read(&path, W, &[(3, 2)], None).is_err(),
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
    fn a_changed_weights_file_is_checked_again_and_other_weights_rebuild_the_copy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.bin");
        let w: Vec<f32> = (0..6).map(|i| i as f32 - 2.5).collect();
        load(&path, W, &w, true);
        let moved = Weights { stamp: 2, ..W };
        // The file was copied (new stamp), the values are the same: trusted after one check,
        // and the stamp renewed, so the next load needs none.
        assert!(
            load(&path, moved, &w, false).quantized.is_none(),
            "a hook does not check"
        );
        let checked = load(&path, moved, &w, true);
        assert!(checked.quantized.is_some() && checked.notice.is_none());
        assert!(Quantized::read(&path, moved, &[(2, 3)], None).is_ok());
        // Same header and size, other values (a fine-tuned model): rebuilt, with a notice.
        let tuned: Vec<f32> = w.iter().map(|v| v * 2.0).collect();
        let changed = Weights { stamp: 3, ..W };
        let rebuilt = load(&path, changed, &tuned, true);
        assert!(rebuilt.notice.unwrap().contains("other weights"));
        let q = rebuilt.quantized.unwrap();
        let m = q.matrices[0];
        assert!((q.scales(&m)[0] * f32::from(q.data(&m)[0]) - tuned[0]).abs() < 0.05);
    }
}
